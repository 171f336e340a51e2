"""ferry.visit, ferry.transform and ferry.structural_mismatch over C++ nodes, py_class nodes and
containers: post-order, sharing, identity when unchanged, the copied spine, errors with paths,
cycles, deep chains."""

import subprocess
import sys
import traceback

import ferry_testing
import pytest
from ferry_testing import Add as AddType
from ferry_testing import IntImm, Var
from py_class_defs import Lit

import ferry

Let = ferry.get_global_func("test.Let")
Add = ferry.get_global_func("test.Add")


def replace(old, new):
    def fn(node):
        if isinstance(node, IntImm) and node.value == old:
            return IntImm(new)
        return None

    return fn


def test_visit_is_post_order_and_visits_shared_once():
    shared = Add(IntImm(1), IntImm(2))
    root = Add(shared, shared)
    seen = []
    ferry.visit(root, seen.append)
    assert [type(n).__name__ for n in seen] == ["IntImm", "IntImm", "Add", "Add"]
    assert seen[2].same_as(shared)
    assert seen[3].same_as(root)


def test_visit_walks_containers_not_plain_values():
    seen = []
    ferry.visit([IntImm(1), "s", 3, {"k": IntImm(4)}], seen.append)
    kinds = sorted(type(n).__name__ for n in seen)
    assert kinds == ["Array", "IntImm", "IntImm", "Map"]
    ferry.visit(3, seen.append)
    assert len(seen) == 4


def test_transform_unchanged_returns_the_same_object():
    root = Let(Var("x"), IntImm(1), Add(IntImm(2), IntImm(3)))
    out = ferry.transform(root, lambda node: None)
    assert out.same_as(root)
    assert out is root
    assert ferry.transform(root, lambda node: node) is root  # returning the node keeps it


def test_transform_copies_only_the_spine():
    left = Add(IntImm(1), IntImm(2))
    right = Add(IntImm(3), IntImm(4))
    root = Add(left, right)
    out = ferry.transform(root, replace(4, 40))
    assert not out.same_as(root)
    assert out.a.same_as(left)
    assert not out.b.same_as(right)
    assert out.b.a.same_as(right.a)
    assert out.b.b.value == 40
    assert right.b.value == 4  # the input is unchanged


def test_transform_keeps_sharing():
    shared = Add(IntImm(1), IntImm(2))
    root = Add(Add(shared, IntImm(9)), shared)
    calls = []

    def fn(node):
        calls.append(node)
        return replace(1, 10)(node)

    out = ferry.transform(root, fn)
    assert len(calls) == 6
    assert out.a.a.same_as(out.b)
    assert out.b.a.value == 10
    assert not out.b.same_as(shared)


def test_transform_py_class_nodes():
    chain = Lit(1, Lit(2, Lit(3)))

    def bump_last(node):
        if isinstance(node, Lit) and node.next is None:
            return Lit(node.value * 100)
        return None

    out = ferry.transform(chain, bump_last)
    assert out.value == 1 and out.next.value == 2 and out.next.next.value == 300
    assert chain.next.next.value == 3
    assert ferry.transform(chain, lambda n: None) is chain
    # A py_class node inside a C++ node: C++ Add over a Python Lit.
    mixed = Add(Lit(5), IntImm(1))
    out = ferry.transform(mixed, replace(1, 2))
    assert out.a.same_as(mixed.a)
    assert out.b.value == 2


def test_transform_py_class_extending_a_cpp_node_copies_every_field():
    from py_class_defs import Counter

    c = Counter(count=3, small=4, label="L", expr=IntImm(1), items=[IntImm(2)], note="n")
    out = ferry.transform(c, replace(2, 9))
    assert out is not c
    assert (out.count, out.small, out.label, out.note) == (3, 4, "L", "n")
    assert out.expr.same_as(c.expr)
    assert out.items[0].value == 9 and c.items[0].value == 2


def test_transform_containers():
    table = ferry.Map({"k": IntImm(1), "j": IntImm(2)})
    lst = ferry.List([table, IntImm(1), "s"])
    out = ferry.transform(lst, replace(1, 11))
    assert isinstance(out, ferry.List)
    assert out[0]["k"].value == 11
    assert out[0]["j"].same_as(table["j"])
    assert out[2] == "s"
    assert lst[1].value == 1


def test_replacement_of_another_type_where_the_field_accepts_it():
    root = Let(Var("x"), IntImm(1), IntImm(2))
    out = ferry.transform(
        root,
        lambda n: Add(IntImm(0), IntImm(1)) if isinstance(n, IntImm) and n.value == 1 else None,
    )
    assert isinstance(out.value, AddType)


def test_replacement_the_field_cannot_hold_is_a_type_error_naming_the_field():
    root = Let(Var("x"), IntImm(1), IntImm(2))
    with pytest.raises(TypeError, match=r"field 'var' of 'test.Let'"):
        ferry.transform(root, lambda n: IntImm(5) if isinstance(n, Var) else None)
    with pytest.raises(TypeError, match=r"field 'next' of 'pytest.Lit'"):
        ferry.transform(
            Lit(1, Lit(2)), lambda n: IntImm(5) if isinstance(n, Lit) and n.value == 2 else None
        )


def test_errors_from_fn_carry_the_path():
    root = Add(IntImm(1), Let(Var("x"), IntImm(2), Add(IntImm(3), IntImm(4))))

    def fn(node):
        if isinstance(node, IntImm) and node.value == 4:
            raise ValueError("no fours")

    with pytest.raises(ValueError, match="no fours") as info:
        ferry.transform(root, fn)
    assert info.value.__notes__ == ["StructuralTransform: at root.b.body.b (test.IntImm)"]
    with pytest.raises(ValueError, match="no fours") as info:
        ferry.visit(root, fn)
    assert info.value.__notes__ == ["StructuralVisit: at root.b.body.b (test.IntImm)"]


@pytest.mark.parametrize("walk", [ferry.visit, ferry.transform])
@pytest.mark.parametrize(
    "make", [lambda: KeyError("k"), lambda: ValueError("v", 2), lambda: RuntimeError("r")]
)
def test_a_builtin_exception_from_fn_comes_back_as_the_same_object(walk, make):
    # The user's own exception object: same identity, same args, a traceback that reaches the
    # line in `fn` that raised it, and the access path as a note.
    err = make()
    args = err.args

    def fn(node):
        if isinstance(node, IntImm) and node.value == 2:
            raise err  # the line the traceback must reach

    with pytest.raises(type(err)) as info:
        walk(Add(IntImm(1), IntImm(2)), fn)
    assert info.value is err
    assert err.args == args
    last = traceback.extract_tb(err.__traceback__)[-1]
    assert (last.name, last.line) == ("fn", "raise err  # the line the traceback must reach")
    assert len(err.__notes__) == 1 and err.__notes__[0].endswith(": at root.b (test.IntImm)")
    # Raised a second time (through a second walk), it gains a second note, not a merged one.
    with pytest.raises(type(err)):
        walk(Add(IntImm(1), IntImm(2)), fn)
    assert len(err.__notes__) == 2


def test_exceptions_of_user_classes_keep_their_class():
    class MyError(Exception):
        pass

    def fn(node):
        if isinstance(node, IntImm) and node.value == 2:
            raise MyError("mine")

    with pytest.raises(MyError, match="mine") as info:
        ferry.transform(Add(IntImm(1), IntImm(2)), fn)
    assert info.value.__notes__ == ["StructuralTransform: at root.b (test.IntImm)"]
    with pytest.raises(MyError):
        ferry.visit(Add(IntImm(1), IntImm(2)), fn)


def test_cycles_through_list_and_dict_are_an_error():
    lst = ferry.List([IntImm(1)])
    lst.append(lst)
    with pytest.raises(ValueError, match="cycle"):
        ferry.visit(lst, lambda n: None)
    with pytest.raises(ValueError, match="cycle"):
        ferry.transform(lst, replace(1, 2))
    lst.pop()
    d = ferry.Dict()
    d["self"] = ferry.List([d])
    with pytest.raises(ValueError, match=r"at root\[\"self\"\]\[0\] \(ferry.Dict\).*cycle"):
        ferry.transform(d, lambda n: None)
    del d["self"]


def test_deep_chain_needs_no_recursion():
    # 1e5 deep, built in C++ terms through Python; a recursive walk would overflow.
    chain = IntImm(0)
    for i in range(1, 100001):
        chain = Add(chain, IntImm(i))
    count = [0]

    def counter(node):
        count[0] += 1

    ferry.visit(chain, counter)
    assert count[0] == 200001
    assert ferry.transform(chain, lambda n: None) is chain
    out = ferry.transform(chain, replace(0, 42))
    assert not out.same_as(chain)
    assert out.b.same_as(chain.b)
    node = out
    while isinstance(node, AddType):
        node = node.a
    assert node.value == 42


@pytest.mark.parametrize("level", [127, 128, 129, 130])
def test_python_fn_across_the_native_recursion_limit(level):
    # The walk recurses natively into unique immutable nodes down to 128 levels under the root,
    # then goes on with an explicit stack: an exception from a Python fn on either side keeps
    # its object and gets the full path; a replacement on either side is put in its place.
    depth = 132
    chain = IntImm(0)
    for i in range(1, depth + 1):
        chain = Add(chain, IntImm(i))
    leaf = depth - level  # the IntImm in `b` of the Add at `level` (the root is level 0)
    error = KeyError("deep")

    def fail(node):
        if isinstance(node, IntImm) and node.value == leaf:
            raise error

    for walk, who in ((ferry.transform, "StructuralTransform"), (ferry.visit, "StructuralVisit")):
        with pytest.raises(KeyError) as info:
            walk(chain, fail)
        assert info.value is error
        assert info.value.__notes__[-1] == f"{who}: at root{'.a' * level}.b (test.IntImm)"
        del error.__notes__
    out = ferry.transform(chain, replace(leaf, 1000))
    node, original = out, chain
    for _ in range(level):
        assert not node.same_as(original)
        node, original = node.a, original.a
    assert node.b.value == 1000
    assert node.a.same_as(original.a)


def test_structural_mismatch():
    a = Add(IntImm(1), Add(IntImm(2), IntImm(3)))
    b = Add(IntImm(1), Add(IntImm(2), IntImm(4)))
    assert ferry.structural_mismatch(a, b) == "b.b.value"
    assert ferry.structural_mismatch(a, a) is None
    assert ferry.structural_mismatch([1, 2], [1, 3]) == "[1]"
    assert ferry.structural_mismatch(IntImm(1), Var("x")) == ""
    assert ferry.structural_mismatch(Lit(1, Lit(2)), Lit(1, Lit(3))) == "next.value"


def test_fn_errors_do_not_leak_or_crash_in_a_fresh_process():
    code = (
        "import ferry, ferry_testing\n"
        "from ferry_testing import IntImm\n"
        "Add = ferry.get_global_func('test.Add')\n"
        "def boom(n):\n"
        "    raise KeyError('k')\n"
        "try:\n"
        "    ferry.transform(Add(IntImm(1), IntImm(2)), boom)\n"
        "except KeyError as e:\n"
        "    assert e.__notes__ == ['StructuralTransform: at root.a (test.IntImm)'], e.__notes__\n"
        "    print('ok')\n"
    )
    env_dir = str(ferry_testing.ROOT / "tests" / "python")
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **__import__("os").environ,
            "PYTHONPATH": env_dir + ":" + __import__("os").environ.get("PYTHONPATH", ""),
        },
    )
    assert out.stdout.strip() == "ok", out.stderr


def _run_fresh(code):
    """Runs `code` in a fresh interpreter (with this one's environment, so under the ASan job
    it runs under ASan too) and returns its stdout; a crash fails the test with its stderr."""
    env_dir = str(ferry_testing.ROOT / "tests" / "python")
    environ = __import__("os").environ
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**environ, "PYTHONPATH": env_dir + ":" + environ.get("PYTHONPATH", "")},
    )
    assert out.returncode == 0, f"exit {out.returncode}: {out.stderr}"
    return out.stdout


_NODE_CLASS = (
    "import ferry, ferry_testing\n"
    "from ferry_testing import IntImm\n"
    "@ferry.py_class('pytest.transform.Node')\n"
    "class Node(ferry.Object):\n"
    "    name: str\n"
    "    kid: 'Node | None' = None\n"
)


def test_fn_freeing_nodes_under_the_walk_does_not_crash():
    # fn drops the last outside reference to nodes the walk is inside: the walk holds them.
    code = _NODE_CLASS + (
        "L = ferry.List([ferry.List([IntImm(i)]) for i in range(3)])\n"
        "seen = []\n"
        "def clear(n):\n"
        "    seen.append(type(n).__name__)\n"
        "    if isinstance(n, IntImm):\n"
        "        L.clear()\n"
        "ferry.visit(L, clear)\n"
        "print(seen)\n"
        "root = Node('root', Node('a', Node('b', Node('c'))))\n"
        "names = []\n"
        "def cut(n):\n"
        "    names.append(n.name)\n"
        "    if n.name == 'c':\n"
        "        root.kid = None\n"
        "ferry.visit(root, cut)\n"
        "print(names)\n"
        "root = Node('root', Node('a', Node('b', Node('c'))))\n"
        "def cut_and_rename(n):\n"
        "    if n.name == 'c':\n"
        "        root.kid = None\n"
        "        return Node('C')\n"
        "try:\n"
        "    ferry.transform(root, cut_and_rename)\n"
        "except ValueError as e:\n"
        "    print('ValueError', e)\n"
    )
    lines = _run_fresh(code).splitlines()
    # The list is walked as it is when each item is reached: emptied after the first.
    assert lines[0] == "['IntImm', 'List', 'List']"
    # The cut-off nodes were already entered: they are finished, over what the walk holds.
    assert lines[1] == "['c', 'b', 'a', 'root']"
    # A rebuild that no longer finds the children it walked raises, naming where.
    assert lines[2].startswith("ValueError StructuralTransform: at root (")
    assert "changed during the walk" in lines[2]


def test_transform_colliding_map_keys_is_a_value_error():
    z = IntImm(0)
    d = ferry.Dict({IntImm(1): 10, IntImm(2): 20})
    with pytest.raises(ValueError, match=r"at root \(ferry.Dict\): two keys of the map become"):
        ferry.transform(d, lambda n: z if isinstance(n, IntImm) else None)
    m = ferry.Map({"k": ferry.Map({IntImm(1): 1, IntImm(2): 2})})
    with pytest.raises(ValueError, match=r"at root\[\"k\"\] .*same key <test.IntImm"):
        ferry.transform(m, lambda n: z if isinstance(n, IntImm) else None)
    # Keys that stay distinct are fine.
    out = ferry.transform(d, lambda n: IntImm(n.value + 5) if isinstance(n, IntImm) else None)
    assert sorted((k.value, v) for k, v in out.items()) == [(6, 10), (7, 20)]


def test_fn_must_be_callable_and_a_none_root_is_a_no_op():
    for walk in (ferry.visit, ferry.transform):
        with pytest.raises(TypeError, match=r"fn must be callable, not NoneType"):
            walk(IntImm(1), None)
        with pytest.raises(TypeError, match=r"fn must be callable, not int"):
            walk(None, 3)
    calls = []
    assert ferry.visit(None, calls.append) is None
    assert ferry.transform(None, lambda n: IntImm(1)) is None
    assert ferry.transform(7, lambda n: IntImm(1)) == 7
    assert calls == []


def test_a_replacement_error_names_the_python_type_returned():
    def to_str(node):
        return "s" if isinstance(node, Lit) and node.value == 2 else None

    with pytest.raises(TypeError, match=r"field 'next' of 'pytest.Lit' .* but got str$"):
        ferry.transform(Lit(1, Lit(2)), to_str)


def test_mismatch_paths_read_the_same_in_every_container():
    assert ferry.structural_mismatch(ferry.List([1, 2]), ferry.List([1, 3])) == "[1]"
    assert ferry.structural_mismatch(ferry.Array([1, 2]), ferry.Array([1, 3])) == "[1]"
    assert ferry.structural_mismatch(ferry.Dict({"a": 1}), ferry.Dict({"a": 2})) == '["a"]'
    assert ferry.structural_mismatch(ferry.Map({"a": 1}), ferry.Map({"a": 2})) == '["a"]'
    nested = ferry.List([ferry.Dict({"k": ferry.List([IntImm(1)])})])
    other = ferry.List([ferry.Dict({"k": ferry.List([IntImm(2)])})])
    assert ferry.structural_mismatch(nested, other) == '[0]["k"][0].value'
    assert ferry.structural_mismatch(ferry.List([1]), ferry.List([1, 2])) == ""


def test_the_libferry_globals_of_transform_and_enums_come_from_one_lookup():
    # ferry.transform and ferry._enums each had their own copy of this lookup.
    from ferry.registry import _libferry_global

    assert isinstance(_libferry_global("ferry.StructuralVisit"), ferry.Function)
    with pytest.raises(ImportError, match="libferry lacks the global function ferry.NoSuchWalk"):
        _libferry_global("ferry.NoSuchWalk")
