"""`tschema generate --rust`: typed Rust references for a schema's nodes and enums.

The types are registered by the C++ library the schema generates (or at run time); the Rust
output only views them. Each node becomes a `ferry::node_ref!` struct (a checked typed
reference over `ferry::ObjectRef` that derefs to its parent's), with `new` (the fields without
a default, through `ferry.MakeNode`, so the others take the schema's defaults), `new_full`
(every field) when some field has a default, a getter per own field and, for a mutable node, an
`unsafe` setter per field (`set_<field>`); each enum becomes a Rust `enum` with the schema's
values that converts to and from Ferry ints.
"""

from __future__ import annotations

from typing import List, Optional

from . import ty
from .errors import DiagnosticList
from .model import EnumDef, FieldDef, NodeDef, Schema

__all__ = ["rust_module"]

_INTS = {
    "int8_t": "i8",
    "int16_t": "i16",
    "int32_t": "i32",
    "int64_t": "i64",
    "uint8_t": "u8",
    "uint16_t": "u16",
    "uint32_t": "u32",
    "uint64_t": "u64",
    "bool": "bool",
    "float": "f32",
    "double": "f64",
}

#: Rust keywords a getter may spell as a raw identifier (`r#type`).
_RAW_OK = frozenset(
    """as async await break const continue dyn else enum extern false fn for if impl in let
    loop match mod move mut pub ref return static struct trait true type unsafe use where while
    abstract become box do final macro override priv try typeof unsized virtual yield
    gen""".split()
)
#: Keywords that cannot be raw identifiers.
_NOT_RAW = frozenset(["self", "Self", "super", "crate", "_"])
#: Methods a node reference has besides its getters (its own and ObjectRef's through Deref).
_RESERVED = frozenset(
    """new new_full downcast as_ref as_object get_attr set_attr type_key type_index same_as
    use_count handle into_handle view is_instance_of clone deref into try_from""".split()
)


#: Names a member of a generated enum may not take.
_ENUM_RESERVED = frozenset(["TYPE_KEY", "from_value", "from_name", "name"])


class _Unsupported(Exception):
    pass


def _rust_type(t: ty.Type, schema: Schema, nested: bool = False) -> str:
    """The Rust type a getter returns for field type `t`."""
    if isinstance(t, ty.Scalar):
        if nested and t.name == "uint64_t":
            raise _Unsupported("ty.uint64_t inside a container or Optional")
        return _INTS[t.name]
    if isinstance(t, ty.Builtin):
        if t.name == "String":
            return "ferry::String"
        if t.name == "Any":
            return "ferry::Any"
        if t.name == "ObjectRef":
            return "Option<ferry::ObjectRef>"
        if t.name == "DataType":
            return "ferry::DataType"
        raise _Unsupported(f"ty.{t.name}")
    if isinstance(t, ty.ArrayType):  # and ListType
        kind = "List" if isinstance(t, ty.ListType) else "Array"
        return f"ferry::{kind}<{_rust_type(t.elem, schema, True)}>"
    if isinstance(t, ty.MapType):  # and DictType
        kind = "Dict" if isinstance(t, ty.DictType) else "Map"
        key = _rust_type(t.key, schema, True)
        return f"ferry::{kind}<{key}, {_rust_type(t.value, schema, True)}>"
    if isinstance(t, ty.OptionalType):
        inner = _rust_type(t.value, schema, True)
        if inner.startswith("Option<"):
            return inner
        return f"Option<{inner}>"
    if isinstance(t, ty.NodeType):
        node = schema.by_cls[t.cls]
        if not node.emitted:
            raise _Unsupported(_elsewhere(node.name, node.file))
        return node.ref_name
    if isinstance(t, ty.EnumType):
        enum = schema.by_enum[t.cls]
        if not enum.emitted:
            raise _Unsupported(_elsewhere(enum.name, enum.file))
        return enum.name
    raise _Unsupported(t.spelling)


def _elsewhere(name: str, file: str) -> str:
    return (
        f"{name} (declared in {file}, which is not among the schema files of this run; "
        "give both to one --rust run)"
    )


def _param_type(t: ty.Type, rust: str) -> str:
    """The constructor parameter for a field whose getter returns `rust`."""
    if rust == "ferry::String":
        return "&str"
    if rust == "Option<ferry::String>":
        return "Option<&str>"
    return rust


def _to_any(name: str, rust: str) -> str:
    if rust == "u64":
        return f"ferry::Any::try_from({name})?"
    return f"ferry::IntoAny::into_any({name})"


def _ident(f: FieldDef, errors: DiagnosticList) -> str:
    if f.name in _NOT_RAW:
        errors.add(f.file, f.line, f"field {f.name!r} cannot be a Rust method name")
    if f.name in _RESERVED:
        errors.add(
            f.file,
            f.line,
            f"field {f.name!r} would clash with the method {f.name} of the Rust reference",
        )
    return f"r#{f.name}" if f.name in _RAW_OK else f.name


def _doc(lines: List[str], indent: str = "") -> List[str]:
    return [f"{indent}///{' ' + line if line else ''}" for line in lines]


def _enum(e: EnumDef, errors: DiagnosticList) -> List[str]:
    name = e.name
    for member, _ in e.members:
        if member in _ENUM_RESERVED or member in _RAW_OK or member in _NOT_RAW:
            errors.add(
                e.file,
                e.line,
                f"member {member!r} of enum {name} would clash with a Rust keyword or a "
                "method of the generated enum",
            )
    out = _doc(e.doc or [f"The enum `{e.type_key}`."])
    out += ["#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]"]
    if any(not member[:1].isupper() or "_" in member for member, _ in e.members):
        out.append("#[allow(non_camel_case_types)]")
    out.append(f"pub enum {name} {{")
    out += [f"    {member} = {value}," for member, value in e.members]
    out += [
        "}",
        "",
        f"impl {name} {{",
        "    /// The schema's type key of the enum.",
        f'    pub const TYPE_KEY: &\'static str = "{e.type_key}";',
        "",
    ]
    out += _match_fn(
        "The member with this value, if any.",
        f"from_value(value: i64) -> Option<{name}>",
        "value",
        [(str(value), f"Some({name}::{member})") for member, value in e.members],
        "None",
    )
    out.append("")
    out += _match_fn(
        "The member with this name, if any.",
        f"from_name(name: &str) -> Option<{name}>",
        "name",
        [(f'"{member}"', f"Some({name}::{member})") for member, _ in e.members],
        "None",
    )
    out.append("")
    out += _match_fn(
        "The member's name, as the schema spells it.",
        "name(self) -> &'static str",
        "self",
        [(f"{name}::{member}", f'"{member}"') for member, _ in e.members],
        None,
    )
    out += [
        "}",
        "",
        "/// C++ hands an enum field out as its member's name; an int is read as a member's value.",
        f"impl ferry::FromAny for {name} {{",
        "    fn type_str() -> std::string::String {",
        f"        {name}::TYPE_KEY.into()",
        "    }",
        f"    fn from_view(view: &ferry::AnyView<'_>) -> Option<{name}> {{",
        "        match view.cast::<std::string::String>() {",
        f"            Ok(text) => {name}::from_name(&text),",
        f"            Err(_) => {name}::from_value(view.cast::<i64>().ok()?),",
        "        }",
        "    }",
        "}",
        "",
        f"impl ferry::IntoAny for {name} {{",
        "    fn into_any(self) -> ferry::Any {",
        "        ferry::IntoAny::into_any(self as i64)",
        "    }",
        "}",
    ]
    return out


def _match_fn(
    doc: str, signature: str, scrutinee: str, arms: List[tuple], otherwise: Optional[str]
) -> List[str]:
    """A method of a generated enum that is one `match` over its members."""
    out = [f"    /// {doc}", f"    pub fn {signature} {{", f"        match {scrutinee} {{"]
    out += [f"            {pattern} => {value}," for pattern, value in arms]
    if otherwise is not None:
        out.append(f"            _ => {otherwise},")
    return out + ["        }", "    }"]


def _ctor(node: NodeDef, fn: str, doc: str, fields: List[tuple]) -> List[str]:
    params = ", ".join(f"{ident}: {_param_type(f.type, rust)}" for f, ident, rust in fields)
    out = [f"    /// {doc}"]
    if len(fields) > 7:
        out.append("    #[allow(clippy::too_many_arguments)]")
    out += [f"    pub fn {fn}({params}) -> ferry::Result<{node.ref_name}> {{"]
    if fields:
        out.append("        ferry::make_node(")
        out.append(f'            "{node.type_key}",')
        out.append("            &[")
        for f, ident, rust in fields:
            out.append(f'                ("{f.name}", {_to_any(ident, rust)}),')
        out.append("            ],")
        out.append("        )?")
        out.append("        .downcast()")
    else:
        out.append(f'        ferry::make_node("{node.type_key}", &[])?.downcast()')
    out.append("    }")
    return out


def _node(node: NodeDef, schema: Schema, errors: DiagnosticList) -> List[str]:
    parent = node.parent.ref_name if node.parent else "ferry::ObjectRef"
    if node.parent and not node.parent.emitted:
        errors.add(
            node.file,
            node.line,
            f"{node.name} derives from {_elsewhere(node.parent.name, node.parent.file)}",
        )
    out = _doc(node.doc or [f"A reference to a `{node.type_key}` node."])
    out = ["ferry::node_ref! {"] + ["    " + line for line in out]
    out += [f'    pub struct {node.ref_name}: {parent} = "{node.type_key}";', "}", ""]

    typed: List[tuple] = []
    for f in node.all_fields:
        try:
            rust = _rust_type(f.type, schema)
        except _Unsupported as e:
            if f.owner is node:
                errors.add(
                    f.file,
                    f.line,
                    f"field {f.name!r} of {node.name}: {e} has no Rust form in "
                    "`tschema generate --rust`",
                )
            continue
        typed.append((f, _ident(f, errors) if f.owner is node else _raw(f.name), rust))
    required = [item for item in typed if not item[0].has_default]
    out.append(f"impl {node.ref_name} {{")
    out += _ctor(
        node,
        "new",
        f"A new `{node.type_key}`; fields not given take the schema's defaults.",
        required,
    )
    if len(required) != len(typed):
        out.append("")
        out += _ctor(node, "new_full", f"A new `{node.type_key}` from every field.", typed)
    own = [item for item in typed if item[0].owner is node]
    for f, ident, rust in own:
        out.append("")
        out += _doc(f.doc.splitlines() if f.doc else [f"The field `{f.name}`."], "    ")
        out += [
            f"    pub fn {ident}(&self) -> ferry::Result<{rust}> {{",
            f'        self.0.get_attr("{f.name}")?.cast()',
            "    }",
        ]
    if node.is_mutable:
        # Setters of its own fields, and of inherited ones whose node has none (an immutable
        # parent, whose fields the mutable child still writes through reflection).
        names = {f.name for f in node.all_fields}
        writable = [t for t in typed if t[0].owner is node or not t[0].owner.is_mutable]
        for f, _, rust in writable:
            out.append("")
            out += _setter(f, rust, names, errors)
    out.append("}")
    return out


def _setter(f: FieldDef, rust: str, names: set, errors: DiagnosticList) -> List[str]:
    """`set_<field>` of a mutable node's field: C++ reflection's setter, `unsafe` as
    `ObjectRef::set_attr` is (Ferry does not synchronize writes)."""
    name = f"set_{f.name}"
    if name in names or name in _RESERVED:
        errors.add(
            f.file,
            f.line,
            f"the setter {name} of field {f.name!r} would clash with "
            + (f"the field {name!r}" if name in names else f"the method {name} of the reference"),
        )
    return [
        f"    /// Sets the field `{f.name}`, in place: every holder of the object sees it (a",
        "    /// TypeError when the value does not convert, as C++ reflection's setter says).",
        "    ///",
        "    /// # Safety",
        "    /// No other thread reads or writes the object meanwhile: Ferry does not synchronize",
        "    /// writes in any language (`ferry::ObjectRef::set_attr`).",
        f"    pub unsafe fn {name}(&self, value: {_param_type(f.type, rust)}) -> ferry::Result<()> {{",
        "        // SAFETY: the caller's promise, passed on.",
        f'        unsafe {{ self.0.set_attr("{f.name}", {_to_any("value", rust)}) }}',
        "    }",
    ]


def _raw(name: str) -> str:
    return f"r#{name}" if name in _RAW_OK else name


def rust_module(schema: Schema, nodes: List[NodeDef], schema_names: str) -> List[str]:
    """The lines of the Rust module; raises SchemaError naming schema file:line for a field
    whose type has no Rust form."""
    errors = DiagnosticList()
    out = [
        f"// Typed Rust references for {schema_names}: generated by `tschema generate --rust`;",
        "// do not edit.",
    ]
    for e in schema.emitted_enums:
        out += [""] + _enum(e, errors)
    for node in nodes:
        out += [""] + _node(node, schema, errors)
    errors.raise_if_any()
    return out
