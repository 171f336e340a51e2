"""Object types defined in Python: :func:`py_class`, :func:`field`, and the helpers of the
standard :mod:`dataclasses` module for them (:func:`fields`, :func:`replace`, :func:`asdict`,
:func:`astuple`, :data:`KW_ONLY`).

    @ferry.py_class("demo.Point")
    class Point(ferry.Object):
        x: int
        y: float = 0.0

A py_class is a Ferry type like one written in C++: it is registered in the type registry under
its parent (``ferry.Object``, a reflected C++ node type, or another py_class), its fields live
in the C++ object after the parent's, and C++ reflection (GetAttr, SetAttr, MakeNode, JSON,
structural equality and hashing, Repr) works on it. See docs/python.md.
"""

import copy
import dataclasses as _std
import enum
import inspect
import linecache
import re
import reprlib
import sys
import types
import typing

from . import _core
from .registry import _check_key_text, _TupleField, get_global_func, register_object

if typing.TYPE_CHECKING:
    # Type checkers ship typing_extensions' stubs, so this names the transform for every
    # Python a user's checker targets; at run time typing_extensions is not a dependency.
    from typing_extensions import dataclass_transform
elif sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:

    def dataclass_transform(**_kwargs):
        """Python 3.10's stand-in: the marker only informs type checkers."""
        return lambda decorator: decorator


_T = typing.TypeVar("_T")

__all__ = [
    "FrozenInstanceError",
    "KW_ONLY",
    "MISSING",
    "Field",
    "asdict",
    "astuple",
    "field",
    "fields",
    "is_py_class",
    "py_class",
    "replace",
]

#: The standard module's sentinels, so that code written for dataclasses reads the same.
MISSING = _std.MISSING
KW_ONLY = _std.KW_ONLY
FrozenInstanceError = _std.FrozenInstanceError

_FIELD_NO_COMPARE = 1  # kFerryFieldNoCompare
_FIELD_NO_REPR = 2  # kFerryFieldNoRepr
_TYPE_FINAL = 1  # kFerryTypeFinal
_TYPE_FROZEN = 2  # kFerryTypeFrozen
_OBJECT_INDEX = 64  # kFerryObject


class Field:
    """One field of a py_class (or of its C++ parent), as :func:`fields` returns it."""

    __slots__ = (
        "name",
        "type",
        "type_text",
        "default",
        "default_factory",
        "init",
        "repr",
        "compare",
        "kw_only",
        "metadata",
        "_inherited_from_cpp",
    )

    def __init__(self, default, default_factory, init, repr, compare, kw_only, metadata):
        self.name = None
        self.type = None
        self.type_text = None
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.compare = compare
        self.kw_only = kw_only
        self.metadata = types.MappingProxyType(dict(metadata or {}))
        self._inherited_from_cpp = False

    def __repr__(self):
        return (
            f"Field(name={self.name!r}, type={self.type_text!r}, default={self.default!r}, "
            f"default_factory={self.default_factory!r}, init={self.init}, repr={self.repr}, "
            f"compare={self.compare}, kw_only={self.kw_only})"
        )

    def __reduce__(self):  # metadata is a mappingproxy, which does not pickle
        return (
            _field_again,
            (
                self.name,
                self.type,
                self.type_text,
                self.default,
                self.default_factory,
                self.init,
                self.repr,
                self.compare,
                self.kw_only,
                dict(self.metadata),
                self._inherited_from_cpp,
            ),
        )

    def _copy(self):
        new = Field(
            self.default,
            self.default_factory,
            self.init,
            self.repr,
            self.compare,
            self.kw_only,
            self.metadata,
        )
        new.name, new.type, new.type_text = self.name, self.type, self.type_text
        new._inherited_from_cpp = self._inherited_from_cpp
        return new


def _field_again(
    name, tp, type_text, default, factory, init, repr, compare, kw_only, metadata, cpp
):
    """Unpickles a :class:`Field` (a class pickled by value carries its field records)."""
    f = Field(default, factory, init, repr, compare, kw_only, metadata)
    f.name, f.type, f.type_text, f._inherited_from_cpp = name, tp, type_text, cpp
    return f


def field(
    *,
    default: typing.Any = MISSING,
    default_factory: typing.Any = MISSING,
    init: bool = True,
    repr: bool = True,
    compare: bool = True,
    kw_only: typing.Any = MISSING,
    metadata: typing.Any = None,
) -> typing.Any:
    """Describes a py_class field, as :func:`dataclasses.field` does: ``default`` or
    ``default_factory`` (not both), ``init`` (a parameter of ``__init__``), ``repr`` (shown by
    ``repr`` and by C++ Repr), ``compare`` (visited by structural equality and hashing, and by
    ``order=True`` comparisons), ``kw_only`` (keyword-only in ``__init__``)."""
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return Field(default, default_factory, init, repr, compare, kw_only, metadata)


# ---------------------------------------------------------------------------------------------
# Annotations -> the type text of the C ABI (FerryFieldSpec.type)


class TypeText:
    """An annotation given directly as the C ABI's type text (``"Array[arith.PrimExpr]"``), as
    ``ferry.tschema.register`` writes them."""

    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return f"TypeText({self.text!r})"


def _type_text(tp, cls, key):
    """The C ABI type text of an annotation, or a TypeError's reason (a str starting '!')."""
    if isinstance(tp, TypeText):
        return tp.text
    if isinstance(tp, (str, typing.ForwardRef)):  # typing.Optional["Node"], list["Node"]
        text = tp if isinstance(tp, str) else tp.__forward_arg__
        try:
            tp = _eval_annotation(cls, text)
        except Exception as e:  # reported with the field and line
            return f"!cannot resolve the forward reference {text!r}: {e}"
    from . import Array, DataType, Dict, Function, List, Map  # cycle

    if tp is typing.Any:
        return "Any"
    for plain, text in (
        (bool, "bool"),
        (int, "int"),
        (float, "float"),
        (str, "str"),
        (bytes, "bytes"),
        (DataType, "dtype"),
        (Function, "Function"),
    ):
        if tp is plain:
            return text
    if tp is cls:
        return key
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        from ._enums import enum_key  # cycle

        enum_text = enum_key(tp)
        if enum_text is None:
            return f"!the enum {tp.__qualname__} is not registered (ferry.register_enum(key, cls))"
        return f"Enum[{enum_text}]"
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Union or origin is types.UnionType:
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1 and len(args) == 2:
            inner = _type_text(rest[0], cls, key)
            return inner if inner.startswith("!") else f"Optional[{inner}]"
        return f"!a union other than 'X | None' ({tp!r})"
    containers = {
        list: "Array",
        Array: "Array",
        dict: "Map",
        Map: "Map",
        List: "List",
        Dict: "Dict",
    }
    base = origin if origin is not None else tp
    if (base is tuple or base in containers) and any(_holds_enum(a) for a in args):
        # Their items would be stored as given (a name, an int) and read back so: only a field
        # (or an Optional field) of the enum reads and writes members.
        return (
            f"!an enum inside {tp!r} is not supported: annotate the field with the enum itself "
            "(or Optional of it), or hold the members' names (str)"
        )
    if base is tuple:
        # tuple[int, str] is a Tuple of those items; tuple[int, ...] and tuple are Arrays.
        if not args:
            # Python 3.11 on gives `tuple[()]` no args at all, as the bare `tuple` has.
            return "Array[Any]" if _is_bare_tuple(tp) else "Tuple[]"
        if len(args) == 2 and args[1] is Ellipsis:
            inner = _type_text(args[0], cls, key)
            return inner if inner.startswith("!") else f"Array[{inner}]"
        if args == ((),):  # tuple[()]
            return "Tuple[]"
        items = [_type_text(a, cls, key) for a in args]
        for text in items:
            if text.startswith("!"):
                return text
        return f"Tuple[{', '.join(items)}]"
    if base in containers:
        name = containers[base]
        arity = 1 if name in ("Array", "List") else 2
        if not args:
            return f"{name}[{', '.join(['Any'] * arity)}]"
        if len(args) != arity:
            return f"!{tp!r} takes {arity} type argument(s)"
        inner = [_type_text(a, cls, key) for a in args]
        for text in inner:
            if text.startswith("!"):
                return text
        return f"{name}[{', '.join(inner)}]"
    if isinstance(tp, type) and issubclass(tp, _core.Object):
        if tp is _core.Object:
            return "Object"
        own_key = tp.__dict__.get("_type_key")
        if own_key is None:
            return f"!{tp.__qualname__} is not registered for a Ferry type"
        return own_key
    return f"!unsupported annotation {tp!r}"


_SUPPORTED = (
    "int, float, bool, str, bytes, ferry.DataType, typing.Any, ferry.Function, a Ferry object "
    "class, X | None, list[T] / ferry.Array[T], dict[K, V] / ferry.Map[K, V], ferry.List[T], "
    "ferry.Dict[K, V], tuple[T0, T1, ...] / tuple[T, ...], an enum given to ferry.register_enum "
    "(or Optional of one)"
)


def _holds_enum(tp):
    """Whether the annotation `tp` is, or has inside it, an ``enum.Enum`` subclass."""
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return True
    return any(_holds_enum(a) for a in typing.get_args(tp) if a is not Ellipsis)


def _is_bare_tuple(tp):
    """Whether `tp` is `tuple` or `typing.Tuple` unsubscripted (not `tuple[()]`, the empty
    tuple, whose args Python 3.11 and later also report as none)."""
    return tp is tuple or tp is typing.Tuple


def _tuple_spec_of(tp):
    """registry._tuple_spec for an annotation: how a field annotated `tp` reads back (None: as
    it is stored)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is tuple or origin is tuple:
        if not args:
            return ("*", None) if _is_bare_tuple(tp) else ("T", ())
        if len(args) == 2 and args[1] is Ellipsis:
            return ("*", _tuple_spec_of(args[0]))
        if args == ((),):
            return ("T", ())
        return ("T", tuple(_tuple_spec_of(a) for a in args))
    if origin is typing.Union or origin is types.UnionType:
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1 and len(args) == 2:
            inner = _tuple_spec_of(rest[0])
            return None if inner is None else ("?", inner)
    return None


def _where(cls, name=None):
    """'file:line' of the class (or of the annotation of field `name`), for error messages.

    The class statement is the one whose decorator ran (recorded by :func:`py_class` as
    ``cls._ferry_origin``): ``inspect.getsourcelines`` would find the first class of that name in
    the file, which is not the failing one when a class is declared again."""
    origin = cls.__dict__.get("_ferry_origin")
    found = _block_at(*origin) if origin is not None else None
    if found is not None:
        path, lines, start = found
    else:
        try:
            lines, start = inspect.getsourcelines(cls)
            path = inspect.getsourcefile(cls)
        except (OSError, TypeError):
            module = sys.modules.get(cls.__module__)
            return getattr(module, "__file__", None) or cls.__module__
    if name is not None:
        pattern = re.compile(rf"\s+{re.escape(name)}\s*:")
        for i, line in enumerate(lines):
            if pattern.match(line):
                return f"{path}:{start + i}"
    return f"{path}:{start}"


def _block_at(path, lineno):
    """(path, the lines of the decorated statement starting at ``lineno``, lineno), or None
    when the source is not at hand."""
    lines = linecache.getlines(path)
    if not 0 < lineno <= len(lines):
        return None
    try:
        return path, inspect.getblock(lines[lineno - 1 :]), lineno
    except Exception:  # source that does not tokenize: fall back to inspect.getsourcelines
        return None


def _error(kind, cls, name, message):
    what = f"{cls.__qualname__}.{name}" if name is not None else cls.__qualname__
    return kind(f"py_class {what} ({_where(cls, name)}): {message}")


def _is_classvar(tp):
    return tp is typing.ClassVar or typing.get_origin(tp) is typing.ClassVar


def _eval_annotation(cls, text):
    """The annotation written as ``text``, evaluated where ``cls`` is defined (its module, the
    class itself by name, the class body)."""
    module = sys.modules.get(cls.__module__)
    namespace = dict(vars(module)) if module is not None else {}
    namespace.setdefault(cls.__name__, cls)
    return eval(text, namespace, dict(vars(cls)))  # an annotation


def _resolve(cls, name, annotation):
    if not isinstance(annotation, str):
        return annotation
    try:
        return _eval_annotation(cls, annotation)
    except Exception as e:  # reported with the field and line
        raise _error(
            TypeError, cls, name, f"cannot resolve the annotation {annotation!r}: {e}"
        ) from None


# ---------------------------------------------------------------------------------------------
# The decorator


# eq_default=False: a py_class compares by identity unless eq=True ("structural").
@dataclass_transform(eq_default=False, field_specifiers=(field,))
def py_class(
    type_key: str,
    *,
    frozen: bool = False,
    final: bool = False,
    child_slots: "int | None" = None,
    eq: 'bool | typing.Literal["identity", "structural"]' = "identity",
    order: bool = False,
    kw_only: bool = False,
) -> "typing.Callable[[type[_T]], type[_T]]":
    """Class decorator: makes the class a Ferry type registered as ``type_key``.

    The class derives from ``ferry.Object``, from a class registered for a reflected C++ node
    type (whose fields come first, as the C++ class lays them out), or from another py_class.
    Fields come from the annotations, with the rules of :mod:`dataclasses` (order, inheritance,
    defaults, :func:`field`, ``ClassVar``, ``KW_ONLY``, ``__post_init__``). Options:
    ``frozen`` (fields read-only from both sides), ``final`` (no type may derive from it),
    ``child_slots`` (type indices reserved for subtypes), ``eq`` (``"identity"``, the default
    of every Ferry object, or ``"structural"``: ``==`` and ``hash`` by structural equality;
    ``False`` and ``True`` mean the same, and are what a type checker reads),
    ``order`` (``<`` and friends over the compared fields; needs ``eq="structural"``),
    ``kw_only`` (every field keyword-only in ``__init__``).
    """
    if not isinstance(type_key, str) or not type_key:
        raise TypeError(f"py_class: the type key must be a non-empty str, not {type_key!r}")
    _check_key_text("py_class", type_key)
    caller = sys._getframe(1)
    origin = (caller.f_code.co_filename, caller.f_lineno)  # the decorator line of this class
    if eq is True or eq is False:  # dataclasses' spelling, which type checkers read
        eq = "structural" if eq else "identity"
    if eq not in ("identity", "structural"):
        raise ValueError(
            f"py_class({type_key!r}): eq must be 'identity' or 'structural' (or True or False, "
            f"the same), not {eq!r}"
        )
    if order and eq != "structural":
        raise ValueError(f"py_class({type_key!r}): order=True needs eq='structural'")
    if child_slots is not None and (not isinstance(child_slots, int) or child_slots < 0):
        raise ValueError(f"py_class({type_key!r}): child_slots must be a non-negative int")

    def wrap(cls):
        if isinstance(cls, type):
            cls._ferry_origin = origin
        return _make_class(
            cls,
            type_key,
            frozen=frozen,
            final=final,
            child_slots=child_slots or 0,
            eq=eq,
            order=order,
            kw_only=kw_only,
        )

    return wrap


def _parent_of(cls):
    for base in cls.__mro__[1:]:
        if isinstance(base, type) and issubclass(base, _core.Object):
            return base
    raise _error(
        TypeError,
        cls,
        None,
        "must derive from ferry.Object (or a class registered for a Ferry type)",
    )


def _inherited_fields(cls, parent):
    """The fields of the parent, in storage order: a py_class's own records, or a C++ node's
    reflected fields (required, no default)."""
    if parent is _core.Object:
        return _OBJECT_INDEX, []
    key = parent.__dict__.get("_type_key")
    if key is None:
        raise _error(
            TypeError,
            cls,
            None,
            f"its parent {parent.__qualname__} is not registered for a Ferry type",
        )
    try:
        index = _core._type_key_to_index(key)
    except Exception as e:  # reported with the class
        raise _error(
            TypeError, cls, None, f"its parent type {key!r} is not registered: {e}"
        ) from None
    recorded = parent.__dict__.get("__ferry_fields__")
    if recorded is not None:
        return index, [f._copy() for f in recorded.values()]
    # a type without reflection has no fields to inherit
    described = list(get_global_func("ferry.FindNodeFields")(key) or ())
    inherited = []
    for name, text in zip(described[0::2], described[1::2]):
        f = Field(MISSING, MISSING, True, True, True, False, None)
        f.name, f.type, f.type_text, f._inherited_from_cpp = name, text, text, True
        inherited.append(f)
    return index, inherited


_MUTABLE_DEFAULTS = (list, dict, set, bytearray)


def _make_class(cls, key, *, frozen, final, child_slots, eq, order, kw_only):
    from .container import Dict, List  # cycle

    if not isinstance(cls, type) or not issubclass(cls, _core.Object):
        raise TypeError(f"py_class({key!r}): {cls!r} does not derive from ferry.Object")
    parent = _parent_of(cls)
    parent_index, all_fields = _inherited_fields(cls, parent)
    by_name = {f.name: f for f in all_fields}
    own = []  # new fields, in declaration order
    kw_only_from_here = kw_only
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        tp = _resolve(cls, name, annotation)
        if _is_classvar(tp):
            continue
        if tp is KW_ONLY:
            kw_only_from_here = True
            continue
        if isinstance(tp, _std.InitVar) or tp is _std.InitVar:
            raise _error(
                TypeError,
                cls,
                name,
                "InitVar is not supported: pass the value to a classmethod constructor instead",
            )
        value = cls.__dict__.get(name, MISSING)
        f = (
            value
            if isinstance(value, Field)
            else Field(value, MISSING, True, True, True, MISSING, None)
        )
        if isinstance(value, _std.Field):
            raise _error(TypeError, cls, name, "use ferry.field(), not dataclasses.field()")
        if f.kw_only is MISSING:
            f.kw_only = kw_only_from_here
        if isinstance(f.default, _MUTABLE_DEFAULTS + (List, Dict)):
            raise _error(
                ValueError,
                cls,
                name,
                f"mutable default {type(f.default)} is not allowed: use default_factory",
            )
        text = _type_text(tp, cls, key)
        if text.startswith("!"):
            raise _error(TypeError, cls, name, f"{text[1:]}; supported: {_SUPPORTED}")
        f.name, f.type, f.type_text = name, (text if isinstance(tp, TypeText) else tp), text
        if name in by_name:
            old = by_name[name]
            if old.type_text != text:
                raise _error(
                    TypeError,
                    cls,
                    name,
                    f"redeclares the inherited field as {text} "
                    f"(it is {old.type_text}); a field keeps its type in subclasses",
                )
            f._inherited_from_cpp = old._inherited_from_cpp
            all_fields[all_fields.index(old)] = f
            by_name[name] = f
            continue
        own.append(f)
        all_fields.append(f)
        by_name[name] = f
    # dataclasses' rule: no required positional parameter after one with a default.
    seen_default = None
    for f in all_fields:
        if not f.init or f.kw_only:
            continue
        has_default = f.default is not MISSING or f.default_factory is not MISSING
        if has_default:
            seen_default = f
        elif seen_default is not None:
            raise _error(
                TypeError,
                cls,
                f.name,
                f"non-default argument {f.name!r} follows default argument {seen_default.name!r}",
            )
    for f in all_fields:
        if not f.init and f.default is MISSING and f.default_factory is MISSING:
            raise _error(
                TypeError,
                cls,
                f.name,
                "a field with init=False needs a default or a default_factory",
            )
    specs = tuple(
        (
            f.name,
            f.type_text,
            (0 if f.compare else _FIELD_NO_COMPARE) | (0 if f.repr else _FIELD_NO_REPR),
        )
        for f in own
    )
    flags = (_TYPE_FINAL if final else 0) | (_TYPE_FROZEN if frozen else 0)
    try:
        type_index = _core._register_type(key, parent_index, child_slots, flags, specs)
    except Exception as e:  # reported with the class and line
        raise _error(
            type(e) if isinstance(e, (TypeError, ValueError)) else TypeError,
            cls,
            None,
            f"cannot register the type {key!r}: {e}",
        ) from None
    defaults = _defaults_of(all_fields)
    _record_defaults(
        type_index,
        defaults,
        lambda name, what, e: _error(
            type(e) if isinstance(e, (TypeError, ValueError)) else TypeError,
            cls,
            name,
            f"the {what} cannot be stored in the field table ({by_name[name].type_text}): {e}",
        ),
    )
    for f in own:
        if f.name in cls.__dict__:
            delattr(cls, f.name)
    cls = register_object(key)(cls)
    for f in own:
        # `tuple[T, ...]` is stored as an Array (its field type is Array[T]), a tuple inside a
        # tuple as a Tuple: the annotation says they read back as tuples.
        spec = _tuple_spec_of(f.type)
        if spec is not None:
            setattr(cls, f.name, _TupleField(f.name, spec))
    recorded = {f.name: f for f in all_fields}
    cls.__ferry_fields__ = recorded
    parent_key = None if parent is _core.Object else parent.__dict__["_type_key"]
    library = _core._library_of_type(parent_key) if parent_key is not None else None
    decl = _Declaration(
        cls,
        key,
        parent_key,
        ((library, parent_key),) if library is not None else (),
        child_slots,
        flags,
        specs,
        type_index,
        defaults,
    )
    cls.__ferry_declaration__ = decl
    _add_methods(cls, decl, all_fields, frozen=frozen, eq=eq, order=order)
    return cls


def _defaults_of(all_fields):
    """``(name, value, is_factory)`` of each field with a default (not a C++ parent's: its
    default is its constructor's)."""
    out = []
    for f in all_fields:
        if f._inherited_from_cpp:
            continue
        if f.default is not MISSING:
            out.append((f.name, f.default, False))
        elif f.default_factory is not MISSING:
            out.append((f.name, f.default_factory, True))
    return tuple(out)


def _record_defaults(type_index, defaults, fail):
    """Records each field's default in the type's field table (FerryTypeSetFieldDefault), so
    ``make_node``, C++ ``MakeNode`` and ``load_json`` apply it as the constructor does: a
    document saved before a defaulted field was added loads. A ``default_factory`` becomes a
    Function called for each object that takes the default. ``fail(name, what, error)`` makes
    the exception of a default the field refuses."""
    set_default = get_global_func("ferry.TypeSetFieldDefault")
    for name, value, is_factory in defaults:
        try:
            set_default(type_index, name, value, is_factory)
        except Exception as e:  # reported with the class and field
            raise fail(name, "default_factory" if is_factory else f"default {value!r}", e) from None


class _Declaration:
    """A py_class's registration: its type key, parent, options and own fields, and the type
    index this process gave it (``index``), which the generated methods read.

    A class that pickles by value (cloudpickle sends one defined in ``__main__`` with its dict,
    as Dask does) carries this record; unpickling it registers the type again in the receiving
    process (the same declaration finds the same type) and binds the class received to the key,
    so the class works there with that process's index. A key declared otherwise there is a
    pickle.UnpicklingError naming it."""

    __slots__ = (
        "cls",
        "key",
        "parent_key",
        "libraries",
        "child_slots",
        "flags",
        "specs",
        "index",
        "defaults",
    )

    def __init__(
        self, cls, key, parent_key, libraries, child_slots, flags, specs, index, defaults=()
    ):
        self.cls, self.key, self.parent_key, self.libraries = cls, key, parent_key, libraries
        self.child_slots, self.flags, self.specs, self.index = child_slots, flags, specs, index
        self.defaults = defaults  # recorded in the field table again where it is unpickled

    def __reduce__(self):
        return (
            _declare_again,
            (
                self.cls,
                self.key,
                self.parent_key,
                self.libraries,
                self.child_slots,
                self.flags,
                self.specs,
                self.defaults,
            ),
        )


def _declare_again(cls, key, parent_key, libraries, child_slots, flags, specs, defaults=()):
    """Unpickles a :class:`_Declaration`: registers the type of ``cls`` (a class pickled by
    value, still being filled in) in this process and binds ``cls`` to its key."""
    from .registry import _ensure_libraries, _unpickling_error  # cycle

    _ensure_libraries(libraries)  # the library of a C++ parent, if this process lacks it
    try:
        parent_index = _OBJECT_INDEX if parent_key is None else _core._type_key_to_index(parent_key)
        index = _core._register_type(key, parent_index, child_slots, flags, specs)
    except (KeyError, TypeError, ValueError) as e:
        raise _unpickling_error(
            f"cannot unpickle the py_class {key!r} (a class pickled by value, as cloudpickle "
            f"sends one defined in __main__): registering its type here failed: {e}; declare "
            "it the same way in both processes, or define it in an importable module"
        ) from None
    # The defaults too, so make_node and load_json apply them in this process as well.
    _record_defaults(
        index,
        defaults,
        lambda name, what, e: _unpickling_error(
            f"cannot unpickle the py_class {key!r}: its field {name!r} refuses its {what}: {e}"
        ),
    )
    cls._type_key = key
    _core._register_class(key, cls)
    return _Declaration(cls, key, parent_key, libraries, child_slots, flags, specs, index, defaults)


# ---------------------------------------------------------------------------------------------
# Generated methods


def _set_new(cls, name, value):
    """Sets a generated method unless the class body defines its own (as dataclasses does)."""
    if name not in cls.__dict__:
        setattr(cls, name, value)


def _add_methods(cls, decl, all_fields, *, frozen, eq, order):
    names = tuple(f.name for f in all_fields)
    type_index = decl.index
    if "__init__" not in cls.__dict__:
        init = _make_init(cls, decl, all_fields, names)
        cls.__init__ = init
        has_enum = any(_enum_of_type_text(f.type_text) is not None for f in all_fields)
        if not hasattr(cls, "__post_init__") and type(cls) is type and not has_enum:
            # P(...) binds its arguments in C while P.__init__ is this function (see py_class.cc);
            # not for a class with enum fields, whose members `init` checks by class.
            plan = tuple(
                (
                    f.name,
                    1 if f.default is not MISSING else 2 if f.default_factory is not MISSING else 0,
                    f.default if f.default is not MISSING else f.default_factory,
                    f.init,
                    f.kw_only,
                )
                for f in all_fields
            )
            _core._install_init(cls, init, type_index, names, plan)
    _set_new(cls, "__repr__", _make_repr(tuple(f.name for f in all_fields if f.repr)))
    _set_new(cls, "__match_args__", tuple(f.name for f in all_fields if f.init and not f.kw_only))
    _set_new(cls, "__copy__", _make_copy(decl, names))
    _set_new(cls, "__deepcopy__", _make_deepcopy(decl, names, frozen))
    _set_new(cls, "__reduce__", _reduce)
    if eq == "structural":
        from . import structural_equal, structural_hash  # cycle

        def __eq__(self, other):
            if other.__class__ is not self.__class__:
                return NotImplemented
            return structural_equal(self, other)

        def __hash__(self):
            return structural_hash(self)

        _set_new(cls, "__eq__", __eq__)
        _set_new(cls, "__hash__", __hash__)
    if order:
        compared = tuple(f.name for f in all_fields if f.compare)
        for name, op in (("__lt__", "<"), ("__le__", "<="), ("__gt__", ">"), ("__ge__", ">=")):
            _set_new(cls, name, _make_order(compared, op))
    if frozen:

        def __setattr__(self, name, value):
            raise FrozenInstanceError(f"cannot assign to field {name!r}")

        def __delattr__(self, name):
            raise FrozenInstanceError(f"cannot delete field {name!r}")

        _set_new(cls, "__setattr__", __setattr__)
        _set_new(cls, "__delattr__", __delattr__)


def _enum_of_type_text(text):
    from ._enums import enum_of_type_text  # cycle

    return enum_of_type_text(text)


def _check_member(key, value, field, owner):
    from ._enums import check_member  # cycle

    check_member(key, value, field, owner)


def _make_init(cls, decl, all_fields, names):
    """``__init__`` generated as source, as dataclasses does: parameters in dataclass order,
    values passed to ``_core._create`` in storage order."""
    namespace = {
        "_create": _core._create,
        "_decl": decl,
        "_names": names,
        "_MISSING": MISSING,
    }
    positional, keyword, body = [], [], []
    for f in all_fields:
        local = f.name
        if f.default_factory is not MISSING:
            namespace[f"_factory_{f.name}"] = f.default_factory
        if f.default is not MISSING:
            namespace[f"_default_{f.name}"] = f.default
        if not f.init:
            body.append(
                f"  {local} = "
                + (f"_default_{f.name}" if f.default is not MISSING else f"_factory_{f.name}()")
            )
            continue
        if f.default is not MISSING:
            param = f"{local}=_default_{f.name}"
        elif f.default_factory is not MISSING:
            param = f"{local}=_MISSING"
            body.append(f"  if {local} is _MISSING: {local} = _factory_{f.name}()")
        else:
            param = local
        enum_key = _enum_of_type_text(f.type_text)
        if enum_key is not None:
            # A member of another enum class passes for its value: refused by class here.
            namespace["_check_member"] = _check_member
            body.append(f"  _check_member({enum_key!r}, {local}, {f.name!r}, _decl.key)")
        (keyword if f.kw_only else positional).append(param)
    params = ["self"] + positional + (["*"] + keyword if keyword else [])
    body.append(f"  _create(self, _decl.index, _names{''.join(', ' + n for n in names)})")
    if hasattr(cls, "__post_init__"):
        body.append("  self.__post_init__()")
    source = f"def __init__({', '.join(params)}):\n" + "\n".join(body) + "\n"
    exec(source, namespace)  # generated from field names, as dataclasses does
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__annotations__ = {f.name: f.type for f in all_fields if f.init}
    init.__annotations__["return"] = None
    return init


def _make_repr(shown):
    @reprlib.recursive_repr()
    def __repr__(self):
        parts = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{type(self).__qualname__}({parts})"

    return __repr__


def _make_copy(decl, names):
    def __copy__(self):
        new = type(self).__new__(type(self))
        _core._create(new, decl.index, names, *(getattr(self, n) for n in names))
        return new

    return __copy__


def _make_deepcopy(decl, names, frozen):
    """``__deepcopy__`` that copies cycles as copy.deepcopy does (see container.py): the copy of
    a mutable object enters ``memo`` as a shallow copy before its fields are copied, and takes
    the copied values in place after; a frozen object is made from its copied fields, unless
    copying them (through a mutable object) already made it."""
    if frozen:

        def __deepcopy__(self, memo):
            values = [copy.deepcopy(getattr(self, n), memo) for n in names]
            made = memo.get(id(self))
            if made is None:
                made = type(self).__new__(type(self))
                _core._create(made, decl.index, names, *values)
                memo[id(self)] = made
            return made

        return __deepcopy__

    def __deepcopy__(self, memo):
        new = type(self).__new__(type(self))
        _core._create(new, decl.index, names, *(getattr(self, n) for n in names))
        memo[id(self)] = new  # before the fields: a field may lead back here
        values = [copy.deepcopy(getattr(self, n), memo) for n in names]
        _core._create(new, decl.index, names, *values)  # in place: `new` holds its object
        return new

    return __deepcopy__


def _make_order(compared, op):
    import operator

    compare = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}[op]

    def key(obj):
        # Ferry sequences compare as Python lists do (Array has no order of its own).
        from .container import Array, List  # cycle

        values = (getattr(obj, n) for n in compared)
        return tuple(list(v) if isinstance(v, (Array, List)) else v for v in values)

    def method(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return compare(key(self), key(other))

    return method


def _restore(cls, text):
    """Unpickles a py_class object; `cls` travels by reference, so the module that defines
    (and registers) it is imported first."""
    from . import load_json  # cycle

    return load_json(text)


def _restore_content(text):
    """Unpickles an object whose class has no importable name (ferry.tschema.register): the
    unpickling process must have its types registered (the schema, or the compiled library)."""
    from . import load_json  # imported here: it imports this module

    return load_json(text)


def _json_or_parts(self):
    """(save_json(self), None), or (None, the reduce tuple by parts) when the graph holds a
    Function, which JSON cannot hold (container.py)."""
    from . import save_json  # cycle
    from .container import _reduce_parts
    from .error import FunctionInJSONError

    try:
        return save_json(self), None
    except FunctionInJSONError:
        return None, _reduce_parts(self, {self.__ferry_handle__: self})


def _reduce_by_content(self):
    text, by_parts = _json_or_parts(self)
    return by_parts if text is None else (_restore_content, (text,))


def _reduce(self):
    text, by_parts = _json_or_parts(self)
    return by_parts if text is None else (_restore, (type(self), text))


# ---------------------------------------------------------------------------------------------
# The dataclasses helpers


def is_py_class(obj):
    """Whether ``obj`` is a py_class or an instance of one."""
    cls = obj if isinstance(obj, type) else type(obj)
    return any("__ferry_fields__" in vars(k) for k in cls.__mro__)


def _fields_of(obj):
    cls = obj if isinstance(obj, type) else type(obj)
    for klass in getattr(cls, "__mro__", ()):
        recorded = klass.__dict__.get("__ferry_fields__")
        if recorded is not None:
            return recorded
    raise TypeError("must be called with a py_class type or instance")


def fields(class_or_instance):
    """The fields of a py_class (the C++ parent's first), as a tuple of :class:`Field`."""
    return tuple(_fields_of(class_or_instance).values())


def replace(obj, /, **changes):
    """A new object of ``obj``'s class with ``changes`` applied, through ``__init__`` (so
    ``__post_init__`` runs), as :func:`dataclasses.replace` does."""
    for f in fields(obj):
        if not f.init:
            if f.name in changes:
                raise ValueError(
                    f"field {f.name} is declared with init=False, it cannot be "
                    "specified with replace()"
                )
            continue
        changes.setdefault(f.name, getattr(obj, f.name))
    return obj.__class__(**changes)


def asdict(obj, *, dict_factory=dict):
    """The fields of a py_class instance as a dict, recursing into py_class instances, Ferry and
    Python containers (Array and List become lists, Map and Dict dicts); other values are
    deep-copied, except Ferry objects (shared, as they are immutable or C++-owned)."""
    if not is_py_class(obj) or isinstance(obj, type):
        raise TypeError("asdict() should be called on py_class instances")
    return _as(obj, lambda pairs: dict_factory(pairs), None)


def astuple(obj, *, tuple_factory=tuple):
    """The field values of a py_class instance as a tuple, recursing as :func:`asdict`."""
    if not is_py_class(obj) or isinstance(obj, type):
        raise TypeError("astuple() should be called on py_class instances")
    return _as(obj, None, tuple_factory)


def _as(value, dict_factory, tuple_factory):
    from .container import Array, Dict, List, Map  # cycle

    def inner(v):
        return _as(v, dict_factory, tuple_factory)

    if isinstance(value, _core.Object) and is_py_class(value):
        if dict_factory is not None:
            return dict_factory([(f.name, inner(getattr(value, f.name))) for f in fields(value)])
        return tuple_factory([inner(getattr(value, f.name)) for f in fields(value)])
    if isinstance(value, (Array, List)):
        return [inner(v) for v in value]
    if isinstance(value, (Map, Dict)):
        return {inner(k): inner(v) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*[inner(v) for v in value])
    if isinstance(value, (list, tuple)):
        return type(value)(inner(v) for v in value)
    if isinstance(value, dict):
        return type(value)((inner(k), inner(v)) for k, v in value.items())
    if isinstance(value, _core.Object):
        return value
    return copy.deepcopy(value)
