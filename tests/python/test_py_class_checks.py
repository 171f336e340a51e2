"""py_class under misuse (issue 31): __init__ run again, errors that cite the failing
declaration and name a bad key, None in a non-Optional object field, fields a JSON document
leaves out, and copy.deepcopy of cyclic objects."""

import copy
import dataclasses
import os
import pathlib
import subprocess
import sys
import textwrap
import typing

import ferry_testing
import pytest
from py_class_defs import Lit

import ferry
from ferry import List

cpp_get_attr = ferry.get_global_func("ferry.NodeGetAttr")


@ferry.py_class("pychecks.Box")
class Box(ferry.Object):
    x: int
    items: List = ferry.field(default_factory=List)
    other: "Box | None" = None


@ferry.py_class("pychecks.FrozenBox", frozen=True)
class FrozenBox(ferry.Object):
    x: int
    items: List = ferry.field(default_factory=List)


@ferry.py_class("pychecks.Holder")
class Holder(ferry.Object):
    box: Box
    anything: ferry.Object
    fn: ferry.Function
    maybe: typing.Optional[Box] = None


# --- __init__ run again ------------------------------------------------------------------------


def test_init_again_assigns_the_fields_of_the_same_object():
    box = Box(1)
    holder = Holder(box, box, ferry.convert(len))
    before = hash(box)
    box.__init__(2, other=Box(7))
    assert hash(box) == before, "the wrapper keeps its object"
    assert box.x == 2 and box.other.x == 7
    assert holder.box is box and cpp_get_attr(holder.box, "x") == 2, "C++ holders see it"


def test_init_again_with_a_bad_value_changes_nothing():
    box = Box(1)
    with pytest.raises(TypeError, match="field 'x'"):
        box.__init__("two")
    assert box.x == 1


def test_init_again_on_a_frozen_object_is_a_frozen_instance_error():
    box = FrozenBox(1)
    before = hash(box)
    with pytest.raises(dataclasses.FrozenInstanceError, match="frozen"):
        box.__init__(2)
    assert box.x == 1 and hash(box) == before


# --- errors that name the right place and the key ----------------------------------------------


def test_declaring_a_key_again_with_other_fields_cites_the_failing_declaration():
    @ferry.py_class("pychecks.Twice")
    class Twice(ferry.Object):
        a: int

    failing_line = sys._getframe().f_lineno + 3
    with pytest.raises(ValueError, match="already registered with other fields") as info:

        @ferry.py_class("pychecks.Twice")
        class Twice(ferry.Object):  # declared again on purpose
            b: int

    assert f"{__file__}:{failing_line}" in str(info.value)


def test_a_key_that_is_not_utf8_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match=r"type key '\\ud800' is not valid UTF-8"):
        ferry.py_class("\ud800")
    with pytest.raises(ValueError, match=r"type key 'a\\udc80b' is not valid UTF-8"):
        ferry.register_object("a\udc80b")(type("NotUTF8", (ferry.Object,), {"__slots__": ()}))


# --- None only in Optional fields -------------------------------------------------------------


@pytest.mark.parametrize("name", ["box", "anything", "fn"])
def test_none_in_a_field_that_is_not_optional_is_a_type_error_naming_it(name):
    values = {"box": Box(1), "anything": Box(2), "fn": ferry.convert(len)}
    with pytest.raises(TypeError, match=f"field '{name}'"):
        Holder(**{**values, name: None})
    holder = Holder(**values)
    with pytest.raises(TypeError, match=f"field '{name}'"):
        setattr(holder, name, None)
    assert getattr(holder, name) is not None
    holder.maybe = None  # Optional holds None


@ferry.py_class("pychecks.Link")
class Link(ferry.Object):
    box: Box
    anything: ferry.Object


def test_load_json_refuses_null_for_a_field_that_is_not_optional():
    box = Box(1)
    text = ferry.save_json(Link(box, box))
    assert '"box": {"ref": 2}, "anything": {"ref": 2}' in text
    with pytest.raises(ValueError, match=r'pychecks.Link\), field "box": expected pychecks.Box'):
        ferry.load_json(text.replace('"box": {"ref": 2}', '"box": null'))
    with pytest.raises(ValueError, match=r'field "anything": expected Object but got None'):
        ferry.load_json(text.replace('"anything": {"ref": 2}', '"anything": null'))


# --- fields a JSON document leaves out ---------------------------------------------------------


def test_load_json_refuses_a_missing_field_of_a_py_class_naming_field_and_type():
    text = ferry.save_json(Box(3))
    assert '"x": 3, ' in text
    with pytest.raises(ValueError, match=r'pychecks.Box\): missing field "x" \(int\)'):
        ferry.load_json(text.replace('"x": 3, ', ""))
    # A field with a default takes it (test_schema_defaults.py has the rest).
    assert ferry.load_json(text.replace(', "other": null', "")).other is None
    # Other spacing takes the general path: the same error.
    spaced = text.replace('"x": 3, ', "").replace('"fields": {', '"fields" :  {')
    with pytest.raises(ValueError, match='missing field "x"'):
        ferry.load_json(spaced)


def test_load_json_fills_a_missing_cpp_field_with_its_cpp_default():
    # A C++ node keeps loading documents written before a field was added.
    text = ferry.save_json(ferry_testing.IntImm(3))
    back = ferry.load_json(text.replace(', "dtype": {"dtype": "int64"}', ""))
    assert back.value == 3
    # The C++ parent's fields of a py_class too; its own fields are required.
    lit = ferry.save_json(Lit(3))
    assert '"next": null' in lit
    with pytest.raises(ValueError, match='missing field "value"'):
        ferry.load_json(lit.replace('"value": 3, ', ""))


# --- copy.deepcopy of cycles -------------------------------------------------------------------


def test_deepcopy_of_an_object_whose_list_holds_it():
    box = Box(1)
    box.items.append(box)
    made = copy.deepcopy(box)
    assert made is not box and made.items is not box.items
    assert len(made.items) == 1 and made.items[0] is made
    # Ferry objects are reference-counted: a cycle is freed once broken (the ASan stage checks).
    box.items.clear()
    made.items.clear()


def test_deepcopy_of_two_objects_pointing_at_each_other():
    a = Box(1)
    b = Box(2, other=a)
    a.other = b
    made = copy.deepcopy([a, b])
    assert made[0] is not a and made[1] is not b
    assert made[0].other is made[1] and made[1].other is made[0]
    assert (made[0].x, made[1].x) == (1, 2)
    a.other = made[0].other = None  # break the cycles


def test_deepcopy_of_a_frozen_object_in_a_cycle_and_of_containers():
    box = FrozenBox(1)
    box.items.append(box)
    made = copy.deepcopy(box)
    assert made is not box and made.items[0] is made and made.x == 1
    box.items.clear()  # break the cycles
    made.items.clear()
    arr = ferry.Array([List()])
    arr[0].append(arr)
    made = copy.deepcopy(arr)
    assert made is not arr and made[0][0] is made
    arr[0].clear()
    made[0].clear()
    d = ferry.Dict()
    d["self"] = d
    made = copy.deepcopy(d)
    assert made is not d and made["self"] is made
    d.clear()
    made.clear()


def test_a_schema_field_defaulting_to_null_holds_none_at_run_time():
    # tschema.register: `span: ty.ObjectRef = ty.field(default=None)` is a nullable reference in
    # C++; registered at run time it is Optional, so the default (None) is accepted.
    import pathlib

    import ferry.tschema

    fixture = pathlib.Path(__file__).parent / "tschema" / "fixtures" / "kitchen.py"
    kitchen = ferry.tschema.register(str(fixture))
    var = kitchen.Var("x")
    let = kitchen.Let(var, var, var)
    assert let.span is None
    with pytest.raises(TypeError, match="field 'value'"):
        kitchen.Let(var, None, var)


def test_a_forward_reference_inside_optional_or_list_resolves():
    @ferry.py_class("pychecks.Tree")
    class Tree(ferry.Object):
        kids: list["Tree"]
        parent: typing.Optional["Tree"] = None

    leaf = Tree([])
    root = Tree([leaf])
    assert root.kids[0] is leaf and root.parent is None
    with pytest.raises(TypeError, match="field 'kids'"):
        Tree([1])
    with pytest.raises(TypeError, match="cannot resolve the forward reference 'Nowhere'"):

        @ferry.py_class("pychecks.Dangling")
        class Dangling(ferry.Object):
            other: typing.Optional["Nowhere"] = None  # noqa: F821 (the error under test)


def test_init_called_through_the_class_checks_self():
    # `P.__init__(5, ...)` took the int's memory for a wrapper's: a crash. It runs in a fresh
    # interpreter, so a crash fails this test rather than the run.
    here = pathlib.Path(__file__).resolve().parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(here), *sys.path]))
    code = textwrap.dedent(
        """
        import ferry

        @ferry.py_class("checks.SelfR")
        class R(ferry.Object):
            name: str

        @ferry.py_class("checks.SelfS")
        class S(R):
            extra: int = 0

        @ferry.py_class("checks.SelfOther")
        class Other(ferry.Object):
            n: int

        for bad in (5, object(), Other(1)):
            try:
                R.__init__(bad, "x")
            except TypeError as e:
                assert "checks.SelfR.__init__: self must be a checks.SelfR object" in str(e), e
            else:
                raise AssertionError(f"{bad!r} was taken for self")
        s = S("a", 1)
        R.__init__(s, "b")  # an object of a subtype is re-initialized in place
        assert (s.name, s.extra) == ("b", 1)
        print("ok")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr


def test_an_int_too_big_for_int64_says_what_to_do():
    @ferry.py_class("pytest.checks.Ratio")
    class Ratio(ferry.Object):
        value: float = 0.0

    with pytest.raises(OverflowError, match=r"field 'value'.*does not fit in 64 bits.*float\(x\)"):
        Ratio(2**70)
    r = Ratio(float(2**70))
    assert r.value == float(2**70)
    with pytest.raises(OverflowError, match=r"field 'value' of 'pytest.checks.Ratio'.*float\(x\)"):
        r.value = -(2**70)
