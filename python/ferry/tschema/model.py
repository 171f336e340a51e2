"""The schema model: declared classes read into checked `NodeDef` / `FieldDef` records.

`build(classes, emitted, index)` inspects each declared class (its bases, class attributes,
annotations, defaults and docstring), resolves field types, and checks the schema as a whole
(type keys, names, the hierarchy, field shadowing, default order, child slots). Every problem
is collected with its schema file and line and raised as one `SchemaError`.
"""

from __future__ import annotations

import difflib
import inspect
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Set

from . import docstring, ty
from .errors import DiagnosticList
from .lang import CLASS_ATTRIBUTES, ENUM_ATTRIBUTES, Declaration, Enum, Object
from .source import ClassLines, SourceIndex

__all__ = ["FieldDef", "NodeDef", "EnumDef", "Schema", "build"]

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_NAMESPACE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*$")
#: The names Python (and @declare_enum) put into a class's __dict__ without the class body
#: writing them: not members. A body that does write one (`__doc__ = 1`) is refused as a member.
_CLASS_DUNDERS = frozenset(
    {
        "__module__",
        "__qualname__",
        "__doc__",
        "__dict__",
        "__weakref__",
        "__annotations__",
        "__orig_bases__",
        "__type_params__",
        "__firstlineno__",
        "__static_attributes__",
        "__tschema_enum__",
    }
)

#: C++ keywords and names a field may not take (they would clash with generated members).
_CPP_KEYWORDS = frozenset(
    """alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t
    char16_t char32_t class compl concept const consteval constexpr constinit const_cast
    continue co_await co_return co_yield decltype default delete do double dynamic_cast else
    enum explicit export extern false float for friend goto if inline int long mutable
    namespace new noexcept not not_eq nullptr operator or or_eq private protected public
    register reinterpret_cast requires return short signed sizeof static static_assert
    static_cast struct switch template this thread_local throw true try typedef typeid
    typename union unsigned using virtual void volatile wchar_t while xor xor_eq""".split()
)
_RESERVED_MEMBERS = frozenset(
    """VisitAttrs SEqualReduce SHashReduce RuntimeTypeIndex ContainerType CopyOnWrite
    IsInstance GetTypeKey type_index use_count unique as get same_as defined data_ header_
    handle""".split()
)


@dataclass
class FieldDef:
    name: str
    type: ty.Type
    doc: str
    has_default: bool
    default: Any
    #: "compare", "def" or "ignore" (ty.STRUCTURAL_ROLES).
    structural: str
    file: str
    line: int
    owner: "NodeDef" = field(repr=False, default=None)  # type: ignore[assignment]


@dataclass
class NodeDef:
    cls: type = field(repr=False)
    name: str
    ref_name: str
    type_key: str
    namespace: str
    file: str
    line: int
    doc: List[str]
    default_visit_attrs: bool
    default_sequal_reduce: bool
    default_shash_reduce: bool
    final: bool
    type_child_slots: int
    #: Whether `type_child_slots` was given in the schema (else computed).
    explicit_child_slots: bool
    fields: List[FieldDef]
    parent: Optional["NodeDef"] = field(repr=False, default=None)
    children: List["NodeDef"] = field(repr=False, default_factory=list)
    #: False for nodes only referenced from the files being generated (declared elsewhere).
    emitted: bool = True
    #: Fields writable through reflection (`_type_mutable`); None when the schema leaves it to
    #: the parent (see `is_mutable`).
    mutable: Optional[bool] = None
    #: Line of each class attribute set in the schema, for messages.
    attr_lines: Dict[str, int] = field(repr=False, default_factory=dict)

    @property
    def all_fields(self) -> List[FieldDef]:
        """Inherited fields first (from the root down), then this node's own."""
        chain = []
        node: Optional[NodeDef] = self
        while node is not None:
            chain.append(node)
            node = node.parent
        return [f for n in reversed(chain) for f in n.fields]

    @property
    def is_mutable(self) -> bool:
        """Whether the fields are writable through reflection: `mutable`, else the parent's (as
        C++ inherits `_type_mutable`)."""
        node: Optional[NodeDef] = self
        while node is not None:
            if node.mutable is not None:
                return node.mutable
            node = node.parent
        return False

    @property
    def is_base(self) -> bool:
        """True when other nodes derive from this one in the schema."""
        return bool(self.children)

    @property
    def ancestors(self) -> List["NodeDef"]:
        out = []
        node = self.parent
        while node is not None:
            out.append(node)
            node = node.parent
        return out

    @property
    def qualified_name(self) -> str:
        return f"{self.namespace}::{self.name}" if self.namespace else self.name

    def attr_line(self, name: str) -> int:
        return self.attr_lines.get(name, self.line)


@dataclass
class EnumDef:
    """A declared enum: C++ ``enum class Name : int64_t``, Python ``enum.IntEnum``."""

    cls: type = field(repr=False)
    name: str
    type_key: str
    namespace: str
    file: str
    line: int
    doc: List[str]
    #: (name, value) in declaration order.
    members: List[tuple]
    emitted: bool = True

    @property
    def qualified_name(self) -> str:
        return f"{self.namespace}::{self.name}" if self.namespace else self.name

    def type(self) -> ty.EnumType:
        return ty.EnumType(self.cls, self.type_key, tuple(self.members))


@dataclass
class Schema:
    #: Every node, parents before children; emitted ones in declaration order.
    nodes: List[NodeDef]
    #: The schema files given, in order.
    files: List[str]
    #: Every enum the nodes use or the files declare, in declaration order.
    enums: List[EnumDef] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.by_name: Dict[str, NodeDef] = {n.name: n for n in self.nodes}
        self.by_cls: Dict[type, NodeDef] = {n.cls: n for n in self.nodes}
        self.by_enum: Dict[type, EnumDef] = {e.cls: e for e in self.enums}

    @property
    def emitted(self) -> List[NodeDef]:
        return [n for n in self.nodes if n.emitted]

    @property
    def emitted_enums(self) -> List[EnumDef]:
        return [e for e in self.enums if e.emitted]


def own_annotations(cls: type) -> Dict[str, Any]:
    """The annotations written in `cls` itself (not inherited), in order."""
    try:
        return dict(inspect.get_annotations(cls))
    except NameError:  # lazily evaluated annotations (Python 3.14) naming an unknown type
        # Python 3.14's API, not in the typeshed of the Pythons the type check runs on.
        return dict(inspect.get_annotations(cls, format=inspect.Format.FORWARDREF))  # type: ignore[call-arg,attr-defined,unused-ignore]


def is_declared(cls: Any) -> bool:
    return isinstance(cls, type) and "__tschema__" in cls.__dict__


def declaration(cls: type) -> Declaration:
    return cls.__dict__["__tschema__"]


def is_enum(cls: Any) -> bool:
    return isinstance(cls, type) and "__tschema_enum__" in cls.__dict__


def enum_declaration(cls: type) -> Declaration:
    return cls.__dict__["__tschema_enum__"]


class _Builder:
    def __init__(self, index: SourceIndex):
        self.index = index
        self.errors = DiagnosticList()
        self.nodes: Dict[type, NodeDef] = {}
        self.lines: Dict[type, Optional[ClassLines]] = {}
        self.raw_fields: Dict[type, List[tuple]] = {}
        self.enums: Dict[type, EnumDef] = {}

    # Locations -----------------------------------------------------------------------------
    def where(self, cls: type) -> tuple:
        decl = _any_declaration(cls)
        if decl is None:
            return _class_file(cls), 1
        lines = self.class_lines(cls)
        return decl.file, lines.line if lines else decl.line

    def class_lines(self, cls: type) -> Optional[ClassLines]:
        if cls not in self.lines:
            decl = _any_declaration(cls)
            assert decl is not None
            self.lines[cls] = self.index.find(decl.file, cls.__name__, decl.line)
        return self.lines[cls]

    def member_line(self, cls: type, name: str) -> int:
        lines = self.class_lines(cls)
        if lines is None:
            return self.where(cls)[1]
        return lines.members.get(name, lines.line)

    def error(self, cls: type, message: str, member: Optional[str] = None) -> None:
        file, line = self.where(cls)
        if member is not None and _any_declaration(cls) is not None:
            line = self.member_line(cls, member)
        self.errors.add(file, line, message)

    # Reading one enum ----------------------------------------------------------------------
    def read_enum(self, cls: type, emitted: bool) -> EnumDef:
        name = cls.__name__
        attrs = dict(cls.__dict__)
        file, line = self.where(cls)
        if cls.__bases__ != (Enum,):
            self.error(
                cls,
                f"enum {name} must derive from ferry.tschema.Enum alone (not "
                f"{', '.join(b.__name__ for b in cls.__bases__)})",
            )
        if not _IDENT.match(name) or name in _CPP_KEYWORDS:
            self.error(cls, f"{name!r} is not a valid C++ enum name")
        type_key = attrs.get("type_key")
        if "type_key" not in attrs:
            self.error(cls, f"enum {name} has no type_key (every enum needs a unique one)")
            type_key = f"<{name}>"
        elif not isinstance(type_key, str) or not type_key:
            self.error(cls, f"type_key of enum {name} must be a non-empty str", "type_key")
            type_key = f"<{name}>"
        namespace = attrs.get("namespace", ENUM_ATTRIBUTES["namespace"])
        if not isinstance(namespace, str) or (namespace and not _NAMESPACE.match(namespace)):
            self.error(
                cls, f"namespace of enum {name} must look like 'a::b' (or be '')", "namespace"
            )
            namespace = ""
        lines = self.class_lines(cls)
        for member, member_line in lines.repeated if lines else []:
            self.errors.add(file, member_line, f"duplicate member {member!r} in enum {name}")
        members: List[tuple] = []
        by_value: Dict[int, str] = {}
        by_cpp: Dict[str, str] = {}
        written = lines.members if lines else {}
        for key, value in attrs.items():
            if key in ENUM_ATTRIBUTES or (key in _CLASS_DUNDERS and key not in written):
                continue  # what Python and @declare_enum put into every class
            where = f"member {key!r} of enum {name}"
            if key.startswith("_") or key == "mro":
                # The generated enum.IntEnum would refuse them ('mro', '_ignore_', '__init__'
                # ...) or take them as attributes, not members ('_missing_', '__x__'): the
                # class would fail at import or lack the member C++ has.
                self.error(
                    cls, f"{where} is reserved by Python enums ('_...', dunders and 'mro')", key
                )
                continue
            if not _IDENT.match(key):
                self.error(cls, f"{where} is not a C++ identifier (ASCII letters, digits, _)", key)
                continue
            if callable(value) or isinstance(value, (staticmethod, classmethod, property)):
                self.error(
                    cls,
                    f"unsupported construct: {key!r} in enum {name}; an enum holds only "
                    "members (Name = int) and type_key",
                    key,
                )
                continue
            if not isinstance(value, int) or isinstance(value, bool):
                self.error(cls, f"{where} must be an int, not {value!r}", key)
                continue
            if not -(1 << 63) <= value < (1 << 63):
                self.error(cls, f"{where} ({value}) is out of the int64 range", key)
                continue
            if value in by_value:
                self.error(
                    cls, f"{where} repeats the value {value} of member {by_value[value]!r}", key
                )
                continue
            cpp_name = ty.cpp_enum_member(key)
            if cpp_name in by_cpp:
                self.error(
                    cls,
                    f"{where} and member {by_cpp[cpp_name]!r} are both {cpp_name} in C++",
                    key,
                )
                continue
            by_value[value] = key
            by_cpp[cpp_name] = key
            members.append((key, value))
        candidates = [
            k
            for k in attrs
            if k not in ENUM_ATTRIBUTES and (k not in _CLASS_DUNDERS or k in written)
        ]
        if not candidates:
            self.error(cls, f"enum {name} has no members")
        doc = docstring.parse(attrs.get("__doc__"))
        return EnumDef(
            cls=cls,
            name=name,
            type_key=type_key,
            namespace=namespace,
            file=file,
            line=line,
            doc=doc.description,
            members=members,
            emitted=emitted,
        )

    # Reading one class ---------------------------------------------------------------------
    def read_class(self, cls: type, emitted: bool) -> NodeDef:
        name = cls.__name__
        attrs = dict(cls.__dict__)
        file, line = self.where(cls)
        ok = True

        bases = cls.__bases__
        if len(bases) != 1:
            self.error(
                cls,
                f"unsupported construct: {name} has {len(bases)} base classes; a node derives "
                "from exactly one (Object or a declared node)",
            )
            ok = False
        elif bases[0] is not Object and not is_declared(bases[0]):
            self.error(
                cls,
                f"{name} derives from {bases[0].__name__}, which is neither "
                "ferry.tschema.Object nor declared with @declare",
            )
            ok = False

        values: Dict[str, Any] = {}
        for key, default in CLASS_ATTRIBUTES.items():
            values[key] = attrs.get(key, default)
        type_key = values["type_key"]
        if "type_key" not in attrs:
            self.error(cls, f"{name} has no type_key (every node needs a unique one)")
            ok = False
        elif not isinstance(type_key, str) or not type_key:
            self.error(cls, f"type_key of {name} must be a non-empty str", "type_key")
            ok = False
        for key in ("default_visit_attrs", "default_sequal_reduce", "default_shash_reduce"):
            if not isinstance(values[key], bool):
                self.error(cls, f"{key} of {name} must be True or False", key)
                ok = False
        if values["final"] is not None and not isinstance(values["final"], bool):
            self.error(cls, f"final of {name} must be True or False", "final")
            ok = False
        if values["mutable"] is not None and not isinstance(values["mutable"], bool):
            self.error(cls, f"mutable of {name} must be True or False", "mutable")
            ok = False
        slots = values["type_child_slots"]
        if slots is not None and (
            not isinstance(slots, int) or isinstance(slots, bool) or not 0 <= slots < 2**31
        ):
            self.error(cls, f"type_child_slots of {name} must be an int >= 0", "type_child_slots")
            ok = False
        if not _IDENT.match(name) or name in _CPP_KEYWORDS:
            self.error(cls, f"{name!r} is not a valid C++ class name")
            ok = False
        ref_name = values["ref_name"]
        if ref_name is None:
            ref_name = _default_ref_name(name)
            if ref_name is None:
                self.error(
                    cls,
                    f"cannot name the reference class of {name}: end the class name with "
                    "'Node' (IntImmNode -> IntImm) or set ref_name",
                )
                ok = False
        elif (
            not isinstance(ref_name, str)
            or not _IDENT.match(ref_name)
            or (ref_name in _CPP_KEYWORDS or ref_name == name)
        ):
            self.error(
                cls, f"ref_name of {name} must be a C++ identifier other than {name}", "ref_name"
            )
            ok = False
        namespace = values["namespace"]
        if "namespace" not in attrs:
            namespace = None  # inherited from the parent below
        elif not isinstance(namespace, str) or (namespace and not _NAMESPACE.match(namespace)):
            self.error(cls, f"namespace of {name} must look like 'a::b' (or be '')", "namespace")
            ok = False

        fields = self.read_fields(cls)
        known = set(CLASS_ATTRIBUTES) | {f[0] for f in fields}
        for key, value in attrs.items():
            if key in known or (key.startswith("__") and key.endswith("__")):
                continue
            self.error(cls, _unsupported_member(name, key, value), key)
            ok = False

        doc = docstring.parse(cls.__dict__.get("__doc__"))
        lines = self.class_lines(cls)
        doc_line = lines.docstring if lines and lines.docstring else line
        for offset, problem in doc.problems:
            self.errors.add(file, doc_line + offset, f"docstring of {name}: {problem}")
        field_names = {f[0] for f in fields}
        for attr, entry in doc.attributes.items():
            if attr not in field_names:
                self.errors.add(
                    file,
                    doc_line + entry.offset,
                    f"docstring of {name} documents {attr!r}, which is not a field of {name}",
                )
        if not ok:
            # Keep going with stand-ins, so that field errors are reported in the same run.
            type_key = type_key if isinstance(type_key, str) and type_key else f"<{name}>"
            if not isinstance(ref_name, str) or not _IDENT.match(ref_name) or ref_name == name:
                ref_name = f"{name}_ref_"
            if namespace is not None and not isinstance(namespace, str):
                namespace = ""
            for key in ("default_visit_attrs", "default_sequal_reduce", "default_shash_reduce"):
                values[key] = bool(values[key])
            if not isinstance(values["final"], bool):
                values["final"] = None
            if not isinstance(values["mutable"], bool):
                values["mutable"] = None
            if not isinstance(slots, int) or isinstance(slots, bool) or slots < 0:
                slots = None
        node = NodeDef(
            cls=cls,
            name=name,
            ref_name=ref_name,
            type_key=type_key,
            namespace=namespace,
            file=file,
            line=line,
            doc=doc.description,
            default_visit_attrs=values["default_visit_attrs"],
            default_sequal_reduce=values["default_sequal_reduce"],
            default_shash_reduce=values["default_shash_reduce"],
            final=values["final"],  # resolved in finish()
            type_child_slots=slots if slots is not None else 0,
            mutable=values["mutable"],
            explicit_child_slots=slots is not None,
            fields=[],
            emitted=emitted,
        )
        node.attr_lines = {k: self.member_line(cls, k) for k in attrs if k in CLASS_ATTRIBUTES}
        self.raw_fields[cls] = [(n, a, d, doc.attributes.get(n)) for n, a, d in fields]
        return node

    def read_fields(self, cls: type) -> List[tuple]:
        """(name, raw annotation, FieldSpec) for each own field, in declaration order."""
        out = []
        annotations = own_annotations(cls)
        for fname, annotation in annotations.items():
            value = cls.__dict__.get(fname, ty.FieldSpec._NO_DEFAULT)
            spec = value if isinstance(value, ty.FieldSpec) else ty.FieldSpec(value)
            out.append((fname, annotation, spec))
        return out

    # Types ---------------------------------------------------------------------------------
    def resolve(self, raw: Any, cls: type, fname: str, depth: int = 0) -> Optional[ty.Type]:
        where = f"field {fname!r} of {cls.__name__}"
        if isinstance(raw, str):
            try:
                raw = eval(raw, dict(declaration(cls).module_globals))
            except NameError as e:
                missing = getattr(e, "name", None) or str(e)
                self.error(cls, f"unknown type {missing!r} for {where}", fname)
                return None
            except AttributeError as e:
                self.error(cls, f"{e} (for {where})", fname)
                return None
            except Exception as e:  # any failure is a user error here
                self.error(cls, f"cannot read the type of {where}: {type(e).__name__}: {e}", fname)
                return None
        if isinstance(raw, (ty.Scalar, ty.Builtin)):
            return raw
        if isinstance(raw, ty._Deferred):
            args = [self.resolve(a, cls, fname, depth + 1) for a in raw.args]
            if any(a is None for a in args):
                return None
            name = raw.generic.name
            if name == "Optional" and isinstance(args[0], ty.OptionalType):
                self.error(cls, f"unsupported construct: ty.Optional cannot nest ({where})", fname)
                return None
            if name == "Optional" and args[0] is ty.Any:
                self.error(
                    cls,
                    f"unsupported construct: ty.Optional[ty.Any] ({where}); "
                    "ty.Any already holds None",
                    fname,
                )
                return None
            return raw.generic.make(*args)
        if isinstance(raw, ty._Generic):
            self.error(
                cls,
                f"{raw.spelling} needs type arguments, as in "
                f"{raw.spelling}[{', '.join(['T'] * raw.arity)}] ({where})",
                fname,
            )
            return None
        if is_declared(raw):
            return ty.NodeType(raw)
        if is_enum(raw):
            enum_def = self.enums.get(raw)
            if enum_def is None:  # pragma: no cover - the loader passes every enum used
                self.error(cls, f"enum {raw.__name__} of {where} is not part of the schema", fname)
                return None
            return enum_def.type()
        if raw is Enum or (isinstance(raw, type) and issubclass(raw, Enum)):
            self.error(
                cls,
                f"{raw.__name__} is used as the type of {where} but is not declared with "
                "@declare_enum",
                fname,
            )
            return None
        if raw is Object:
            self.error(cls, f"use ty.ObjectRef for a field holding any object ({where})", fname)
            return None
        if isinstance(raw, type) and issubclass(raw, Object):
            self.error(
                cls,
                f"{raw.__name__} is used as the type of {where} but is not declared with @declare",
                fname,
            )
            return None
        if isinstance(raw, ty.FieldSpec):
            self.error(
                cls,
                f"ty.field(...) is a value, not a type: write "
                f"`{fname}: T = ty.field(...)` ({where})",
                fname,
            )
            return None
        spelled = raw.__name__ if isinstance(raw, type) else repr(raw)
        self.error(
            cls,
            f"unknown type {spelled} for {where}; the types are ty.* "
            "(ty.int64_t, ty.String, ty.Array[T], ...) and declared nodes",
            fname,
        )
        return None

    def finish_fields(self, node: NodeDef) -> None:
        cls = node.cls
        for fname, raw, spec, doc in self.raw_fields[cls]:
            line = self.member_line(cls, fname)
            if fname.startswith("_"):
                self.error(
                    cls,
                    f"unsupported construct: field {fname!r} of {node.name} starts "
                    "with '_' (reserved)",
                    fname,
                )
                continue
            if fname in _CPP_KEYWORDS or fname in _RESERVED_MEMBERS:
                self.error(
                    cls,
                    f"field {fname!r} of {node.name} clashes with a C++ keyword or "
                    "a generated member; rename it",
                    fname,
                )
                continue
            ftype = self.resolve(raw, cls, fname)
            if ftype is None:
                continue
            if spec.structural not in ty.STRUCTURAL_ROLES:
                self.error(
                    cls,
                    f"structural role of field {fname!r} must be one of "
                    f"{', '.join(repr(r) for r in ty.STRUCTURAL_ROLES)}, not "
                    f"{spec.structural!r}",
                    fname,
                )
                continue
            if spec.has_default:
                why = ftype.check_default(spec.default)
                if why is not None:
                    self.error(
                        cls,
                        f"bad default {spec.default!r} for field {fname!r} "
                        f"({ftype.spelling}): {why}",
                        fname,
                    )
                    continue
            default = spec.default if spec.has_default else None
            if spec.has_default and isinstance(ftype, ty.EnumType):
                default = ftype.member_name(default)  # by name: `OpKind.Mul` is 1 in a schema
            node.fields.append(
                FieldDef(
                    fname,
                    ftype,
                    doc.text if doc else "",
                    spec.has_default,
                    default,
                    spec.structural,
                    node.file,
                    line,
                    node,
                )
            )


def _default_ref_name(name: str) -> Optional[str]:
    for suffix in ("Node", "Obj"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return None


def _unsupported_member(cls_name: str, key: str, value: Any) -> str:
    if callable(value) or isinstance(value, (staticmethod, classmethod, property)):
        kind = "class" if isinstance(value, type) else "method or property"
        return (
            f"unsupported construct: {kind} {key!r} in {cls_name}; a schema class holds "
            "only fields and class attributes (write methods in the C++ custom region)"
        )
    close = difflib.get_close_matches(key, list(CLASS_ATTRIBUTES), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return (
        f"unsupported construct: class attribute {key!r} in {cls_name}{hint}; fields need a "
        "type annotation"
    )


def _any_declaration(cls: type) -> Optional[Declaration]:
    if is_declared(cls):
        return declaration(cls)
    if is_enum(cls):
        return enum_declaration(cls)
    return None


def _class_file(cls: type) -> str:
    import sys

    module = sys.modules.get(cls.__module__)
    return getattr(module, "__file__", None) or "<unknown>"


def build(
    classes: Iterable[type],
    emitted: Set[type],
    index: SourceIndex,
    files: List[str],
    enums: Iterable[type] = (),
) -> Schema:
    """Reads and checks the declared `classes` (parents may be among them or not) and `enums`
    (those in `emitted` are generated)."""
    b = _Builder(index)
    for enum_cls in enums:
        b.enums[enum_cls] = b.read_enum(enum_cls, enum_cls in emitted)
    ordered: List[type] = []
    seen: Set[type] = set()

    def visit(cls: type, chain: List[type]) -> None:
        if cls in seen:
            return
        if cls in chain:  # cannot happen with Python classes; kept for models built otherwise
            cycle = chain[chain.index(cls) :] + [cls]
            for member in cycle[:-1]:
                b.error(member, "cycle in the hierarchy: " + " -> ".join(c.__name__ for c in cycle))
            return
        base = cls.__bases__[0] if len(cls.__bases__) == 1 else None
        if base is not None and is_declared(base):
            visit(base, chain + [cls])
        seen.add(cls)
        ordered.append(cls)

    for cls in classes:
        visit(cls, [])

    for cls in ordered:
        b.nodes[cls] = b.read_class(cls, cls in emitted)
    for cls, node in b.nodes.items():
        base = cls.__bases__[0] if len(cls.__bases__) == 1 else Object
        if base is not Object:
            parent = b.nodes.get(base)
            if parent is None:
                continue  # the parent had errors of its own
            node.parent = parent
            parent.children.append(node)
    for node in b.nodes.values():
        if node.namespace is None:
            ancestor = node.parent
            while ancestor is not None and ancestor.namespace is None:
                ancestor = ancestor.parent
            node.namespace = ancestor.namespace if ancestor is not None else ""
        b.finish_fields(node)
    nodes = [b.nodes[c] for c in ordered if c in b.nodes]
    _check_hierarchy_cycles(nodes, b)
    _check_unique(nodes, b)
    _check_fields(nodes, b)
    _check_field_order(nodes, b)
    _resolve_final_and_slots(nodes, b)
    enum_defs = list(b.enums.values())
    _check_unique_enums(enum_defs, nodes, b)
    b.errors.raise_if_any()
    return Schema(nodes, files, enum_defs)


def _check_unique_enums(enums: List[EnumDef], nodes: List[NodeDef], b: _Builder) -> None:
    """Enum type keys are unique among enums; C++ names unique among enums and nodes."""
    keys: Dict[str, EnumDef] = {}
    cpp_names: Dict[str, tuple] = {}
    py_names: Dict[str, tuple] = {n.ref_name: (n.name, n.file, n.line) for n in nodes if n.emitted}
    for node in nodes:
        for cpp_name in (node.name, node.ref_name):
            cpp_names.setdefault(f"{node.namespace}::{cpp_name}", (node.name, node.file, node.line))
    for e in enums:
        first = keys.setdefault(e.type_key, e)
        if first is not e:
            b.errors.add(
                e.file,
                e.line,
                f"duplicate enum type_key {e.type_key!r}: {e.name} and {first.name} "
                f"(declared at {first.file}:{first.line})",
            )
        py_other = py_names.setdefault(e.name, (e.name, e.file, e.line)) if e.emitted else None
        if py_other is not None and py_other[1:] != (e.file, e.line):
            b.errors.add(
                e.file,
                e.line,
                f"Python class name {e.name!r} of enum {e.name} is also used by {py_other[0]} "
                f"(declared at {py_other[1]}:{py_other[2]})",
            )
        other = cpp_names.setdefault(f"{e.namespace}::{e.name}", (e.name, e.file, e.line))
        if other[1:] != (e.file, e.line):
            b.errors.add(
                e.file,
                e.line,
                f"C++ name {e.name!r} of enum {e.name} is already used by {other[0]} "
                f"(declared at {other[1]}:{other[2]})",
            )


def _check_hierarchy_cycles(nodes: List[NodeDef], b: _Builder) -> None:
    for node in nodes:
        seen = {id(node)}
        walk = node.parent
        while walk is not None:
            if id(walk) in seen:
                b.errors.add(node.file, node.line, f"cycle in the hierarchy through {node.name}")
                node.parent = None
                break
            seen.add(id(walk))
            walk = walk.parent


def _check_unique(nodes: List[NodeDef], b: _Builder) -> None:
    type_keys: Dict[str, NodeDef] = {}
    cpp_names: Dict[str, tuple] = {}
    py_names: Dict[str, NodeDef] = {}
    for node in nodes:
        first = type_keys.setdefault(node.type_key, node)
        if first is not node:
            b.errors.add(
                node.file,
                node.attr_line("type_key"),
                f"duplicate type_key {node.type_key!r}: {node.name} and {first.name} "
                f"(declared at {first.file}:{first.line})",
            )
        for cpp_name, what in ((node.name, "node class"), (node.ref_name, "reference class")):
            key = f"{node.namespace}::{cpp_name}"
            other = cpp_names.setdefault(key, (node, what))
            if other[0] is not node:
                b.errors.add(
                    node.file,
                    node.line,
                    f"{what} name {cpp_name!r} of {node.name} is already the "
                    f"{other[1]} name of {other[0].name} (declared at "
                    f"{other[0].file}:{other[0].line})",
                )
        if node.emitted:
            other_py = py_names.setdefault(node.ref_name, node)
            if other_py is not node:
                b.errors.add(
                    node.file,
                    node.line,
                    f"Python class name {node.ref_name!r} of {node.name} is also used "
                    f"by {other_py.name} (declared at {other_py.file}:{other_py.line})",
                )


def _check_fields(nodes: List[NodeDef], b: _Builder) -> None:
    for node in nodes:
        inherited: Dict[str, FieldDef] = {}
        for ancestor in node.ancestors:
            for f in ancestor.fields:
                inherited.setdefault(f.name, f)
        for f in node.fields:
            if f.name in inherited:
                first = inherited[f.name]
                b.errors.add(
                    f.file,
                    f.line,
                    f"field {f.name!r} of {node.name} shadows the field inherited from "
                    f"{first.owner.name} (declared at {first.file}:{first.line})",
                )
        # Defaults must trail, as in a Python or C++ signature (inherited fields come first).
        defaulted: Optional[FieldDef] = None
        for f in node.all_fields:
            if f.has_default:
                defaulted = defaulted or f
            elif defaulted is not None and f.owner is node:
                b.errors.add(
                    f.file,
                    f.line,
                    f"field {f.name!r} of {node.name} has no default but follows "
                    f"{defaulted.name!r}, which has one (constructor parameters with "
                    "defaults must come last)",
                )
                break


def _check_field_order(nodes: List[NodeDef], b: _Builder) -> None:
    """A field can only hold a node whose reference class C++ has already seen complete."""
    position = {id(n): i for i, n in enumerate(nodes)}
    by_cls = {n.cls: n for n in nodes}
    for node in nodes:
        for f in node.fields:
            for used in f.type.nodes():
                target = by_cls.get(used.cls)
                if target is None or position[id(target)] < position[id(node)]:
                    continue
                what = "itself" if target is node else f"{target.name}, declared after it"
                b.errors.add(
                    f.file,
                    f.line,
                    f"field {f.name!r} of {node.name} holds {what}: C++ needs the "
                    f"reference class {target.ref_name} complete before {node.name}; "
                    "use a base node declared earlier (or ty.ObjectRef) as the type",
                )


def _resolve_final_and_slots(nodes: List[NodeDef], b: _Builder) -> None:
    for node in nodes:
        explicit_final = node.final
        if explicit_final and node.children:
            child = node.children[0]
            b.errors.add(
                node.file,
                node.attr_line("final"),
                f"{node.name} is final but {child.name} derives from it "
                f"(declared at {child.file}:{child.line})",
            )
        node.final = (not node.children) if explicit_final is None else explicit_final
        if node.final and node.explicit_child_slots and node.type_child_slots:
            b.errors.add(
                node.file,
                node.attr_line("type_child_slots"),
                f"{node.name} is final and cannot reserve type_child_slots",
            )
    # Parents come first in `nodes`, so each parent's slots are known before its children's.
    for node in nodes:
        if node.final:
            node.type_child_slots = 0
            continue
        parent_slots = node.parent.type_child_slots if node.parent else 0
        if not node.explicit_child_slots:
            count = _count_same_file_descendants(node)
            if parent_slots:
                count = min(count, parent_slots - 1)
            node.type_child_slots = count
        elif node.parent and parent_slots and node.type_child_slots >= parent_slots:
            b.errors.add(
                node.file,
                node.attr_line("type_child_slots"),
                f"type_child_slots of {node.name} ({node.type_child_slots}) must be "
                f"smaller than its parent {node.parent.name}'s ({parent_slots})",
            )


def _count_same_file_descendants(node: NodeDef) -> int:
    """Descendants declared in the node's own file, so the value never depends on which other
    schema files are loaded in the same run."""
    count = 0
    stack = list(node.children)
    while stack:
        child = stack.pop()
        if child.file == node.file:
            count += 1
        stack.extend(child.children)
    return count
