"""Answering Pi's dialogs, and in generic mode a program's own (Claude Code's, Codex CLI's,
Gemini CLI's), from elsewhere (docs/answering.md).

Pure parts (no clock, no I/O): ``dialog.py`` (a dialog read from screen lines, the keys that
pick an option), ``own.py`` (one program's dialogs, a strategy each: Claude Code's in
``prompts.py``, ``codex.py``, ``gemini.py``; ``layouts.py`` says which programs), ``book.py``
(the token of the open wait: issued, killed, claimed; the refusal reasons), ``machine.py``
(the state machine of answering: phases, events in, actions out), ``wire.py`` (the control
socket's one request and one reply, bounded). Edge: ``pi.py`` (Pi's dialogs, the answerer's
strategy in Pi mode; it reads Pi's keybindings file), ``screen.py`` + ``worker.py`` (pyte reads
the dialog in a worker process),
``control.py`` (the session's control socket), ``answerer.py`` (the session side, the
machine's shell, held by the controller; ``generic.py`` its generic-mode form, ``build.py``
built for a session), ``client.py`` (``cuewrap answer``).
"""
