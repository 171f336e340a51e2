"""Field types of the schema language: ``ty.int64_t``, ``ty.Array[T]``, ``ty.field(...)``.

A field annotation is one of these type objects or a declared node class (which stands for its
reference class). Each type knows its C++ spelling, its Python annotation and how to check a
default value; the generators ask it rather than switching on names.

    from ferry.tschema import ty
    value: ty.int64_t = 0
    args: ty.Array[PrimExprNode]
    var: VarNode = ty.field(structural="def")
"""

from __future__ import annotations

import builtins
import math
from typing import Any as _AnyT
from typing import Callable, Tuple
from typing import Dict as _Dict
from typing import Optional as _Opt

__all__ = [
    "NameContext",
    "Type",
    "Scalar",
    "Builtin",
    "ArrayType",
    "MapType",
    "OptionalType",
    "NodeType",
    "EnumType",
    "FieldSpec",
    "field",
    "STRUCTURAL_ROLES",
    "SCALAR_NAMES",
]

#: Roles a field plays in SEqualReduce / SHashReduce.
#: "compare": ``equal(a, other->a)`` / ``hash(a)``; "def": a definition site,
#: ``equal.DefEqual`` / ``hash.DefHash``; "ignore": left out of both.
STRUCTURAL_ROLES = ("compare", "def", "ignore")


class NameContext:
    """How generated code spells names; the C++ and Python generators each provide one."""

    def ferry(self, name: str) -> str:
        """A Ferry type ("String", "Array", ...) as seen from the generated code."""
        raise NotImplementedError

    def cpp_ref(self, cls: type) -> str:
        """The C++ reference class of declared node `cls`."""
        raise NotImplementedError

    def py_ref(self, cls: type) -> str:
        """The Python class of declared node `cls`."""
        raise NotImplementedError

    def cpp_enum(self, cls: type) -> str:
        """The C++ enum class of declared enum `cls`."""
        raise NotImplementedError

    def py_enum(self, cls: type) -> str:
        """The Python enum class of declared enum `cls`."""
        raise NotImplementedError


class Type:
    """Base of every field type."""

    #: How the type is spelled in a schema and in messages, e.g. "ty.Array[ty.int64_t]".
    spelling: str = ""

    def cpp(self, ctx: "NameContext") -> str:
        """The C++ type, with names spelled as seen from where the field is declared."""
        raise NotImplementedError

    def python(self, ctx: "NameContext") -> str:
        """The Python annotation used in generated modules and stubs."""
        raise NotImplementedError

    def to_json(self) -> _Dict[str, _AnyT]:
        raise NotImplementedError

    def nodes(self) -> Tuple["NodeType", ...]:
        """Declared nodes this type mentions (for ordering and validation)."""
        return ()

    def check_default(self, value: _AnyT) -> _Opt[str]:
        """None when `value` is a valid default, else why it is not."""
        return f"{self.spelling} fields take no default"

    def cpp_default(self, value: _AnyT, ctx: "NameContext") -> str:
        """The C++ initializer for a checked default."""
        raise NotImplementedError

    def cpp_zero(self) -> _Opt[str]:
        """The initializer a field without default gets (None: default-constructed)."""
        return None

    def __repr__(self) -> str:
        return self.spelling


def _int_range(bits: int, signed: builtins.bool) -> Tuple[int, int]:
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


class Scalar(Type):
    """A plain C++ value: bool, a fixed-width integer, float or double."""

    def __init__(self, name: str, kind: str, bits: int = 0, signed: builtins.bool = True):
        self.name = name
        self.kind = kind  # "bool", "int" or "float"
        self.bits = bits
        self.signed = signed
        self.spelling = f"ty.{name}"

    def cpp(self, ctx: "NameContext") -> str:
        return self.name

    def python(self, ctx: "NameContext") -> str:
        return {"bool": "bool", "int": "int", "float": "float"}[self.kind]

    def to_json(self) -> _Dict[str, _AnyT]:
        return {"kind": "scalar", "name": self.name}

    def check_default(self, value: _AnyT) -> _Opt[str]:
        if self.kind == "bool":
            return None if isinstance(value, builtins.bool) else "expected True or False"
        if isinstance(value, builtins.bool):
            return "expected a number, not a bool"
        if self.kind == "int":
            if not isinstance(value, int):
                return "expected an int"
            lo, hi = _int_range(self.bits, self.signed)
            if not lo <= value <= hi:
                return f"{value} is out of range for {self.name}"
            if value >= 1 << 63:
                return (
                    "values above 2**63-1 cannot cross Ferry's ABI, where integers travel as int64"
                )
            return None
        if not isinstance(value, (int, builtins.float)):
            return "expected a number"
        if not math.isfinite(value):
            return "only finite numbers can be defaults"
        if self.name == "float" and abs(value) > 3.4028234663852886e38:
            return f"{value} is out of range for float"
        return None

    def cpp_default(self, value: _AnyT, ctx: "NameContext") -> str:
        if self.kind == "bool":
            return "true" if value else "false"
        if self.kind == "int":
            lo, _ = _int_range(self.bits, self.signed)
            if self.bits == 64 and value == lo:
                # -9223372036854775808 is not a literal in C++: it is minus a too-large one.
                return f"{value + 1} - 1"
            return f"{value}u" if not self.signed and value > 0x7FFFFFFF else f"{value}"
        text = repr(builtins.float(value))
        return text + "f" if self.name == "float" else text

    def cpp_zero(self) -> _Opt[str]:
        return {"bool": "false", "int": "0", "float": "0"}[self.kind]


class Builtin(Type):
    """A Ferry value or object type without parameters: String, DataType, ObjectRef, Any."""

    def __init__(self, name: str, python: str):
        self.name = name
        self._python = python
        self.spelling = f"ty.{name}"

    def cpp(self, ctx: "NameContext") -> str:
        return ctx.ferry(self.name)

    def python(self, ctx: "NameContext") -> str:
        return self._python

    def to_json(self) -> _Dict[str, _AnyT]:
        return {"kind": self.name}

    def check_default(self, value: _AnyT) -> _Opt[str]:
        if self.name == "String":
            return None if isinstance(value, str) else "expected a str"
        if self.name == "DataType":
            if isinstance(value, str) and value:
                return None
            return "expected the text form of a DataType, such as 'int64'"
        if self.name == "ObjectRef":
            return None if value is None else "only None can be the default"
        # Any
        if value is None or isinstance(value, (builtins.bool, int, str)):
            if isinstance(value, int) and not isinstance(value, builtins.bool):
                if not -(1 << 63) <= value < (1 << 63):
                    return "out of the int64 range"
            return None
        if isinstance(value, builtins.float) and math.isfinite(value):
            return None
        return "expected None, a bool, an int, a finite float or a str"

    def cpp_default(self, value: _AnyT, ctx: "NameContext") -> str:
        if self.name == "String":
            return cpp_string_literal(value)
        if self.name == "DataType":
            return f"{ctx.ferry('DataType')}({cpp_string_literal(value)})"
        if value is None:
            return f"{self.cpp(ctx)}()"
        if isinstance(value, builtins.bool):
            return f"{ctx.ferry('Any')}({'true' if value else 'false'})"
        if isinstance(value, int):
            return f"{ctx.ferry('Any')}(int64_t{{{int64_t.cpp_default(value, ctx)}}})"
        if isinstance(value, builtins.float):
            return f"{ctx.ferry('Any')}({repr(value)})"
        return f"{ctx.ferry('Any')}({ctx.ferry('String')}({cpp_string_literal(value)}))"


class ArrayType(Type):
    def __init__(self, elem: Type):
        self.elem = elem
        self.spelling = f"ty.Array[{elem.spelling}]"

    def cpp(self, ctx: "NameContext") -> str:
        return f"{ctx.ferry('Array')}<{self.elem.cpp(ctx)}>"

    def python(self, ctx: "NameContext") -> str:
        return f"typing.Sequence[{self.elem.python(ctx)}]"

    def to_json(self) -> _Dict[str, _AnyT]:
        return {"kind": "Array", "elem": self.elem.to_json()}

    def nodes(self) -> Tuple["NodeType", ...]:
        return self.elem.nodes()

    def check_default(self, value: _AnyT) -> _Opt[str]:
        if isinstance(value, (list, tuple)) and not value:
            return None
        return "only an empty list can be the default"

    def cpp_default(self, value: _AnyT, ctx: "NameContext") -> str:
        return f"{self.cpp(ctx)}()"


class MapType(Type):
    def __init__(self, key: Type, value: Type):
        self.key = key
        self.value = value
        self.spelling = f"ty.Map[{key.spelling}, {value.spelling}]"

    def cpp(self, ctx: "NameContext") -> str:
        return f"{ctx.ferry('Map')}<{self.key.cpp(ctx)}, {self.value.cpp(ctx)}>"

    def python(self, ctx: "NameContext") -> str:
        return f"typing.Mapping[{self.key.python(ctx)}, {self.value.python(ctx)}]"

    def to_json(self) -> _Dict[str, _AnyT]:
        return {"kind": "Map", "key": self.key.to_json(), "value": self.value.to_json()}

    def nodes(self) -> Tuple["NodeType", ...]:
        return self.key.nodes() + self.value.nodes()

    def check_default(self, value: _AnyT) -> _Opt[str]:
        if isinstance(value, dict) and not value:
            return None
        return "only an empty dict can be the default"

    def cpp_default(self, value: _AnyT, ctx: "NameContext") -> str:
        return f"{self.cpp(ctx)}()"


class ListType(ArrayType):
    """A mutable list (`ferry::List<T>`): written in place, seen by every holder. Like Array,
    only an empty list can be the default (each object gets its own)."""

    def __init__(self, elem: Type):
        super().__init__(elem)
        self.spelling = f"ty.List[{elem.spelling}]"

    def cpp(self, ctx: "NameContext") -> str:
        return f"{ctx.ferry('List')}<{self.elem.cpp(ctx)}>"

    def python(self, ctx: "NameContext") -> str:
        return f"typing.MutableSequence[{self.elem.python(ctx)}]"

    def to_json(self) -> _Dict[str, _AnyT]:
        return {"kind": "List", "elem": self.elem.to_json()}


class DictType(MapType):
    """A mutable dict (`ferry::Dict<K, V>`), as ListType is to ArrayType."""

    def __init__(self, key: Type, value: Type):
        super().__init__(key, value)
        self.spelling = f"ty.Dict[{key.spelling}, {value.spelling}]"

    def cpp(self, ctx: "NameContext") -> str:
        return f"{ctx.ferry('Dict')}<{self.key.cpp(ctx)}, {self.value.cpp(ctx)}>"

    def python(self, ctx: "NameContext") -> str:
        return f"typing.MutableMapping[{self.key.python(ctx)}, {self.value.python(ctx)}]"

    def to_json(self) -> _Dict[str, _AnyT]:
        return {"kind": "Dict", "key": self.key.to_json(), "value": self.value.to_json()}


class OptionalType(Type):
    def __init__(self, value: Type):
        self.value = value
        self.spelling = f"ty.Optional[{value.spelling}]"

    def cpp(self, ctx: "NameContext") -> str:
        return f"{ctx.ferry('Optional')}<{self.value.cpp(ctx)}>"

    def python(self, ctx: "NameContext") -> str:
        return f"typing.Optional[{self.value.python(ctx)}]"

    def to_json(self) -> _Dict[str, _AnyT]:
        return {"kind": "Optional", "value": self.value.to_json()}

    def nodes(self) -> Tuple["NodeType", ...]:
        return self.value.nodes()

    def check_default(self, value: _AnyT) -> _Opt[str]:
        if value is None:
            return None
        return self.value.check_default(value)

    def cpp_default(self, value: _AnyT, ctx: "NameContext") -> str:
        if value is None:
            return f"{self.cpp(ctx)}()"
        return self.value.cpp_default(value, ctx)


class NodeType(Type):
    """A field whose type is a declared node: C++ holds its reference class."""

    def __init__(self, cls: type):
        self.cls = cls
        self.spelling = cls.__name__

    def cpp(self, ctx: "NameContext") -> str:
        return ctx.cpp_ref(self.cls)

    def python(self, ctx: "NameContext") -> str:
        return ctx.py_ref(self.cls)

    def to_json(self) -> _Dict[str, _AnyT]:
        return {"kind": "node", "name": self.cls.__name__}

    def nodes(self) -> Tuple["NodeType", ...]:
        return (self,)

    def check_default(self, value: _AnyT) -> _Opt[str]:
        return None if value is None else "only None can be the default"

    def cpp_default(self, value: _AnyT, ctx: "NameContext") -> str:
        return f"{self.cpp(ctx)}()"


class EnumType(Type):
    """A field whose type is a declared enum: C++ holds the ``enum class`` value."""

    def __init__(self, cls: type, type_key: str, members: Tuple[Tuple[str, int], ...]):
        self.cls = cls
        self.type_key = type_key
        #: (name, value) in declaration order.
        self.members = members
        self.spelling = cls.__name__

    def cpp(self, ctx: "NameContext") -> str:
        return ctx.cpp_enum(self.cls)

    def python(self, ctx: "NameContext") -> str:
        return ctx.py_enum(self.cls)

    def to_json(self) -> _Dict[str, _AnyT]:
        return {"kind": "enum", "name": self.cls.__name__, "type_key": self.type_key}

    def member_name(self, value: _AnyT) -> _Opt[str]:
        """The member `value` names (a member's name or its int value), or None."""
        for name, number in self.members:
            if isinstance(value, str) and value == name:
                return name
            if isinstance(value, int) and not isinstance(value, builtins.bool) and value == number:
                return name
        return None

    def check_default(self, value: _AnyT) -> _Opt[str]:
        if self.member_name(value) is not None:
            return None
        names = ", ".join(f"{n} = {v}" for n, v in self.members)
        return f"expected a member of {self.spelling} (its name or value: {names})"

    def cpp_default(self, value: _AnyT, ctx: "NameContext") -> str:
        return f"{self.cpp(ctx)}::{cpp_enum_member(self.member_name(value) or '')}"

    def first_member(self) -> _Opt[str]:
        return self.members[0][0] if self.members else None


def cpp_enum_member(name: str) -> str:
    """The C++ enumerator of schema member `name`, in the repository's kName style:
    ``Add`` -> ``kAdd``, ``add`` -> ``kAdd``."""
    return "k" + name[:1].upper() + name[1:]


def cpp_string_literal(text: str) -> str:
    """A C++ string literal with the UTF-8 bytes of `text`; octal escapes never run on."""
    out = ['"']
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= byte < 0x7F and ch != "?":  # "?" avoids trigraphs in old compilers
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    out.append('"')
    return "".join(out)


class FieldSpec:
    """What ``ty.field(...)`` returns; holds a default and the structural role of a field."""

    _NO_DEFAULT = object()

    def __init__(self, default: _AnyT = _NO_DEFAULT, structural: str = "compare"):
        self.default = default
        self.structural = structural

    @property
    def has_default(self) -> builtins.bool:
        return self.default is not FieldSpec._NO_DEFAULT

    def __repr__(self) -> str:
        parts = [] if not self.has_default else [f"default={self.default!r}"]
        parts.append(f"structural={self.structural!r}")
        return f"ty.field({', '.join(parts)})"


def field(*, default: _AnyT = FieldSpec._NO_DEFAULT, structural: str = "compare") -> FieldSpec:
    """Gives a field a default and/or a role in structural equality and hashing.

    ``structural`` is "compare" (the default), "def" (a definition site: ``DefEqual`` /
    ``DefHash``) or "ignore" (left out of ``SEqualReduce`` and ``SHashReduce``).

        span: ty.ObjectRef = ty.field(default=None, structural="ignore")
    """
    return FieldSpec(default, structural)


class _Generic:
    """``ty.Array[T]``-style subscription; checks the arguments it is given."""

    def __init__(self, name: str, arity: int, make: Callable[..., Type]):
        self.name = name
        self.arity = arity
        self.make = make
        self.spelling = f"ty.{name}"

    def __getitem__(self, args: _AnyT) -> Type:
        if not isinstance(args, tuple):
            args = (args,)
        if len(args) != self.arity:
            raise TypeError(
                f"ty.{self.name}[...] takes {self.arity} type argument"
                f"{'s' if self.arity > 1 else ''}, got {len(args)}"
            )
        return _Deferred(self, args)

    def __repr__(self) -> str:
        return self.spelling


class _Deferred(Type):
    """A parameterized type whose arguments are resolved later, when every class is known.

    Arguments may be strings naming classes declared further down the file, so they can only
    be checked once the whole schema is loaded (see model.resolve_type).
    """

    def __init__(self, generic: _Generic, args: tuple):
        self.generic = generic
        self.args = args
        self.spelling = f"ty.{generic.name}[{', '.join(_spell(a) for a in args)}]"


def _spell(arg: _AnyT) -> str:
    if isinstance(arg, (Type, _Generic)):
        return arg.spelling
    if isinstance(arg, type):
        return arg.__name__
    if isinstance(arg, str):
        return repr(arg)
    return repr(arg)


SCALAR_NAMES = (
    "bool",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "float",
    "double",
)

# The public names. They shadow builtins such as `bool` and `float` from here on, which is why
# the code above spells those as `builtins.bool` and `builtins.float`.
bool = Scalar("bool", "bool")
int8_t = Scalar("int8_t", "int", 8)
int16_t = Scalar("int16_t", "int", 16)
int32_t = Scalar("int32_t", "int", 32)
int64_t = Scalar("int64_t", "int", 64)
uint8_t = Scalar("uint8_t", "int", 8, signed=False)
uint16_t = Scalar("uint16_t", "int", 16, signed=False)
uint32_t = Scalar("uint32_t", "int", 32, signed=False)
uint64_t = Scalar("uint64_t", "int", 64, signed=False)
float = Scalar("float", "float", 32)
double = Scalar("double", "float", 64)
String = Builtin("String", "str")
DataType = Builtin("DataType", "typing.Union[ferry.DataType, str]")
ObjectRef = Builtin("ObjectRef", "typing.Optional[ferry.Object]")
Any = Builtin("Any", "typing.Any")
Array = _Generic("Array", 1, lambda t: ArrayType(t))
Map = _Generic("Map", 2, lambda k, v: MapType(k, v))
List = _Generic("List", 1, lambda t: ListType(t))
Dict = _Generic("Dict", 2, lambda k, v: DictType(k, v))
Optional = _Generic("Optional", 1, lambda t: OptionalType(t))

_PUBLIC = SCALAR_NAMES + (
    "String",
    "DataType",
    "ObjectRef",
    "Any",
    "Array",
    "Map",
    "List",
    "Dict",
    "Optional",
)
__all__ += list(_PUBLIC)


def __getattr__(name: str) -> _AnyT:
    # Misspelled types fail at import of the schema; the loader turns this into file:line.
    raise AttributeError(
        f"unknown type ty.{name}; the types are {', '.join('ty.' + n for n in _PUBLIC)} "
        "and declared nodes"
    )
