// The terminal of VS Code (and of other editors and web terminals): xterm.js, its headless
// build from the npm registry, as the host terminal of a test (tests/xtermjsrig.py).
//
// One request a line on stdin, one JSON answer a line on stdout:
//   {"op": "write", "data": BASE64}   the program's output, parsed; answer: what xterm.js
//                                      sent back meanwhile (its replies: DA1, DECRQM…)
//   {"op": "focus", "in": BOOL}        the window gains or loses focus: xterm.js's browser
//                                      part sends ESC [ I / ESC [ O then, and only while the
//                                      program set mode 1004 (sendFocusMode); the same here
//   {"op": "state"}                    the title, every title set, the OSC notifications and
//                                      clipboard writes it received, bells, modes, the screen
// Replies are base64 of the bytes the program reads. OSC 9, 99, 777, 52 and 7501 are
// recorded where an editor's handler would act on them (VS Code handles OSC 99 itself);
// nothing else is changed in xterm.js.
"use strict";
const readline = require("readline");
const dir = process.env.CUEWRAP_XTERMJS_DIR;
const { Terminal } = require(require.resolve("@xterm/headless", { paths: [dir] }));
const cols = Number(process.env.XTERMJS_COLS || 120);
const rows = Number(process.env.XTERMJS_ROWS || 40);
const term = new Terminal({ cols, rows, allowProposedApi: true, scrollback: 0 });
let replies = "";
const titles = [];
const osc = [];
let bells = 0;
term.onData((d) => { replies += d; });
term.onTitleChange((t) => titles.push(t));
term.onBell(() => { bells += 1; });
for (const n of [9, 52, 99, 777, 7501]) {
  term.parser.registerOscHandler(n, (data) => { osc.push([n, data]); return true; });
}

function answer(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

function taken() {
  const out = Buffer.from(replies, "utf8").toString("base64");
  replies = "";
  return out;
}

function screen() {
  const buf = term.buffer.active;
  const lines = [];
  for (let y = 0; y < term.rows; y++) {
    const line = buf.getLine(buf.viewportY + y);
    lines.push(line ? line.translateToString(true) : "");
  }
  return lines;
}

const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on("line", (line) => {
  const req = JSON.parse(line);
  if (req.op === "write") {
    term.write(Buffer.from(req.data, "base64"), () => answer({ replies: taken() }));
  } else if (req.op === "focus") {
    if (term.modes.sendFocusMode) term.input(req.in ? "\x1b[I" : "\x1b[O", false);
    answer({ replies: taken(), sent: term.modes.sendFocusMode });
  } else if (req.op === "state") {
    answer({
      title: titles.length ? titles[titles.length - 1] : null,
      titles,
      osc,
      bells,
      modes: term.modes,
      buffer: term.buffer.active.type,
      screen: screen(),
    });
  }
});
rl.on("close", () => process.exit(0));
