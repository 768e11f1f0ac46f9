"""Inside tmux (docs/tmux-and-ssh.md): presence from tmux's own view of Pi's pane, cues through
tmux.

- ``side``: ``TmuxSide``, held by the controller: presence and the notification's route;
- ``control``: a control-mode client on cuewrap's loop, and short tmux commands;
- ``view``: what tmux says of the pane and its clients, merged with the focus reports;
- ``protocol``: control mode's lines, parsed;
- ``command``: the one tmux command line (also run blocking at start and by the doctor), and the
  one reading of ``allow-passthrough``.

Nothing is imported here.
"""
