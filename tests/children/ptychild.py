"""A small child program for relay tests, driven by its first argument.

raw-echo      put the tty in raw mode, print READY, then report every read as
              "R<hex>\n" on stdout until it reads 'q' alone; then exit 0
dump-bytes    raw mode, write bytes 0..255 N times (N = argv[2]) then "\nEND\n"
winch         print the size now and on every SIGWINCH as "SIZE rows cols"
exit N        print READY, wait for a line, exit with status N
kill-self SIG print READY, wait for a line, kill itself with signal SIG
modes-die     enable alt screen + mouse + bracketed paste + kitty keyboard, then SIGKILL itself
focus         raw mode, enable 1004 (CSI ?1004h) and report reads like raw-echo
sleep         print READY and sleep until killed
pause-mid     ask the Program Status query (echo off), print READY, wait for a line, report a run
              (OSC 7501 working, done), then pause
              1 s inside a UTF-8 character and 1 s inside a DCS string, print END, wait
focus-resets  raw mode, 1004 on, READY; on "a" 1004 off (OFF), on "b" RIS (RESET), on "c" DECSTR
              (SOFT), on "d" 1004 on again inside a multi-mode sequence (MULTI); then as raw-echo
stop-self     print READY, wait for a line, stop its own group as Pi's Ctrl-Z does
              (kill(0, SIGTSTP)), print BACK once continued, wait for a line, exit 0
stream N      raw mode, READY, then N small escape-dense frames ("S<n>" inside synchronized
              output and colours) one every 2 ms; every read of input in between is echoed as
              "E<hex>\r\n" between two frames; then END
deaf          ignore every catchable terminating signal, print READY, sleep until killed
clipboard     raw mode, write an OSC 52 clipboard write on its own ("unasked") and an iTerm2
              file download (OSC 1337 File=), print READY;
              then for every read, an OSC 52 write of what was read and COPIED, until 'q'
"""

import base64
import os
import signal
import sys
import time
import tty

DOWNLOAD = "\x1b]1337;File=name=ZXZpbA==;size=4:ZXZpbA==\x07"


def out(s: str) -> None:
    os.write(1, s.encode())


def report_reads() -> None:
    while True:
        data = os.read(0, 4096)
        if not data:
            return
        out("R" + data.hex() + "\r\n")
        if data == b"q":
            return


def stream_frame(i: int) -> bytes:
    return b"\x1b[?2026h\x1b[1;1H\x1b[38;5;2mS%06d\x1b[0m \xe2\xa0\x8b\x1b[?2026l\r\n" % i


def main() -> None:
    mode = sys.argv[1]
    if mode == "raw-echo":
        tty.setraw(0)
        out("READY\r\n")
        report_reads()
    elif mode == "focus":
        tty.setraw(0)
        out("\x1b[?1004hREADY\r\n")
        report_reads()
    elif mode == "clipboard":
        tty.setraw(0)

        def osc52(text: bytes) -> str:
            return "\x1b]52;c;" + base64.b64encode(text).decode() + "\x07"

        out(osc52(b"unasked") + DOWNLOAD + "READY\r\n")
        while True:
            data = os.read(0, 4096)
            if not data or data == b"q":
                return
            out(osc52(data) + "COPIED\r\n")
    elif mode == "dump-bytes":
        tty.setraw(0)
        n = int(sys.argv[2])
        block = bytes(range(256))
        for _ in range(n):
            os.write(1, block)
        out("\r\nEND\r\n")
    elif mode == "winch":

        def show(*_: object) -> None:
            rows, cols = os.get_terminal_size(0).lines, os.get_terminal_size(0).columns
            out(f"SIZE {rows} {cols}\n")

        signal.signal(signal.SIGWINCH, show)
        show()
        while True:
            time.sleep(1)
    elif mode == "exit":
        out("READY\n")
        sys.stdin.readline()
        sys.exit(int(sys.argv[2]))
    elif mode == "kill-self":
        out("READY\n")
        sys.stdin.readline()
        os.kill(os.getpid(), int(sys.argv[2]))
    elif mode == "modes-die":
        out("\x1b[?1049h\x1b[?1000h\x1b[?1002h\x1b[?1006h\x1b[?2004h\x1b[>1uALT\n")
        sys.stdin.readline()
        os.kill(os.getpid(), signal.SIGKILL)
    elif mode == "sleep":
        out("READY\n")
        while True:
            time.sleep(1)
    elif mode == "pause-mid":
        import termios

        attrs = termios.tcgetattr(0)
        attrs[3] &= ~termios.ECHO  # the answer to the query is not echoed
        termios.tcsetattr(0, termios.TCSANOW, attrs)
        out("\x1b]7501;?\x1b\\")  # a program reports only once asked and answered
        out("READY\n")
        sys.stdin.readline()
        out("\x1b]7501;state=working:app=t\x1b\\")
        time.sleep(0.3)
        os.write(1, b"\x1b]7501;state=done:app=t\x1b\\\xe2\x82")  # half a euro sign
        time.sleep(1.0)
        os.write(1, b"\xac\x1bP1$r")  # the euro sign's last byte, then an open DCS
        time.sleep(1.0)
        os.write(1, b"x\x1b\\END\r\n")
        sys.stdin.readline()
    elif mode == "focus-resets":
        tty.setraw(0)
        out("\x1b[?1004hREADY\r\n")
        for key, reply in ((b"a", "\x1b[?1004lOFF"), (b"b", "\x1bcRESET"),
                           (b"c", "\x1b[!pSOFT"), (b"d", "\x1b[?1000;1004hMULTI")):  # fmt: skip
            while os.read(0, 1) != key:
                pass
            out(reply + "\r\n")
        report_reads()
    elif mode == "stop-self":
        out("READY\n")
        sys.stdin.readline()
        os.kill(0, signal.SIGTSTP)
        out("BACK\n")
        sys.stdin.readline()
    elif mode == "stream":
        import select

        tty.setraw(0)
        out("READY\r\n")
        for i in range(int(sys.argv[2])):
            os.write(1, stream_frame(i))
            if select.select([0], [], [], 0.002)[0]:
                out("E" + os.read(0, 4096).hex() + "\r\n")
        out("END\r\n")
    elif mode == "deaf":
        for sig in range(1, signal.NSIG):
            if sig not in (signal.SIGKILL, signal.SIGSTOP, signal.SIGCHLD, signal.SIGCONT):
                try:
                    signal.signal(sig, signal.SIG_IGN)
                except (OSError, ValueError):
                    pass
        out("READY\n")
        while True:
            time.sleep(1)


if __name__ == "__main__":
    main()
