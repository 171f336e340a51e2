"""py_class types of the Python tests, in a module of their own so that pickles and fresh
processes find them by name (importing this module registers them)."""

import typing

import ferry_testing
from ferry_testing import Expr

import ferry


@ferry.py_class("pytest.Point")
class Point(ferry.Object):
    x: int
    y: float = 0.0
    label: str = ""
    tags: list[str] = ferry.field(default_factory=list)
    cache: typing.Optional[ferry.Object] = ferry.field(default=None, compare=False, repr=False)


@ferry.py_class("pytest.Point3", eq="structural", order=True)
class Point3(Point):
    z: float = 0.0


@ferry.py_class("pytest.Lit")
class Lit(Expr):
    """A Python-defined kind of the C++ test IR's Expr."""

    value: int
    next: "Lit | None" = None


@ferry.py_class("pytest.Counter")
class Counter(ferry_testing.Mutable):
    """Extends the C++ node test.Mutable (fields count, small, label, expr, items)."""

    note: str = ""


@ferry.py_class("pytest.Frozen", frozen=True, eq="structural")
class Frozen(ferry.Object):
    a: int
    b: typing.Any = None


@ferry.py_class("pytest.Bag")
class Bag(ferry.Object):
    items: ferry.List[int] = ferry.field(default_factory=ferry.List)
    table: ferry.Dict[str, Point] = ferry.field(default_factory=ferry.Dict)
    names: dict[str, int] = ferry.field(default_factory=dict)
    dtype: ferry.DataType = ferry.field(default_factory=lambda: ferry.DataType("float32"))
    fn: typing.Optional[ferry.Function] = None
    flag: bool = False


@ferry.py_class("pytest.Blob")
class Blob(ferry.Object):
    data: bytes = b""
