"""The compiler writer's toolkit (issue 35) used the way a careless or hostile user would: enums
of odd classes, names and values; tuples of the wrong arity, nested, mutated, with NaNs;
visit/transform with callbacks that raise BaseExceptions, return odd things, change or rebuild
the graph they walk, recurse, or run on many threads; structural_mismatch over cycles and huge
arrays. Whatever could crash runs in a child process with a timeout; leak tests count
references, objects and cycles over 1e5 calls."""

import enum
import gc
import os
import pickle
import subprocess
import sys
import typing
import weakref

import ferry_testing
import pytest
from ferry_testing import IntImm, Var

import ferry

Add = ferry.get_global_func("test.Add")
_enum_register = ferry.get_global_func("ferry.EnumRegister")


def _child(code, timeout=240, blob=None):
    """Runs `code` in a fresh interpreter (this one's environment: the leak check and, under
    the ASan job, ASan apply) with the support library loaded; returns its stdout. A crash, a
    hang or a leak at exit fails the test with the child's stderr."""
    here = str(ferry_testing.ROOT / "tests" / "python")
    env = {**os.environ, "PYTHONPATH": here + os.pathsep + os.environ.get("PYTHONPATH", "")}
    head = (
        "import gc, sys, threading, pickle\n"
        "import ferry, ferry_testing\n"
        "from ferry_testing import IntImm, Var\n"
        "from py_class_defs import Lit\n"
        "Add = ferry.get_global_func('test.Add')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", head + code],
        input=blob,
        capture_output=True,
        timeout=timeout,
        env=env,
    )
    stderr = out.stderr.decode(errors="replace")
    assert out.returncode == 0, f"exit {out.returncode}: {stderr[-3000:]}"
    return out.stdout.decode()


# Enums ------------------------------------------------------------------------------------------


class Perm(enum.Flag):
    R = 1
    W = 2
    X = 4


class Wide(enum.IntEnum):
    LOW = -(2**63)
    ZERO = 0
    HIGH = 2**63 - 1


class Aliased(enum.Enum):
    A = 1
    B = 1  # an alias of A: one member
    C = 2


ferry.register_enum("hostile.Perm", Perm)
ferry.register_enum("hostile.Wide", Wide)
ferry.register_enum("hostile.Aliased", Aliased)


@ferry.py_class("hostile.Holder")
class Holder(ferry.Object):
    perm: Perm
    wide: Wide = Wide.ZERO
    aliased: Aliased = Aliased.A


def test_flag_members_register_and_composites_are_no_member():
    assert ferry.get_enum("hostile.Perm") is Perm
    assert Holder("W").perm is Perm.W and Holder(4).perm is Perm.X
    with pytest.raises(ValueError, match=r"field 'perm': 3 is not a member of hostile.Perm"):
        Holder(Perm.R | Perm.W)
    with pytest.raises(ValueError, match=r"0 is not a member of hostile.Perm"):
        Holder(Perm(0))


def test_int64_extremes_round_trip_and_values_past_int64_are_refused():
    h = Holder(Perm.R, wide=Wide.LOW)
    assert h.wide is Wide.LOW
    assert ferry.load_json(ferry.save_json(h)).wide is Wide.LOW
    assert pickle.loads(pickle.dumps(Holder(Perm.R, wide=Wide.HIGH))).wide is Wide.HIGH
    assert Holder(Perm.R, wide=-(2**63)).wide is Wide.LOW
    with pytest.raises(OverflowError, match="field 'wide'.*does not fit in 64 bits"):
        Holder(Perm.R, wide=2**63)

    class Huge(enum.IntEnum):
        A = 2**63

    with pytest.raises(OverflowError, match="does not fit in 64 bits"):
        ferry.register_enum("hostile.Huge", Huge)
    with pytest.raises(KeyError):
        ferry.get_enum("hostile.Huge")  # nothing half-registered


def test_aliases_register_once_and_read_back_as_the_canonical_member():
    assert list(ferry.get_global_func("ferry.EnumGet")("hostile.Aliased")) == ["A", 1, "C", 2]
    assert Holder(Perm.R, aliased=Aliased.B).aliased is Aliased.A


@pytest.mark.parametrize(
    "values, message",
    [
        ({"A": "a"}, "member A has the value 'a'"),
        ({"A": True}, "member A has the value True"),
        ({"A": 1.0}, "member A has the value 1.0"),
    ],
)
def test_non_integer_values_are_a_type_error_naming_the_member(values, message):
    cls = enum.Enum("Odd", values)
    with pytest.raises(TypeError, match=message):
        ferry.register_enum("hostile.Odd", cls)


def test_keys_hold_one_class_and_one_member_list():
    class Same(enum.IntEnum):
        R = 1
        W = 2
        X = 4

    with pytest.raises(ValueError, match="registered already, as .*Perm; it cannot also name"):
        ferry.register_enum("hostile.Perm", Same)
    with pytest.raises(ValueError, match="registered already with other members"):
        ferry.register_enum("test.OpKind", Same)
    with pytest.raises(ValueError, match="the key is empty"):
        ferry.register_enum("", Same)
    with pytest.raises(TypeError, match="expected ferry.String but got int"):
        ferry.register_enum(3, Same)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="is not an enum.Enum subclass"):
        ferry.register_enum("hostile.NotEnum", int)  # type: ignore[arg-type]
    assert ferry.register_enum("hostile.Perm", Perm) is Perm  # the same class again: a no-op


def test_threads_registering_classes_under_one_key_get_one_winner():
    # Before: the key was checked and taken under two separate holds of the lock, so several
    # threads could each register their class (no error), all but the last silently replaced.
    out = _child(
        "import enum\n"
        "sys.setswitchinterval(1e-6)\n"
        "bad = 0\n"
        "for trial in range(200):\n"
        "    key = f'hostile.Race{trial}'\n"
        "    classes = [enum.IntEnum(f'C{i}', [('A', 1), ('B', 2)]) for i in range(4)]\n"
        "    for c in classes: c.__module__ = 'm' + c.__name__\n"
        "    won, barrier = [], threading.Barrier(4)\n"
        "    def register(c):\n"
        "        barrier.wait()\n"
        "        try: ferry.register_enum(key, c); won.append(c)\n"
        "        except ValueError: pass\n"
        "    threads = [threading.Thread(target=register, args=(c,)) for c in classes]\n"
        "    for t in threads: t.start()\n"
        "    for t in threads: t.join()\n"
        "    bad += len(won) != 1 or ferry.get_enum(key) is not won[0]\n"
        "print(bad)\n"
    )
    assert out.strip() == "0"


@pytest.mark.parametrize("name", ["mro", "_ignore_", "_missing_", "__init__", "__class__"])
def test_cpp_member_names_a_python_enum_cannot_hold_are_a_value_error(name):
    # Before: `enum` refused some (a bare ValueError/TypeError from inside enum) and silently
    # took others as attributes, leaving a class without the member (an IndexError or KeyError
    # later, where a field was read).
    key = f"hostile.Names.{name}"
    _enum_register(key, ["Fine", 0, name, 1])
    with pytest.raises(
        ValueError, match=rf"{key}' has members whose names .* cannot hold: '{name}'"
    ):
        ferry.get_enum(key)
    with pytest.raises(ValueError, match="cannot hold"):
        ferry.get_enum(key)  # and again: nothing half-made was cached


class Other(enum.Enum):
    P = 1
    Q = 2


ferry.register_enum("hostile.Other", Other)
OpKind = ferry.get_enum("test.OpKind")


@ferry.py_class("hostile.MaybeEnum")
class MaybeEnum(ferry.Object):
    perm: Perm = Perm.R
    other: "Other | None" = None
    op: typing.Optional[OpKind] = OpKind.Mul


def test_assigning_a_member_or_its_value_to_an_enum_field():
    # Before: assignment took only a name; a member (or its value) was "expected Enum[...] but
    # got int", though construction took all three.
    m = MaybeEnum()
    for value, expected in [(Perm.W, Perm.W), (4, Perm.X), ("R", Perm.R)]:
        m.perm = value
        assert m.perm is expected
    m.op = OpKind.Sub
    assert m.op is OpKind.Sub
    with pytest.raises(ValueError, match="field 'perm' of 'hostile.MaybeEnum': 3 is not a member"):
        m.perm = 3
    with pytest.raises(TypeError, match="expected a member of hostile.Perm .* got Other.P"):
        m.perm = Other.P
    with pytest.raises(TypeError, match=r"expected Enum\[hostile.Perm\] but got NoneType"):
        m.perm = None
    assert m.perm is Perm.R


def test_optional_enum_fields_read_and_write_members():
    # Before: an Optional enum field refused members and values and read back names (str).
    fields = list(ferry.get_global_func("ferry.NodeFields")("hostile.MaybeEnum"))
    assert fields[fields.index("other") + 1] == "Optional[Enum[hostile.Other]]"
    m = MaybeEnum(other=Other.Q)
    assert m.other is Other.Q and m.op is OpKind.Mul
    assert MaybeEnum(other=1).other is Other.P and MaybeEnum(other="Q").other is Other.Q
    assert MaybeEnum().other is None
    m.other = 2
    assert m.other is Other.Q
    m.other = None
    assert m.other is None
    with pytest.raises(ValueError, match="field 'other': 7 is not a member of hostile.Other"):
        MaybeEnum(other=7)
    with pytest.raises(TypeError, match="expected a member of hostile.Other .* got Perm.R"):
        MaybeEnum(other=Perm.R)
    with pytest.raises(TypeError, match="expected a member of hostile.Other .* got Perm.R"):
        ferry.make_node("hostile.MaybeEnum", other=Perm.R)
    m = MaybeEnum(other=Other.Q, op=None)
    text = ferry.save_json(m)
    assert '"other": "Q"' in text and '"op": null' in text
    for back in (ferry.load_json(text), pickle.loads(pickle.dumps(m))):
        assert back.other is Other.Q and back.op is None
    assert ferry.load_json(text.replace('"other": "Q"', '"other": 1')).other is Other.P
    with pytest.raises(ValueError, match='field "other": "R" is not a member of hostile.Other'):
        ferry.load_json(text.replace('"other": "Q"', '"other": "R"'))


@pytest.mark.parametrize(
    "annotation",
    [list[Perm], dict[str, Perm], tuple[Perm, int], typing.Optional[tuple[int, Perm]]],
)
def test_enums_inside_containers_are_refused_where_the_class_is_made(annotation):
    # Before: accepted, then their items refused members and values and read back as names.
    with pytest.raises(TypeError, match="an enum inside .* is not supported: annotate the field"):

        @ferry.py_class(f"hostile.EnumInside{abs(hash(repr(annotation)))}")
        class Inside(ferry.Object):
            items: annotation  # type: ignore[valid-type]


def test_forged_json_enum_values_are_value_errors_naming_the_field():
    text = ferry.save_json(Holder(Perm.X))
    assert '"perm": "X"' in text
    assert ferry.load_json(text.replace('"X"', "4")).perm is Perm.X  # a member's value: fine
    for forged, message in [
        ('"Z"', '"Z" is not a member of hostile.Perm'),
        ('"x"', '"x" is not a member'),
        ("5", "5 is not a member"),
        ("null", "expected Enum\\[hostile.Perm\\] but got None"),
        ("1.5", "expected Enum\\[hostile.Perm\\] but got float"),
    ]:
        with pytest.raises(
            ValueError, match=r'node 0 \(hostile.Holder\), field "perm": ' + message
        ):
            ferry.load_json(text.replace('"X"', forged))


def test_enum_fields_pickle_and_load_json_across_a_fresh_process():
    h = Holder(Perm.W, wide=Wide.LOW, aliased=Aliased.C)
    blob = pickle.dumps((h, ferry.save_json(h), Perm.X, Wide.HIGH))
    out = _child(
        "import test_toolkit_hostile as t\n"
        "h, text, x, high = pickle.loads(sys.stdin.buffer.read())\n"
        "assert (h.perm, h.wide, h.aliased) == (t.Perm.W, t.Wide.LOW, t.Aliased.C), h\n"
        "assert ferry.load_json(text).wide is t.Wide.LOW\n"
        "assert x is t.Perm.X and high is t.Wide.HIGH\n"
        "print('ok')\n",
        blob=blob,
    )
    assert out.strip() == "ok"


# Tuples -----------------------------------------------------------------------------------------


@ferry.py_class("hostile.Spans")
class Spans(ferry.Object):
    pair: tuple[int, str]
    opt: typing.Optional[tuple[int, float]] = None
    nest: tuple[tuple[int, tuple[str, ...]], typing.Optional[int]] = ((0, ()), None)
    flt: tuple[float, float] = (0.0, 0.0)
    empty: "tuple[()]" = ()


def test_empty_tuple_annotation_is_a_tuple_of_no_items():
    # Before: Python 3.11+ gives `tuple[()]` no args, and it became Array[Any], taking (1,).
    fields = list(ferry.get_global_func("ferry.NodeFields")("hostile.Spans"))
    assert fields[fields.index("empty") + 1] == "Tuple[]"
    assert Spans((1, "a")).empty == ()
    with pytest.raises(TypeError, match=r"field 'empty': expected Tuple\[\] \(0 items\) but got 1"):
        Spans((1, "a"), empty=(1,))
    assert fields[fields.index("opt") + 1] == "Optional[Tuple[int, float]]"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"pair": (1,)}, r"field 'pair': expected Tuple\[int, str\] \(2 items\) but got 1 items"),
        ({"pair": (1, "a", 3)}, r"\(2 items\) but got 3 items"),
        ({"pair": "ab"}, r"field 'pair': expected Tuple\[int, str\] but got str"),
        ({"pair": None}, r"but got NoneType"),
        ({"pair": (1, "a"), "opt": (1, "x")}, r"field 'opt': item 1: expected float but got str"),
        (
            {"pair": (1, "a"), "nest": ((1, ("a", 3)), 3)},
            r"field 'nest': item 0: item 1: element 1: expected str but got int",
        ),
        ({"pair": (1, "a"), "nest": ((1, (), 5), 3)}, r"field 'nest': item 0: .* but got 3 items"),
    ],
)
def test_wrong_tuples_are_type_errors_naming_field_and_position(kwargs, message):
    with pytest.raises(TypeError, match=message):
        Spans(**kwargs)


def test_tuples_are_copied_from_their_input():
    items = [1, "a"]
    s = Spans(items)  # a list is taken as the tuple's items
    items[0] = 99
    items.append(3)
    assert s.pair == (1, "a")

    class Lying(list):
        def __len__(self):
            return 100

    assert Spans(Lying([1, "a"])).pair == (1, "a")


def test_nan_items_hash_and_compare_alike():
    nan = float("nan")
    a, b = Spans((1, "a"), flt=(nan, 1.0)), Spans((1, "a"), flt=(nan, 1.0))
    assert ferry.structural_equal(a, b)
    assert ferry.structural_hash(a) == ferry.structural_hash(b)
    assert ferry.structural_mismatch(a, b) is None
    assert ferry.structural_mismatch(a, Spans((1, "a"), flt=(nan, 2.0))) == "flt[1]"
    back = ferry.load_json(ferry.save_json(a))
    assert ferry.structural_equal(back, a)


def test_tuple_json_and_pickle_round_trips_and_forged_arity():
    s = Spans((1, "a"), opt=(2, 0.5), nest=((1, ("x", "y")), None))
    assert ferry.structural_equal(ferry.load_json(ferry.save_json(s)), s)
    back = pickle.loads(pickle.dumps(s))
    assert back.nest == ((1, ("x", "y")), None) and back.opt == (2, 0.5)
    text = ferry.save_json(Spans((1, "a")))
    forged = text.replace('"items": [1, "a"]', '"items": [1]')
    assert forged != text
    with pytest.raises(ValueError, match=r'field "pair": expected Tuple\[int, str\] \(2 items\)'):
        ferry.load_json(forged)


def test_transform_replacing_a_tuple_checks_its_arity_and_items():
    s = Spans((1, "a"), nest=((1, ("x",)), 3))

    def replace_pair(by):
        def fn(node):
            if isinstance(node, ferry.Array) and len(node) == 2 and node[1] == "a":
                return by
            return None

        return fn

    assert ferry.transform(s, replace_pair((5, "b"))).pair == (5, "b")
    assert s.pair == (1, "a")
    message = (
        r"field 'pair' of 'hostile.Spans' cannot hold the replacement: expected Tuple\[int, str\]"
    )
    with pytest.raises(TypeError, match=message + r" \(2 items\) but got 1 items"):
        ferry.transform(s, replace_pair(ferry.Array([1])))
    with pytest.raises(TypeError, match="cannot hold the replacement: item 1: expected str"):
        ferry.transform(s, replace_pair((5, 6)))


# Visit and transform ----------------------------------------------------------------------------


@pytest.mark.parametrize("walk", [ferry.visit, ferry.transform])
@pytest.mark.parametrize(
    "make", [KeyboardInterrupt, lambda: SystemExit(3), GeneratorExit, lambda: BaseException("b")]
)
def test_base_exceptions_from_fn_come_back_as_raised_with_a_clean_note(walk, make):
    raised = make()

    def fn(node):
        raise raised

    with pytest.raises(BaseException) as info:
        walk(Add(IntImm(1), IntImm(2)), fn)
    assert info.value is raised
    name = "StructuralVisit" if walk is ferry.visit else "StructuralTransform"
    # Before: an exception with an empty message got the note "...(test.IntImm): ".
    assert info.value.__notes__ == [f"{name}: at root.a (test.IntImm)"]


def test_the_exception_chain_fn_gave_its_error_is_kept():
    # Before: `raise ... from None` on the way out dropped the cause (`raise X from e` in fn)
    # and the context (an error raised while fn handled another).
    def inner(node):
        raise ValueError("inner")

    def chained(node):
        try:
            ferry.transform(node, inner)
        except ValueError as e:
            raise KeyError("outer") from e

    with pytest.raises(KeyError) as info:
        ferry.transform(Add(IntImm(1), IntImm(2)), chained)
    assert isinstance(info.value.__cause__, ValueError) and info.value.__suppress_context__
    assert info.value.__notes__ == ["StructuralTransform: at root.a (test.IntImm)"]

    def during(node):
        try:
            {}["missing"]
        except KeyError:
            raise ValueError("while handling")  # noqa: B904 (the implicit context is the point)

    with pytest.raises(ValueError) as info:
        ferry.visit(Add(IntImm(1), IntImm(2)), during)
    assert isinstance(info.value.__context__, KeyError) and info.value.__cause__ is None
    assert not info.value.__suppress_context__


def test_odd_returns_from_fn_are_type_errors_naming_the_field_or_type():
    root = Add(IntImm(1), IntImm(2))
    with pytest.raises(TypeError, match="field 'a' of 'test.Add' cannot hold .* got int"):
        ferry.transform(root, lambda n: 5)
    with pytest.raises(TypeError, match="field 'a' of 'test.Add' cannot hold .* got str"):
        ferry.transform(root, lambda n: "s" if isinstance(n, IntImm) else None)
    with pytest.raises(TypeError, match="cannot convert a value of type 'object'"):
        ferry.transform(root, lambda n: object())
    # A container in an Array's slot is fine: the Array holds Any.
    out = ferry.transform([IntImm(1)], lambda n: [Var("v")] if isinstance(n, IntImm) else None)
    assert out[0][0].name == "v"


def test_replacing_a_child_by_its_ancestor_builds_no_cycle():
    root = Add(IntImm(1), IntImm(2))
    out = ferry.transform(root, lambda n: root if isinstance(n, IntImm) else None)
    assert out.a is root and out.b is root and out is not root
    assert ferry.structural_mismatch(out, out) is None
    lst = ferry.List([IntImm(1)])
    out = ferry.transform(lst, lambda n: lst if isinstance(n, IntImm) else None)
    assert out[0] is lst and len(lst) == 1 and lst[0].value == 1


def test_fn_appending_a_cycle_to_the_graph_it_walks_is_a_value_error():
    out = _child(
        "inner = ferry.List([IntImm(1), IntImm(2)])\n"
        "root = ferry.List([inner])\n"
        "for walk in (ferry.visit, ferry.transform):\n"
        "    def fn(node):\n"
        "        if isinstance(node, IntImm) and node.value == 1 and len(inner) == 2:\n"
        "            inner.append(root)\n"
        "    try: walk(root, fn)\n"
        "    except ValueError as e: print(str(e).split(': ')[1])\n"
        "    del inner[2]\n"
        "inner.clear(); root.clear()\n",
        timeout=120,
    )
    assert out.splitlines() == ["at root[0][2] (ferry.List)"] * 2


def test_fn_changing_lists_and_dicts_under_the_walk_does_not_crash():
    out = _child(
        "l = ferry.List([IntImm(i) for i in range(5)])\n"
        "def grow(n):\n"
        "    if len(l) < 1000: l.append(IntImm(100))\n"
        "ferry.visit(l, grow); print(len(l))\n"
        "l = ferry.List([IntImm(i) for i in range(5)])\n"
        "ferry.visit(l, lambda n: l.clear()); print(len(l))\n"
        "for make in (lambda: ferry.List([IntImm(i) for i in range(5)]),\n"
        "             lambda: ferry.Dict({IntImm(i): IntImm(i) for i in range(5)})):\n"
        "    c = make()\n"
        "    def clear(n):\n"
        "        c.clear(); gc.collect()\n"
        "        return IntImm(9) if isinstance(n, IntImm) else None\n"
        "    try: ferry.transform(c, clear)\n"
        "    except ValueError as e: print('changed' if 'children changed' in str(e) else e)\n"
        "l = ferry.List([IntImm(i) for i in range(5)])\n"
        "def swap(n):\n"
        "    if isinstance(n, IntImm):\n"
        "        for i in range(len(l)): l[i] = Var('v')\n"
        "        gc.collect(); return IntImm(n.value + 10)\n"
        "out = ferry.transform(l, swap); print(out[0].value, out[1].name, len(out))\n"
        "d = ferry.Dict({str(i): IntImm(i) for i in range(5)})\n"
        "def insert(n):\n"
        "    if len(d) < 3000: d[str(len(d))] = IntImm(7)\n"
        "    return IntImm(1) if isinstance(n, IntImm) else None\n"
        "out = ferry.transform(d, insert); print(len(d), len(out))\n"
        # Tuple and enum fields of py_class nodes rewritten under the walk (ASan's stage runs
        # this too): walked as they are found, or a ValueError, never freed memory read.
        "import test_toolkit_hostile as t\n"
        "s = t.Spans((1, 'a'), nest=((1, ('x', 'y')), 3))\n"
        "m = t.MaybeEnum(other=1)\n"
        "def rewrite(n):\n"
        "    s.nest = ((2, ()), None); s.pair = (0, 'z'); m.other = None; m.perm = 4\n"
        "    gc.collect()\n"
        "for walk in (ferry.visit, ferry.transform):\n"
        "    try: walk(ferry.Array([s, m, s]), rewrite); print('walked')\n"
        "    except ValueError as e: print('changed' if 'children changed' in str(e) else e)\n"
    )
    assert out.split() == [
        *["1000", "0", "changed", "changed", "10", "v", "5", "3000", "3000"],
        *["walked", "walked"],
    ]


def test_transform_inside_fn_and_unbounded_recursion_through_it():
    root = Add(IntImm(1), IntImm(2))

    def bump(node):
        if isinstance(node, IntImm):
            return ferry.transform(node, lambda m: IntImm(m.value + 1))
        return None

    out = ferry.transform(root, bump)
    assert (out.a.value, out.b.value) == (2, 3)
    # Endless: each fn starts a transform of the root again, until Python's recursion limit.
    out = _child(
        "root = Add(IntImm(1), IntImm(2))\n"
        "def fn(n):\n"
        "    return ferry.transform(root, fn)\n"
        "try: ferry.transform(root, fn)\n"
        "except RecursionError: print('RecursionError')\n"
        "print(ferry.transform(root, lambda n: None) is root)\n"
    )
    assert out.split() == ["RecursionError", "True"]


def test_million_deep_chains_with_gc_disabled_free_everything():
    out = _child(
        "gc.collect(); gc.disable()\n"
        "n = None\n"
        "for i in range(1_000_000): n = Lit(i, n)\n"
        "seen = [0]\n"
        "def count(x): seen[0] += 1\n"
        "ferry.visit(n, count)\n"
        "out = ferry.transform(n, lambda x: Lit(-1) if x.next is None else None)\n"
        "print(seen[0], out is not n, out.value == n.value)\n"
        "l = root = ferry.List([])\n"
        "for i in range(1_000_000):\n"
        "    m = ferry.List([]); l.append(m); l = m\n"
        "l.append(IntImm(1))\n"
        "out2 = ferry.transform(root, lambda x: IntImm(2) if isinstance(x, IntImm) else None)\n"
        "print(out2 is not root)\n"
        "del n, out, out2, root, l, m\n"
        # No cycles were made: with the collector off, all of it went by reference counts (the
        # leak check at exit fails the child otherwise).
        "print(gc.collect())\n",
        timeout=600,
    )
    assert out.split() == ["1000000", "True", "True", "True", "0"]


def test_failed_walks_make_no_reference_cycles():
    root = Add(IntImm(1), IntImm(2))

    class Boom(Exception):
        pass

    def boom(node):
        raise Boom("x")

    gc.collect()
    gc.disable()
    try:
        for _ in range(200):
            for walk in (ferry.visit, ferry.transform):
                with pytest.raises(Boom):
                    walk(root, boom)
        # Before: the walk's frame held the exception its traceback holds: a cycle per call,
        # freed only by the cyclic GC (never, with it disabled).
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_nothing_fn_held_outlives_the_walk():
    # Errors cross C++ (which keeps the last one per thread): neither fn, what it closes over,
    # nor the exception it raised may be kept alive by the walk, with the collector off.
    class Held:
        pass

    class Boom(Exception):
        pass

    def make():
        held = Held()

        def fn(node):
            assert held is not None
            raise Boom("x")

        return held, fn

    gc.collect()
    gc.disable()
    try:
        for walk in (ferry.visit, ferry.transform):
            held, fn = make()
            refs = [weakref.ref(held), weakref.ref(fn)]
            with pytest.raises(Boom) as info:
                walk(Add(IntImm(1), IntImm(2)), fn)
            refs.append(weakref.ref(info.value))
            del held, fn, info
            assert [r() for r in refs] == [None, None, None]
    finally:
        gc.enable()


def test_no_leaks_over_1e5_calls():
    root = ferry.Array([Add(IntImm(1), IntImm(2)), ferry.List([ferry.Dict({"k": IntImm(4)})])])

    class Boom(Exception):
        pass

    def boom(node):
        if isinstance(node, IntImm) and node.value == 4:
            raise Boom("x")

    def bump(node):
        return IntImm(node.value + 1) if isinstance(node, IntImm) else None

    def failing():  # try/except rather than pytest.raises: 3e4 of them (an error costs ~50 us)
        for walk, fn in ((ferry.visit, boom), (ferry.transform, boom), (ferry.transform, str)):
            try:
                walk(root, fn)
            except (Boom, TypeError):
                pass
            else:
                raise AssertionError(f"{walk.__name__} with {fn.__name__} did not raise")

    def passing():
        ferry.transform(root, bump)
        ferry.visit(root, bump)
        ferry.structural_mismatch(root, root)
        ferry.transform(root, lambda node: None)
        ferry.transform(root, bump)
        ferry.structural_mismatch(root, ferry.transform(root, bump))
        ferry.visit(root, lambda node: None)

    for _ in range(100):
        failing()
        passing()
    gc.collect()
    before = (sys.getrefcount(root), sys.getrefcount(boom), sys.getrefcount(bump))
    objects = len(gc.get_objects())
    for _ in range(10_000):  # 1e5 calls: 3e4 failing, 7e4 passing
        failing()
        passing()
    gc.collect()
    assert (sys.getrefcount(root), sys.getrefcount(boom), sys.getrefcount(bump)) == before
    assert len(gc.get_objects()) - objects < 50


def test_threads_walking_one_shared_graph():
    out = _child(
        "shared = Add(IntImm(1), IntImm(2))\n"
        "n = IntImm(0)\n"
        "for i in range(2000): n = Add(n, shared)\n"
        "root = ferry.List([n, ferry.Dict({'a': n})])\n"
        "errors = []\n"
        "def work():\n"
        "    try:\n"
        "        for _ in range(20):\n"
        "            seen = []\n"
        "            ferry.visit(root, seen.append)\n"
        "            assert len(seen) == 2006, len(seen)\n"
        "            out = ferry.transform(root, lambda x: IntImm(9)\n"
        "                                  if isinstance(x, IntImm) and x.value == 0 else None)\n"
        "            assert out[0] is out[1]['a'] and out[0] is not n\n"
        "    except BaseException as e: errors.append(e)\n"
        "def mutate(stop):\n"
        "    l = ferry.List([IntImm(i) for i in range(100)])\n"
        "    root.append(l)\n"
        "    while not stop: l.append(IntImm(1)); l.clear() if len(l) > 300 else None\n"
        "ts = [threading.Thread(target=work) for _ in range(4)]\n"
        "for t in ts: t.start()\n"
        "for t in ts: t.join()\n"
        "print(errors)\n"
        "stop = []\n"
        "m = threading.Thread(target=mutate, args=(stop,)); m.start()\n"
        "def walk_changing():\n"
        "    for _ in range(200):\n"
        "        try:\n"
        "            ferry.visit(root, lambda x: None)\n"
        "            ferry.transform(root, lambda x: IntImm(1) if isinstance(x, IntImm) else None)\n"
        "        except ValueError: pass\n"
        "ws = [threading.Thread(target=walk_changing) for _ in range(2)]\n"
        "for w in ws: w.start()\n"
        "for w in ws: w.join()\n"
        "stop.append(1); m.join(); print('done')\n",
        timeout=600,
    )
    assert out.split() == ["[]", "done"]


def test_threads_whose_fn_raises_each_get_their_own_exception():
    # Errors cross C++ through per-thread storage: a thread must get back its own exception,
    # with its own path, never another thread's.
    out = _child(
        "sys.setswitchinterval(1e-5)\n"
        "root = Add(Add(IntImm(1), IntImm(2)), IntImm(3))\n"
        "bad = []\n"
        "def work(k):\n"
        "    class Mine(Exception): pass\n"
        "    for i in range(1000):\n"
        "        walk = ferry.visit if i % 2 else ferry.transform\n"
        "        name = 'StructuralVisit' if i % 2 else 'StructuralTransform'\n"
        "        def fn(n, i=i):\n"
        "            if isinstance(n, IntImm) and n.value == 2: raise Mine(k, i)\n"
        "        try: walk(root, fn); bad.append('no error')\n"
        "        except Mine as e:\n"
        "            if e.args != (k, i): bad.append(e.args)\n"
        "            if e.__notes__ != [name + ': at root.a.b (test.IntImm)']:\n"
        "                bad.append(e.__notes__)\n"
        "ts = [threading.Thread(target=work, args=(k,)) for k in range(8)]\n"
        "for t in ts: t.start()\n"
        "for t in ts: t.join()\n"
        "print(bad[:3])\n",
        timeout=300,
    )
    assert out.strip() == "[]"


# structural_mismatch ----------------------------------------------------------------------------


def test_mismatch_over_cycles_types_and_map_order():
    out = _child(
        "a, b, c = (ferry.List([IntImm(v)]) for v in (1, 1, 2))\n"
        "for x in (a, b, c): x.append(x)\n"
        "print(ferry.structural_mismatch(a, b), ferry.structural_mismatch(a, c))\n"
        "for x in (a, b, c): x.clear()\n",
        timeout=120,
    )
    assert out.split() == ["None", "[0].value"]
    m = ferry.structural_mismatch
    assert [m(IntImm(1), Var("x")), m(1, 1.0), m(1, True), m("a", b"a"), m(None, IntImm(1))] == [
        ""
    ] * 5
    assert m({"a": 1, "b": 2}, {"b": 2, "a": 1}) is None
    assert m({"a": 1, "b": 2}, {"b": 2, "a": 3}) == '["a"]'
    assert m(ferry.Dict({"a": 1, "b": 2}), ferry.Dict({"b": 2, "a": 1})) is None
    assert m({'x"]': 1}, {'x"]': 2}) == '["x\\"]"]'
    assert m({"a": 1}, {"a": 1, "b": 2}) == ""
    with pytest.raises(TypeError, match="cannot convert a value of type 'object'"):
        m(object(), 1)


def test_mismatch_of_huge_arrays():
    n = 1_000_000
    a = ferry.Array(list(range(n)))
    assert ferry.structural_mismatch(a, ferry.Array(list(range(n)))) is None
    last = list(range(n))
    last[-1] = -1
    assert ferry.structural_mismatch(a, ferry.Array(last)) == f"[{n - 1}]"
    assert ferry.structural_mismatch(a, ferry.Array(last[:-1])) == ""


@ferry.py_class("hostile.Blob")
class Blob(ferry.Object):
    data: bytes
    items: list = ferry.field(default_factory=list)


def test_bytes_compare_hash_and_mismatch_by_content():
    # Before: bytes were compared by identity: a node and its JSON or pickle round trip were
    # structurally unequal, with the mismatch at its bytes.
    x = Blob(b"abc", items=[b"\x00\xff", "s"])
    for back in (ferry.load_json(ferry.save_json(x)), pickle.loads(pickle.dumps(x))):
        assert ferry.structural_equal(x, back)
        assert ferry.structural_hash(x) == ferry.structural_hash(back)
        assert ferry.structural_mismatch(x, back) is None
    assert ferry.structural_mismatch(x, Blob(b"abd", items=[b"\x00\xff", "s"])) == "data"
    assert ferry.structural_mismatch(x, Blob(b"abc", items=[b"\x00", "s"])) == "items[0]"
    assert ferry.structural_hash(x) != ferry.structural_hash(Blob(b"abd"))
    assert ferry.structural_mismatch(b"x" * 100, b"x" * 100) is None
    assert ferry.structural_mismatch([b"xx"], ["xx"]) == "[0]"  # bytes are not a string


def test_enum_and_tuple_fields_leak_nothing_over_1e5_calls():
    h = Holder(Perm.W)
    m = MaybeEnum()
    s = Spans((1, "a"))

    def calls():  # 20 calls a round
        h.perm = 4
        h.perm = "R"
        h.perm = Perm.X
        m.other = 1
        m.other = None
        m.other = Other.Q
        s.pair = (2, "b")
        s.nest = ((1, ("x",)), 3)
        _ = (h.perm, h.wide, m.other, m.op, s.pair, s.nest, s.opt)
        with pytest.raises(ValueError):
            h.perm = 3
        with pytest.raises(TypeError):
            s.pair = (1,)
        with pytest.raises(TypeError):
            m.other = Perm.R

    for _ in range(100):
        calls()
    gc.collect()
    counts = [sys.getrefcount(x) for x in (Perm.X, Other.Q, h, m, s)]
    objects = len(gc.get_objects())
    for _ in range(5_000):
        calls()
    gc.collect()
    assert [sys.getrefcount(x) for x in (Perm.X, Other.Q, h, m, s)] == counts
    assert len(gc.get_objects()) - objects < 50
