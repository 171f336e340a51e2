"""Global functions and object classes: the registries shared with C++."""
import sys

from . import _core

__all__ = [
    "get_global_func",
    "list_global_func_names",
    "register_func",
    "remove_global_func",
    "register_object",
    "init_api",
    "load_library",
]

get_global_func = _core.get_global_func
list_global_func_names = _core.list_global_func_names
remove_global_func = _core.remove_global_func


def load_library(path):
    """Loads a shared library and runs its registrations (``FERRY_REGISTER_GLOBAL``,
    ``FERRY_REGISTER_NODE_TYPE``). The library stays loaded for the life of the process.
    A missing file or a library that fails to load is a RuntimeError naming the path."""
    _core.load_library(str(path))


def register_func(name, f=None, override=False):
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


def register_object(type_key=None):
    """Class decorator: objects of C++ type ``type_key`` (or of a type derived from it without
    a class of its own) come back to Python as instances of the decorated class.

    The class must derive from ``ferry.Object``. The reflected fields of the type become
    read-only attributes (a class attribute of the same name wins). Without an argument the
    class name is the type key.
    """

    def register(cls):
        key = type_key if type_key is not None else cls.__name__
        if not (isinstance(cls, type) and issubclass(cls, _core.Object)):
            raise TypeError(f"register_object({key!r}): {cls!r} does not derive from ferry.Object")
        cls._type_key = key
        _core._register_class(key, cls)
        _install_fields(cls, key)
        return cls

    if isinstance(type_key, type):  # used bare: @register_object
        cls, type_key = type_key, None
        return register(cls)
    return register


def _install_fields(cls, key):
    node_fields = get_global_func("ferry.NodeFields")
    try:
        described = node_fields(key)  # [name0, type0, name1, type1, ...]
    except ValueError:
        return  # not a reflected node (yet): attribute access falls back to lookups by name
    for name in list(described)[0::2]:
        if not any(name in vars(klass) for klass in cls.__mro__):
            setattr(cls, name, _core.Field(name))


def init_api(prefix, module=None):
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
            short = name[len(start):]
            if short and "." not in short and short.isidentifier():
                setattr(module, short, get_global_func(name))
                added.append(short)
    return added
