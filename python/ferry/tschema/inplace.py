"""In-place regions: finding `// tschema:` markers in a C++ file and regenerating between them.

    // tschema: GlobalVarNode          <- kept byte for byte
    ...generated...                    <- regenerated
      // tschema: custom-begin         <- this block is kept byte for byte and placed at the
      ...hand-written...                  end of the node class, right before its `};`
      // tschema: custom-end
    // tschema: end                    <- kept byte for byte

Everything outside the regions is kept byte for byte, whatever the line endings, tabs,
encoding or final newline. Files are handled as text decoded with `surrogateescape`, so bytes
that are not UTF-8 survive the round trip unchanged.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

from .cpp import Line, Raw
from .errors import Diagnostic

__all__ = ["Region", "split_lines", "parse_regions", "render", "decode", "encode"]

_MARKER = re.compile(r"^[ \t]*//[ \t]*tschema:(.*?)[ \t]*$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_KEYWORDS = ("end", "custom-begin", "custom-end")


def decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def split_lines(text: str) -> List[str]:
    """Lines with their endings; only "\\n" ends a line (a "\\r" before it stays with it)."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def _content(line: str) -> str:
    return line.rstrip("\n").rstrip("\r")


def _eol(line: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    return "\n" if line.endswith("\n") else ""


@dataclass
class Region:
    name: str
    #: Index (0-based) of the opening marker line and of the `end` marker line.
    start: int
    stop: int
    #: The custom block (begin marker through end marker, verbatim), if any.
    custom: Optional[str]
    custom_start: int = -1
    custom_stop: int = -1

    @property
    def line(self) -> int:
        """1-based line of the opening marker."""
        return self.start + 1


def parse_regions(
    path: str, lines: Sequence[str], known: Callable[[str], Optional[str]]
) -> Tuple[List[Region], List[Diagnostic]]:
    """The regions of a file, or the marker errors in it.

    `known(name)` returns None for a node that may have a region, else why it may not.
    """
    regions: List[Region] = []
    errors: List[Diagnostic] = []
    current: Optional[Region] = None
    custom_begin = -1

    def err(i: int, message: str) -> None:
        errors.append(Diagnostic(path, i + 1, message))

    for i, line in enumerate(lines):
        match = _MARKER.match(_content(line))
        if match is None:
            continue
        arg = match.group(1).strip()
        if not arg or " " in arg or "\t" in arg or not (arg in _KEYWORDS or _NAME.match(arg)):
            err(
                i,
                f"malformed tschema marker {_content(line).strip()!r}: expected "
                "'// tschema: <NodeName>', 'custom-begin', 'custom-end' or 'end'",
            )
            continue
        if arg == "custom-begin":
            if current is None:
                err(
                    i,
                    "'// tschema: custom-begin' outside a region (custom code belongs "
                    "between '// tschema: <NodeName>' and '// tschema: end')",
                )
            elif custom_begin >= 0:
                err(
                    i,
                    f"nested '// tschema: custom-begin' (the custom block opened at line "
                    f"{custom_begin + 1} is not closed)",
                )
            elif current.custom is not None:
                err(
                    i,
                    f"second custom block in region {current.name!r} (opened at line "
                    f"{current.line}); a region holds at most one",
                )
            else:
                custom_begin = i
        elif arg == "custom-end":
            if current is None:
                err(i, "'// tschema: custom-end' outside a region")
            elif custom_begin < 0:
                err(i, "'// tschema: custom-end' without '// tschema: custom-begin'")
            else:
                current.custom = "".join(lines[custom_begin : i + 1])
                current.custom_start, current.custom_stop = custom_begin, i
                custom_begin = -1
        elif arg == "end":
            if current is None:
                err(i, "'// tschema: end' without an open region")
                continue
            if custom_begin >= 0:
                err(
                    custom_begin,
                    "'// tschema: custom-begin' is not closed by "
                    "'// tschema: custom-end' before the region ends",
                )
                custom_begin = -1
            current.stop = i
            regions.append(current)
            current = None
        else:
            if current is not None:
                err(
                    i,
                    f"region {arg!r} opens inside region {current.name!r} (opened at line "
                    f"{current.line}); regions cannot nest",
                )
                continue
            why = known(arg)
            if why is not None:
                err(i, why)
            current = Region(arg, i, -1, None)
    if current is not None:
        if custom_begin >= 0:
            err(
                custom_begin, "'// tschema: custom-begin' is not closed by '// tschema: custom-end'"
            )
        err(current.start, f"region {current.name!r} is not closed by '// tschema: end'")
    return regions, errors


def unknown_node_message(name: str, names: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, list(names), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown node {name!r}: no class of that name is declared in the schema{hint}"


def render(
    lines: Sequence[str], regions: Sequence[Region], generate: Callable[[Region], List[Line]]
) -> str:
    """The file with every region's generated text replaced by `generate(region)`.

    Generated lines take the indentation and line ending of the region's opening marker.
    """
    out: List[str] = []
    pos = 0
    for region in regions:
        out.extend(lines[pos : region.start + 1])
        opening = lines[region.start]
        indent = opening[: len(opening) - len(opening.lstrip(" \t"))]
        eol = _eol(opening) or "\n"
        body: List[Line] = ["// clang-format off"] + generate(region) + ["// clang-format on"]
        for item in body:
            if isinstance(item, Raw):
                out.append(item.text)
            else:
                out.append(f"{indent}{item}{eol}" if item else eol)
        out.append(lines[region.stop])
        pos = region.stop + 1
    out.extend(lines[pos:])
    return "".join(out)


def outside_regions(lines: Sequence[str], regions: Sequence[Region]) -> Dict[int, str]:
    """Line index -> line, for the lines outside every region (hand-written text)."""
    inside: Set[int] = set()
    for r in regions:
        inside.update(range(r.start, r.stop + 1))
    return {i: line for i, line in enumerate(lines) if i not in inside}
