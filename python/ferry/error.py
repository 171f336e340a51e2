"""Errors across the C++/Python boundary.

A C++ ``ferry::Error`` of kind ``ValueError`` raises Python's ``ValueError`` with the C++
message; the C++ frames are appended to the traceback as extra entries, so a traceback reads
from the Python caller down into C++. Kinds without a Python builtin of the same name become
subclasses of :class:`FerryError` (``InternalError``, or a class made on first sight for a kind
a library invents). A Python exception raised inside a callback that C++ called comes back to
the Python caller as the very same exception object (handled in ``_core``).
"""
import re
import sys
import types

__all__ = ["FerryError", "InternalError", "register_error"]


class FerryError(RuntimeError):
    """Base of Ferry error kinds that have no Python builtin of their own."""

    __ferry_kind__ = "RuntimeError"


class InternalError(FerryError):
    """A broken internal invariant of Ferry or of a library (``FERRY_ICHECK``)."""

    __ferry_kind__ = "InternalError"


_BUILTIN_KINDS = {
    cls.__name__: cls
    for cls in (
        ValueError,
        TypeError,
        KeyError,
        IndexError,
        AttributeError,
        NotImplementedError,
        RuntimeError,
        MemoryError,
        OverflowError,
        ZeroDivisionError,
    )
}
_KINDS = dict(_BUILTIN_KINDS, InternalError=InternalError)


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


# "  at file.cc:12", then frames "  symbol in /path/lib.so" (innermost first).
_AT_LINE = re.compile(r"^\s*at (.+):(\d+)$")
_FRAME_LINE = re.compile(r"^\s*(.+?)(?: in (\S+))?$")
_C_ABI_ENTRY = re.compile(r"^Ferry[A-Z]\w*$")
_SKIPPED = ("ferry::details::ErrorBuilder", "ferry::details::ThrowError", "ferry::Error::Error")
_code_cache = {}


def _fake_frame(filename, lineno, name):
    """A frame object whose code says ``name`` at ``filename:lineno``, for a traceback entry."""
    key = (filename, lineno, name)
    code = _code_cache.get(key)
    if code is None:
        source = "\n" * (max(lineno, 1) - 1) + "frame = _getframe()"
        code = compile(source, filename, "exec")
        try:
            code = code.replace(co_name=name)
        except (TypeError, ValueError):
            pass
        _code_cache[key] = code
    scope = {"_getframe": sys._getframe}
    exec(code, scope)  # noqa: S102 - runs only the one-line code compiled above
    return scope["frame"]


def _cxx_traceback(backtrace):
    """Traceback entries for the C++ frames of ``backtrace`` (outermost first), or None."""
    frames = []
    for line in backtrace.splitlines():
        at = _AT_LINE.match(line)
        if at:
            frames.append((at.group(1), int(at.group(2)), "<C++ throw site>"))
            continue
        match = _FRAME_LINE.match(line)
        if not match:
            continue
        symbol, library = match.group(1), match.group(2) or "<C++>"
        if _C_ABI_ENTRY.match(symbol) or "/ferry/_core" in library:
            break  # the C ABI entry: the frames beyond are the extension's and the interpreter's
        if symbol.startswith(_SKIPPED) or "libpython" in library:
            continue
        frames.append((library, 0, symbol))
    tb = None
    try:
        for filename, lineno, name in frames:  # innermost first, so wrap outward
            frame = _fake_frame(filename, lineno, name)
            tb = types.TracebackType(tb, frame, frame.f_lasti, max(lineno, 1))
    except Exception:  # noqa: BLE001 - a traceback decoration must never hide the error
        return None
    return tb


def _make_error(kind, message, backtrace):
    """Called by ``_core`` to build the exception for a C++ error."""
    exc = _class_of(kind)(message)
    exc.__ferry_backtrace__ = backtrace
    tb = _cxx_traceback(backtrace) if backtrace else None
    return exc.with_traceback(tb)
