"""Object types defined in Python (ferry.py_class): registration, the generated Python at parity
with the standard dataclasses module, and the C++ side (reflection, JSON, structural
equality, C++ code taking the C++ parent type)."""

import copy
import dataclasses
import gc
import inspect
import pickle
import subprocess
import sys
import typing
import weakref

import ferry_testing
import pytest
from py_class_defs import Bag, Blob, Counter, Frozen, Lit, Point, Point3

import ferry
from ferry.dataclasses import KW_ONLY, asdict, astuple, fields, replace

cpp_get_attr = ferry.get_global_func("ferry.NodeGetAttr")
cpp_set_attr = ferry.get_global_func("ferry.NodeSetAttr")
cpp_repr = ferry.get_global_func("ferry.Repr")


@dataclasses.dataclass
class StdPoint:
    """The standard-library twin of py_class_defs.Point, to compare behaviour against."""

    x: int
    y: float = 0.0
    label: str = ""
    tags: list = dataclasses.field(default_factory=list)
    cache: typing.Optional[object] = dataclasses.field(default=None, compare=False, repr=False)


# --- construction and the generated methods, against dataclasses -------------------------------


def test_init_matches_the_dataclass_signature():
    ours = inspect.signature(Point.__init__).parameters
    theirs = inspect.signature(StdPoint.__init__).parameters
    assert [(p.name, p.kind) for p in ours.values()] == [(p.name, p.kind) for p in theirs.values()]
    p = Point(1, 2.5, "a", tags=["t"])
    assert (p.x, p.y, p.label, list(p.tags), p.cache) == (1, 2.5, "a", ["t"], None)
    assert Point(x=3).y == 0.0 and list(Point(3).tags) == []
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'x'"):
        Point()
    with pytest.raises(TypeError, match="unexpected keyword argument 'w'"):
        Point(1, w=2)


def test_default_factory_makes_a_fresh_value_each_time():
    x, y = Bag(), Bag()
    x.items.append(1)
    assert list(x.items) == [1] and list(y.items) == []


def test_repr_leaves_out_repr_false_fields_like_dataclasses():
    p = Point(1, 2.5, "a")
    assert repr(p) == "Point(x=1, y=2.5, label='a', tags=[])"
    assert repr(StdPoint(1, 2.5, "a")) == "StdPoint(x=1, y=2.5, label='a', tags=[])"
    assert "cache" not in cpp_repr(p) and cpp_repr(p).startswith("pytest.Point(x=1, y=2.5")


def test_match_args_and_pattern_matching():
    assert Point.__match_args__ == StdPoint.__match_args__ == ("x", "y", "label", "tags", "cache")
    match Point(4, 5.0):
        case Point(x, y):
            assert (x, y) == (4, 5.0)
        case _:
            pytest.fail("no match")


def test_kw_only_classvar_and_post_init():
    seen = []

    @ferry.py_class("pytest.KwOnly")
    class K(ferry.Object):
        a: int
        counter: typing.ClassVar[int] = 7
        _: KW_ONLY
        b: int = 2
        c: str = ferry.field(default="c")

        def __post_init__(self):
            seen.append((self.a, self.b, self.c))

    @dataclasses.dataclass
    class StdK:
        a: int
        counter: typing.ClassVar[int] = 7
        _: dataclasses.KW_ONLY
        b: int = 2
        c: str = "c"

    assert str(inspect.signature(K.__init__)) == str(inspect.signature(StdK.__init__))
    k = K(1, b=3)
    assert seen == [(1, 3, "c")] and K.counter == 7
    assert [f.name for f in fields(k)] == [f.name for f in dataclasses.fields(StdK)]
    assert K.__match_args__ == StdK.__match_args__ == ("a",)
    with pytest.raises(TypeError):
        K(1, 2)  # b is keyword-only


def test_field_kw_only_and_init_false():
    @ferry.py_class("pytest.InitFalse")
    class F(ferry.Object):
        a: int = ferry.field(kw_only=True)
        b: int = 0
        made: str = ferry.field(default="auto", init=False)

    f = F(5, a=1)
    assert (f.a, f.b, f.made) == (1, 5, "auto")
    with pytest.raises(ValueError, match="init=False"):
        replace(f, made="x")
    assert replace(f, b=9).b == 9


# --- what the fields hold and accept -----------------------------------------------------------


def test_setters_convert_and_type_check_naming_the_field():
    p = Point(1)
    p.x = 5
    p.y = 3  # an int goes into a float field, as it would in C++
    assert (p.x, p.y) == (5, 3.0)
    with pytest.raises(TypeError, match=r"field 'x' of 'pytest.Point'.*expected int"):
        p.x = "five"
    with pytest.raises(TypeError, match=r"field 'tags' of 'pytest.Point': element 0: expected str"):
        p.tags = [1]
    assert p.x == 5 and list(p.tags) == []
    lit = Lit(1)
    with pytest.raises(
        TypeError, match=r"field 'next' of 'pytest.Lit': expected pytest.Lit but got test.IntImm"
    ):
        lit.next = ferry_testing.IntImm(1)
    lit.next = Lit(2)
    lit.next = None
    with pytest.raises(TypeError, match=r"pytest.Lit\(\): field 'value'"):
        Lit("one")


def test_containers_bytes_dtype_function_fields():
    b = Bag()
    b.items.append(3)
    b.table["p"] = Point(1)
    b.names = {"a": 1}
    b.fn = ferry.get_global_func("test.nop")
    b.flag = True
    assert list(b.items) == [3] and b.table["p"].x == 1 and dict(b.names) == {"a": 1}
    assert str(b.dtype) == "float32" and b.flag is True
    with pytest.raises(TypeError, match=r"entry \"q\": expected pytest.Point"):
        b.table = ferry.Dict({"q": 1})
    with pytest.raises(TypeError, match=r"field 'names'.*expected int"):
        b.names = {"a": "x"}
    blob = Blob()
    blob.data = b"\x00\x01"
    assert blob.data == b"\x00\x01"
    with pytest.raises(TypeError, match="field 'data'"):
        blob.data = "text"
    # Bytes save as base64 nodes: JSON and pickles carry any bytes.
    blob.data = bytes(range(256))
    assert ferry.load_json(ferry.save_json(blob)).data == bytes(range(256))
    assert pickle.loads(pickle.dumps(blob)).data == bytes(range(256))


@pytest.mark.parametrize(
    "text, why",
    [
        ('"abc"', "multiple of 4"),
        ('"ab!d"', "invalid base64 character at offset 2"),
        ("3", "base64 must be a string"),
    ],
)
def test_malformed_bytes_in_json_name_the_problem(text, why):
    doc = '{"ferry_json": 1, "root": {"ref": 0}, "nodes": [{"type": "ferry.Bytes", "base64": %s}]}'
    with pytest.raises(ValueError, match=why):
        ferry.load_json(doc % text)


def test_no_dict_and_unknown_attributes_refused():
    p = Point(1)
    assert not hasattr(p, "__dict__")
    with pytest.raises(AttributeError):
        p.nonexistent = 1


def test_frozen_refuses_writes_from_both_sides():
    f = Frozen(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.a = 2
    with pytest.raises(AttributeError, match="field 'a' of 'pytest.Frozen' is read-only"):
        cpp_set_attr(f, "a", 2)
    assert f.a == 1


# --- equality, hashing, order, copies, helpers -------------------------------------------------


def test_identity_eq_by_default_structural_when_asked():
    a, b = Point(1, tags=["x"]), Point(1, tags=["x"])
    assert a != b and a == a  # identity, as for every Ferry object
    assert ferry.structural_equal(a, b)
    # compare=False fields are left out of structural equality and hashing.
    b.cache = Point(9)
    assert ferry.structural_equal(a, b) and ferry.structural_hash(a) == ferry.structural_hash(b)
    b.label = "other"
    assert not ferry.structural_equal(a, b)
    assert Frozen(1, "x") == Frozen(1, "x") and hash(Frozen(1, "x")) == hash(Frozen(1, "x"))
    assert Frozen(1) != Frozen(2)


def test_order():
    assert Point3(1, 2.0) < Point3(1, 3.0) <= Point3(1, 3.0)
    assert sorted([Point3(2), Point3(1)])[0].x == 1
    with pytest.raises(TypeError):
        Point3(1) < Point(1)  # noqa: B015 (the comparison raising is the test)


def test_copy_deepcopy_replace():
    p = Point(1, 2.0, "a", tags=["t"], cache=Point(0))
    s = copy.copy(p)
    assert s is not p and s.x == 1 and s.tags.__ferry_handle__ == p.tags.__ferry_handle__
    d = copy.deepcopy(p)
    assert d is not p and d.cache is not p.cache and ferry.structural_equal(d, p)
    r = replace(p, x=7)
    assert (r.x, r.label) == (7, "a") and p.x == 1
    assert dataclasses.replace(StdPoint(1), x=7).x == 7  # the same call shape


def test_fields_asdict_astuple_recurse_into_ferry_containers():
    assert [f.name for f in fields(Point)] == [f.name for f in dataclasses.fields(StdPoint)]
    assert [f.compare for f in fields(Point)] == [f.compare for f in dataclasses.fields(StdPoint)]
    p = Point(1, 2.0, "a", tags=["t"])
    assert asdict(p) == dataclasses.asdict(StdPoint(1, 2.0, "a", tags=["t"]))
    assert astuple(p) == dataclasses.astuple(StdPoint(1, 2.0, "a", tags=["t"]))
    b = Bag()
    b.table["p"] = Point(2)
    out = asdict(b)
    assert out["table"] == {"p": asdict(Point(2))} and out["items"] == []
    with pytest.raises(TypeError):
        asdict(ferry_testing.IntImm(1))


# --- the C++ side ------------------------------------------------------------------------------


def test_cpp_code_sees_the_cpp_parent():
    lit = Lit(3, Lit(4))
    assert ferry.get_global_func("test.is_expr")(lit)
    add = ferry_testing.IntImm(1) + lit  # test.Add takes two Exprs
    assert type(add.b) is Lit and add.b.value == 3 and add.b.next.value == 4
    c = Counter(count=1, small=2, label="c", expr=None, items=[], note="n")
    # C++ reads the parent's fields through the C++ class and writes one in place.
    assert list(ferry.get_global_func("test.bump_mutable")(c)) == [2, "c"]
    assert c.count == 2 and c.note == "n"


def test_cpp_get_set_attr_make_node_repr():
    p = Point(1)
    assert cpp_get_attr(p, "x") == 1
    cpp_set_attr(p, "label", "set in C++")
    assert p.label == "set in C++"
    with pytest.raises(TypeError, match="field 'tags'"):
        cpp_set_attr(p, "tags", [1])
    made = ferry.make_node("pytest.Point", x=2, y=1.0, label="m", tags=["a"], cache=None)
    assert type(made) is Point and made.label == "m"
    assert cpp_repr(made) == 'pytest.Point(x=2, y=1.0, label="m", tags=["a"])'


def test_json_both_ways_and_pickle_keep_sharing():
    shared = Point(1, tags=["s"])
    b = Bag(items=ferry.List([1]))
    b.table["a"] = shared
    b.table["b"] = shared
    # Non-empty containers: empty ones load as one shared object, which structural equality
    # tells apart from distinct empty ones (a known gap of List/Dict, issue 18's note).
    b.names = {"n": 1}
    text = ferry.save_json(b)  # written by C++
    back = ferry.load_json(text)  # read by C++, objects handed to Python
    assert type(back) is Bag and ferry.structural_equal(back, b)
    assert back.table["a"] is back.table["b"]
    again = pickle.loads(pickle.dumps(b))
    assert type(again) is Bag and again.table["a"] is again.table["b"]


def test_json_loads_in_a_fresh_process_once_the_class_is_defined():
    p = Point3(1, 2.0, "x", tags=["a"], z=3.0)
    code = (
        "import sys, ferry, py_class_defs\n"
        "v = ferry.load_json(sys.stdin.read())\n"
        "assert type(v) is py_class_defs.Point3, type(v)\n"
        "print(v.x, v.z, list(v.tags))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        input=ferry.save_json(p),
        text=True,
        capture_output=True,
        timeout=120,
        env=_env(),
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "3.0", "['a']"]
    pickled = pickle.dumps(p)
    code = "import pickle, sys; v = pickle.loads(sys.stdin.buffer.read()); print(type(v).__name__, v.z)"
    out = subprocess.run(
        [sys.executable, "-c", code], input=pickled, capture_output=True, timeout=120, env=_env()
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode().split() == ["Point3", "3.0"]


def _env():
    import os

    env = dict(os.environ)
    here = str(__import__("pathlib").Path(__file__).parent)
    env["PYTHONPATH"] = os.pathsep.join(
        [
            here,
            str(__import__("pathlib").Path(ferry.__file__).parents[1]),
            env.get("PYTHONPATH", ""),
        ]
    )
    return env


def test_objects_kept_only_by_cpp_stay_valid():
    keep, kept, drop = (ferry.get_global_func(n) for n in ("test.keep", "test.kept", "test.drop"))
    p = Point(7, label="kept")
    keep(p)
    probe = weakref.ref(p)
    del p
    gc.collect()
    assert probe() is None  # the wrapper is gone; the object lives in C++
    back = kept()
    assert type(back) is Point and (back.x, back.label) == (7, "kept")
    drop()


def test_many_objects_do_not_leak():
    import tracemalloc

    def make(n):
        for i in range(n):
            Point(i, tags=["a"], cache=Lit(i))

    make(1000)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    make(100_000)
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert after - before < 1_000_000, after - before


# --- errors at decoration time -----------------------------------------------------------------


def test_unsupported_annotation_names_class_field_and_line():
    with pytest.raises(TypeError) as info:

        @ferry.py_class("pytest.BadAnnotation")
        class Bad(ferry.Object):
            ok: int
            bad: set[int]

    message = str(info.value)
    assert "Bad.bad" in message and "unsupported annotation" in message
    assert f"{__file__}:" in message and "supported:" in message


def test_non_default_after_default_is_an_error():
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument 'a'"):

        @ferry.py_class("pytest.BadOrder")
        class Bad(ferry.Object):
            a: int = 0
            b: int


def test_type_key_taken_and_final_parents():
    with pytest.raises(ValueError, match="'test.Var' is already registered"):

        @ferry.py_class("test.Var")
        class Taken(ferry.Object):
            a: int

    with pytest.raises(ValueError, match="already registered with other fields"):

        @ferry.py_class("pytest.Point")
        class Other(ferry.Object):
            a: int

    @ferry.py_class("pytest.Leaf", final=True)
    class Leaf(ferry.Object):
        a: int

    with pytest.raises(TypeError, match="is final"):

        @ferry.py_class("pytest.UnderLeaf")
        class UnderLeaf(Leaf):
            b: int

    with pytest.raises(TypeError, match="'test.IntImm' is final"):

        @ferry.py_class("pytest.UnderIntImm")
        class UnderIntImm(ferry_testing.IntImm):
            b: int


def test_same_declaration_again_reuses_the_type():
    def declare():
        @ferry.py_class("pytest.Again")
        class Again(ferry.Object):
            a: int

        return Again

    first, second = declare(), declare()
    assert second(1).__ferry_type_key__ == "pytest.Again" and type(second(1)) is second
    assert first is not second


def test_other_declaration_errors():
    with pytest.raises(ValueError, match="mutable default"):

        @ferry.py_class("pytest.MutableDefault")
        class M(ferry.Object):
            a: list = []  # the error is the test

    with pytest.raises(ValueError, match="order=True needs eq='structural'"):
        ferry.py_class("pytest.Order", order=True)
    with pytest.raises(TypeError, match="does not derive from ferry.Object"):

        @ferry.py_class("pytest.Plain")
        class Plain:
            a: int

    with pytest.raises(TypeError, match="cannot resolve the annotation 'Missing'"):

        @ferry.py_class("pytest.Unresolved")
        class U(ferry.Object):
            a: "Missing"  # noqa: F821 (the error is the test)

    with pytest.raises(TypeError, match="a union other than"):

        @ferry.py_class("pytest.Union")
        class Un(ferry.Object):
            a: int | str


def test_subclass_redeclares_a_default_keeping_the_type():
    @ferry.py_class("pytest.Base2")
    class Base2(ferry.Object):
        a: int = 1

    @ferry.py_class("pytest.Derived2")
    class Derived2(Base2):
        a: int = 5
        b: str = ""

    assert Derived2().a == 5 and [f.name for f in fields(Derived2)] == ["a", "b"]
    with pytest.raises(TypeError, match="keeps its type"):

        @ferry.py_class("pytest.Derived3")
        class Derived3(Base2):
            a: str = ""


# --- the constructor's fast path (py_class.cc: P(...) binds its arguments in C) ----------------


def _init_frames(make):
    """The Python functions named __init__ entered while make() runs."""
    seen = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_name == "__init__":
            # co_qualname is CPython 3.11's; 3.10 (supported, tested by its wheel) has co_name.
            seen.append(getattr(frame.f_code, "co_qualname", frame.f_code.co_name))

    sys.setprofile(profile)
    try:
        made = make()
    finally:
        sys.setprofile(None)
    return made, seen


def test_construction_binds_in_c_and_matches_the_generated_init():
    made, seen = _init_frames(lambda: Point(1, 2.5, label="a", tags=["t"]))
    assert seen == []  # no Python frame: the class's own vectorcall made it
    assert (made.x, made.y, made.label, list(made.tags), made.cache) == (1, 2.5, "a", ["t"], None)
    # Every way of calling gives what calling the generated __init__ gives.
    calls = [((1,), {}), ((1, 2.0), {}), ((1,), {"label": "b"}), ((), {"x": 4, "cache": Lit(1)})]
    for args, kwargs in calls:
        fast = Point(*args, **kwargs)
        slow = Point.__new__(Point)
        Point.__init__(slow, *args, **kwargs)
        assert repr(fast) == repr(slow) and list(fast.tags) == list(slow.tags)
        assert type(fast) is Point and fast.cache == slow.cache
    # Binding errors come from the generated __init__, so they read as the dataclass's do.
    for args, kwargs in [
        ((), {}),
        ((1,), {"w": 2}),
        ((1,), {"x": 2}),
        ((1, 2, "a", [], None, 9), {}),
    ]:
        with pytest.raises(TypeError) as ours:
            Point(*args, **kwargs)
        with pytest.raises(TypeError) as theirs:
            StdPoint(*args, **kwargs)
        assert str(ours.value).split("() ")[1] == str(theirs.value).split("() ")[1]


def test_fast_construction_keeps_factories_kw_only_and_init_false():
    calls = []

    def factory():
        calls.append(1)
        return ["made"]

    @ferry.py_class("pytest.FastInit")
    class FastInit(ferry.Object):
        a: int
        made: list[str] = ferry.field(default_factory=factory)
        hidden: int = ferry.field(default=7, init=False)
        _: KW_ONLY
        k: str = "k"

    x, seen = _init_frames(lambda: FastInit(1, k="z"))
    assert seen == [] and (x.a, list(x.made), x.hidden, x.k) == (1, ["made"], 7, "z")
    assert len(calls) == 1
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'a'"):
        FastInit()
    with pytest.raises(TypeError, match="unexpected keyword argument 'hidden'"):
        FastInit(1, hidden=3)
    with pytest.raises(TypeError, match="takes from 2 to 3 positional arguments but 4 were given"):
        FastInit(1, [], "k")
    assert len(calls) == 1  # a call that does not bind runs no factory
    with pytest.raises(TypeError, match="field 'a'"):
        FastInit("not an int")
    assert len(calls) == 2  # the factory ran, then the conversion failed


def test_a_changed_class_leaves_the_fast_path():
    @ferry.py_class("pytest.Changed")
    class Changed(ferry.Object):
        a: int

    class Plain(Changed):  # a plain subclass: the generic path, the inherited __init__
        pass

    assert type(Plain(1)) is Plain and Plain(2).a == 2
    _, seen = _init_frames(lambda: Changed(1))
    assert seen == []
    generated = Changed.__init__

    def __init__(self, a):
        generated(self, a * 10)

    Changed.__init__ = __init__
    made, seen = _init_frames(lambda: Changed(1))
    assert made.a == 10 and len(seen) == 2  # the new __init__, then the generated one
    Changed.__init__ = generated  # back as decorated: fast again
    made, seen = _init_frames(lambda: Changed(3))
    assert made.a == 3 and seen == []
    Changed.__post_init__ = lambda self: None  # the generated __init__ does not call it either
    made, seen = _init_frames(lambda: Changed(4))
    assert made.a == 4 and len(seen) == 1


def test_fast_construction_keeps_reference_counts_and_does_not_leak():
    label = "a label that is not interned " + str(id(object()))
    tags = ["t"]
    before = sys.getrefcount(label), sys.getrefcount(tags)
    for _ in range(100_000):
        Point(1, 2.0, label, tags=tags)
    for _ in range(1000):
        with pytest.raises(TypeError):
            Point("x", 2.0, label)
    assert (sys.getrefcount(label), sys.getrefcount(tags)) == before
    import tracemalloc

    def fail(n):
        for _ in range(n):
            try:
                Bag(items=[1, "two"])
            except TypeError:
                pass

    fail(1000)
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]
    fail(100_000)
    grown = tracemalloc.get_traced_memory()[0] - start
    tracemalloc.stop()
    assert grown < 200_000, grown
