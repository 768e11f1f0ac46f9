"""The sessions overview: the registry of running sessions, what each publishes, and
``cuewrap ls`` / ``cuewrap go`` (docs/sessions.md)."""
