"""Reads numpydoc class docstrings: the description, and the "Attributes" section for fields.

\"\"\"Constant integer literals in the program.

Attributes
----------
value
    The internal value.
\"\"\"
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

_UNDERLINE = re.compile(r"^-{3,}\s*$")
_ENTRY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(?::.*)?$")


@dataclass
class DocEntry:
    text: str
    #: Offset of the entry's name line from the first line of the docstring.
    offset: int


@dataclass
class Doc:
    #: The description and every section but "Attributes", as plain text lines.
    description: List[str] = field(default_factory=list)
    attributes: Dict[str, DocEntry] = field(default_factory=dict)
    #: (offset, message) for lines the parser could not read.
    problems: List[Tuple[int, str]] = field(default_factory=list)


def _dedent(raw: str) -> List[str]:
    """The docstring's lines with the common indentation of all but the first removed."""
    lines = raw.expandtabs().split("\n")
    indents = [len(s) - len(s.lstrip()) for s in lines[1:] if s.strip()]
    margin = min(indents) if indents else 0
    return [lines[0].strip()] + [s[margin:].rstrip() for s in lines[1:]]


def parse(raw: object) -> Doc:
    doc = Doc()
    if not raw:
        return doc
    if not isinstance(raw, str):  # a class body that assigns `__doc__ = 5`
        doc.problems.append((0, f"__doc__ must be a str, not {raw!r}"))
        return doc
    lines = _dedent(raw)
    # Split into (title, start, body) sections; the leading part has no title.
    sections: List[Tuple[Optional[str], int, List[Tuple[int, str]]]] = [(None, 0, [])]
    i = 0
    while i < len(lines):
        if i + 1 < len(lines) and lines[i].strip() and _UNDERLINE.match(lines[i + 1].strip()):
            sections.append((lines[i].strip(), i, []))
            i += 2
            continue
        sections[-1][2].append((i, lines[i]))
        i += 1
    for title, _, body in sections:
        if title is not None and title.lower() == "attributes":
            _parse_attributes(body, doc)
            continue
        if title is not None:
            doc.description += ["", title, "-" * len(title)]
        doc.description += [text for _, text in body]
    doc.description = _trim(doc.description)
    return doc


def _parse_attributes(body: List[Tuple[int, str]], doc: Doc) -> None:
    name: Optional[str] = None
    start = 0
    text: List[str] = []

    def flush() -> None:
        if name is not None:
            doc.attributes[name] = DocEntry("\n".join(_trim(text)), start)

    for offset, line in body:
        if not line.strip():
            text.append("")
            continue
        if not line[0].isspace():
            flush()
            match = _ENTRY.match(line.strip())
            if match is None:
                doc.problems.append((offset, f"cannot read Attributes entry {line.strip()!r}"))
                name = None
                continue
            name, start, text = match.group(1), offset, []
            if name in doc.attributes:
                doc.problems.append((offset, f"attribute {name!r} is documented twice"))
            continue
        if name is not None:
            text.append(line.strip())
    flush()


def _trim(lines: List[str]) -> List[str]:
    """Drops blank lines at both ends and collapses runs of blank lines."""
    out: List[str] = []
    for line in lines:
        if line.strip() or (out and out[-1].strip()):
            out.append(line)
    while out and not out[-1].strip():
        out.pop()
    return out
