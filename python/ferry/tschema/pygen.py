"""Python output: a module of `ferry.register_object` classes and its `.pyi` stub.

Each class is named after the node's reference class and constructs through the global
`<type_key>.__init__` that the registration source defines:

    @ferry.register_object("IntImm")
    class IntImm(PrimExpr):
        def __init__(self, dtype: ..., value: int) -> None:
            self.__init_handle_by_constructor__(
                _constructors.get("IntImm") or _constructor("IntImm"), dtype, value
            )
"""

from __future__ import annotations
import __future__

import typing
from typing import List

from . import ty
from .cpp import banner
from .model import EnumDef, FieldDef, NodeDef, Schema

__all__ = ["class_parts", "python_module", "python_stub"]


class _PyNames(ty.NameContext):
    def __init__(self, schema: Schema, attribute: bool = False):
        self.schema = schema
        self.attribute = attribute

    def ferry(self, name: str) -> str:  # pragma: no cover - not used for Python
        return f"ferry.{name}"

    def cpp_ref(self, cls: type) -> str:  # pragma: no cover - not used for Python
        raise NotImplementedError

    def py_ref(self, cls: type) -> str:
        node = self.schema.by_cls[cls]
        return node.ref_name if node.emitted else "ferry.Object"

    def py_enum(self, cls: type) -> str:
        e = self.schema.by_enum[cls]
        return e.name if e.emitted else "enum.IntEnum"


def _annotation(f: FieldDef, names: _PyNames) -> str:
    text = f.type.python(names)
    if names.attribute:
        # Reading a field gives a DataType even where a str is accepted on construction.
        text = text.replace("typing.Union[ferry.DataType, str]", "ferry.DataType")
    return text


def _default(f: FieldDef, names: _PyNames) -> str:
    value = f.default
    if isinstance(f.type, ty.EnumType):
        if names.schema.by_enum[f.type.cls].emitted:
            return f"{f.type.python(names)}.{value}"
        return repr(value)  # an enum of another module: its member's name
    if isinstance(value, (list, tuple)):
        # A MutableSequence (ty.List) takes no tuple; either is only passed on, never mutated.
        return "[]" if isinstance(f.type, ty.ListType) else "()"
    if isinstance(value, dict):
        return "{}"  # never mutated: only passed on to the constructor
    return repr(value)


def _parent(node: NodeDef) -> str:
    if node.parent is None or not node.parent.emitted:
        return "ferry.Object"
    return node.parent.ref_name


def _docstring(node: NodeDef, names: _PyNames, indent: str) -> List[str]:
    lines = list(node.doc)
    documented = [f for f in node.fields if f.doc]
    if documented:
        if lines:
            lines.append("")
        lines += ["Attributes", "----------"]
        for f in documented:
            lines.append(f"{f.name} : {_annotation(f, names)}")
            lines += [f"    {d}" if d else "" for d in f.doc.split("\n")]
    if not lines:
        lines = [f"The {node.type_key} node."]
    return _docstring_lines(lines, indent)


def _params(node: NodeDef, names: _PyNames) -> List[str]:
    params = ["self"]
    for f in node.all_fields:
        annotation = _annotation(f, names)
        if (
            f.has_default
            and f.default is None
            and not annotation.startswith(("typing.Optional[", "typing.Any"))
        ):
            annotation = f"typing.Optional[{annotation}]"
        p = f"{f.name}: {annotation}"
        if f.has_default:
            p += f" = {_default(f, names)}"
        params.append(p)
    return params


def _signature(node: NodeDef, names: _PyNames, indent: str, tail: str) -> List[str]:
    """`def __init__(...) -> None` + tail, one parameter per line when it is too wide."""
    params = _params(node, names)
    one = f"{indent}def __init__({', '.join(params)}) -> None{tail}"
    if len(one) <= 100:
        return [one]
    return (
        [f"{indent}def __init__("]
        + [f"{indent}    {p}," for p in params]
        + [f"{indent}) -> None{tail}"]
    )


def _header(schema_names: str) -> List[str]:
    return banner("# ", schema_names)


def _enum_class(e: EnumDef) -> List[str]:
    """The `enum.IntEnum` of a declared enum (for the module and the stub alike)."""
    out = [f"class {e.name}(enum.IntEnum):"]
    if e.doc:
        out += _docstring_lines(e.doc, "    ") + [""]
    out += [f"    {name} = {value}" for name, value in e.members]
    return out


def _docstring_lines(lines: List[str], indent: str) -> List[str]:
    text = [line.replace("\\", "\\\\").replace('"""', '\\"\\"\\"') for line in lines]
    if len(text) == 1:
        return [f'{indent}"""{text[0]}"""']
    return (
        [f'{indent}"""{text[0]}']
        + [f"{indent}{t}" if t else "" for t in text[1:]]
        + [f'{indent}"""']
    )


def python_module(schema: Schema, nodes: List[NodeDef], schema_names: str) -> List[str]:
    names = _PyNames(schema)
    enums = schema.emitted_enums
    out = _header(schema_names) + [
        f'"""Python classes of the nodes declared in {schema_names}."""',
        "",
        "from __future__ import annotations",
        "",
    ]
    out += ["import enum"] if schema.enums else []
    out += [
        "import typing  # noqa: F401 - annotations",
        "",
        "import ferry",
        "",
        "__all__ = [",
    ]
    out += [f'    "{e.name}",' for e in enums]
    out += [f'    "{n.ref_name}",' for n in nodes] + ["]", ""]
    for e in enums:
        out += ["", *_enum_class(e), "", "", f'ferry.register_enum("{e.type_key}", {e.name})', ""]
    out += [
        "#: The constructor `<type_key>.__init__` of each class, looked up on first use (its",
        "#: library may be loaded after this module is imported), then kept.",
        "_constructors: typing.Dict[str, ferry.Function] = {}",
        "",
        "",
        "def _constructor(type_key: str) -> ferry.Function:",
        '    made = _constructors[type_key] = ferry.get_global_func(f"{type_key}.__init__")',
        "    return made",
        "",
    ]
    for node in nodes:
        out += [
            "",
            f'@ferry.register_object("{node.type_key}")',
            f"class {node.ref_name}({_parent(node)}):",
        ]
        out += _docstring(node, _PyNames(schema, attribute=True), "    ")
        out += ["", "    __slots__ = ()  # a wrapper holds no state: fields live in C++", ""]
        out += _signature(node, names, "    ", ":")
        out += _constructor_call(node)
        out.append("")
    return out[:-1]


def _constructor_call(node: NodeDef) -> List[str]:
    """The body of the generated `__init__`: the constructor global, with every field."""
    args = ", ".join(f.name for f in node.all_fields)
    ctor = f'_constructors.get("{node.type_key}") or _constructor("{node.type_key}")'
    call = f"        self.__init_handle_by_constructor__({ctor}{', ' + args if args else ''})"
    if len(call) <= 100:
        return [call]
    out = ["        self.__init_handle_by_constructor__(", f"            {ctor},"]
    out += [f"            {f.name}," for f in node.all_fields]
    return out + ["        )"]


#: What the `__init__` of `class_parts` reads when it runs: the generated module's names.
_MODULE_PRELUDE = """
import typing
import ferry
_constructors = {}
def _constructor(type_key):
    made = _constructors[type_key] = ferry.get_global_func(f"{type_key}.__init__")
    return made
"""


def class_parts(
    schema: Schema,
    node: NodeDef,
    create: typing.Optional[typing.Callable[..., None]] = None,
    enums: typing.Optional[typing.Mapping[str, type]] = None,
) -> typing.Tuple[typing.Optional[str], typing.Callable[..., None]]:
    """The docstring and `__init__` that the generated module gives the class of `node`, made
    by running the same source, so a class that `tschema.register` builds has the signature,
    defaults, annotations and docstring of the one `tschema generate --python` and
    `ferry.cpp.load(schema=)` give. `__init__` calls the constructor global
    `<type_key>.__init__` (a compiled library's), or, given `create`, `create(self, *fields)`
    with every field in storage order (a type registered at run time). `enums` are the enum
    classes by name, which defaults such as `OpKind.Add` name."""
    names = _PyNames(schema)
    body = (
        _constructor_call(node)
        if create is None
        else [f"        _create(self{''.join(', ' + f.name for f in node.all_fields)})"]
    )
    source = "\n".join(
        ["class _Parts:"]
        + _docstring(node, _PyNames(schema, attribute=True), "    ")
        + _signature(node, names, "    ", ":")
        + body
    )
    namespace: typing.Dict[str, typing.Any] = {"_create": create, **(enums or {})}
    exec(_MODULE_PRELUDE, namespace)  # the generated module's own names, as it defines them
    code = compile(
        source + "\n",
        f"<tschema class {node.type_key}>",
        "exec",
        flags=__future__.annotations.compiler_flag,
        dont_inherit=True,
    )
    exec(code, namespace)  # source generated from the schema, as the generated module is
    parts = namespace["_Parts"]
    init = parts.__dict__["__init__"]
    init.__qualname__ = f"{node.ref_name}.__init__"
    return parts.__dict__["__doc__"], init


def python_stub(schema: Schema, nodes: List[NodeDef], schema_names: str) -> List[str]:
    names = _PyNames(schema)
    attrs = _PyNames(schema, attribute=True)
    out = _header(schema_names) + [""]
    out += ["import enum"] if schema.enums else []
    out += ["import typing", "", "import ferry"]
    for e in schema.emitted_enums:
        out += ["", "", *_enum_class(e)]
    for node in nodes:
        out += ["", "", f"class {node.ref_name}({_parent(node)}):"]
        out += [f"    {f.name}: {_annotation(f, attrs)}" for f in node.fields]
        out += _signature(node, names, "    ", ": ...")
    return out
