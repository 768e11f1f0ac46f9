"""The session's wiring: one session spawned, its parts built and handed over, torn down
(docs/architecture.md#modules). Nothing below this floor imports it."""
