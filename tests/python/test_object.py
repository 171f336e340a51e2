"""Ferry objects in Python: classes, fields, isinstance, repr, equality, pickling."""

import multiprocessing
import pickle
import subprocess
import sys
import textwrap

import pytest
from ferry_testing import Add, Expr, IntImm, Var

import ferry


def test_constructors_and_fields():
    x = IntImm(3)
    assert x.value == 3 and x.dtype == "int64" and isinstance(x.dtype, ferry.DataType)
    y = Add(x, Var("v")) if False else x + Var("v")
    assert type(y) is Add
    assert y.a.same_as(x) and y.a == x
    assert y.b.name == "v"


def test_isinstance_through_the_registered_hierarchy(f):
    let = f.Let(Var("x"), IntImm(1), IntImm(2))
    # test.Let has no class of its own: it comes back as a class made for it on first sight,
    # deriving from the class of its nearest registered ancestor.
    cls = type(let)
    assert cls.__name__ == "Let" and cls.__bases__ == (Expr,) and isinstance(let, ferry.Object)
    assert cls.__ferry_type_key__ == "test.Let" and let.__ferry_type_key__ == "test.Let"
    assert type(f.Let(Var("y"), IntImm(2), IntImm(3))) is cls  # made once
    assert isinstance(IntImm(1), Expr) and not isinstance(IntImm(1), Var)
    assert let.var.name == "x"


def test_attribute_errors_name_type_and_field():
    with pytest.raises(AttributeError, match="'test.IntImm' object has no attribute 'nope'"):
        IntImm(1).nope
    with pytest.raises(AttributeError, match="read-only"):
        IntImm(1).value = 3


def test_dir_and_repr():
    x = IntImm(7)
    assert {"value", "dtype", "same_as"} <= set(dir(x))
    assert repr(x) == "test.IntImm(value=7, dtype=int64)"
    v = Var("x")
    assert repr(v + v) == 'test.Add(a=#1=test.Var(name="x"), b=#1)'


def test_identity_equality_and_hash():
    a, b = IntImm(1), IntImm(1)
    assert a != b and hash(a) != hash(b)
    assert a == ferry.get_global_func("test.echo")(a)
    assert hash(a) == hash(ferry.get_global_func("test.echo")(a))
    assert len({a, b, a}) == 2
    assert ferry.structural_equal(a, b)
    assert ferry.structural_hash(a) == ferry.structural_hash(b)


def test_a_call_returning_its_argument_gives_back_the_same_wrapper(f):
    # The result is the argument's object: its wrapper comes back as it is (without the round trip
    # through the wrapper table), with the references of both sides exact.
    a = IntImm(5)
    before = sys.getrefcount(a)
    for _ in range(100):
        assert f.echo(a) is a
    assert sys.getrefcount(a) == before
    assert f.echo(a).value == 5 and type(f.echo(a)) is IntImm
    y = Var("y")
    assert f.echo(y) is y and f.echo(IntImm(2)).value == 2
    # A Function result is a fresh wrapper (its GIL policy is its own), as before.
    g = f.echo
    assert f.echo(g) is not g and f.echo(g).same_as(g)


@pytest.mark.parametrize("release_gil", [True, False])
def test_a_call_returning_any_of_its_arguments_gives_back_that_wrapper(f, release_gil):
    # Every argument count the call path has a path for (1, 2, 3 to 8 on the stack, more than 8
    # on the heap), the result at every position, objects of two classes interleaved (so the
    # cached class misses as often as it hits) and an int among them: the result is the
    # argument's wrapper itself, and no reference is gained or lost on either side.
    call = f.call  # call(g, *xs) is g(*xs): test.call hands back the object g returned
    saved = call.release_gil
    call.release_gil = release_gil
    try:
        for count in range(1, 11):
            xs = [IntImm(i) if i % 2 else Var(f"v{i}") for i in range(count)]
            xs[count // 2] = 7  # an int: not a wrapper
            wrappers = [x for x in xs if not isinstance(x, int)]
            before = [sys.getrefcount(x) for x in wrappers]
            for k in range(count):
                pick = lambda *a, k=k: a[k]  # noqa: E731
                for _ in range(20):
                    got = call(pick, *xs)
                    if isinstance(xs[k], int):
                        assert got == 7
                    else:
                        assert got is xs[k], (count, k)
            del got
            assert [sys.getrefcount(x) for x in wrappers] == before, count
    finally:
        call.release_gil = saved


@pytest.mark.parametrize("release_gil", [True, False])
def test_one_argument_calls_convert_every_kind_of_value(f, release_gil):
    # A single argument that converts inline (a small int, a wrapper of the class converted last)
    # takes a call path of its own; every other value the general one. Both give the same answers.
    echo, make = f.echo, f.IntImm
    saved = echo.release_gil, make.release_gil
    echo.release_gil = make.release_gil = release_gil
    try:
        for value in (0, 5, -1, 2**30 - 1, 2**40, -(2**62), True, 1.5, "s", None):
            got = echo(value)
            assert got == value and type(got) is type(value), value
        a, v = IntImm(1), Var("v")
        for _ in range(3):  # the cached class alternates between the two
            assert echo(a) is a and echo(v) is v
        assert make(7).value == 7
        with pytest.raises(ValueError, match="argument 0: .*is not initialized"):
            echo(IntImm.__new__(IntImm))
        with pytest.raises(TypeError, match="argument 0 .*expected int but got str"):
            make("x")
        with pytest.raises(OverflowError, match="argument 'value': int .* does not fit"):
            make(2**70)
    finally:
        echo.release_gil, make.release_gil = saved


@pytest.mark.parametrize("release_gil", [True, False])
def test_an_argument_that_does_not_convert_is_named_on_every_call_path(f, release_gil):
    call = f.call
    saved = call.release_gil
    call.release_gil = release_gil
    try:
        for count in (1, 2, 3, 8, 9, 12):
            for bad in {0, count // 2, count - 1}:
                xs = [IntImm(i) for i in range(count)]
                xs[bad] = {1, 2}
                with pytest.raises(
                    TypeError, match=f"argument {bad + 1}: cannot convert a value of type 'set'"
                ):
                    call(lambda *a: None, *xs)
    finally:
        call.release_gil = saved


def test_a_class_changed_after_its_objects_were_converted_still_converts(f):
    # The class of the last object converted is cached with the version CPython gave it; a change
    # of the class gives it another version, and the next conversion takes the slow path once.
    class Sub(IntImm):
        pass

    a = Sub(4)
    assert f.echo(a) is a
    Sub.extra = 1  # a new version of the class
    assert f.echo(a) is a and f.echo(a).extra == 1
    Sub.__init_subclass__ = classmethod(lambda cls: None)
    assert f.echo(a) is a and f.echo(Sub(5)).value == 5
    del Sub.extra
    b = IntImm(6)
    assert f.echo(b) is b and f.echo(a) is a


def test_a_class_at_the_address_of_a_dead_converted_class_is_not_taken_for_it():
    # The cached class is compared by address and by CPython's version tag: a class that takes the
    # address of a dead class converted last is not a Ferry class (its objects have no handle
    # where a wrapper has one), and converting one must fail cleanly, not read a handle. In a
    # child process, whose allocator hands the dead class's memory to the next class made.
    script = textwrap.dedent(
        """
        import gc
        import ferry
        from ferry_testing import IntImm
        echo = ferry.get_global_func("test.echo")
        echo.release_gil = False

        def make_converted():
            class Sub(IntImm):
                pass
            x = Sub(1)
            assert echo(x) is x
            return id(Sub)

        dead = make_converted()
        gc.collect()
        reused = 0
        keep = []
        for i in range(2000):
            cls = type(f"Plain{i}", (object,), {})
            keep.append(cls)
            if id(cls) != dead:
                continue
            reused += 1
            obj = cls()
            obj.a = object()
            try:
                echo(obj)
            except TypeError as e:
                assert "cannot convert a value of type 'Plain" in str(e), e
            else:
                raise AssertionError("converted an object of a plain class")
            break
        print("reused" if reused else "not reused")
        """
    )
    import os

    import ferry_testing

    paths = [os.path.dirname(ferry_testing.__file__), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in paths if p))
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "reused", "no class took the dead class's address"


def test_a_second_wrapper_of_an_object_gets_back_the_live_entry():
    # Once an object has two live wrappers, the one the wrapper table holds is the object's
    # Python identity: a call returning the object through the other wrapper gives the entry,
    # not the argument. In a child process: the aliasing stays noted for the process's life.
    script = textwrap.dedent(
        """
        import ferry, ferry_testing
        from ferry_testing import IntImm
        echo = ferry.get_global_func("test.echo")
        a = IntImm(3)
        assert echo(a) is a
        b = IntImm.__new__(IntImm)
        b.__init_handle_by_constructor__(echo, a)  # b holds a's object; a stays its entry
        assert b is not a and b.same_as(a)
        assert echo(b) is a, "the argument's wrapper came back, not the object's entry"
        assert echo(a) is a
        del a
        c = echo(b)  # a is gone: b is no entry, so the object gets a wrapper of its own
        assert c.same_as(b) and echo(c) is c
        print("ok")
        """
    )
    import os

    import ferry_testing

    paths = [os.path.dirname(ferry_testing.__file__), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in paths if p))
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "ok"


def test_structural_equality_maps_variables():
    x, y = Var("x"), Var("y")
    assert not ferry.structural_equal(x + IntImm(1), y + IntImm(1))
    assert ferry.structural_equal(x + IntImm(1), y + IntImm(1), map_free_vars=True)


def test_make_node_and_keyword_construction():
    n = ferry.make_node("test.IntImm", value=5, dtype=ferry.DataType("int32"))
    assert type(n) is IntImm and n.value == 5 and n.dtype == "int32"
    with pytest.raises(ValueError, match="missing fields: dtype"):
        ferry.make_node("test.IntImm", value=5)
    with pytest.raises(ValueError, match="unknown fields: bogus"):
        ferry.make_node("test.IntImm", value=5, dtype="int32", bogus=1)
    with pytest.raises(TypeError, match="value"):
        ferry.make_node("test.IntImm", value="five", dtype="int32")
    add = Add(a=IntImm(1), b=IntImm(2))  # Object.__init__(**fields) goes through MakeNode
    assert add.b.value == 2
    assert Add(a=add, b=add).a is add, "an object made by keywords is its object's wrapper"
    copy = pickle.loads(pickle.dumps(add))
    assert Add(a=copy, b=add).a is copy, "and so is one made by unpickling"
    with pytest.raises(TypeError, match="keyword"):
        Add(IntImm(1), IntImm(2))


def test_json_round_trip_keeps_sharing():
    x = Var("x")
    e = x + x
    text = ferry.save_json(e)
    back = ferry.load_json(text)
    assert type(back) is Add and back.a.same_as(back.b)
    assert not ferry.structural_equal(e, back), "the loaded x is another (free) variable"
    assert ferry.structural_equal(e, back, map_free_vars=True)
    with pytest.raises(ValueError):
        ferry.load_json("{not json")


def test_pickle_round_trip():
    x = Var("x")
    e = x + IntImm(2)
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is Add and back.b.value == 2 and back.a.name == "x"
    assert ferry.structural_equal(e, back, map_free_vars=True)
    arr = pickle.loads(pickle.dumps(ferry.convert([1, "a"])))
    assert list(arr) == [1, "a"]


def _worker_double(e):
    return e + e


def test_objects_travel_to_multiprocessing_workers():
    e = IntImm(21)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1, initializer=_init_worker) as pool:
        out = pool.apply(_worker_double, (e,))
    assert type(out) is Add and out.a.value == 21


def _init_worker():
    import ferry_testing  # noqa: F401  (loads the support library, registers the classes)


def test_uninitialized_objects_are_reported():
    raw = Expr.__new__(Expr)
    assert "uninitialized" in repr(raw)
    for _ in range(2):  # the second time its class is the cached one (the inline path)
        with pytest.raises(ValueError, match="argument 0: .*not initialized"):
            ferry.get_global_func("test.echo")(raw)
    with pytest.raises(ValueError, match="uninitialized"):
        pickle.dumps(raw)
    other = Expr.__new__(Expr)  # two uninitialized wrappers are two values
    assert raw == raw and raw != other and not (raw == other)
    assert len({raw, other}) == 2


def test_a_wrapper_takes_only_objects_of_its_class_type():
    # A constructor or unpickling that hands a wrapper an object of another type is a
    # TypeError, and the wrapper keeps what it held.
    x = IntImm(3)
    with pytest.raises(
        TypeError, match="IntImm holds objects of type 'test.IntImm'.*not 'test.Var'"
    ):
        x.__init_handle_by_constructor__(ferry.get_global_func("test.Var"), "v")
    with pytest.raises(TypeError, match="not 'ferry.String'"):
        x.__init_handle_by_constructor__(ferry.get_global_func("test.echo"), "a long string value")
    with pytest.raises(TypeError, match="not 'test.Var'"):
        x.__setstate__(Var("v").__getstate__())
    assert x.value == 3
    e = Expr.__new__(Expr)  # a base class takes objects of derived types
    e.__init_handle_by_constructor__(ferry.get_global_func("test.IntImm"), 4)
    assert e.value == 4
    o = ferry.Object.__new__(ferry.Object)  # the root takes anything
    o.__setstate__(Var("w").__getstate__())
    assert o.name == "w"
    # A Function wrapper holds functions only: it caches how to call its handle.
    for fn in (ferry.convert(lambda: 1), ferry.get_global_func("test.add")):
        with pytest.raises(
            TypeError, match="ferry.Function holds objects of type 'ferry.Function'"
        ):
            fn.__setstate__(IntImm(5).__getstate__())
        with pytest.raises(TypeError, match="not 'test.IntImm'"):
            fn.__init_handle_by_constructor__(ferry.get_global_func("test.IntImm"), 5)
    assert fn(1, 2) == 3
    # ... and one that gets another function calls that one, keywords included.
    made = ferry.convert(lambda: 1)
    made.__init_handle_by_constructor__(ferry.get_global_func("test.echo"), fn)
    assert made(a=1, b=2) == 3 and made.release_gil == fn.release_gil


def test_register_object_rejects_non_objects():
    with pytest.raises(TypeError, match="does not derive from ferry.Object"):
        ferry.register_object("x.Y")(int)


def test_weakrefs_to_objects():
    import weakref

    x = IntImm(1)
    r = weakref.ref(x)
    assert r() is x
    del x
    assert r() is None


def test_hasattr_probes_answer_without_a_cpp_error():
    x = IntImm(1)
    assert hasattr(x, "value") and not hasattr(x, "nope") and not hasattr(x, "_private")
    let = ferry.get_global_func("test.Let")(Var("v"), x, x)  # no class of its own
    assert hasattr(let, "body") and not hasattr(let, "zz")
    with pytest.raises(AttributeError, match="'test.Let' object has no attribute 'zz'"):
        let.zz


def test_classes_read_through_caches_can_die():
    import gc
    import weakref

    def make():
        class Local(IntImm):  # not registered: objects of it exist only when made in Python
            pass

        obj = Local.__new__(Local)
        obj.__init_handle_by_constructor__(ferry.get_global_func("test.IntImm"), 7)
        assert obj.value == 7  # caches the class in the field descriptor
        ferry.get_global_func("test.echo")(obj)  # and in the argument conversion
        return weakref.ref(Local)

    ref = make()
    gc.collect()
    assert ref() is None, "a cache kept a dead class alive"
    assert IntImm(3).value == 3


def test_field_descriptors_check_what_they_read():
    value = IntImm.value  # the descriptor, from the class
    assert isinstance(value, ferry.Field) and value.name == "value"
    with pytest.raises(AttributeError, match="'int' object has no Ferry object to read 'value'"):
        value.__get__(5)

    class Plain:
        pass

    with pytest.raises(AttributeError, match="'Plain' object has no Ferry object"):
        value.__get__(Plain())

    class Hooked(IntImm):  # its own __getattr__: not the base's tp_getattro, still an object
        def __getattr__(self, name):
            return "hooked " + name

    h = Hooked.__new__(Hooked)
    h.__init_handle_by_constructor__(ferry.get_global_func("test.IntImm"), 8)
    assert h.value == 8 and value.__get__(h) == 8 and h.nope == "hooked nope"
    with pytest.raises(AttributeError, match="no Ferry object"):
        value.__get__(Hooked.__new__(Hooked))  # uninitialized


def test_an_object_comes_back_as_its_live_wrapper(f):
    x = IntImm(4)
    assert f.echo(x) is x
    y = x + Var("v")
    assert y.a is x, "a field holding a live object reads as that object's wrapper"
    assert f.echo(x) is x
    assert ferry.convert([x, x])[1] is x
    f.keep(x)
    handle = x.__ferry_handle__
    del x, y
    again = f.kept()  # the wrapper died: a new one, of the registered class
    assert type(again) is IntImm and again.__ferry_handle__ == handle
    assert again.value == 4
    assert f.kept() is again
    f.drop()


def test_a_second_wrapper_made_by_a_constructor_is_not_the_one_returned(f):
    x = IntImm(5)
    twin = IntImm.__new__(IntImm)
    twin.__init_handle_by_constructor__(f.echo, x)  # a constructor returning an existing object
    assert twin is not x and twin.same_as(x) and twin == x
    assert f.echo(twin) is x, "the first wrapper stays the object's wrapper"
    del x
    assert f.echo(twin) is not twin  # no live wrapper entered: a new one (same object)
    assert f.echo(twin).same_as(twin)


def test_weakref_callbacks_that_bring_the_object_back(f):
    import weakref

    got = []
    x = IntImm(8)
    f.keep(x)
    ref = weakref.ref(x, lambda r: got.append(f.kept()))
    del x
    assert ref() is None and got[0].value == 8
    assert f.kept() is got[0]
    f.drop()


def test_a_dead_class_at_a_reused_address_is_not_taken_for_it(f):
    # The argument conversion remembers the class of the last Ferry object converted by its
    # address, and confirms it through a weak reference: a class made later at the same address
    # (not a Ferry class) must not be read as one.
    import gc

    reused = 0
    for _ in range(200):

        class Local(IntImm):
            pass

        obj = Local.__new__(Local)
        obj.__init_handle_by_constructor__(ferry.get_global_func("test.IntImm"), 7)
        assert f.echo(obj) is obj  # remembered
        address = id(Local)
        del obj, Local
        gc.collect()

        class Plain:  # the same size of class object as Local, so malloc may reuse its memory
            pass

        plain = Plain()
        reused += id(Plain) == address
        with pytest.raises(TypeError, match="cannot convert a value of type 'Plain'"):
            f.echo(plain)
    assert reused > 0, "no class was made at a dead one's address: the test proves nothing"
