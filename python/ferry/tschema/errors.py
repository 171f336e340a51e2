"""The one exception tschema raises for user errors.

Every problem found in a schema or in the C++ files it edits is reported as
``file:line: what``; several problems found in one run are reported together, one per line,
so a user can fix them all before running the tool again.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable, List, Optional


@dataclass(frozen=True)
class Diagnostic:
    """One problem: where it is and what it is."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{_display_path(self.file)}:{self.line}: {self.message}"


def _display_path(path: str) -> str:
    """The path relative to the working directory when it lies below it, else as given."""
    if not os.path.isabs(path):
        return path
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return path
    return path if rel.startswith("..") else rel


class SchemaError(Exception):
    """A user error in a schema file or in a C++ file with tschema markers.

    ``str(error)`` is one ``file:line: what`` line per problem; ``error.diagnostics`` holds
    them as records. Nothing is written when this is raised.
    """

    def __init__(self, diagnostics: Iterable[Diagnostic]):
        self.diagnostics: List[Diagnostic] = sorted(
            set(diagnostics), key=lambda d: (d.file, d.line, d.message)
        )
        super().__init__("\n".join(str(d) for d in self.diagnostics))

    @classmethod
    def at(cls, file: str, line: int, message: str) -> "SchemaError":
        return cls([Diagnostic(file, line, message)])


class DiagnosticList:
    """Collects diagnostics during a pass and raises them together."""

    def __init__(self) -> None:
        self.items: List[Diagnostic] = []

    def add(self, file: str, line: Optional[int], message: str) -> None:
        self.items.append(Diagnostic(file, line or 1, message))

    def extend(self, error: SchemaError) -> None:
        self.items.extend(error.diagnostics)

    def __bool__(self) -> bool:
        return bool(self.items)

    def raise_if_any(self) -> None:
        if self.items:
            raise SchemaError(self.items)
