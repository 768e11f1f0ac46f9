"""Pure byte-level terminal code: input focus filter, output tracker, escape sequences."""
