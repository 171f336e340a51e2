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


def test_strings_come_back_as_str():
    a = ferry.convert(["x" * 3, "y" * 30])
    assert all(type(s) is str for s in a)
