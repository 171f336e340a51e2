"""What `tschema generate` and `tschema check` do: plan every output, then write or diff.

`plan()` loads the schema, reads the in-place and scanned C++ files, validates them, and
computes the new bytes of every output in memory. Only when there is no error at all does
`write()` touch the disk: each changed file goes to a temporary file next to it, and the
temporary files are renamed over the targets once all of them are written.
"""

from __future__ import annotations

import difflib
import os
import tempfile
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Set, Tuple

from . import cpp, inplace, pygen, rustgen, ty, validate
from .errors import DiagnosticList
from .loader import load_schema
from .model import NodeDef, Schema

__all__ = ["Options", "Output", "plan", "write", "diff"]

_HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".inc")


@dataclass
class Options:
    """Inputs and outputs of one run; every path may be relative to the working directory."""

    schemas: List[str]
    #: Whole-file outputs.
    header: Optional[str] = None
    source: Optional[str] = None
    python: Optional[str] = None
    pyi: Optional[str] = None
    #: Typed Rust references (`ferry::node_ref!`) for the nodes and enums.
    rust: Optional[str] = None
    #: C++ files whose `// tschema:` regions are regenerated.
    in_place: List[str] = field(default_factory=list)
    #: Hand-written C++ files that are only checked (registrations, type keys).
    scan: List[str] = field(default_factory=list)
    #: Extra `#include "..."` lines for the header and the registration source.
    includes: List[str] = field(default_factory=list)
    guard: Optional[str] = None


@dataclass
class Output:
    path: str
    old: Optional[bytes]
    new: bytes

    @property
    def changed(self) -> bool:
        return self.old != self.new


@dataclass
class _CppFile:
    path: str
    text: str
    lines: List[str]
    regions: List[inplace.Region]


def _read(path: str, errors: DiagnosticList) -> Optional[bytes]:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        errors.add(path, 1, f"cannot read: {e.strerror or e}")
        return None


def _read_existing(path: str) -> Optional[bytes]:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def _eol_of(data: Optional[bytes]) -> str:
    if data:
        first = data.split(b"\n", 1)[0]
        if first.endswith(b"\r") and b"\n" in data:
            return "\r\n"
    return "\n"


def _join(lines: Sequence[cpp.Line], eol: str) -> bytes:
    text = "".join((item.text if isinstance(item, cpp.Raw) else item + eol) for item in lines)
    return inplace.encode(text)


def _rel_include(target: str, from_file: str) -> str:
    return os.path.relpath(target, os.path.dirname(os.path.abspath(from_file))).replace(os.sep, "/")


def plan(options: Options) -> Tuple[Schema, List[Output]]:
    """The schema and every output with its current and new bytes; raises SchemaError."""
    schema = load_schema(options.schemas)
    errors = DiagnosticList()
    schema_names = ", ".join(os.path.basename(f) for f in schema.files)
    emitted = schema.emitted

    paths = [
        p for p in [options.header, options.source, options.python, options.pyi, options.rust] if p
    ]
    paths += options.in_place
    seen_paths: Dict[str, str] = {}
    for p in paths:
        key = os.path.normcase(os.path.abspath(p))
        if key in seen_paths:
            errors.add(p, 1, "this file is given twice as an output or in-place file")
        seen_paths[key] = p
    errors.raise_if_any()

    def known(name: str) -> Optional[str]:
        node = schema.by_name.get(name)
        if node is None:
            return inplace.unknown_node_message(name, [n.name for n in emitted])
        if not node.emitted:
            return (
                f"node {name!r} is declared in {node.file}, which is not among the schema "
                "files of this run; generate its region from there"
            )
        return None

    # In-place files and their regions.
    cpp_files: List[_CppFile] = []
    placed: Dict[str, Tuple[_CppFile, inplace.Region]] = {}
    for path in options.in_place:
        data = _read(path, errors)
        if data is None:
            continue
        text = inplace.decode(data)
        lines = inplace.split_lines(text)
        regions, marker_errors = inplace.parse_regions(path, lines, known)
        errors.items.extend(marker_errors)
        f = _CppFile(path, text, lines, regions)
        cpp_files.append(f)
        for r in regions:
            if r.name in placed:
                first_file, first = placed[r.name]
                errors.add(
                    path,
                    r.line,
                    f"duplicate region for {r.name!r} (first at {first_file.path}:{first.line})",
                )
            elif schema.by_name.get(r.name) is not None:
                placed[r.name] = (f, r)
    errors.raise_if_any()  # marker errors make the rest meaningless

    custom = _check_custom_regions(schema, placed, errors)
    whole = [n for n in emitted if n.name not in placed]
    if (options.in_place or options.header) and whole and not options.header:
        for n in whole:
            errors.add(
                n.file,
                n.line,
                f"{n.name} has no '// tschema: {n.name}' region in the "
                "in-place files, and no --header is given to generate it into",
            )
    if (options.in_place or options.source) and not options.header:
        for e in schema.emitted_enums:
            errors.add(
                e.file,
                e.line,
                f"enum {e.name} is generated only into a whole header (in-place regions hold "
                "nodes): give --header",
            )
    _check_enums_in_regions(schema, placed, errors)
    _check_reducers(schema, placed, custom, bool(options.header), errors)
    _check_region_order(schema, placed, errors)
    has_visit = {n.name: cpp.has_visit_attrs(n, custom) for n in emitted}
    scan_texts = _scan_files(options.scan, errors)
    _check_hand_written(schema, cpp_files, scan_texts, errors)
    # Registrations live in .cc files: check them when some were given (or generated).
    if (
        options.scan
        or options.source
        or any(not p.endswith(_HEADER_SUFFIXES) for p in options.in_place)
    ):
        _check_registrations(
            schema, placed, cpp_files, scan_texts, has_visit, bool(options.source), errors
        )
    errors.raise_if_any()

    outputs: List[Output] = []
    for f in cpp_files:

        def generate(region: inplace.Region) -> List[cpp.Line]:
            node = schema.by_name[region.name]
            return cpp.node_and_ref(node, cpp.CppNames(schema, node.namespace), region.custom)

        new = inplace.encode(inplace.render(f.lines, f.regions, generate))
        outputs.append(Output(f.path, inplace.encode(f.text), new))

    in_place_headers = sorted(
        {f.path for f in cpp_files if f.regions and f.path.endswith(_HEADER_SUFFIXES)}
    )
    if options.header:
        old = _read_existing(options.header)
        includes = [_rel_include(h, options.header) for h in in_place_headers]
        generated: Sequence[cpp.Line] = cpp.header_file(
            schema, whole, schema_names, options.header, includes + options.includes, options.guard
        )
        outputs.append(Output(options.header, old, _join(generated, _eol_of(old))))
    if options.source:
        old = _read_existing(options.source)
        includes = [
            _rel_include(h, options.source)
            for h in ([options.header] if options.header else []) + in_place_headers
        ]
        generated = cpp.source_file(
            schema, emitted, schema_names, includes + options.includes, has_visit
        )
        outputs.append(Output(options.source, old, _join(generated, _eol_of(old))))
    if options.rust:
        old = _read_existing(options.rust)
        generated = rustgen.rust_module(schema, emitted, schema_names)
        outputs.append(Output(options.rust, old, _join(generated, _eol_of(old))))
    if options.python:
        old = _read_existing(options.python)
        generated = pygen.python_module(schema, emitted, schema_names)
        outputs.append(Output(options.python, old, _join(generated, _eol_of(old))))
        pyi = options.pyi or os.path.splitext(options.python)[0] + ".pyi"
        old = _read_existing(pyi)
        outputs.append(
            Output(pyi, old, _join(pygen.python_stub(schema, emitted, schema_names), _eol_of(old)))
        )
    elif options.pyi:
        old = _read_existing(options.pyi)
        outputs.append(
            Output(
                options.pyi,
                old,
                _join(pygen.python_stub(schema, emitted, schema_names), _eol_of(old)),
            )
        )
    return schema, outputs


def _where(node: NodeDef, placed: Dict[str, Tuple[_CppFile, inplace.Region]]) -> Tuple[str, int]:
    if node.name in placed:
        f, r = placed[node.name]
        return f.path, r.line
    return node.file, node.line


def _enums_in(t: ty.Type) -> List[ty.EnumType]:
    """The enum types `t` is or holds (an Optional, Array or Map of one)."""
    if isinstance(t, ty.EnumType):
        return [t]
    if isinstance(t, ty.ArrayType):
        return _enums_in(t.elem)
    if isinstance(t, ty.MapType):
        return _enums_in(t.key) + _enums_in(t.value)
    if isinstance(t, ty.OptionalType):
        return _enums_in(t.value)
    return []


def _check_enums_in_regions(schema, placed, errors) -> None:
    """A node in an in-place region may not hold an enum these schema files declare: enums are
    generated into --header only, which includes the in-place files, so the region would use
    the enum before its declaration. (An enum of another schema file comes from that file's
    header, which the user includes.)"""
    emitted = {e.cls: e for e in schema.emitted_enums}
    for name, (f, region) in placed.items():
        node = schema.by_name[name]
        for fd in node.fields:
            for t in _enums_in(fd.type):
                enum = emitted.get(t.cls)
                if enum is None:
                    continue
                errors.add(
                    f.path,
                    region.line,
                    f"{name} holds enum {enum.name} (field '{fd.name}', "
                    f"{os.path.basename(fd.file)}:{fd.line}), which is generated into --header "
                    "only, and --header includes this file: the region would use the enum "
                    f"before its declaration. Generate {name} into --header (remove the region) "
                    f"or declare {enum.name} in a schema file of its own",
                )
                break


def _check_custom_regions(
    schema: Schema, placed, errors: DiagnosticList
) -> Dict[str, cpp.CustomInfo]:
    """Members of each custom region; reports those that duplicate generated ones."""
    out: Dict[str, cpp.CustomInfo] = {}
    for name, (f, r) in placed.items():
        if r.custom is None:
            continue
        node = schema.by_name[name]
        code = validate.blank_comments_and_literals(r.custom)
        found = {m: r.custom_start + line for m, line in validate.members(code).items()}
        out[name] = cpp.CustomInfo(found)
        fields = {fd.name: fd for fd in node.all_fields}
        generated = {
            "_type_key": "tschema generates it",
            "_type_child_slots": "tschema generates it",
        }
        if node.default_visit_attrs:
            generated["VisitAttrs"] = "default_visit_attrs is on"
        if node.default_sequal_reduce:
            generated["SEqualReduce"] = "default_sequal_reduce is on"
        if node.default_shash_reduce:
            generated["SHashReduce"] = "default_shash_reduce is on"
        for member, line in found.items():
            if member in fields:
                fd = fields[member]
                errors.add(
                    f.path,
                    line,
                    f"custom region of {name} declares {member!r}, which "
                    f"duplicates the schema field of {fd.owner.name} (declared at "
                    f"{fd.file}:{fd.line})",
                )
            elif member in generated:
                errors.add(
                    f.path,
                    line,
                    f"custom region of {name} declares {member}, which "
                    f"tschema generates ({generated[member]})",
                )
    return out


def _check_reducers(
    schema: Schema,
    placed,
    custom: Dict[str, cpp.CustomInfo],
    has_header: bool,
    errors: DiagnosticList,
) -> None:
    """A node that turns a default reducer off must bring its own, unless it is a base node
    with neither (an abstract node compares through its subclasses)."""
    for node in schema.emitted:
        members = custom[node.name].members if node.name in custom else {}
        missing = []
        for method, default, attr in (
            ("SEqualReduce", node.default_sequal_reduce, "default_sequal_reduce"),
            ("SHashReduce", node.default_shash_reduce, "default_shash_reduce"),
        ):
            if not default and method not in members:
                missing.append((method, attr))
        if not missing or (node.is_base and len(missing) == 2):
            continue
        for method, attr in missing:
            if node.name in placed:
                f, r = placed[node.name]
                what = (
                    f"its custom region defines no {method}"
                    if r.custom is not None
                    else f"its region has no custom block defining {method}"
                )
                errors.add(f.path, r.line, f"{node.name} sets {attr} = False, but {what}")
            elif has_header:
                errors.add(
                    node.file,
                    node.attr_line(attr),
                    f"{node.name} sets {attr} = False, but it is generated into the "
                    f"header, where no hand-written {method} can go: give it a "
                    f"'// tschema: {node.name}' region with a custom block, or keep "
                    "the default",
                )


def _check_region_order(schema: Schema, placed, errors: DiagnosticList) -> None:
    for name, (f, r) in placed.items():
        parent = schema.by_name[name].parent
        if parent is not None and parent.name in placed:
            pf, pr = placed[parent.name]
            if pf is f and pr.start > r.start:
                errors.add(
                    f.path,
                    r.line,
                    f"region {name!r} comes before the region of its "
                    f"parent {parent.name!r} (line {pr.line}); C++ needs the parent "
                    "first",
                )


def _scan_files(paths: List[str], errors: DiagnosticList) -> List[Tuple[str, str]]:
    out = []
    for path in paths:
        data = _read(path, errors)
        if data is not None:
            out.append((path, inplace.decode(data)))
    return out


def _hand_written(cpp_files: List[_CppFile], scan_texts) -> List[Tuple[str, str]]:
    """(path, text) of hand-written code: in-place files with their regions blanked (custom
    blocks included: they are checked separately), and the scanned files."""
    out = []
    for f in cpp_files:
        lines = list(f.lines)
        for r in f.regions:
            for i in range(r.start, r.stop + 1):
                lines[i] = "\n" if lines[i].endswith("\n") else ""
        out.append((f.path, "".join(lines)))
    return out + list(scan_texts)


def _check_hand_written(schema: Schema, cpp_files, scan_texts, errors: DiagnosticList) -> None:
    for path, text in _hand_written(cpp_files, scan_texts):
        code = validate.blank_comments_and_literals(text)
        for body in validate.classes(code):
            node = schema.by_name.get(body.name)
            if node is None:
                continue
            for value, line in validate.type_keys(text, code, body):
                if value != node.type_key:
                    errors.add(
                        path,
                        line,
                        f"_type_key {value!r} of {body.name} disagrees with "
                        f"the schema, which says {node.type_key!r} ({node.file}:"
                        f"{node.attr_line('type_key')})",
                    )


def _check_registrations(
    schema: Schema,
    placed,
    cpp_files,
    scan_texts,
    has_visit,
    source_registers: bool,
    errors: DiagnosticList,
) -> None:
    registered: Set[str] = set()
    for _, text in _hand_written(cpp_files, scan_texts):
        code = validate.blank_comments_and_literals(text)
        registered.update(name for name, _ in validate.registrations(code))
    for node in schema.emitted:
        if not has_visit[node.name] or source_registers or node.name in registered:
            continue
        path, line = _where(node, placed)
        errors.add(
            path,
            line,
            f"{node.name} is not registered: no "
            f"FERRY_REGISTER_NODE_TYPE({node.name}) in the C++ files checked (add it to "
            "a .cc file passed with --scan, or generate one with --source)",
        )


def write(outputs: List[Output]) -> List[str]:
    """Writes the changed outputs atomically; returns their paths."""
    changed = [o for o in outputs if o.changed]
    temps: List[Tuple[str, Output]] = []
    try:
        for o in changed:
            directory = os.path.dirname(os.path.abspath(o.path))
            os.makedirs(directory, exist_ok=True)
            fd, tmp = tempfile.mkstemp(
                dir=directory, prefix=f".{os.path.basename(o.path)}.", suffix=".tmp"
            )
            temps.append((tmp, o))
            with os.fdopen(fd, "wb") as f:
                f.write(o.new)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, _mode_for(o.path))
        for tmp, o in temps:
            os.replace(tmp, o.path)
        temps = []
    finally:
        for tmp, _ in temps:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return [o.path for o in changed]


def _mode_for(path: str) -> int:
    try:
        return os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def diff(outputs: List[Output]) -> str:
    """A unified diff of every stale output (current file -> what generate would write)."""
    chunks = []
    for o in outputs:
        if not o.changed:
            continue
        old = inplace.split_lines(inplace.decode(o.old)) if o.old is not None else []
        new = inplace.split_lines(inplace.decode(o.new))
        label = o.path.replace(os.sep, "/")
        for line in difflib.unified_diff(
            old, new, f"a/{label}" if o.old is not None else "/dev/null", f"b/{label}"
        ):
            chunks.append(
                line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
            )
    return "".join(chunks)
