"""Fixtures of the tschema tests; the helpers live in tschema_support (imported by name)."""

from tschema_support import build  # noqa: F401  (the session fixture compiling the output)
