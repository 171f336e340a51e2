"""Global functions and object classes: the registries shared with C++."""

import os
import sys
import types
import typing
import weakref

from . import _core
from .error import AbiMismatchError

__all__ = [
    "get_global_func",
    "list_global_func_names",
    "register_func",
    "remove_global_func",
    "register_object",
    "init_api",
    "load_library",
    "unload_library",
]

get_global_func = _core.get_global_func
list_global_func_names = _core.list_global_func_names
remove_global_func = _core.remove_global_func


_T = typing.TypeVar("_T")
_F = typing.TypeVar("_F", bound=typing.Callable[..., typing.Any])


def _libferry_global(name: str) -> _core.Function:
    """The global ``name`` that libferry itself registers; ImportError naming it if missing
    (a libferry older than this package)."""
    func = get_global_func(name, allow_missing=True)
    if func is None:
        raise ImportError(f"libferry lacks the global function {name}")
    return func


def _path_arg(path: object, func: str) -> str:
    """The ``path`` argument of ``func`` as a str: bytes are decoded as the file system does; a
    value of another type is a TypeError naming ``func`` and the type."""
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{func}: path must be a str or os.PathLike, not {type(path).__name__}")
    return os.fspath(path)


def load_library(path: "str | bytes | os.PathLike[str]") -> None:
    """Loads a shared library and runs its registrations (``FERRY_REGISTER_GLOBAL``,
    ``FERRY_REGISTER_NODE_TYPE``). The library stays loaded for the life of the process.
    A missing file or a library that fails to load is a RuntimeError naming the path; a
    library built against Ferry headers of another ABI is an :class:`AbiMismatchError` (an
    ImportError and a RuntimeError) naming both ABIs, raised before any of its code runs."""
    path = _path_arg(path, "load_library")
    # Checked here too, so that Python raises an ImportError (C++ raises a RuntimeError).
    mismatch = _core._library_abi_mismatch(path) if os.path.exists(path) else None
    if mismatch is not None:
        raise AbiMismatchError(f"cannot load library '{path}': {mismatch}")
    _core.load_library(path)
    _fields_done.clear()  # registered classes may now find their types' fields


def unload_library(path: "str | bytes | os.PathLike[str]") -> None:
    """Unloads a library ``load_library`` loaded: its global functions and type keys are
    removed at once (a later lookup is the usual "not registered" error). Objects and Functions
    it made stay valid and keep it mapped; once the last one is gone it is closed, a moment
    later, and the path can be loaded again. RuntimeError naming the path when it was never
    loaded (or is unloaded already)."""
    path = _path_arg(path, "unload_library")
    _core.unload_library(path)
    _fields_done.clear()
    cpp = sys.modules.get("ferry.cpp")
    if cpp is not None:  # its cache must not hand the unloaded library back
        cpp._forget_unloaded(path)


@typing.overload
def register_func(
    name: str, f: None = None, override: bool = False
) -> typing.Callable[[_F], _F]: ...
@typing.overload
def register_func(
    name: str, f: typing.Callable[..., typing.Any], override: bool = False
) -> _core.Function: ...
def register_func(name: str, f: typing.Any = None, override: bool = False) -> typing.Any:
    """Registers a Python callable as the global function ``name``, callable from C++.

    Use it as a call, ``register_func("demo.cb", fn)``, or as a decorator,
    ``@register_func("demo.cb")``. A taken name is a RuntimeError unless ``override``.
    Returns the callable (the decorator form) or the registered ``Function``.
    """
    if not isinstance(name, str):
        raise TypeError(f"register_func: the name must be a str, not {type(name).__name__}")
    if f is not None:
        return _core._register_global(name, f, override)

    def register(func):
        _core._register_global(name, func, override)
        return func

    return register


@typing.overload
def register_object(type_key: "type[_T]") -> "type[_T]": ...
@typing.overload
def register_object(type_key: "str | None" = None) -> "typing.Callable[[type[_T]], type[_T]]": ...
def register_object(type_key: typing.Any = None) -> typing.Any:
    """Class decorator: objects of C++ type ``type_key`` come back to Python as instances of the
    decorated class (and objects of a derived type without a class of its own, as instances of
    a class made for that type, deriving from this one).

    The class must derive from ``ferry.Object``. The reflected fields of the type become
    attributes (a class attribute of the same name wins): read-only, or writable when the C++
    type is ``_type_mutable``. A wrapper holds no state of its own, so the class gets
    ``__slots__ = ()`` (a class without ``__slots__`` is rebuilt with it, as
    ``dataclass(slots=True)`` does); a class that asks for a ``__dict__`` or for slots of its
    own is refused. Without an argument the class name is the type key.

    The key need not be known yet: the class is bound to the key by name, and its field
    descriptors are installed when the first object of that type comes back to Python, or
    right away when a loaded library already defines it.
    """

    def register(cls):
        key = type_key if type_key is not None else cls.__name__
        if not isinstance(key, str):
            raise TypeError(
                f"register_object: the type key must be a str, not {type(key).__name__}"
            )
        _check_key_text("register_object", key)
        if not (isinstance(cls, type) and issubclass(cls, _core.Object)):
            raise TypeError(f"register_object({key!r}): {cls!r} does not derive from ferry.Object")
        cls = _without_dict(cls, key)
        cls._type_key = key
        cls.__ferry_type_key__ = _TypeKeyAttr(key)
        _core._register_class(key, cls)
        _install_fields(cls, key)
        return cls

    if isinstance(type_key, type):  # used bare: @register_object
        cls, type_key = type_key, None
        return register(cls)
    return register


def _check_key_text(what, key):
    """A ValueError naming ``key`` (repr'd) when it is not valid UTF-8 text (a lone surrogate):
    type keys cross the C ABI as UTF-8."""
    try:
        key.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(
            f"{what}: the type key {key!r} is not valid UTF-8 ({e.reason} at index {e.start}): "
            "a Ferry type key is UTF-8 text"
        ) from None


class _TypeKeyAttr:
    """``__ferry_type_key__`` of a class made for a Ferry type: the key on the class, the
    object's own type key on an instance."""

    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key

    def __get__(self, obj, cls=None):
        return self.key if obj is None else _object_type_key(obj)

    def __set__(self, obj, value):
        raise AttributeError("__ferry_type_key__ is read-only")


_object_type_key = _core.Object.__ferry_type_key__.__get__


def _slot_names(slots):
    return (slots,) if isinstance(slots, str) else tuple(slots)


def _without_dict(cls, key):
    """``cls`` if its instances have no ``__dict__``, else the same class rebuilt with
    ``__slots__ = ()``; a TypeError when the class asks for instance state."""
    where = f"register_object({key!r}): {cls.__qualname__}"
    if "__slots__" in cls.__dict__:
        own = [n for n in _slot_names(cls.__dict__["__slots__"]) if n != "__weakref__"]
        if own:
            raise TypeError(
                f"{where} declares __slots__ {tuple(own)!r}: a Ferry object's Python wrapper "
                "holds no state of its own (what Python reads must be what C++ holds); store it "
                "in a field of the object, or leave __slots__ out"
            )
    for base in cls.__mro__[1:]:
        if base.__dictoffset__ != 0 and base is not object:
            raise TypeError(
                f"{where} derives from {base.__qualname__}, whose instances have a __dict__: "
                f"declare __slots__ = () in {base.__qualname__} (a Ferry object's Python wrapper "
                "holds no state of its own)"
            )
    if cls.__dictoffset__ == 0:
        return cls
    namespace = {k: v for k, v in cls.__dict__.items() if k not in ("__dict__", "__weakref__")}
    namespace["__slots__"] = ()
    new = type(cls)(cls.__name__, cls.__bases__, namespace)
    new.__qualname__ = cls.__qualname__
    # Zero-argument super() finds the class through a __class__ cell: point it at the new one.
    for value in namespace.values():
        if isinstance(value, (classmethod, staticmethod)):
            funcs = [value.__func__]
        elif isinstance(value, property):
            funcs = [value.fget, value.fset, value.fdel]
        else:
            funcs = [value]
        for func in funcs:
            for cell in getattr(func, "__closure__", None) or ():
                try:
                    if cell.cell_contents is cls:
                        cell.cell_contents = new
                except ValueError:  # an empty cell
                    pass
    return new


#: Classes whose field descriptors are installed (cleared when a library is loaded).
_fields_done = weakref.WeakSet()


def _split_args(text):
    """The top-level arguments of type text ``"A[x, B[y, z]]"``: ``["x", "B[y, z]"]``."""
    inner = text[text.index("[") + 1 : -1]
    args, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth == 0:
            args.append(inner[start:i].strip())
            start = i + 1
    if inner.strip():
        args.append(inner[start:].strip())
    return args


def _tuple_spec(text):
    """How a value of type text ``text`` reads back: ``None`` (as it is), ``("T", (specs...))``
    (a tuple of items read by those specs), ``("*", spec)`` (a tuple of items read by spec) or
    ``("?", spec)`` (None, or read by spec). Only what holds a Tuple gets one."""
    if text.startswith("Tuple["):
        return ("T", tuple(_tuple_spec(a) for a in _split_args(text)))
    if text.startswith("Optional["):
        inner = _tuple_spec(_split_args(text)[0])
        return None if inner is None else ("?", inner)
    return None


def _read(spec, value):
    if spec is None or value is None:
        return value
    kind, inner = spec
    if kind == "T":
        return tuple(_read(s, v) for s, v in zip(inner, value))
    if kind == "*":
        return tuple(_read(inner, v) for v in value)
    return _read(inner, value)


class _TupleField:
    """A field that holds a Tuple[...] (C++ ``Tuple<Ts...>``, py_class ``tuple[...]``, a tuple
    inside one of those, ``tuple[T, ...]``): stored as an Array, read back as a Python
    ``tuple``, tuples inside it too (`spec`, see _tuple_spec)."""

    __slots__ = ("_field", "_spec")

    def __init__(self, name, spec=("*", None)):
        self._field = _core.Field(name)
        self._spec = spec

    @property
    def name(self):
        return self._field.name

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        return _read(self._spec, self._field.__get__(instance, owner))

    def __set__(self, instance, value):
        self._field.__set__(instance, value)

    def __delete__(self, instance):
        self._field.__delete__(instance)

    def __reduce__(self):
        return (_TupleField, (self.name, self._spec))


def _install_fields(cls, key):
    if cls in _fields_done:
        return
    described = get_global_func("ferry.FindNodeFields")(key)  # [name0, type0, name1, type1, ...]
    if described is None:
        return  # not a reflected node (yet): attribute access falls back to lookups by name
    from ._enums import EnumField, enum_of_type_text  # here: they import this module

    names = list(described)[0::2]
    types = list(described)[1::2]
    for name, type_text in zip(names, types):
        if not any(name in vars(klass) for klass in cls.__mro__):
            text = str(type_text)
            enum_key = enum_of_type_text(text)
            if enum_key is not None:
                setattr(cls, name, EnumField(name, enum_key))
            elif _tuple_spec(text) is not None:
                setattr(cls, name, _TupleField(name, _tuple_spec(text)))
            else:
                setattr(cls, name, _core.Field(name))
    if names:
        _fields_done.add(cls)


def _reduce_through_json(self):
    from .container import _reduce_json  # imported here: it imports this module

    return _reduce_json(self)


# --- Pickles that load their libraries (docs/distributed.md) ---------------------------------
# A pickle names, for each library that registered one of its types or its global function,
# the library's resolved path and one type key or name it registered there. Unpickling loads
# the libraries this process lacks (or, with FERRY_PICKLE_LIBRARIES=0, says which to load).


def _ensure_libraries(records):
    """Loads the library of each ``(path, type_key)`` record whose type this process lacks."""
    for path, key in records:
        if not _type_known(key):
            _load_for_pickle(path, f"the type '{key}'")
            if not _type_known(key):
                raise _unpickling_error(
                    f"cannot unpickle the type '{key}': the library '{path}' was loaded for it, "
                    "but it did not register that type"
                )


def _type_known(key):
    try:
        return _core._type_key_to_index(key) >= 0
    except KeyError:
        return False


def _global_from_library(name, path):
    """Unpickles the global function ``name``, registered by the library ``path``."""
    f = get_global_func(name, allow_missing=True)
    if f is None:
        _load_for_pickle(path, f"the global function '{name}'")
        f = get_global_func(name, allow_missing=True)
        if f is None:
            raise _unpickling_error(
                f"cannot unpickle the global function '{name}': the library '{path}' was loaded "
                "for it, but it did not register that name"
            )
    return f


def _unpickling_error(message):
    import pickle  # here: only when unpickling fails

    return pickle.UnpicklingError(message)


def _library_search_dirs():
    return [d for d in os.environ.get("FERRY_LIBRARY_PATH", "").split(os.pathsep) if d]


def _load_for_pickle(path, what):
    """Loads the library ``path`` that a pickle names for ``what`` (this process lacks it)."""
    if not _core._pickle_libraries_on():
        raise _unpickling_error(
            f"cannot unpickle {what}: it is not registered in this process, and loading the "
            f"library that registered it ('{path}') is turned off (FERRY_PICKLE_LIBRARIES=0); "
            "call ferry.load_library on it before unpickling"
        )
    found = path if os.path.exists(path) else None
    dirs = _library_search_dirs()
    if found is None:
        name = os.path.basename(path)
        found = next(
            (os.path.join(d, name) for d in dirs if os.path.exists(os.path.join(d, name))), None
        )
    if found is None:
        searched = (
            f", nor '{os.path.basename(path)}' in the directories of FERRY_LIBRARY_PATH "
            f"({os.pathsep.join(dirs)})"
            if dirs
            else ""
        )
        raise _unpickling_error(
            f"cannot unpickle {what}: it needs the library '{path}', which registered it in the "
            f"process that pickled it, and there is no such file here{searched}; install the "
            "library at that path, list its directory in FERRY_LIBRARY_PATH, or call "
            "ferry.load_library on it before unpickling"
        )
    try:
        load_library(found)
    except RuntimeError as e:
        raise _unpickling_error(
            f"cannot unpickle {what}: loading its library '{found}' failed: {e}"
        ) from e


def _class_hook(key, cls, base):
    """Called by ``_core`` when it first meets objects of the type ``key``: installs the field
    descriptors of a registered class (``cls``), or makes the class of a type without one,
    deriving from ``base`` (the class of its nearest registered ancestor)."""
    if cls is not None:
        _install_fields(cls, key)
        return cls
    name = key.rsplit(".", 1)[-1]
    if not name.isidentifier():
        name = "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "Object"
        if name[0].isdigit():
            name = "_" + name
    namespace = {
        "__slots__": (),
        # ferry.auto.<key> resolves to this class (ferry/auto.py): it pickles by reference.
        "__module__": "ferry.auto",
        "__qualname__": key,
        "__doc__": f"Objects of the Ferry type {key!r} (no Python class is registered for it).",
        "_type_key": key,
        "__ferry_type_key__": _TypeKeyAttr(key),
        # Its objects pickle by content (and name the library of their type).
        "__reduce__": _reduce_through_json,
    }
    made = type(base)(name, (base,), namespace)
    _install_fields(made, key)
    return made


_core._set_class_hook(_class_hook)


# --- ferry.auto: classes made on first sight, found by type key --------------------------------


def _auto_attribute(name):
    """``ferry.auto.<name>``: the class of the type key ``name``, or the keys under the prefix
    ``name`` (``ferry.auto.demo`` for ``ferry.auto.demo.Point``)."""
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(f"module 'ferry.auto' has no attribute {name!r}")
    return _auto_step(name)


def _auto_step(key):
    if _type_known(key):
        return _core._class_of_key(key)
    return _KeyPrefix(key)


class _KeyPrefix:
    """``ferry.auto.<prefix>``: a dotted part of type keys on the way to a class."""

    __slots__ = ("_prefix",)

    def __init__(self, prefix):
        object.__setattr__(self, "_prefix", prefix)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _auto_step(f"{self._prefix}.{name}")

    def __setattr__(self, name, value):
        raise AttributeError("ferry.auto resolves type keys; it cannot be assigned to")

    def __repr__(self):
        return (
            f"<ferry.auto.{self._prefix}: no Ferry type {self._prefix!r} is registered in this "
            "process (load the library that registers it); the keys under it resolve>"
        )

    def __reduce__(self):  # pickle protocols 0-3 reach a dotted class through its parent
        return (_auto_step, (self._prefix,))


def init_api(prefix: str, module: "str | types.ModuleType | None" = None) -> "list[str]":
    """Puts every global function named ``prefix.<name>`` into ``module`` as ``<name>``
    (TVM's ``_init_api``). ``module`` is a module object or name (default: the caller's).
    Names with further dots after the prefix are skipped. Returns the names added."""
    if module is None:
        module = sys._getframe(1).f_globals["__name__"]
    if isinstance(module, str):
        module = sys.modules[module]
    added = []
    start = prefix + "."
    for name in list_global_func_names():
        if name.startswith(start):
            short = name[len(start) :]
            if short and "." not in short and short.isidentifier():
                setattr(module, short, get_global_func(name))
                added.append(short)
    return added
