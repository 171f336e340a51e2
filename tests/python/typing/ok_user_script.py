"""A user's script as the README and docs/python.md write it: mypy accepts it."""

import ferry


@ferry.py_class("typing_ok.Point", eq=True)
class Point(ferry.Object):
    x: int
    y: float = 0.0
    tags: ferry.List[str] = ferry.field(default_factory=ferry.List)


@ferry.py_class("typing_ok.Named", kw_only=True)
class Named(ferry.Object):
    name: str


def norm1(p: Point) -> float:
    return abs(p.x) + abs(p.y)


add = ferry.get_global_func("ferry.StructuralEqual")  # a Function, not Function | None
same: bool = add(Point(1), Point(1, 0.0))
p = Point(1, 2.5)
q = Point(x=3)
n = Named(name="a")
total: float = norm1(p) + norm1(q)
maybe = ferry.get_global_func("no.such.function", allow_missing=True)
if maybe is not None:
    maybe(1)
build = ferry.cpp.load_inline  # reachable without `import ferry.cpp`, and typed
print(ferry.make_node, ferry.convert([1, 2]), n.name, same, total, build)
