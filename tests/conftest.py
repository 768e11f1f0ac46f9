"""Shared fixtures: the Pi test rig (see tests/pirig.py and tests/fakemodel.py)."""

from pirig import ask_ext, fakemodel, pi_bin, pi_home, pi_session, pi_version

__all__ = ["ask_ext", "fakemodel", "pi_bin", "pi_home", "pi_session", "pi_version"]
