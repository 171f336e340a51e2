"""Errors across the C++/Python boundary.

A C++ ``ferry::Error`` of kind ``ValueError`` raises Python's ``ValueError`` with the C++
message; the C++ frames are added to the traceback as entries of their own (made by
``_core``), so a traceback reads from the Python caller down into C++. Kinds without a Python
builtin of the same name become subclasses of :class:`FerryError` (``InternalError``, or a
class made on first sight for a kind a library invents). A Python exception raised inside a
callback that C++ called comes back to the Python caller as the very same exception object
(handled in ``_core``).
"""

import builtins
import re

from . import _core

__all__ = [
    "AbiMismatchError",
    "FerryError",
    "FunctionInJSONError",
    "InternalError",
    "register_error",
]


class FerryError(RuntimeError):
    """Base of Ferry error kinds that have no Python builtin of their own."""

    __ferry_kind__ = "RuntimeError"


class InternalError(FerryError):
    """A broken internal invariant of Ferry or of a library (``FERRY_ICHECK``)."""

    __ferry_kind__ = "InternalError"


class AbiMismatchError(ImportError, RuntimeError):
    """``load_library`` refused a library built against Ferry headers of another ABI (its
    version or layout fingerprint differs from the running libferry's); the message names both.
    An ``ImportError`` (the library cannot be imported) and a ``RuntimeError`` (what C++, Rust
    and Java raise for it)."""


class FunctionInJSONError(ValueError):
    """``save_json`` met a ``ferry.Function``, which JSON has no form for (C++ kind
    ``FunctionInJSONError``). A ``ValueError``; pickle saves such graphs by parts instead."""

    __ferry_kind__ = "FunctionInJSONError"


# The one list of kinds is libferry's (FerryErrorBuiltinKinds); those Python also has map to
# its builtin classes.
_BUILTIN_KINDS = {
    name: getattr(builtins, name)
    for name in _core._builtin_error_kinds()
    if isinstance(getattr(builtins, name, None), type)
}
_KINDS = dict(_BUILTIN_KINDS, InternalError=InternalError, FunctionInJSONError=FunctionInJSONError)


def register_error(kind, cls=None):
    """Maps the C++ error kind ``kind`` to the exception class ``cls`` (decorator or call).

    The class also names the kind a Python exception of that class carries into C++.
    """

    def register(cls):
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            raise TypeError(f"register_error: {cls!r} is not an exception class")
        _KINDS[kind] = cls
        if kind not in _BUILTIN_KINDS or cls is not _BUILTIN_KINDS[kind]:
            cls.__ferry_kind__ = kind
        return cls

    return register if cls is None else register(cls)


def _class_of(kind):
    cls = _KINDS.get(kind)
    if cls is None:
        name = kind if kind.isidentifier() else "FerryError"
        cls = type(name, (FerryError,), {"__ferry_kind__": kind, "__module__": "ferry.error"})
        _KINDS[kind] = cls
    return cls


# A string or bytes value is a str or bytes in Python, never a Ferry object: an error that says
# a value "got ferry.String" names what the Python user passed as "str". Each is followed by the
# end of the message or a space, parenthesis, comma or colon (type keys never contain those).
_PYTHON_NAMES = re.compile(r"\bgot ferry\.(String|Bytes)(?=$|[\s),:])")
_PYTHON_NAME = {"String": "got str", "Bytes": "got bytes"}


def _make_error(kind, message, backtrace):
    """Called by ``_core`` to build the exception for a C++ error (``_core`` then adds the C++
    frames to its traceback)."""
    if "got ferry." in message:
        message = _PYTHON_NAMES.sub(lambda m: _PYTHON_NAME[m.group(1)], message)
    exc = _class_of(kind)(message)
    exc.__ferry_backtrace__ = backtrace
    return exc
