"""Passes over object graphs: :func:`visit`, :func:`transform` and :func:`structural_mismatch`.

They run the C++ walks (``ferry::StructuralVisit``, ``ferry::StructuralTransform``,
``ferry::StructuralMismatch``); see docs/transform.md.
"""

from __future__ import annotations

from typing import Any, Callable

from ._core import Function
from .registry import _libferry_global

_visit = _libferry_global("ferry.StructuralVisit")
_transform = _libferry_global("ferry.StructuralTransform")
_mismatch = _libferry_global("ferry.StructuralMismatch")


def _add_note(err: BaseException, note: str) -> None:
    """``err.add_note(note)``; on Python 3.10, which has no ``add_note``, the note goes into
    ``__notes__`` by hand (PEP 678's attribute: pytest and the ``exceptiongroup`` backport print
    it, 3.10's own traceback printer does not)."""
    if hasattr(err, "add_note"):
        err.add_note(note)
        return
    notes = getattr(err, "__notes__", None)
    if not isinstance(notes, list):
        notes = []
    notes.append(note)
    err.__notes__ = notes  # type: ignore[attr-defined]


def _run(name: str, walk: Function, root: Any, fn: Callable[[Any], object]) -> Any:
    """Runs `walk(root, fn)`. An exception `fn` raises comes back as the very object `fn`
    raised (its class, its args and its traceback down to the line in `fn` kept), with a note
    naming the walk and the access path of the object being visited, e.g.
    ``StructuralTransform: at root.b (test.IntImm)``. The walk stops at the first exception of
    `fn`, so the error the walk ends with is always that one, translated on its way through
    C++. A `fn` that is not callable is a TypeError before anything is walked."""
    if not callable(fn):
        raise TypeError(f"{name}: fn must be callable, not {type(fn).__name__}")
    raised: list[BaseException] = []

    def call(node: Any) -> object:
        try:
            return fn(node)
        except BaseException as e:
            raised.append(e)
            raise

    try:
        return walk(root, call)
    except BaseException as err:
        if not raised or err is raised[-1]:
            raised.clear()
            raise
        original = raised[-1]
        raised.clear()  # no cycle through this frame: the traceback holds it
        # The walk's message is "<walk>: at <path> (<type>): <message of fn's error>"; the note
        # keeps the part that is new to the user (the message of `raise KeyboardInterrupt` is
        # empty: the walk's then ends in ": ").
        note = str(err.args[0]) if err.args else str(err)
        for tail in (str(original), repr(original)):
            if note.endswith(": " + tail):
                note = note[: -len(tail) - 2]
                break
        _add_note(original, note)
        # Raised here, `original` would get the walk's error as its context (and `from None`
        # would drop the cause `fn` gave it, `raise ... from e`): its chain is put back as `fn`
        # left it.
        chain = (original.__cause__, original.__context__, original.__suppress_context__)
        try:
            raise original
        finally:
            original.__cause__, original.__context__, original.__suppress_context__ = chain
            # The traceback holds this frame and this frame held `original`: a reference cycle
            # per failed walk, which only the cyclic GC frees (never, under gc.disable()).
            del original, chain


def visit(root: Any, fn: Callable[[Any], object]) -> None:
    """Calls ``fn(obj)`` once on every object reachable from ``root``, children before parents.

    Nodes' fields, the items of ``Array``/``List`` and the keys and values of ``Map``/``Dict``
    are walked; strings, bytes and numbers are values and are not passed to ``fn``. An object
    reachable by several paths is visited once. An exception raised by ``fn`` propagates with
    the access path of the object in its message; a cycle (through a ``List`` or ``Dict``) is a
    ``ValueError``. A ``root`` that holds no object (``None``, a number, a string) visits
    nothing.
    """
    _run("visit", _visit, root, fn)


def transform(root: Any, fn: Callable[[Any], object]) -> Any:
    """Rebuilds the graph under ``root`` bottom-up and returns the new root.

    ``fn(obj)`` sees each object with its children already transformed and returns its
    replacement, or ``None`` to keep it. A node whose children did not change is kept as the
    very same object; a node with a changed child is copied with only those fields replaced;
    an object shared by several parents is transformed once and its result shared. A
    replacement its field cannot hold is a ``TypeError`` naming the field, and two keys of a
    ``Map``/``Dict`` becoming equal keys is a ``ValueError`` (an entry would be lost). A ``root``
    that holds no object (``None``, a number, a string) is returned as it is.
    """
    return _run("transform", _transform, root, fn)


def structural_mismatch(a: Any, b: Any, map_free_vars: bool = False) -> str | None:
    """The access path of the first structural difference between ``a`` and ``b``, such as
    ``"b.a.value"`` or ``"args[1]"``; ``""`` when the roots themselves differ; ``None`` when
    they are structurally equal."""
    path = _mismatch(a, b, map_free_vars)
    if path is None:
        return None
    path = str(path)
    if path.startswith("root"):
        path = path[len("root") :]
    return path[1:] if path.startswith(".") else path
