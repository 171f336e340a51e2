"""py_class fields annotated tuple[...]: stored as a ferry Tuple (an Array of fixed length and
item types), read back as a Python tuple; wrong items are a TypeError naming field and position."""

import pickle
import subprocess
import sys

import ferry_testing
import pytest

import ferry


@ferry.py_class("pytest.Span")
class Span(ferry.Object):
    pair: tuple[int, str]
    many: tuple[int, ...] = ()
    nested: "tuple[tuple[int, int], Span | None]" = ((0, 0), None)


def test_annotations_become_tuple_types():
    fields = list(ferry.get_global_func("ferry.NodeFields")("pytest.Span"))
    assert fields == [
        "pair",
        "Tuple[int, str]",
        "many",
        "Array[int]",
        "nested",
        "Tuple[Tuple[int, int], Optional[pytest.Span]]",
    ]


def test_read_back_as_a_python_tuple():
    s = Span((1, "a"), many=(1, 2, 3))
    assert s.pair == (1, "a")
    assert isinstance(s.pair, tuple)
    assert list(s.many) == [1, 2, 3]
    # tuple[int, ...] and a tuple inside a tuple read back as tuples too.
    assert s.many == (1, 2, 3) and isinstance(s.many, tuple)
    assert s.nested == ((0, 0), None) and isinstance(s.nested[0], tuple)
    other = Span((5, "e"))
    s.nested = ((3, 4), other)
    assert s.nested[0] == (3, 4) and s.nested[1] is other
    s2 = Span([2, "b"], nested=((1, 2), s))
    assert s2.pair == (2, "b")
    assert s2.nested[1].same_as(s)
    assert repr(Span((1, "a"))).startswith("Span(pair=(1, 'a')")


@pytest.mark.parametrize(
    "value, message",
    [
        ((1, 2), r"field 'pair': item 1: expected str but got int"),
        ((1,), r"field 'pair': expected Tuple\[int, str\] \(2 items\) but got 1 items"),
        ((1, "a", 3), r"field 'pair': .*but got 3 items"),
        (5, r"field 'pair': expected Tuple\[int, str\] but got int"),
        (("a", "b"), r"field 'pair': item 0: expected int but got str$"),
        ((b"a", "b"), r"field 'pair': item 0: expected int but got bytes$"),
    ],
)
def test_wrong_items_are_a_type_error_naming_field_and_position(value, message):
    with pytest.raises(TypeError, match=message):
        Span(value)


def test_nested_item_errors_name_the_position():
    with pytest.raises(
        TypeError, match=r"field 'nested': item 0: item 1: expected int but got str$"
    ):
        Span((1, "a"), nested=((1, "x"), None))
    s = Span((1, "a"))
    with pytest.raises(TypeError, match=r"field 'pair' of 'pytest.Span': item 0: .*but got str$"):
        s.pair = ("x", "y")


def test_structural_equality_json_and_pickle():
    a = Span((1, "a"), nested=((1, 2), Span((3, "c"))))
    b = Span((1, "a"), nested=((1, 2), Span((3, "c"))))
    c = Span((1, "a"), nested=((1, 2), Span((3, "d"))))
    assert ferry.structural_equal(a, b)
    assert ferry.structural_hash(a) == ferry.structural_hash(b)
    assert ferry.structural_mismatch(a, c) == "nested[1].pair[1]"
    back = ferry.load_json(ferry.save_json(a))
    assert ferry.structural_equal(a, back)
    assert back.pair == (1, "a")
    assert ferry.structural_equal(pickle.loads(pickle.dumps(a)), a)


def test_pickle_across_a_fresh_process():
    blob = pickle.dumps(Span((7, "seven"), nested=((1, 2), None)))
    code = (
        "import pickle, sys\n"
        "import test_tuple\n"
        "s = pickle.loads(sys.stdin.buffer.read())\n"
        "assert s.pair == (7, 'seven'), s.pair\n"
        "assert tuple(s.nested[0]) == (1, 2)\n"
        "print('ok')\n"
    )
    here = str(ferry_testing.ROOT / "tests" / "python")
    import os

    env = {**os.environ, "PYTHONPATH": here + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run(
        [sys.executable, "-c", code], input=blob, capture_output=True, timeout=120, env=env
    )
    assert out.stdout.decode().strip() == "ok", out.stderr.decode()


def test_transform_through_tuple_fields():
    inner = Span((3, "c"))
    root = Span((1, "a"), nested=((1, 2), inner))

    def fn(node):
        if isinstance(node, Span) and node.pair == (3, "c"):
            return Span((4, "d"))
        return None

    out = ferry.transform(root, fn)
    assert out.nested[1].pair == (4, "d")
    assert inner.pair == (3, "c")
    # A replacement the tuple's item type refuses: TypeError naming the field.
    with pytest.raises(TypeError, match=r"field 'nested' of 'pytest.Span'"):
        ferry.transform(root, lambda n: ferry.Array([1]) if n.same_as(inner) else None)
