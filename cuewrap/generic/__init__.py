"""Generic mode: timing facts and what known programs' signals mean
(docs/design.md#generic-mode)."""
