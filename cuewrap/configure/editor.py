"""The interactive settings editor (``cuewrap config`` without an argument), prompt-toolkit.

One row per key (``model.Model``): value, source, and under the list the selected key's help,
its allowed values and its default. Keys: ↑/↓ (or k/j) move; Enter or Space changes the value
(true/false and choices cycle, ←/→ go back and forth; numbers and commands open an edit line,
checked as you type with the loader's messages, Enter refused while invalid, Escape cancels);
Delete or d puts the default back; t sends a test notification the way a reminder goes;
s saves (atomically, comments kept); q quits (asks once when there are unsaved changes);
Ctrl+C leaves at once without saving (exit 130).

Full screen on the alternate screen, 80×24 is enough (the list scrolls when it must); the
terminal is restored by prompt-toolkit on every way out, and SIGTERM/SIGHUP leave as Ctrl+C
does. Refused with one line when stdin or stdout is not a terminal.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cuewrap.args import err
from cuewrap.configure.keybindings import bindings
from cuewrap.host import is_tty

if TYPE_CHECKING:
    from prompt_toolkit.formatted_text import StyleAndTextTuples

    from cuewrap.args import Args
    from cuewrap.configure.model import Model

FOOTER = "↑↓ move  Enter change  d default  t test  s save  q quit"


def run_editor(args: Args, env: Mapping[str, str]) -> int:
    if not (is_tty(0) and is_tty(1)):
        err(
            "config: the editor needs a terminal on stdin and stdout"
            " (scripted: cuewrap config list|get|set|unset|path)"
        )
        return 2
    from cuewrap.configure.model import Model
    from cuewrap.configure.store import ConfigFile, config_path

    path = config_path(args.config, env)
    model = Model(ConfigFile(path), env, {"no_cues": args.no_cues, "keep_awake": args.keep_awake})
    result = Editor(model, path).run()
    if result == "saved":
        sys.stdout.write(f"cuewrap: settings saved to {path}\n")
    elif result == "discarded":
        sys.stdout.write("cuewrap: changes discarded, the file is unchanged\n")
    elif result == "abort":
        sys.stdout.write("cuewrap: interrupted, the file is unchanged\n")
        return 130
    return 0


class Editor:
    def __init__(self, model: Model, path: str) -> None:
        self.model = model
        self.path = path
        self.index = 0
        self.editing = False
        self.status = ""
        self.status_style = ""
        self.confirm_quit = False
        self.saved_once = False
        self.app: Any = None

    @property
    def spec(self) -> Any:
        return self.model.keys[self.index]

    # -- building -----------------------------------------------------------------------
    def run(self) -> str:
        from prompt_toolkit.application import Application
        from prompt_toolkit.buffer import Buffer
        from prompt_toolkit.filters import Condition
        from prompt_toolkit.layout import (
            ConditionalContainer,
            FormattedTextControl,
            HSplit,
            Layout,
            VSplit,
            Window,
        )
        from prompt_toolkit.layout.dimension import Dimension
        from prompt_toolkit.styles import Style

        editing = Condition(lambda: self.editing)
        self.buffer = Buffer(multiline=False, on_text_changed=lambda _: self._check_typed())
        self.list_control = FormattedTextControl(
            self._list_text, focusable=True, get_cursor_position=self._cursor, show_cursor=False
        )
        self.list_window = Window(self.list_control, height=Dimension(min=3, weight=1))
        from prompt_toolkit.layout.controls import BufferControl

        self.edit_window = Window(BufferControl(self.buffer), height=1)
        body = HSplit(
            [
                Window(FormattedTextControl(self._title), height=1, style="class:title"),
                self.list_window,
                Window(height=1, char="─", style="class:rule"),
                Window(FormattedTextControl(self._help), height=2, wrap_lines=True),
                ConditionalContainer(
                    VSplit(
                        [
                            Window(
                                FormattedTextControl(lambda: f"{self.spec.name} = "),
                                dont_extend_width=True,
                            ),
                            self.edit_window,
                        ]
                    ),
                    filter=editing,
                ),
                Window(
                    FormattedTextControl(self._status),
                    height=Dimension(min=2, max=4),
                    wrap_lines=True,
                ),
                Window(FormattedTextControl(self._footer), height=1, style="class:footer"),
            ]
        )
        style = Style.from_dict(
            {
                "title": "bold",
                "selected": "reverse",
                "changed": "bold",
                "error": "fg:ansired bold",
                "ok": "fg:ansigreen",
                "footer": "reverse",
                "rule": "fg:ansibrightblack",
            }
        )
        self.app = Application(
            layout=Layout(body, focused_element=self.list_window),
            key_bindings=bindings(self, editing),
            style=style,
            full_screen=True,
            mouse_support=False,
        )
        old = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}
        for sig in old:
            signal.signal(sig, lambda *_: self.leave("abort"))
        try:
            result = self.app.run()
        finally:
            for sig, handler in old.items():
                signal.signal(sig, handler)
        return str(result)

    # -- actions ------------------------------------------------------------------------
    def move(self, step: int) -> None:
        self.index = max(0, min(len(self.model.keys) - 1, self.index + step))
        self.confirm_quit = False
        self.say(self.model.note(self.spec))

    def reset(self) -> None:
        self.model.reset(self.spec)
        self.say(f"{self.spec.name}: back to its default (not saved yet)")

    def change(self, step: int, text: bool = True) -> None:
        spec = self.spec
        if self.model.choices(spec):
            self.model.cycle(spec, step)
            shown = self.model.file_text_of(spec)
            self.say(f"{spec.name} = {shown} (not saved yet) {self.model.note(spec)}".strip())
        elif text:
            self.open_edit()

    def open_edit(self) -> None:
        from prompt_toolkit.document import Document

        self.editing = True
        text = self.model.file_text_of(self.spec)
        self.buffer.set_document(Document(text, len(text)), bypass_readonly=True)
        self.app.layout.focus(self.edit_window)
        self.say("type the value; Enter keeps it, Escape cancels")

    def _check_typed(self) -> None:
        if not self.editing:
            return
        problem = self.model.check(self.spec, self.buffer.text)
        if problem is None:
            self.say("ok: Enter keeps it", "class:ok")
        else:
            self.say(problem, "class:error")

    def commit_edit(self) -> None:
        problem = self.model.set_text(self.spec, self.buffer.text)
        if problem is not None:  # refused in place: the line stays open
            self.say(f"refused: {problem}", "class:error")
            return
        self.close_edit()
        note = self.model.note(self.spec)
        self.say(f"{self.spec.name} = {self.model.file_text_of(self.spec)} (not saved yet) {note}")

    def close_edit(self) -> None:
        self.editing = False
        self.app.layout.focus(self.list_window)

    def save(self) -> None:
        from cuewrap.config import ConfigError

        try:
            self.model.save()
        except ConfigError as exc:
            self.say(str(exc), "class:error")
            return
        self.saved_once = True
        self.say(f"saved to {self.path}", "class:ok")

    def quit(self) -> None:
        if self.model.dirty and not self.confirm_quit:
            self.confirm_quit = True
            self.say("unsaved changes: s saves them, q again leaves without saving", "class:error")
            return
        if self.model.dirty:
            self.leave("discarded")
        else:
            self.leave("saved" if self.saved_once else "unchanged")

    def test(self) -> None:
        from cuewrap.config import ConfigError
        from cuewrap.configure.testnotify import test_notify

        try:
            settings = self.model.settings()
        except ConfigError as exc:
            self.say(f"no test: {exc}", "class:error")
            return

        def write(data: bytes) -> None:
            self.app.output.write_raw(data.decode("utf-8", "replace"))
            self.app.output.flush()

        self.say("test notification: " + test_notify(settings, self.model.env, write))

    def leave(self, result: str) -> None:
        if self.app is not None and self.app.is_running and not self.app.future.done():
            self.app.exit(result=result)

    def say(self, text: str, style: str = "") -> None:
        self.status, self.status_style = text, style

    # -- what is drawn ------------------------------------------------------------------
    def _title(self) -> str:
        star = " (unsaved changes)" if self.model.dirty else ""
        return f" cuewrap config — {self.path}{star}"

    def _list_text(self) -> StyleAndTextTuples:
        rows = self.model.rows()
        width = max(len(r.spec.name) for r in rows)
        out: StyleAndTextTuples = []
        for i, r in enumerate(rows):
            value = r.value if len(r.value) <= 18 else r.value[:17] + "…"
            style = "class:selected" if i == self.index else ("class:changed" if r.changed else "")
            out.append((style, f" {r.spec.name:<{width}}  {value:<18}  {r.source}"))
            out.append(("", "\n"))
        return out[:-1]

    def _cursor(self) -> Any:
        from prompt_toolkit.data_structures import Point

        return Point(0, self.index)

    def _help(self) -> str:
        return f" {self.spec.name}: {self.model.help(self.spec)}"

    def _status(self) -> StyleAndTextTuples:
        return [(self.status_style, f" {self.status}")]

    def _footer(self) -> str:
        return f" {FOOTER}"
