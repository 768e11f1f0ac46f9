"""Inside tmux (docs/tmux-and-ssh.md): presence from tmux's own view of Pi's pane, cues through
tmux.

- ``side``: ``TmuxSide``, held by the controller: presence and the notification's route;
- ``control``: short tmux commands on cuewrap's loop (never a control-mode client);
- ``view``: what tmux says of the pane and its clients, merged with the focus reports;
- ``command``: the one tmux command line (also run blocking at start and by the doctor), the
  one reading of ``allow-passthrough``, text for ``display-message``.

Nothing is imported here.
"""
