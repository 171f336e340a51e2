"""Objects that stay true on both sides: wrappers hold no state, fields of mutable types write
through to C++, types without a registered class come back as classes of their own, and
register_object gives its classes no __dict__."""

import gc
import os
import pickle
import subprocess
import sys
import textwrap

import pytest
from ferry_testing import TESTING_LIB, Expr, IntImm, Var

import ferry
from ferry import _core


def mutable(**fields):
    values = dict(count=1, small=2, label="a", expr=None, items=[])
    values.update(fields)
    return ferry.make_node("test.Mutable", **values)


def every_wrapper_class():
    registered, made = _core._classes()
    return [ferry.Object, ferry.Function, *registered.values(), *made.values()]


# No state on wrappers --------------------------------------------------------------------------


def test_no_wrapper_class_has_an_instance_dict(f):
    f.Let(Var("x"), IntImm(1), IntImm(2))  # makes a class on first sight
    mutable()
    classes = every_wrapper_class()
    assert len(classes) >= 8
    offenders = [c for c in classes if c.__dictoffset__ != 0]
    assert offenders == [], f"wrapper classes with a __dict__: {offenders}"
    for obj in (
        IntImm(1),
        Var("v"),
        IntImm(1) + IntImm(2),
        ferry.Array([1]),
        ferry.Map({"a": 1}),
        mutable(),
        f.Let(Var("y"), IntImm(1), IntImm(2)),
    ):
        assert not hasattr(obj, "__dict__"), type(obj)


def test_assigning_an_unknown_name_is_an_attribute_error_naming_type_and_name():
    x = IntImm(1)
    with pytest.raises(AttributeError, match=r"'test\.IntImm' object has no field 'value2'"):
        x.value2 = 5
    with pytest.raises(AttributeError, match="read-only"):
        x.same_as = 1  # a method, not a field
    with pytest.raises(AttributeError, match=r"field 'value' of 'test\.IntImm' is read-only"):
        x.value = 5
    with pytest.raises(AttributeError, match="cannot delete field 'value'"):
        del x.value
    assert x.value == 1


def test_a_derived_object_returned_as_its_base_class_cannot_take_attributes(f):
    let = f.Let(Var("x"), IntImm(1), IntImm(2))
    assert isinstance(let, Expr)
    with pytest.raises(AttributeError, match=r"'test\.Let' object has no field 'nope'"):
        let.nope = 5
    with pytest.raises(AttributeError, match="read-only"):
        let.var = Var("z")
    assert let.var.name == "x"


# Mutable fields -------------------------------------------------------------------------------


def test_fields_of_a_mutable_type_write_through_to_cpp(f):
    m = mutable()
    m.count = 42
    assert m.count == 42 and f.mutable_count(m) == 42, "C++ reads what Python wrote"
    f.mutable_set_count(m, 7)
    assert m.count == 7, "Python reads what C++ wrote"
    m.label = "written"
    m.expr = IntImm(3)
    m.items = [IntImm(1), IntImm(2)]
    assert m.label == "written" and m.expr.value == 3 and [i.value for i in m.items] == [1, 2]
    m.expr = None
    assert m.expr is None
    held = f.echo(m)
    assert held is m
    child = ferry.make_node(
        "test.MutableChild", count=0, small=0, label="", expr=None, items=[], ratio=0.5
    )
    child.ratio = 2.5
    child.count = 3  # inherited field, mutable through the parent
    assert (child.ratio, child.count, f.mutable_count(child)) == (2.5, 3, 3)


def test_a_write_is_seen_by_every_holder():
    m = mutable()
    container = ferry.Array([m])
    m.count = 99
    assert container[0].count == 99


@pytest.mark.parametrize(
    "field, value, kind, words",
    [
        ("count", "five", TypeError, ["field 'count' of 'test.Mutable'", "int", "but got str"]),
        ("label", 3, TypeError, ["field 'label'", "String", "int"]),
        ("items", [1], TypeError, ["field 'items'"]),
        ("count", 2**70, OverflowError, ["field 'count'", "64 bits"]),
        ("small", 2**40, OverflowError, ["field 'small'"]),
        ("count", object(), TypeError, ["field 'count'", "object"]),
    ],
)
def test_a_value_of_the_wrong_type_names_the_field_and_leaves_the_object(
    field, value, kind, words, f
):
    m = mutable()
    before = (m.count, m.small, m.label, len(m.items))
    with pytest.raises(kind) as info:
        setattr(m, field, value)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
    assert (m.count, m.small, m.label, len(m.items)) == before
    assert f.mutable_count(m) == before[0]


def test_an_int_field_given_2_to_the_70_is_an_overflow_error_naming_it():
    with pytest.raises(OverflowError, match="field 'count'"):
        mutable(count=2**70)
    with pytest.raises(OverflowError, match="field 'value'"):
        ferry.make_node("test.IntImm", value=2**70, dtype="int64")
    with pytest.raises(OverflowError, match="argument 'value'"):
        IntImm(2**70)


def test_setting_fields_does_not_leak(f):
    m = mutable()
    x = IntImm(5)
    before = f.use_count(x)
    for _ in range(100_000):
        m.expr = x
    m.expr = None
    assert f.use_count(x) == before


# Classes made on first sight ----------------------------------------------------------------


def test_a_type_without_a_class_gets_one_of_its_own(f):
    let = f.Let(Var("x"), IntImm(1), IntImm(2))
    cls = type(let)
    assert (
        cls.__name__ == "Let" and cls.__qualname__ == "test.Let" and cls.__module__ == "ferry.auto"
    )
    assert cls.__bases__ == (Expr,), "derives from the nearest registered ancestor's class"
    assert cls.__ferry_type_key__ == "test.Let"
    assert type(f.Let(Var("y"), IntImm(1), IntImm(2))) is cls, "made once"
    # The same field descriptors as a registered class: no lookup by name on a read.
    for name in ("var", "value", "body"):
        assert isinstance(cls.__dict__[name], ferry.Field)
    assert let.value.value == 1
    assert sorted(n for n in dir(let) if n in ("var", "value", "body")) == ["body", "value", "var"]
    assert dir(let).count("var") == 1
    back = pickle.loads(pickle.dumps(let))
    assert type(back) is cls and ferry.structural_equal(back, let, map_free_vars=True)
    m = mutable()
    assert type(m).__name__ == "Mutable" and type(m).__bases__ == (ferry.Object,)


def test_dir_lists_each_field_once():
    names = dir(IntImm(3))
    assert names.count("value") == 1 and names.count("dtype") == 1


def test_registering_a_class_later_gives_later_objects_that_class(f):
    code = textwrap.dedent(f"""
        import ferry
        ferry.load_library({str(TESTING_LIB)!r})
        first = ferry.get_global_func("test.Counted")(1)
        assert type(first).__name__ == "Counted" and type(first).__module__ == "ferry.auto"

        @ferry.register_object("test.Counted")
        class Counted(ferry.Object):
            pass

        second = ferry.get_global_func("test.Counted")(2)
        assert type(second) is Counted and second.value == 2
        assert type(first).__module__ == "ferry.auto" and first.value == 1
        print("ok")
    """)
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr


# register_object --------------------------------------------------------------------------------


def test_register_object_rebuilds_a_class_without_slots_and_super_still_works():
    class Base(ferry.Object):
        __slots__ = ()

        def describe(self):
            return "base"

    @ferry.register_object("test.Var")
    class MyVar(Base):
        def describe(self):
            return "var of " + super().describe()

        @property
        def upper(self):
            return self.name.upper()

    try:
        assert MyVar.__dictoffset__ == 0 and "__slots__" in MyVar.__dict__
        v = ferry.get_global_func("test.Var")("q")
        assert type(v) is MyVar and v.describe() == "var of base" and v.upper == "Q"
        assert not hasattr(v, "__dict__")
    finally:
        ferry.register_object("test.Var")(Var)  # restore the test-support class


def test_register_object_refuses_instance_state():
    with pytest.raises(TypeError, match=r"declares __slots__ \('cache',\)"):

        @ferry.register_object("test.Var")
        class WithSlots(ferry.Object):
            __slots__ = ("cache",)

    with pytest.raises(TypeError, match="declares __slots__"):

        @ferry.register_object("test.Var")
        class WithDict(ferry.Object):
            __slots__ = ("__dict__",)

    class Mixin:  # no __slots__: its instances have a __dict__
        pass

    with pytest.raises(TypeError, match="derives from .*Mixin, whose instances have a __dict__"):

        @ferry.register_object("test.Var")
        class WithMixin(ferry.Object, Mixin):
            __slots__ = ()

    assert type(Var("still")) is Var, "a refused class is not registered"
    with pytest.raises(TypeError, match="must be a str"):
        ferry.register_object(3)(type("X", (ferry.Object,), {"__slots__": ()}))


def test_register_object_with_a_key_no_library_defines_yet():
    code = textwrap.dedent(f"""
        import ferry

        @ferry.register_object("test.Counted")  # the library is not loaded yet
        class Counted(ferry.Object):
            pass

        assert "value" not in Counted.__dict__
        ferry.load_library({str(TESTING_LIB)!r})
        obj = ferry.get_global_func("test.Counted")(5)
        assert type(obj) is Counted and obj.value == 5
        assert isinstance(Counted.__dict__["value"], ferry.Field), "installed at first sight"
        print("ok")
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr


def test_no_cycle_keeps_a_wrapper_alive():
    import weakref

    gc.disable()
    try:
        x = IntImm(3)
        ref = weakref.ref(x)
        del x
        assert ref() is None
    finally:
        gc.enable()


# Values ------------------------------------------------------------------------------------------


def test_none_for_a_function_parameter_is_a_null_function_and_calling_it_an_error(f):
    assert f.call_with_41(lambda v: v + 1) == 42
    with pytest.raises(ValueError, match="null Function"):
        f.call_with_41(None)


def test_a_nul_in_a_global_name_is_an_error_not_a_prefix_lookup():
    with pytest.raises(ValueError, match="NUL"):
        ferry.get_global_func("test.echo\0tail")
    with pytest.raises(ValueError, match="NUL"):
        ferry.get_global_func("test.echo\0tail", allow_missing=True)
    with pytest.raises(ValueError, match="null character"):
        ferry.register_func("test.with\0nul", lambda: 1)
    with pytest.raises(ValueError, match="NUL"):
        ferry.remove_global_func("test.echo\0")
    assert ferry.get_global_func("test.echo")(3) == 3


def test_bad_arguments_are_type_errors_naming_them(tmp_path):
    with pytest.raises(TypeError, match="Shape.*dims must be an iterable of ints, not NoneType"):
        ferry.Shape(None)
    with pytest.raises(
        TypeError, match="load_library: path must be a str or os.PathLike, not NoneType"
    ):
        ferry.load_library(None)
    with pytest.raises(TypeError, match="remove_global_func.*'name' must be str, not int"):
        ferry.remove_global_func(3)
    uninitialized = ferry.Function.__new__(ferry.Function)
    with pytest.raises(TypeError, match="param_names: this ferry.Function is not initialized"):
        uninitialized.param_names
    # A bytes path is a path, as for open(): the library loads (again, harmlessly).
    ferry.load_library(os.fsencode(str(TESTING_LIB)))
    with pytest.raises(RuntimeError, match="nope.so"):
        ferry.load_library(os.fsencode(str(tmp_path / "nope.so")))
    # unload_library checks its path as load_library does (one shared check), naming itself.
    with pytest.raises(
        TypeError, match="unload_library: path must be a str or os.PathLike, not int"
    ):
        ferry.unload_library(3)
    with pytest.raises(RuntimeError, match="never.so"):
        ferry.unload_library(os.fsencode(str(tmp_path / "never.so")))


def test_deep_nesting_is_a_recursion_error_even_with_a_raised_limit():
    # The C stack, not only the recursion limit, bounds the conversion: a subprocess, in case.
    code = textwrap.dedent("""
        import sys, ferry
        sys.setrecursionlimit(10**8)
        deep = []
        for _ in range(2_000_000):
            deep = [deep]
        try:
            ferry.convert(deep)
        except RecursionError as e:
            # Ferry's C stack check; from CPython 3.12 on, Py_EnterRecursiveCall counts C
            # recursion against a fixed bound of its own, far below the raised limit, and trips
            # first (the 3.12 and 3.13 wheels' runs found this).
            own = "maximum recursion depth exceeded" in str(e) and sys.version_info >= (3, 12)
            print("RecursionError", "C stack" in str(e) or own)
        looped = []
        looped.append(looped)
        try:
            ferry.convert(looped)
        except RecursionError:
            print("loop RecursionError")
        # Freeing the 2e6-deep list at exit took minutes under ASan on a loaded machine (the CI's
        # asan stage timed out after both lines were printed); the teardown is not under test.
        sys.stdout.flush()
        import os
        os._exit(0)
    """)
    env = dict(os.environ)
    if "ASAN_OPTIONS" in env:
        # Under scripts/asan_python.sh, LeakSanitizer's exit-time tracer itself has crashed
        # (signal 11) walking this child's 2e6-deep heap graph on a loaded machine. The test is
        # about the C stack bound, not leaks (the other ASan runs check those).
        env["ASAN_OPTIONS"] += ":detect_leaks=0"
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split("\n")[:2] == ["RecursionError True", "loop RecursionError"]


# Pickle -----------------------------------------------------------------------------------------


def test_pickling_a_container_keeps_sharing_between_its_elements():
    x = Var("x")
    items = ferry.Array([x, x + x])
    back = pickle.loads(pickle.dumps(items))
    assert back[0].same_as(back[1].a) and back[1].a.same_as(back[1].b), "one x, not three"
    table = ferry.Map({"a": x, "b": x + x})
    back = pickle.loads(pickle.dumps(table))
    assert back["a"].same_as(back["b"].a)


def test_a_million_deep_array_pickles(f):
    deep = f.nested_array(1_000_000)
    back = pickle.loads(pickle.dumps(deep))
    depth, node = 0, back
    while len(node):
        node, depth = node[0], depth + 1
        if depth > 10:
            break
    assert depth > 10 and ferry.structural_equal(back, deep)
