"""Structural equality, hashing and mismatch paths of py_class nodes. They have no reducers, so
the walks compare them field by field, reading each field by a plan of its kind and offset made
once per type (src/structural.cc, FieldPlan): every kind of field, set and unset, and a subclass
defined after its parent's plan was made."""

import enum
import typing

import ferry


class Shade(enum.Enum):
    DARK = 1
    LIGHT = 2


ferry.register_enum("pytest.sf.Shade", Shade)


@ferry.py_class("pytest.sf.Node")
class Node(ferry.Object):
    n: int = 0
    x: float = 0.0
    flag: bool = False
    name: str = ""
    shade: Shade = Shade.DARK
    dtype: ferry.DataType = ferry.field(default_factory=lambda: ferry.DataType("int32"))
    maybe_int: typing.Optional[int] = None
    child: typing.Optional[ferry.Object] = None
    items: list[int] = ferry.field(default_factory=list)
    anything: typing.Any = None
    note: str = ferry.field(default="", compare=False)


def same(a, b):
    return (
        ferry.structural_equal(a, b)
        and ferry.structural_hash(a) == ferry.structural_hash(b)
        and ferry.structural_mismatch(a, b) is None
    )


# One change per field (or per state of it): the path names the field.
EDITS = [
    ("n", 1),
    ("x", 0.5),
    ("flag", True),
    ("name", "other name, long enough for a heap string"),
    ("shade", Shade.LIGHT),
    ("dtype", ferry.DataType("float32")),
    ("maybe_int", 3),
    ("child", Node(n=1)),
    ("items", [1, 2]),
    ("anything", "text"),
    ("anything", 1.5),
]


def test_every_kind_of_field_compares_and_hashes_by_value():
    assert same(Node(), Node())
    full = dict(EDITS)
    assert same(Node(**full), Node(**full))
    for field, value in EDITS:
        a, b = Node(), Node(**{field: value})
        assert not ferry.structural_equal(a, b), field
        assert not ferry.structural_equal(b, a), field
        assert ferry.structural_hash(a) != ferry.structural_hash(b), field
        assert ferry.structural_mismatch(a, b) == field
        assert same(b, Node(**{field: value})), field


def test_optional_fields_set_and_unset_and_nested():
    # Unset against set in both directions, and a difference deep in a child.
    assert not ferry.structural_equal(Node(child=Node()), Node())
    assert not ferry.structural_equal(Node(), Node(child=Node()))
    assert not ferry.structural_equal(Node(maybe_int=0), Node())
    deep_a = Node(child=Node(child=Node(items=[1, 2, 3])))
    deep_b = Node(child=Node(child=Node(items=[1, 2, 4])))
    assert ferry.structural_mismatch(deep_a, deep_b) == "child.child.items[2]"
    assert same(deep_a, Node(child=Node(child=Node(items=[1, 2, 3]))))
    # compare=False fields are left out.
    assert same(Node(note="a"), Node(note="b"))


def test_a_subclass_defined_after_its_parents_plan_compares_its_own_fields():
    a, b = Node(n=5), Node(n=5)
    assert same(a, b)  # the parent's plan is made

    @ferry.py_class("pytest.sf.Sub")
    class Sub(Node):
        extra: int = 0
        more: typing.Optional[ferry.Object] = None

    assert same(Sub(n=5, extra=1), Sub(n=5, extra=1))
    assert ferry.structural_mismatch(Sub(extra=1), Sub(extra=2)) == "extra"
    assert ferry.structural_mismatch(Sub(n=1), Sub(n=2)) == "n"
    assert ferry.structural_mismatch(Sub(more=Node(n=1)), Sub(more=Node(n=2))) == "more.n"
    assert not ferry.structural_equal(Sub(n=5), Node(n=5))
    # The parent still compares by its own plan.
    assert same(a, b) and not ferry.structural_equal(Node(n=5), Node(n=6))


def test_deep_chains_of_py_class_nodes():
    # Deeper than the walks recurse: the rest goes on their stacks.
    def chain(depth, last):
        node = Node(n=last)
        for i in range(depth):
            node = Node(n=i, child=node, items=[i])
        return node

    assert same(chain(1000, 1), chain(1000, 1))
    assert not ferry.structural_equal(chain(1000, 1), chain(1000, 2))
    assert ferry.structural_mismatch(chain(3, 1), chain(3, 2)) == "child.child.child.n"
