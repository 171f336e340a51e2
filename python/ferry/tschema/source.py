"""Line numbers for schema classes and their members.

Declarations are read from the imported classes (model.py); this module only answers "on which
line is field `x` of class `C`" so errors can point there. It parses each schema file once with
the `ast` module and indexes the class statements.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple


@dataclass
class ClassLines:
    name: str
    #: The line of the first decorator (or of `class` when there is none).
    first: int
    #: The line of the `class` keyword.
    line: int
    last: int
    #: Line of each name bound in the class body: annotations, assignments, defs, classes.
    members: Dict[str, int] = field(default_factory=dict)
    #: (name, line) of each later binding of a name already bound in the class body.
    repeated: List[Tuple[str, int]] = field(default_factory=list)
    #: Line of each base class expression, in order.
    bases: List[int] = field(default_factory=list)
    docstring: Optional[int] = None


class SourceIndex:
    """Class and member lines of the schema files, parsed once per file."""

    def __init__(self) -> None:
        self._files: Dict[str, List[ClassLines]] = {}

    def classes(self, file: str) -> List[ClassLines]:
        if file not in self._files:
            self._files[file] = _index_file(file)
        return self._files[file]

    def find(self, file: str, name: str, line: Optional[int] = None) -> Optional[ClassLines]:
        """The class `name` in `file`; with `line`, the one whose statement spans that line."""
        candidates = [c for c in self.classes(file) if c.name == name]
        if line is not None:
            spanning = [c for c in candidates if c.first <= line <= c.last]
            if spanning:
                return spanning[-1]
        return candidates[-1] if candidates else None


def _index_file(file: str) -> List[ClassLines]:
    try:
        with open(file, "rb") as f:
            tree = ast.parse(f.read(), filename=file)
    except (OSError, SyntaxError, ValueError):
        return []
    result = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        first = min([d.lineno for d in node.decorator_list] + [node.lineno])
        info = ClassLines(node.name, first, node.lineno, node.end_lineno or node.lineno)
        info.bases = [b.lineno for b in node.bases]
        for i, stmt in enumerate(node.body):
            if (
                i == 0
                and isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)
            ):
                info.docstring = stmt.lineno
            for name in _bound_names(stmt):
                if name in info.members:
                    info.repeated.append((name, stmt.lineno))
                info.members.setdefault(name, stmt.lineno)
        result.append(info)
    return result


def _bound_names(stmt: ast.stmt) -> List[str]:
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return [stmt.target.id]
    if isinstance(stmt, ast.Assign):
        return [t.id for t in stmt.targets if isinstance(t, ast.Name)]
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    return []
