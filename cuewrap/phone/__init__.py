"""``cuewrap phone``: the phone set up in one step, and ``--check`` (docs/phone.md).

Beside ``configure`` and ``doctor`` (``doctor`` asks ``setup.check`` for its lines). The
phone's channel in a session is ``deliver/phone.py`` (its worker ``deliver/phone_worker.py``);
what is published and read, and the topics' checks, are ``cuewrap/ntfy.py`` (pure).
"""
