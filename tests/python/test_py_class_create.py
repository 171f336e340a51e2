"""FerryObjectCreate (behind a py_class's generated __init__) finds the type's reflection record
by type index in the lock-free table that field reads fill, and by key until the table holds it:
the two paths must build the same objects and report the same errors."""

import ferry_testing
import pytest

import ferry
from ferry import _core


@ferry.py_class("test_create.Point")
class Point(ferry.Object):
    x: int
    y: float
    label: str


NAMES = ("x", "y", "label")


def create(type_index, *values):
    obj = Point.__new__(Point)
    _core._create(obj, type_index, NAMES, *values)
    return obj


def errors_of(type_index):
    """The errors of a wrong number of values and of a value that does not convert."""
    out = []
    with pytest.raises(TypeError) as count:
        create(type_index, 1, 2.0)
    out.append(str(count.value))
    with pytest.raises(TypeError) as convert:
        create(type_index, 1, 2.0, 3)
    out.append(str(convert.value))
    return out


def test_the_first_and_later_creations_build_the_same_objects_and_report_the_same_errors():
    index = _core._type_key_to_index("test_create.Point")
    # Nothing of the type was made or read yet: the lookup goes through the type key.
    first_errors = errors_of(index)
    assert first_errors[0] == "test_create.Point() takes 3 field values but 2 were given"
    assert "label" in first_errors[1] and "test_create.Point" in first_errors[1]
    first = create(index, 1, 2.0, "abc")
    assert (first.x, first.y, first.label) == (1, 2.0, "abc")
    # Now the lock-free table holds the type: the same objects, the same errors.
    for i in range(100):
        p = Point(i, 0.5, "p")
        assert (p.x, p.y, p.label) == (i, 0.5, "p")
    assert errors_of(index) == first_errors
    again = create(index, 1, 2.0, "abc")
    assert ferry.structural_equal(first, again)


def test_a_cpp_node_is_created_the_same_before_and_after_its_fields_were_read():
    # test.IntImm (fields value, dtype) is a C++ node; reading a field of one puts its record in
    # the lock-free table.
    index = _core._type_key_to_index("test.IntImm")
    names = ("value", "dtype")
    made, messages = [], []
    for _ in range(2):
        with pytest.raises(TypeError) as e:
            _core._create(ferry_testing.IntImm.__new__(ferry_testing.IntImm), index, names, 1)
        messages.append(str(e.value))
        obj = ferry_testing.IntImm.__new__(ferry_testing.IntImm)
        _core._create(obj, index, names, 5, "int32")
        made.append(obj)
        assert ferry_testing.IntImm(7).value == 7
    assert messages[0] == messages[1] == "test.IntImm() takes 2 field values but 1 were given"
    assert [(m.value, str(m.dtype)) for m in made] == [(5, "int32"), (5, "int32")]
