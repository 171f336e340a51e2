"""Array, Map and Shape as immutable Python sequences and mappings."""

import pytest

import ferry


def test_array_behaves_as_a_sequence():
    a = ferry.Array([1, "b", 3.0])
    assert len(a) == 3 and a[0] == 1 and a[-1] == 3.0
    assert list(a) == [1, "b", 3.0]
    assert a[1:] == ["b", 3.0] and isinstance(a[1:], list)
    assert "b" in a and "z" not in a
    assert a.index("b") == 1 and a.count(1) == 1
    with pytest.raises(IndexError, match="out of range for size 3"):
        a[3]
    with pytest.raises(IndexError):
        a[-4]
    with pytest.raises(TypeError):
        a[0] = 2


def test_array_of_arrays_and_objects():
    a = ferry.convert([[1, 2], [3], []])
    assert [list(x) for x in a] == [[1, 2], [3], []]


def test_map_behaves_as_a_mapping():
    m = ferry.Map({"x": 1, "y": [2]})
    assert len(m) == 2 and m["x"] == 1
    assert list(m) == ["x", "y"] and m.keys() == ["x", "y"]
    assert m.get("z", 5) == 5 and "x" in m and "z" not in m
    assert [k for k, _ in m.items()] == ["x", "y"]
    with pytest.raises(KeyError, match="z"):
        m["z"]
    assert [] not in m  # an unhashable-in-Ferry key is simply absent


def test_map_keeps_insertion_order_and_mixed_keys():
    m = ferry.convert({3: "c", "a": 1, 1: "one"})
    assert m.keys() == [3, "a", 1]
    assert m[1] == "one"


def test_shape():
    s = ferry.Shape([2, 3])
    assert len(s) == 2 and s[1] == 3 and s == (2, 3) and list(s) == [2, 3]
    with pytest.raises(TypeError):
        ferry.Shape(["a"])


def test_shapes_are_values_equal_and_hashed_as_their_tuple():
    a, b = ferry.Shape([2, 3]), ferry.Shape([2, 3])
    assert a == b and not (a != b) and a != ferry.Shape([3, 2]) and not (a == [3, 2])
    assert hash(a) == hash(b) == hash((2, 3))
    assert len({a, b}) == 1 and (2, 3) in {a} and {(2, 3): 1}[b] == 1
    assert a.__eq__("23") is NotImplemented and a != "23"


def test_containers_that_hold_themselves_or_nest_too_deep_are_recursion_errors(f):
    looped = [1]
    looped.append(looped)
    with pytest.raises(RecursionError, match="while converting a nested container"):
        f.echo(looped)
    keyed = {}
    keyed["self"] = keyed
    with pytest.raises(RecursionError):
        ferry.convert(keyed)
    deep = []
    for _ in range(100000):
        deep = [deep]
    with pytest.raises(RecursionError):
        ferry.convert(deep)
    nested = [[[[1]]]]
    assert f.echo(nested)[0][0][0][0] == 1  # moderate nesting still converts


def test_strings_come_back_as_str():
    a = ferry.convert(["x" * 3, "y" * 30])
    assert all(type(s) is str for s in a)
