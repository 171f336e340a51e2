"""``ferry.tschema.register``: the nodes of a schema as Ferry types at run time, with no C++.

The types get exactly the type keys, parents, field order and field types that the C++
tschema generates would register, so a Python prototype and the compiled library later made
from the same schema read each other's JSON and pickles (docs/tschema.md, "Prototype first").
"""

import enum
import types
from typing import Any, Dict, List, Optional, Type, Union

from . import pygen, ty
from .loader import load_schema
from .model import EnumDef, FieldDef, NodeDef, Schema


def _text(t: ty.Type, schema: Schema) -> str:
    """The C ABI type text (FerryFieldSpec.type) of a schema type."""
    if isinstance(t, ty.Scalar):
        return {"bool": "bool", "int": "int", "float": "float"}[t.kind]
    if isinstance(t, ty.Builtin):
        return {"String": "str", "DataType": "dtype", "ObjectRef": "Object", "Any": "Any"}[t.name]
    if isinstance(t, ty.ArrayType):  # and ListType
        kind = "List" if isinstance(t, ty.ListType) else "Array"
        return f"{kind}[{_text(t.elem, schema)}]"
    if isinstance(t, ty.MapType):  # and DictType
        kind = "Dict" if isinstance(t, ty.DictType) else "Map"
        return f"{kind}[{_text(t.key, schema)}, {_text(t.value, schema)}]"
    if isinstance(t, ty.OptionalType):
        return f"Optional[{_text(t.value, schema)}]"
    if isinstance(t, ty.NodeType):
        return schema.by_cls[t.cls].type_key
    if isinstance(t, ty.EnumType):
        return f"Enum[{t.type_key}]"
    raise TypeError(f"tschema.register: no run-time form for the type {t!r}")


def register(schema: Union[str, Any]) -> types.SimpleNamespace:
    """Registers every node the schema declares (a schema file path, or an imported schema
    module), at run time, through the same machinery as ``ferry.py_class``, and every enum it
    declares or uses (an ``enum.IntEnum`` given to ``ferry.register_enum``). Returns a
    namespace with one class per node, named as its reference class (``IntImm`` for
    ``IntImmNode``), and one per enum, named as in the schema.

    A node whose type key a loaded library already registered is not registered again: its
    class is the library's (registered with ``register_object`` or made on first sight), after
    a check that the library's field names are the schema's. Registering the same schema twice
    returns classes for the same types.
    """
    import ferry
    from ferry import dataclasses as fdc

    path = schema if isinstance(schema, str) else getattr(schema, "__file__", None)
    if not isinstance(path, str):
        raise TypeError(
            f"tschema.register: expected a schema file path or module, got {type(schema).__name__}"
        )
    model = load_schema([path])
    classes: Dict[str, type] = {}
    out = types.SimpleNamespace()
    enums: Dict[str, Type[enum.Enum]] = {}
    for e in model.enums:
        enums[e.name] = _enum(e)
        setattr(out, e.name, enums[e.name])
    node_fields = ferry.get_global_func("ferry.NodeFields")
    for node in model.nodes:  # parents before children
        parent_cls: type = ferry.Object
        if node.parent is not None:
            parent_cls = classes[node.parent.type_key]
        existing = _existing(node, node_fields)
        if existing is not None:
            names = list(existing)[0::2]
            want = [f.name for f in node.all_fields]
            if names != want:
                raise ValueError(
                    f"tschema.register: {node.type_key} is already registered with the fields "
                    f"{names}, but the schema ({node.file}:{node.line}) declares {want}"
                )
            cls = _class_of(node, parent_cls, model, enums)
        else:
            cls = _make(node, parent_cls, model, fdc, enums)
        classes[node.type_key] = cls
        setattr(out, node.ref_name or node.name, cls)
    return out


def _enum(e: EnumDef) -> Type[enum.Enum]:
    """The Python enum of a schema enum: the one registered under its key when its members
    are the schema's (registering a schema twice, or after its library), else a new
    ``enum.IntEnum`` registered now (C++ rejects members that differ from its own)."""
    import ferry

    try:
        existing: Optional[Type[enum.Enum]] = ferry.get_enum(e.type_key)
    except KeyError:
        existing = None
    if existing is not None and [(m.name, m.value) for m in existing] == [
        tuple(member) for member in e.members
    ]:
        return existing
    made: Any = enum.IntEnum(e.name, [tuple(member) for member in e.members])  # type: ignore[misc]
    made.__module__ = "ferry.tschema.registered"
    made.__qualname__ = e.name
    if e.doc:
        made.__doc__ = "\n".join(e.doc)
    try:
        return ferry.register_enum(e.type_key, made)
    except ValueError as err:
        raise ValueError(f"tschema.register: enum {e.name} ({e.file}:{e.line}): {err}") from None


def _existing(node: NodeDef, node_fields: Any) -> Optional[List[str]]:
    """NodeFields of a type a library registered (not one registered at run time), or None."""
    import ferry

    try:
        ferry._core._type_key_to_index(node.type_key)
    except Exception:
        return None
    registered = ferry._core._classes()[0].get(node.type_key)
    if registered is not None and "__ferry_fields__" in registered.__dict__:
        return None  # a run-time type: declaring it again finds the same type
    try:
        return list(node_fields(node.type_key))
    except Exception:
        return []


def _class_of(
    node: NodeDef, parent_cls: type, model: Schema, enums: Dict[str, Type[enum.Enum]]
) -> type:
    """The class of a type a loaded library registered: the one registered for it (by the
    module `ferry.cpp.load(schema=)` or `tschema generate --python` made), else one with the
    generated module's constructor and docstring (its `<type_key>.__init__` is the library's)."""
    import ferry

    registered = ferry._core._classes()[0].get(node.type_key)
    if registered is not None and registered.__module__ != "ferry.auto":
        return registered
    doc, init = pygen.class_parts(model, node, enums=enums)
    name = node.ref_name or node.name
    namespace = {"__slots__": (), "__doc__": doc, "__init__": init, "__module__": __name__}
    cls = type(name, (parent_cls,), namespace)
    return ferry.register_object(node.type_key)(cls)


def _make(
    node: NodeDef, parent_cls: type, model: Schema, fdc: Any, enums: Dict[str, Type[enum.Enum]]
) -> type:
    import ferry

    names = tuple(f.name for f in node.all_fields)
    made: List[Any] = []  # the class _make_class returns

    def create(self: Any, *values: Any) -> None:
        ferry._core._create(self, made[0].__ferry_declaration__.index, names, *values)

    # The constructor, docstring and repr of the class the generated module (and so a compiled
    # library) gives: the routes from a schema to classes agree (tests/python/tschema/
    # test_routes.py).
    doc, init = pygen.class_parts(model, node, create, enums)
    annotations: Dict[str, Any] = {}
    namespace: Dict[str, Any] = {
        "__annotations__": annotations,
        "__module__": "ferry.tschema.registered",
        "__doc__": doc,
        "__init__": init,
        "__repr__": ferry.Object.__repr__,
        # Pickled by content: the class has no importable name; the unpickling process has the
        # types from the schema or from the compiled library.
        "__reduce__": fdc._reduce_by_content,
    }
    for f in node.fields:
        text = _text(f.type, model)
        if f.has_default and f.default is None and not text.startswith("Optional["):
            # A C++ ObjectRef defaulting to null: only an Optional field holds None at run time.
            text = f"Optional[{text}]"
        annotations[f.name] = fdc.TypeText(text)
        namespace[f.name] = _field(f, fdc, enums)
    name = node.ref_name or node.name
    cls = type(name, (parent_cls,), namespace)
    cls.__qualname__ = name
    made.append(
        fdc._make_class(
            cls,
            node.type_key,
            frozen=not node.is_mutable,
            final=node.final,
            child_slots=node.type_child_slots,
            eq="identity",
            order=False,
            kw_only=False,
        )
    )
    cls = made[0]
    return cls


def _field(f: FieldDef, fdc: Any, enums: Dict[str, Type[enum.Enum]]) -> Any:
    """The py_class field of a schema field (tschema's own rules already keep fields with
    defaults last, as dataclasses need)."""
    compare = f.structural != "ignore"
    if f.has_default:
        default = f.default
        if isinstance(f.type, ty.EnumType):
            default = enums[f.type.cls.__name__][default]  # the member, as it reads back
        if isinstance(default, (list, dict)):
            value = list(default) if isinstance(default, list) else dict(default)
            return fdc.field(default_factory=lambda: value, compare=compare)
        return fdc.field(default=default, compare=compare)
    return fdc.field(compare=compare)
