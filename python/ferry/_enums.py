"""Enums shared with C++: :func:`get_enum` and :func:`register_enum`.

An enum field holds its member's name on the C++ side (``FERRY_REGISTER_ENUM``); Python reads it
as a member of an ``enum.IntEnum`` and writes a member, its name or its value.
"""

from __future__ import annotations

import enum
import pickle
import threading
from typing import Any

from .registry import _libferry_global, get_global_func

_enum_get = _libferry_global("ferry.EnumGet")
_enum_register = _libferry_global("ferry.EnumRegister")
_lock = threading.Lock()
_by_key: dict[str, type[enum.Enum]] = {}
_key_of: dict[type[enum.Enum], str] = {}
#: The classes get_enum made from a C++ registration (a register_enum may replace those).
_made: set[type[enum.Enum]] = set()


def get_enum(key: str) -> type[enum.Enum]:
    """The Python enum of the enum registered as ``key``: the class given to
    :func:`register_enum`, or an ``enum.IntEnum`` made (once) from the C++ registration. A
    ``KeyError`` when no enum is registered as ``key``."""
    with _lock:
        known = _by_key.get(key)
    if known is not None:
        return known
    flat = _enum_get(key)
    if flat is None:
        raise KeyError(f"no enum is registered as {key!r}")
    items = list(flat)
    members = [(str(items[i]), int(items[i + 1])) for i in range(0, len(items), 2)]
    made: Any = _make_int_enum(key, members)
    made.__qualname__ = key
    # The class lives nowhere pickle can import it from: a member pickles as (key, name), and
    # unpickles as the member of the enum registered under `key` in the loading process.
    made.__reduce_ex__ = _reduce_member
    with _lock:
        cls = _by_key.setdefault(key, made)
        _key_of.setdefault(cls, key)
        if cls is made:
            _made.add(made)
    return cls


def _make_int_enum(key: str, members: list[tuple[str, int]]) -> Any:
    """``enum.IntEnum`` of ``members``; a ValueError naming the members whose names a Python
    enum cannot hold (``mro``, ``_ignore_``, dunders and ``_sunder_`` names, which ``enum``
    refuses or silently takes as attributes), rather than a class that lacks them."""

    def make(items: list[tuple[str, int]]) -> Any:
        try:
            return enum.IntEnum(key.rsplit(".", 1)[-1], items)
        except (TypeError, ValueError):
            return None

    def holds(cls: Any, name: str, value: int) -> bool:
        if cls is None:
            return False
        member = cls.__members__.get(name)
        return isinstance(member, cls) and member.value == value

    made = make(members)
    # When the class cannot be made at all, each member alone says which names are at fault.
    lost = [n for n, v in members if not holds(made if made is not None else make([(n, v)]), n, v)]
    if lost:
        raise ValueError(
            f"the enum {key!r} has members whose names a Python enum cannot hold: "
            f"{', '.join(repr(name) for name in lost)} (rename them where the enum is registered)"
        )
    return made


def _reduce_member(member: enum.Enum, protocol: object = None) -> tuple[Any, tuple[str, str]]:
    return (_member, (_key_of[type(member)], member.name))


def _member(key: str, name: str) -> enum.Enum:
    """Unpickles a member of the enum made from the C++ registration ``key``."""
    try:
        cls = get_enum(key)
    except KeyError:
        raise pickle.UnpicklingError(
            f"cannot unpickle {key}.{name}: no enum is registered as {key!r} in this process "
            "(it is not registered until the library or module that registers it is loaded)"
        ) from None
    try:
        return cls[name]
    except KeyError:
        raise pickle.UnpicklingError(
            f"cannot unpickle {key}.{name}: the enum {key!r} has no member {name!r} here"
        ) from None


def _same_class(a: type, b: type) -> bool:
    """Whether `b` is `a`, or `a` as a module reload (or a second exec of the same source) made
    it again: the same module and qualified name."""
    return a is b or (
        a.__module__ == b.__module__ and a.__qualname__ == b.__qualname__ and a.__module__ != ""
    )


def register_enum(key: str, cls: type[enum.Enum]) -> type[enum.Enum]:
    """Registers the Python enum ``cls`` (integer values) as ``key``, so that C++ knows its
    members and ``py_class`` fields may be annotated with it. Registering the members of an enum
    C++ registered already is allowed (they must agree; ``cls`` then replaces the class
    :func:`get_enum` made); other members under a taken key are a ``ValueError``. A key holds one
    class: registering the same class again does nothing, a class of the same module and
    qualified name (the module reloaded) replaces it, and any other class is a ``ValueError``
    naming both. Returns ``cls`` (usable as a decorator through ``functools.partial``)."""
    if not (isinstance(cls, type) and issubclass(cls, enum.Enum)):
        raise TypeError(f"register_enum: {cls!r} is not an enum.Enum subclass")
    flat: list[object] = []
    for member in cls:
        if not isinstance(member.value, int) or isinstance(member.value, bool):
            raise TypeError(
                f"register_enum({key!r}): member {member.name} has the value {member.value!r}; "
                "Ferry enums have integer values"
            )
        flat += [member.name, int(member.value)]
    # One lock from the check of the key to its entry: two threads registering two classes
    # under one key would otherwise both succeed, and one of them be silently replaced.
    with _lock:
        held = _by_key.get(key)
        if held is cls:
            return cls
        if held is not None and held not in _made and not _same_class(held, cls):
            raise ValueError(
                f"register_enum: {key!r} is registered already, as {held.__module__}."
                f"{held.__qualname__}; it cannot also name {cls.__module__}.{cls.__qualname__} "
                "(one key, one class: choose another key)"
            )
        _enum_register(key, flat)
        if not issubclass(cls, int) and "__index__" not in vars(cls):
            # A plain Enum member then converts to its value where C++ takes it.
            type.__setattr__(cls, "__index__", lambda self: int(self.value))
        _by_key[key] = cls
        _key_of[cls] = key
    return cls


def check_member(key: str, value: object, field: str, owner: str) -> None:
    """A TypeError when `value`, written to the enum field `field` of the type `owner` (of enum
    `key`), is a member of another enum class: its value or name would pass for a member of
    this one. Plain values and names are checked by the field itself."""
    if not isinstance(value, enum.Enum):
        return
    expected = get_enum(key)
    if type(value) is expected:
        return
    other = enum_key(type(value))
    what = f"registered as {other}" if other is not None else "not registered with ferry"
    raise TypeError(
        f"field '{field}' of '{owner}': expected a member of {key} ({expected.__qualname__}) "
        f"but got {type(value).__qualname__}.{value.name}, a member of another enum "
        f"({type(value).__module__}.{type(value).__qualname__}, {what})"
    )


def enum_key(cls: type) -> str | None:
    """The key ``cls`` is registered under, or None."""
    with _lock:
        return _key_of.get(cls)


def enum_of_type_text(text: str) -> str | None:
    """The enum key of a field typed ``Enum[key]`` or ``Optional[Enum[key]]``, else None."""
    if text.startswith("Optional[") and text.endswith("]"):
        text = text[len("Optional[") : -1]
    if text.startswith("Enum[") and text.endswith("]"):
        return text[len("Enum[") : -1]
    return None


def check_make_node(key: str, fields: dict[str, Any]) -> None:
    """check_member for each enum field of type ``key`` among ``fields`` (make_node's, called
    by the extension only when some value is an ``enum.Enum`` member)."""
    described = get_global_func("ferry.FindNodeFields")
    found = described(key) if described is not None else None
    if found is None:
        return  # not a node type: make_node says so itself
    items = list(found)
    for name, text in zip(items[0::2], items[1::2]):
        enum_key_ = enum_of_type_text(str(text))
        if enum_key_ is not None and str(name) in fields:
            check_member(enum_key_, fields[str(name)], str(name), key)


class EnumField:
    """A field of type ``Enum[key]`` (or ``Optional[Enum[key]]``): stored as the member's name,
    read as the member (or None)."""

    __slots__ = ("_field", "_key")

    def __init__(self, name: str, key: str) -> None:
        from . import _core

        self._field = _core.Field(name)
        self._key = key

    @property
    def name(self) -> str:
        return self._field.name

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        value = self._field.__get__(instance, owner)
        if value is None:
            return None
        return get_enum(self._key)[str(value)]

    def __set__(self, instance: Any, value: Any) -> None:
        if isinstance(value, enum.Enum):
            check_member(self._key, value, self.name, instance.__ferry_type_key__)
        self._field.__set__(instance, value)

    def __delete__(self, instance: Any) -> None:
        self._field.__delete__(instance)

    def __reduce__(self) -> Any:
        return (EnumField, (self.name, self._key))
