"""A small terminal program that signals like agents do, for the generic-mode tests.

    signals.py STEP [STEP ...]

Steps, run in order (raw mode, no echo):
  ask                 ask the Program Status query (ESC ] 7501 ; ? ST) and read the answer:
                      a program reports only after that (docs/generic-mode.md)
  ready               print READY
  wait                wait for one byte on stdin (the test's "go")
  sleep:S             sleep S seconds
  bell                write BEL
  osc9:TEXT           ESC ] 9 ; TEXT ST
  osc777:TITLE:BODY   ESC ] 777 ; notify ; TITLE ; BODY BEL
  osc99:ID:TITLE:BODY kitty multi-part: title chunk (d=0), then body chunk (d=1), same id
  7501:STATE:APP      ESC ] 7501 ; state=STATE:app=APP ST
  print:N:EVERY       N lines "tick I", one every EVERY seconds
  raw:HEX             the bytes HEX (e.g. an escape sequence left open: raw:1b5b313b)
  exit:N              exit with status N
  hold                sleep until killed
"""

import os
import sys
import time
import tty

ST = "\x1b\\"


def out(s: str) -> None:
    os.write(1, s.encode())


def main() -> None:
    tty.setraw(0)
    for step in sys.argv[1:]:
        name, _, arg = step.partition(":")
        if name == "ask":
            out(f"\x1b]7501;?{ST}")
            got = b""
            while not got.endswith(ST.encode()) and len(got) < 64:
                got += os.read(0, 1)
        elif name == "ready":
            out("READY\r\n")
        elif name == "wait":
            os.read(0, 1)
        elif name == "sleep":
            time.sleep(float(arg))
        elif name == "bell":
            out("\x07")
        elif name == "osc9":
            out(f"\x1b]9;{arg}{ST}")
        elif name == "osc777":
            title, _, body = arg.partition(":")
            out(f"\x1b]777;notify;{title};{body}\x07")
        elif name == "osc99":
            ident, title, body = arg.split(":", 2)
            out(f"\x1b]99;i={ident}:d=0;{title}{ST}")
            time.sleep(0.05)  # the parts arrive in separate reads
            out(f"\x1b]99;i={ident}:p=body;{body}{ST}")
        elif name == "7501":
            state, _, app = arg.partition(":")
            out(f"\x1b]7501;state={state}:app={app}{ST}")
        elif name == "print":
            n, _, every = arg.partition(":")
            for i in range(int(n)):
                out(f"tick {i}\r\n")
                time.sleep(float(every))
        elif name == "raw":
            os.write(1, bytes.fromhex(arg))
        elif name == "exit":
            sys.exit(int(arg))
        elif name == "hold":
            while True:
                time.sleep(1)


if __name__ == "__main__":
    main()
