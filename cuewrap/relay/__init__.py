"""The relay and its plumbing: the bytes between the host terminal and the child's PTY.

- ``relay``: ``Relay``, the one select loop between the host terminal and the child's PTY;
- ``leader``: the child in its PTY under a session leader of cuewrap's own (job control works);
- ``jobs``: Ctrl-Z, SIGTSTP and SIGCONT: the child and cuewrap stop and continue together;
- ``signals``: signals for the loop (handlers that do nothing, the numbers read from a pipe);
- ``inject``: cuewrap's own bytes, written at the output's safe points;
- ``events``: what the relay reports (one typed union), and its one translation into facts and
  decision-log records.

Nothing is imported here: ``leader`` is imported before the child is spawned, and importing it
runs this file, so it must stay empty (tests/test_imports.py holds that start-up budget).
"""
