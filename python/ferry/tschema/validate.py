"""Checks hand-written C++ against the schema.

A light scanner, not a C++ parser: it blanks comments and literals (keeping line numbers),
then looks for what matters to the schema — `FERRY_REGISTER_NODE_TYPE(X)`, classes named like
declared nodes and their `_type_key`, and the members a custom region declares. It is exact
for code written in the usual style, and errs on the side of silence otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Tuple

__all__ = ["blank_comments_and_literals", "registrations", "members", "classes", "type_keys"]

_REGISTER = re.compile(r"\bFERRY_REGISTER_NODE_TYPE\s*\(\s*((?:::)?[A-Za-z_][\w:]*)\s*\)")
_CLASS = re.compile(r"\b(?:class|struct)\s+([A-Za-z_]\w*)\b(?:\s+final\b)?\s*(?::[^;{}()]*)?\{")
_TYPE_KEY = re.compile(r'\b_type_key\s*=\s*"((?:[^"\\\n]|\\.)*)"')
_SKIP_WORDS = (
    "using",
    "typedef",
    "friend",
    "static_assert",
    "template",
    "public",
    "private",
    "protected",
    "return",
    "enum",
    "class",
    "struct",
)


def blank_comments_and_literals(text: str) -> str:
    """`text` with comments and the contents of string and character literals replaced by
    spaces; newlines stay, so offsets and line numbers do not move."""
    out = list(text)
    i, n = 0, len(text)

    def blank(a: int, b: int) -> None:
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'R"([^()\\\s]{0,16})\(', text[i:])
            if m is None:
                i += 1
                continue
            close = ")" + m.group(1) + '"'
            j = text.find(close, i + m.end())
            j = n if j < 0 else j + len(close)
            blank(i + 2, j - 1)
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator: 1'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, min(j, n))
            i = j + 1
        else:
            i += 1
    return "".join(out)


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def registrations(code: str) -> List[Tuple[str, int]]:
    """(node class name without namespace, line) of each FERRY_REGISTER_NODE_TYPE."""
    return [
        (m.group(1).split("::")[-1], line_of(code, m.start())) for m in _REGISTER.finditer(code)
    ]


def _match_brace(code: str, open_at: int) -> int:
    depth = 0
    for k in range(open_at, len(code)):
        if code[k] == "{":
            depth += 1
        elif code[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return len(code)


@dataclass
class ClassBody:
    name: str
    line: int
    start: int  # offset just after "{"
    stop: int  # offset of the matching "}"


def classes(code: str) -> List[ClassBody]:
    """Class definitions (not forward declarations) in blanked `code`."""
    out = []
    for m in _CLASS.finditer(code):
        open_at = m.end() - 1
        out.append(
            ClassBody(
                m.group(1), line_of(code, m.start()), open_at + 1, _match_brace(code, open_at)
            )
        )
    return out


def type_keys(text: str, code: str, body: ClassBody) -> List[Tuple[str, int]]:
    """(value, line) of `_type_key = "..."` directly in a class body (raw text for the value,
    blanked code to skip comments)."""
    out = []
    for m in _TYPE_KEY.finditer(text, body.start, body.stop):
        if code[m.start() : m.start() + 9] == "_type_key":  # not inside a comment
            out.append((m.group(1), line_of(text, m.start())))
    return out


def members(code: str) -> Dict[str, int]:
    """Name -> line (1-based within `code`) of each member declared at the top level of a
    class-body fragment: data members (`Expr a, b = x;`) and functions (`bool F(...)`)."""
    found: Dict[str, int] = {}
    depth = 0
    start = 0
    i = 0
    n = len(code)
    while i < n:
        c = code[i]
        if c in "({[":
            if depth == 0 and c == "{" and "(" in _strip_templates(code[start:i]):
                # A function body: the statement is the signature before it.
                _declare(code, start, i, found)
                close = _match_brace(code, i)
                i = close + 1
                start = i
                continue
            depth += 1
        elif c in ")}]":
            depth -= 1
        elif c == ";" and depth == 0:
            _declare(code, start, i, found)
            start = i + 1
        elif (
            c == ":" and depth == 0 and code[start:i].strip() in ("public", "private", "protected")
        ):
            start = i + 1
        i += 1
    return found


def _strip_templates(stmt: str) -> str:
    prev = None
    while prev != stmt:
        prev = stmt
        stmt = re.sub(r"<[^<>;{}]*>", " ", stmt)
    return stmt


def _declare(code: str, start: int, stop: int, found: Dict[str, int]) -> None:
    raw = code[start:stop]
    stmt = _strip_templates(raw).strip()
    if not stmt:
        return
    first = re.match(r"(?:::)?([A-Za-z_]\w*)", stmt)
    if first is None or first.group(1) in _SKIP_WORDS or re.match(r"^[A-Z_][A-Z0-9_]*\s*\(", stmt):
        return  # not a declaration, or a macro such as FERRY_DECLARE_FINAL_OBJECT_INFO(...)
    offset = start + (len(raw) - len(raw.lstrip()))
    line = line_of(code, offset)
    paren = stmt.find("(")
    assign = stmt.find("=")
    if paren >= 0 and (assign < 0 or paren < assign):
        m = re.search(r"([A-Za-z_~]\w*)\s*\($", stmt[: paren + 1])
        if m and m.group(1) != "operator":
            found.setdefault(m.group(1), line)
        return
    decl = stmt if assign < 0 else stmt[:assign]
    pieces = (
        [decl] + [p.split("=")[0] for p in stmt[assign:].split(",")[1:]]
        if assign >= 0
        else decl.split(",")
    )
    for piece in pieces:
        m = re.search(r"([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?\s*(?:\{[^}]*\})?\s*$", piece)
        if m:
            found.setdefault(m.group(1), line)
