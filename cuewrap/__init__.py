"""cuewrap: run Pi in a PTY and remind the user when Pi needs them."""

__version__ = "0.1.0"
