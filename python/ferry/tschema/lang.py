"""The declaration side of the language: ``Object`` and ``@declare``.

``@declare`` only records where the class was declared; everything else is read from the class
later (model.py), once the whole schema is imported, so that every problem can be reported
together and with its file and line.

    @declare
    class IntImmNode(PrimExprNode):
        type_key = "IntImm"
        value: ty.int64_t
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Dict

__all__ = [
    "Object",
    "Enum",
    "declare",
    "declare_enum",
    "Declaration",
    "CLASS_ATTRIBUTES",
    "ENUM_ATTRIBUTES",
]

#: The class attributes the language understands, with their defaults ("required" for none).
CLASS_ATTRIBUTES: Dict[str, Any] = {
    "type_key": "required",
    "default_visit_attrs": True,
    "default_sequal_reduce": True,
    "default_shash_reduce": True,
    "ref_name": None,
    "final": None,
    "mutable": None,
    "type_child_slots": None,
    "namespace": None,
}

#: The class attributes of a declared enum; every other public attribute is a member.
ENUM_ATTRIBUTES: Dict[str, Any] = {"type_key": "required", "namespace": ""}


class Object:
    """The root of every schema: a node deriving from it derives from ``ferry::Object``."""


class Enum:
    """The base of a declared enum: members are class attributes with int values.

    A plain class rather than `enum.Enum`, so that ``type_key`` (and ``namespace``) sit beside
    the members without becoming members; the generated Python is an ``enum.IntEnum``.
    """


@dataclass
class Declaration:
    """Where ``@declare`` was applied to a class."""

    file: str
    #: The line of the decorator; the model maps it to the class statement.
    line: int
    #: The globals of the module the class was declared in, to tell which load it belongs to.
    module_globals: Dict[str, Any]


def declare(cls: Any = None) -> Any:
    """Declares a node class of the schema.

    The class must derive from `Object` or another declared class, set ``type_key``, and list
    its fields as annotations; see docs/tschema.md. The class is returned unchanged apart from
    a ``__tschema__`` attribute.
    """
    frame = sys._getframe(1)
    if not isinstance(cls, type):
        # A bare call such as `declare("x")` or `@declare()`: nothing sensible to return, so
        # the error surfaces at import with the caller's line (the loader reports it).
        raise TypeError("@declare is used without arguments on a class: `@declare class X(...)`")
    cls.__tschema__ = Declaration(  # type: ignore[attr-defined]  # the marker of a schema class
        frame.f_code.co_filename, frame.f_lineno, frame.f_globals
    )
    return cls


def declare_enum(cls: Any = None) -> Any:
    """Declares an enum of the schema: C++ gets an ``enum class`` registered with
    ``FERRY_REGISTER_ENUM``, Python an ``enum.IntEnum`` given to ``ferry.register_enum``.

    The class derives from `Enum`, sets ``type_key`` and lists its members as ``Name = value``
    (ints); see docs/tschema.md. The class is returned unchanged apart from ``__tschema_enum__``.
    """
    frame = sys._getframe(1)
    if not isinstance(cls, type):
        raise TypeError(
            "@declare_enum is used without arguments on a class: `@declare_enum class X(Enum)`"
        )
    cls.__tschema_enum__ = Declaration(  # type: ignore[attr-defined]  # the marker
        frame.f_code.co_filename, frame.f_lineno, frame.f_globals
    )
    return cls
