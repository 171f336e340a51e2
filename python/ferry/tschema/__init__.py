"""tschema: declare Ferry objects in Python, generate and check their C++ and Python code.

    from ferry.tschema import declare, Object, ty

    @declare
    class IntImmNode(PrimExprNode):
        \"\"\"Constant integer literals in the program.

        Attributes
        ----------
        value
            The internal value.
        \"\"\"
        type_key = "IntImm"
        value: ty.int64_t

Enums shared by C++ and Python are declared with ``@declare_enum class OpKind(Enum)``, a
``type_key`` and ``Name = int`` members, and used as field types (``op: OpKind``).

Run ``python -m ferry.tschema generate|check|dump`` (docs/tschema.md). This package is pure
Python: importing it needs nothing beyond the standard library and the `ferry` package.
"""

from . import ty
from .errors import Diagnostic, SchemaError
from .lang import Enum, Object, declare, declare_enum
from .loader import load_schema
from .runtime import register

__all__ = [
    "declare",
    "declare_enum",
    "Object",
    "Enum",
    "ty",
    "SchemaError",
    "Diagnostic",
    "load_schema",
    "register",
]
