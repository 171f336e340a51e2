"""Ferry: one set of objects and functions shared by C++ and Python.

    import ferry
    ferry.load_library("libmyproject.so")
    add = ferry.get_global_func("myproject.add")
    assert add(1, 2) == 3

See docs/python.md for the full guide.
"""

import typing as _typing

from ._build_tree import core_dir as _core_dir

# A checkout's python/ferry/ has no extension: it is in the build tree (see _build_tree.py).
if (_extension_dir := _core_dir(__path__[0])) is not None:
    __path__.append(_extension_dir)

from . import _core
from .error import _make_error

_core._set_error_factory(_make_error)

from . import auto as auto  # classes made on first sight: pickled by reference to it
from . import dataclasses
from ._core import Field, Function, Object, convert, make_node
from ._enums import get_enum, register_enum
from .container import Array, Dict, List, Map, Shape
from .dataclasses import field, py_class
from .dtype import DataType
from .error import AbiMismatchError, FerryError, FunctionInJSONError, InternalError, register_error
from .registry import (
    get_global_func,
    init_api,
    list_global_func_names,
    load_library,
    register_func,
    register_object,
    remove_global_func,
    unload_library,
)
from .tensor import Device, Tensor, from_dlpack
from .transform import structural_mismatch, transform, visit

__version__ = _core.__ferry_version__

String = str  # Ferry strings come back as str; a str passed to C++ becomes a ferry::String
Bytes = bytes

__all__ = [
    "AbiMismatchError",
    "Array",
    "Bytes",
    "DataType",
    "Device",
    "Dict",
    "FerryError",
    "Field",
    "from_dlpack",
    "Function",
    "FunctionInJSONError",
    "InternalError",
    "List",
    "Map",
    "Object",
    "Shape",
    "String",
    "Tensor",
    "convert",
    "dataclasses",
    "field",
    "get_enum",
    "get_global_func",
    "init_api",
    "list_global_func_names",
    "load_json",
    "load_library",
    "unload_library",
    "make_node",
    "py_class",
    "register_enum",
    "register_error",
    "register_func",
    "register_object",
    "remove_global_func",
    "save_json",
    "structural_equal",
    "structural_hash",
    "structural_mismatch",
    "transform",
    "visit",
]

if _typing.TYPE_CHECKING:
    from . import cpp as cpp
    from . import tschema as tschema

# Submodules that `import ferry` leaves out (ferry.cpp pulls in the compiler driver): reachable as
# attributes all the same, imported on first use, so that `import ferry` stays fast.
_LAZY_SUBMODULES = ("cpp", "tschema")


def __getattr__(name: str) -> _typing.Any:
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")  # also binds ferry.<name>
    raise AttributeError(f"module 'ferry' has no attribute {name!r}")


_structural_equal = get_global_func("ferry.StructuralEqual")
_structural_hash = get_global_func("ferry.StructuralHash")
_save_json = get_global_func("ferry.SaveJSON")
_load_json = get_global_func("ferry.LoadJSON")


def structural_equal(a: object, b: object, map_free_vars: bool = False) -> bool:
    """Whether ``a`` and ``b`` are equal by structure (fields compared recursively; bound
    variables matched by position, free ones only when ``map_free_vars``)."""
    return _structural_equal(a, b, map_free_vars)


def structural_hash(value: object, map_free_vars: bool = False) -> int:
    """A hash consistent with :func:`structural_equal`."""
    return _structural_hash(value, map_free_vars)


def save_json(value: object) -> str:
    """The JSON text of ``value`` (objects, containers, plain values); sharing is kept."""
    return _save_json(value)


def load_json(text: str) -> _typing.Any:
    """Loads what :func:`save_json` wrote; ValueError saying where for malformed input."""
    return _load_json(text)
