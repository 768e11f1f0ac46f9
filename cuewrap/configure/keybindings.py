"""The editor's keys (``editor.Editor``): browsing the list, and the edit line."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from prompt_toolkit.filters import Filter
    from prompt_toolkit.key_binding import KeyBindings


class Actions(Protocol):
    """What the keys do (the editor)."""

    def move(self, step: int) -> None: ...
    def change(self, step: int, text: bool = True) -> None: ...
    def open_edit(self) -> None: ...
    def reset(self) -> None: ...
    def test(self) -> None: ...
    def save(self) -> None: ...
    def quit(self) -> None: ...
    def commit_edit(self) -> None: ...
    def close_edit(self) -> None: ...
    def leave(self, result: str) -> None: ...
    def say(self, text: str, style: str = "") -> None: ...


def bindings(editor: Actions, editing: Filter) -> KeyBindings:
    from prompt_toolkit.key_binding import KeyBindings

    kb = KeyBindings()
    browsing = ~editing

    @kb.add("c-c", eager=True)
    def _(event: Any) -> None:
        editor.leave("abort")

    @kb.add("up", filter=browsing)
    @kb.add("k", filter=browsing)
    def _(event: Any) -> None:
        editor.move(-1)

    @kb.add("down", filter=browsing)
    @kb.add("j", filter=browsing)
    def _(event: Any) -> None:
        editor.move(1)

    @kb.add("enter", filter=browsing)
    @kb.add("space", filter=browsing)
    def _(event: Any) -> None:
        editor.change(1)

    @kb.add("right", filter=browsing)
    def _(event: Any) -> None:
        editor.change(1, text=False)

    @kb.add("left", filter=browsing)
    def _(event: Any) -> None:
        editor.change(-1, text=False)

    @kb.add("e", filter=browsing)
    def _(event: Any) -> None:
        editor.open_edit()

    @kb.add("d", filter=browsing)
    @kb.add("delete", filter=browsing)
    def _(event: Any) -> None:
        editor.reset()

    @kb.add("t", filter=browsing)
    def _(event: Any) -> None:
        editor.test()

    @kb.add("s", filter=browsing)
    @kb.add("c-s")
    def _(event: Any) -> None:
        editor.save()

    @kb.add("q", filter=browsing)
    @kb.add("escape", filter=browsing, eager=True)
    def _(event: Any) -> None:
        editor.quit()

    @kb.add("enter", filter=editing)
    def _(event: Any) -> None:
        editor.commit_edit()

    @kb.add("escape", filter=editing, eager=True)
    def _(event: Any) -> None:
        editor.close_edit()
        editor.say("edit cancelled")

    return kb
