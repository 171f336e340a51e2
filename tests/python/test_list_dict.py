"""ferry.List and ferry.Dict: mutable containers shared by Python and C++."""

import copy
import os
import pickle
import subprocess
import sys
import textwrap
from collections.abc import MutableMapping, MutableSequence

import pytest
from ferry_testing import IntImm, Var

import ferry


def test_a_list_is_a_full_mutable_sequence():
    xs = ferry.List([1, 2, 3])
    assert isinstance(xs, MutableSequence) and isinstance(xs, ferry.Object)
    assert len(xs) == 3 and xs[0] == 1 and xs[-1] == 3 and list(xs) == [1, 2, 3]
    xs.append(4)
    xs.extend([5, 6])
    xs += [7]
    assert list(xs) == [1, 2, 3, 4, 5, 6, 7]
    xs.insert(0, 0)
    xs.insert(-1, 6.5)
    xs.insert(100, 8)
    assert list(xs) == [0, 1, 2, 3, 4, 5, 6, 6.5, 7, 8]
    assert xs.pop() == 8 and xs.pop(0) == 0
    xs.remove(6.5)
    assert xs.index(4) == 3 and xs.count(4) == 1 and 4 in xs and 42 not in xs
    xs.reverse()
    assert list(xs) == [7, 6, 5, 4, 3, 2, 1]
    xs.sort()
    assert list(xs) == [1, 2, 3, 4, 5, 6, 7]
    xs.sort(key=lambda v: -v)
    assert list(xs) == [7, 6, 5, 4, 3, 2, 1]
    del xs[0]
    del xs[-1]
    assert list(xs) == [6, 5, 4, 3, 2]
    assert list(xs[1:3]) == [5, 4] and isinstance(xs[1:3], ferry.List)
    assert list(xs[::-1]) == [2, 3, 4, 5, 6]
    xs[1:3] = ["a", "b", "c"]
    assert list(xs) == [6, "a", "b", "c", 3, 2]
    del xs[::2]
    assert list(xs) == ["a", "c", 2]
    xs[-1] = 20
    assert list(xs) == ["a", "c", 20]
    xs.clear()
    assert len(xs) == 0 and list(xs) == []
    xs.extend(xs)  # itself: no change, no endless loop
    assert len(xs) == 0


def test_list_errors_match_python_lists():
    xs = ferry.List([1, 2])
    with pytest.raises(IndexError, match="out of range for size 2"):
        xs[2]
    with pytest.raises(IndexError, match="out of range for size 2"):
        xs[-3] = 1
    with pytest.raises(IndexError):
        del xs[5]
    with pytest.raises(IndexError):
        ferry.List().pop()
    with pytest.raises(ValueError):
        xs.remove(99)
    with pytest.raises(ValueError, match="extended slice"):
        xs[::2] = [1, 2, 3]
    with pytest.raises(TypeError, match="cannot convert a value of type 'set'"):
        xs.append({1})
    with pytest.raises(TypeError):
        xs.sort(key=lambda v: None if v == 1 else "x")  # None < str
    assert list(xs) == [1, 2], "a failed sort or slice assignment leaves the list as it was"


def test_a_dict_is_a_full_mutable_mapping():
    d = ferry.Dict({"a": 1}, b=2)
    assert isinstance(d, MutableMapping) and len(d) == 2 and d["a"] == 1
    d["c"] = 3
    assert list(d) == ["a", "b", "c"] and list(d.values()) == [1, 2, 3]
    keys = d.keys()
    d["d"] = 4
    assert "d" in keys and len(keys) == 4, "views are live"
    assert d.get("zz") is None and d.get("zz", 5) == 5
    assert d.setdefault("a", 100) == 1 and d.setdefault("e", 5) == 5
    assert d.pop("e") == 5 and d.pop("e", None) is None
    assert d.popitem() == ("d", 4), "the last entry, as dict.popitem"
    d.update({"x": 9}, y=10)
    assert dict(d.items()) == {"a": 1, "b": 2, "c": 3, "x": 9, "y": 10}
    del d["x"]
    with pytest.raises(KeyError):
        del d["x"]
    with pytest.raises(KeyError, match="zz"):
        d["zz"]
    assert [1, 2] not in d  # an unhashable-like key is just absent
    d.clear()
    assert len(d) == 0
    with pytest.raises(KeyError):
        d.popitem()


def test_operators_and_explicit_dunder_calls_agree():
    # len(), d[k], d[k] = v, del d[k] and `in` go to C slots (container.py); the methods stay.
    d = ferry.Dict({"a": 1})
    xs = ferry.List([1, 2, 3])
    assert len(d) == ferry.Dict.__len__(d) == 1 and len(xs) == ferry.List.__len__(xs) == 3
    assert d["a"] == ferry.Dict.__getitem__(d, "a") == 1
    assert xs[-1] == ferry.List.__getitem__(xs, -1) == 3
    d["b"] = 2
    ferry.Dict.__setitem__(d, "c", 3)
    assert dict(d.items()) == {"a": 1, "b": 2, "c": 3}
    del d["b"]
    ferry.Dict.__delitem__(d, "c")
    assert list(d) == ["a"] and "a" in d and ferry.Dict.__contains__(d, "a")
    assert {1} not in d and not ferry.Dict.__contains__(d, {1}), "an impossible key is absent"
    for call in (lambda: d["zz"], lambda: ferry.Dict.__getitem__(d, "zz")):
        with pytest.raises(KeyError, match="zz"):
            call()
    with pytest.raises(KeyError, match="zz"):
        del d["zz"]
    with pytest.raises(TypeError, match="set"):
        d[{1}]
    with pytest.raises(TypeError, match="set"):
        d["k"] = {1}
    with pytest.raises(IndexError, match="out of range for size 3"):
        xs[3]
    with pytest.raises(TypeError):
        xs["a"]


def test_mutations_are_seen_across_the_boundary(f):
    xs = ferry.List([1, 2])
    assert f.list_push(xs, 3) == 3
    assert list(xs) == [1, 2, 3], "C++ appended to the list the caller holds"
    plain = [1, 2]
    assert f.list_push(plain, 3) == 3
    assert plain == [1, 2], "a Python list becomes a copy the caller cannot see mutated"

    def fill(d):
        d["a"] = 40
        d["b"] = 2

    assert f.dict_fill_by(fill) == 42, "C++ reads what the Python callback wrote"
    made = f.make_list()
    assert type(made) is ferry.List and list(made) == [1, "a"]
    held = f.echo(xs)
    assert held is xs


def test_a_typed_list_parameter_checks_elements(f):
    with pytest.raises(TypeError, match=r"List\[int\]"):
        f.list_push(ferry.List([1, "two"]), 3)
    with pytest.raises(TypeError):
        f.list_push(ferry.Dict(), 3)


def test_conversions_between_array_and_list_map_and_dict():
    xs = ferry.List(ferry.Array([1, 2]))
    a = ferry.Array(xs)
    xs.append(3)
    assert list(a) == [1, 2] and list(xs) == [1, 2, 3]
    d = ferry.Dict(ferry.Map({"k": 1}))
    m = ferry.Map(d)
    d["j"] = 2
    assert dict(m.items()) == {"k": 1} and len(d) == 2


def test_structural_equality_hashing_json_and_pickle():
    x = Var("x")
    a = ferry.List([1, {"k": x}, ferry.Dict({"n": IntImm(1)})])
    b = ferry.List([1, {"k": x}, ferry.Dict({"n": IntImm(1)})])
    assert a != b and ferry.structural_equal(a, b)
    assert ferry.structural_hash(a) == ferry.structural_hash(b)
    assert ferry.structural_equal(ferry.Dict({"p": 1, "q": 2}), ferry.Dict({"q": 2, "p": 1}))
    assert ferry.structural_hash(ferry.Dict({"p": 1, "q": 2})) == ferry.structural_hash(
        ferry.Dict({"q": 2, "p": 1})
    )
    assert not ferry.structural_equal(ferry.List([1]), ferry.Array([1]))
    shared = ferry.Dict({"v": 1})
    outer = ferry.List([shared, shared])
    for back in (ferry.load_json(ferry.save_json(outer)), pickle.loads(pickle.dumps(outer))):
        assert type(back) is ferry.List and back[0].same_as(back[1]), "sharing kept"
        back[0]["w"] = 2
        assert len(back[1]) == 2
    deep = copy.deepcopy(outer)
    assert ferry.structural_equal(deep, outer) and not deep.same_as(outer)


def test_distinct_empty_containers_come_back_distinct():
    # The JSON loader made every empty array (map) node the one shared empty array, so two
    # distinct empty Lists came back sharing their storage and the round trip was not
    # structurally equal to what was saved.
    for make in (ferry.List, ferry.Dict):
        x = ferry.Array([make(), make()])
        for back in (ferry.load_json(ferry.save_json(x)), pickle.loads(pickle.dumps(x))):
            assert ferry.structural_equal(x, back)
            assert not back[0].same_as(back[1])
            if make is ferry.List:
                back[0].append(1)
            else:
                back[0]["k"] = 1
            assert len(back[0]) == 1 and len(back[1]) == 0
    one = ferry.List()
    x = ferry.Array([one, one])
    for back in (ferry.load_json(ferry.save_json(x)), pickle.loads(pickle.dumps(x))):
        assert ferry.structural_equal(x, back) and back[0].same_as(back[1]), "sharing kept"


def test_a_container_that_holds_itself_is_a_clean_error_in_a_subprocess():
    code = textwrap.dedent("""
        import pickle, ferry
        xs = ferry.List([1])
        xs.append(xs)
        d = ferry.Dict()
        d["self"] = ferry.List([d])
        out = []
        for name, call in [("save_json", lambda: ferry.save_json(xs)),
                           ("pickle", lambda: pickle.dumps(xs)),
                           ("pickle dict", lambda: pickle.dumps(d))]:
            try:
                call()
                out.append(name + " passed")
            except ValueError as e:
                out.append(name + " ValueError " + str("cycle" in str(e)))
        out.append(repr(xs))
        ferry.structural_hash(xs)  # ends: a cycle is hashed by its type
        out.append(str(ferry.structural_equal(xs, xs)))
        xs.clear(); d.clear()  # break the cycles (reference counting keeps them alive)
        print("|".join(out))
    """)
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().split("|") == [
        "save_json ValueError True",
        "pickle ValueError True",
        "pickle dict ValueError True",
        "ferry.List([1, ferry.List([...])])",
        "True",
    ]


def test_appending_does_not_leak(f):
    x = IntImm(3)
    before = f.use_count(x)
    xs = ferry.List()
    for _ in range(100_000):
        xs.append(x)
    assert f.use_count(x) == before + 100_000
    xs.clear()
    assert f.use_count(x) == before


def test_a_nan_key_is_a_value_error_and_changes_nothing():
    # Every NaN key was one key, so a dict with two NaN keys lost an entry on its way into a
    # Map; values have no identity to keep NaNs apart by, so a NaN key is refused.
    nan = float("nan")
    for make in (ferry.Map, ferry.Dict, ferry.convert):
        with pytest.raises(ValueError, match="NaN map key"):
            make({nan: 1, float("nan"): 2})
    d = ferry.Dict({1.5: "x"})
    with pytest.raises(ValueError, match="NaN map key"):
        d[nan] = 1
    with pytest.raises(ValueError, match="NaN map key"):
        d.update({nan: 1})
    assert dict(d.items()) == {1.5: "x"}
    assert nan not in d and d.get(nan) is None
    with pytest.raises(KeyError):
        d[nan]
    d[float("inf")] = "y"  # other floats are keys; 0.0 and -0.0 are one
    d[0.0] = "z"
    d[-0.0] = "w"
    assert dict(d.items()) == {1.5: "x", float("inf"): "y", 0.0: "w"}


def test_load_json_refuses_a_map_or_dict_holding_one_key_twice():
    for x in (ferry.Map({"a": 1, "b": 2}), ferry.Dict({"a": 1, "b": 2})):
        text = ferry.save_json(x)
        assert '"b"' in text
        where = r'line \d+, column \d+: node \d \(ferry.Map\): duplicate key "a"'
        with pytest.raises(ValueError, match=where):
            ferry.load_json(text.replace('"b"', '"a"'))


def _run_isolated(code, timeout=240):
    """Runs `code` in a fresh interpreter (a crash or a hang fails the test, not the run) and
    returns its stdout lines."""
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ),
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout.split()


def test_draining_a_large_dict_with_popitem_finishes_in_order():
    # popitem copied every entry out to find the last one: draining 1e5 entries was O(n**2)
    # and did not finish in minutes. Only the subprocess timeout bounds the time.
    out = _run_isolated("""
        import ferry
        n = 100_000
        d = ferry.Dict({i: -i for i in range(n)})
        del d[n - 1]  # an erased entry at the end is skipped
        expected = n - 2
        while d:
            key, value = d.popitem()
            assert (key, value) == (expected, -expected), (key, value, expected)
            expected -= 1
        assert expected == -1 and len(d) == 0
        try:
            d.popitem()
        except KeyError:
            print("ok")
    """)
    assert out == ["ok"]


_HAMMER_PRELUDE = """
    import sys, threading, ferry
    sys.setswitchinterval(1e-6)

    def together(*bodies):
        barrier = threading.Barrier(len(bodies))
        errors = []

        def run(body):
            barrier.wait()
            try:
                body()
            except BaseException as e:  # reported, not swallowed
                errors.append(repr(e))

        threads = [threading.Thread(target=run, args=(b,)) for b in bodies]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
"""


def test_each_list_operation_is_atomic_under_python_threads():
    # Slice assignment, del, pop, insert, extend and remove were several calls each (read a
    # copy, change it, write it all back), so another thread's append between them was lost,
    # and `del xs[-1]` beside `pop()` removed the wrong element or raised.
    out = _run_isolated(
        _HAMMER_PRELUDE
        + """
    n = 20_000
    xs = ferry.List()

    def reassign():
        for _ in range(n):
            xs[0:0] = []
            xs[-1:-1] = []

    together(reassign, lambda: [xs.append(i) for i in range(n)])
    assert list(xs) == list(range(n)), "no append lost"

    ys = ferry.List(range(4 * n))
    popped = []

    def delete():
        for _ in range(n):
            del ys[-1]

    together(delete, lambda: [popped.append(ys.pop()) for _ in range(n)])
    assert len(ys) == 2 * n and list(ys) == list(range(2 * n)), len(ys)
    assert len(set(popped)) == n and all(p >= 2 * n for p in popped)

    zs = ferry.List()
    together(lambda: [zs.extend([i, i]) for i in range(n)],
             lambda: [zs.extend([-i - 1, -i - 1]) for i in range(n)],
             lambda: [zs.insert(0, "x") for _ in range(n // 4)])
    items = [z for z in zs if z != "x"]
    assert len(zs) == 4 * n + n // 4 and len(items) == 4 * n
    assert all(items[k] == items[k + 1] for k in range(0, 4 * n, 2)), "an extend was split"

    m = 2_000  # remove() is O(len) as list.remove
    ws = ferry.List(range(m))
    together(lambda: [ws.remove(i) for i in range(0, m, 2)],
             lambda: [ws.remove(i) for i in range(1, m, 2)],
             lambda: [ws.reverse() for _ in range(100)])
    assert len(ws) == 0
    print("ok")
"""
    )
    assert out == ["ok"]


def test_each_dict_operation_is_atomic_under_python_threads():
    # pop, popitem and setdefault read and then wrote in two calls: two threads could both
    # see a key and both remove it (a KeyError), or both set a default.
    out = _run_isolated(
        _HAMMER_PRELUDE
        + """
    n = 20_000
    d = ferry.Dict({i: i for i in range(n)})
    got = [[], []]
    together(*[lambda k=k: [got[k].append(d.pop(i, None)) for i in range(n)] for k in (0, 1)])
    values = [v for v in got[0] + got[1] if v is not None]
    assert sorted(values) == list(range(n)) and len(d) == 0, len(values)

    d.update({i: i for i in range(n)})
    items = [[], []]
    together(*[lambda k=k: [items[k].append(d.popitem()) for _ in range(n // 2)] for k in (0, 1)])
    assert sorted(items[0] + items[1]) == [(i, i) for i in range(n)] and len(d) == 0

    seen = [[], []]
    together(*[lambda k=k: [seen[k].append(d.setdefault(i, k)) for i in range(n)] for k in (0, 1)])
    assert seen[0] == seen[1] == [d[i] for i in range(n)], "one default won for each key"

    e = ferry.Dict()
    together(lambda: [e.update({f"a{i}": i, f"b{i}": i}) for i in range(n)],
             lambda: [e.pop(f"a{i}", None) for i in range(n)])
    assert all(e[f"b{i}"] == i for i in range(n))

    # Iterating items() or values() looked each key up again: a concurrent pop made it raise.
    g = ferry.Dict({i: i for i in range(200)})

    def churn():
        for i in range(n):
            g.pop(i % 200, None)
            g[i % 200] = i % 200

    def walk():
        for _ in range(300):
            assert all(k == v for k, v in g.items()) and len(list(g.values())) >= 198

    together(churn, walk)
    print("ok")
"""
    )
    assert out == ["ok"]


def test_a_sort_key_that_writes_the_list_is_a_value_error_and_the_write_kept():
    # The sorted copy was written back over the list, silently dropping the key's write.
    xs = ferry.List([3, 1, 2])

    def key(v):
        if v == 1:
            xs.append(99)
        return v

    with pytest.raises(ValueError, match="list modified during sort"):
        xs.sort(key=key)
    assert list(xs) == [3, 1, 2, 99], "the write is kept, the sort not applied"
    xs.sort()
    assert list(xs) == [1, 2, 3, 99]
    xs.sort(key=lambda v: -v, reverse=True)
    assert list(xs) == [1, 2, 3, 99]


def test_slices_and_indexes_follow_python_list_rules():
    for slc in [
        slice(None),
        slice(1, 3),
        slice(-2, None),
        slice(None, -10),
        slice(10, 20),
        slice(None, None, 2),
        slice(None, None, -1),
        slice(4, 0, -2),
        slice(-1, -6, -3),
        slice(2**70, -(2**70), -1),
        slice(True, 4),
    ]:
        for values in ([], ["a"], ["a", "b", "c"]):
            ref = list(range(6))
            xs = ferry.List(range(6))
            try:
                ref[slc] = values
            except ValueError:
                with pytest.raises(ValueError, match="extended slice"):
                    xs[slc] = values
                assert list(xs) == list(range(6))
            else:
                xs[slc] = values
                assert list(xs) == ref, (slc, values)
        ref = list(range(6))
        xs = ferry.List(range(6))
        del ref[slc]
        del xs[slc]
        assert list(xs) == ref, slc
        assert list(ferry.List(range(6))[slc]) == list(range(6))[slc]
    with pytest.raises(ValueError, match="step cannot be zero"):
        ferry.List([1])[::0] = []
    xs = ferry.List(range(5))
    xs[1:3] = iter("ab")  # any iterable
    xs[:0] = xs  # itself, read first
    assert list(xs) == [0, "a", "b", 3, 4] * 2
    for i in (-100, -1, 0, 2, 100):
        ref, ys = [1, 2, 3], ferry.List([1, 2, 3])
        ref.insert(i, "x")
        ys.insert(i, "x")
        assert list(ys) == ref
    assert list(reversed(ys)) == list(reversed(ref))
    assert ys.index(3) == ref.index(3) and ys.index(3, 0, 4) == ref.index(3, 0, 4)
    with pytest.raises(ValueError):
        ys.index(3, 0, 1)
    with pytest.raises(IndexError, match="out of range for size 4"):
        ys.pop(7)
    with pytest.raises(IndexError, match="empty"):
        ferry.List().pop()
    with pytest.raises(TypeError):
        del ys["a"]


def test_bytes_keys_compare_by_content_and_stay_apart_from_str():
    # Bytes keys were compared by identity: d[b"a"] set twice made two entries, and a Map built
    # from {b"a": 1} could not be read with another b"a".
    d = ferry.Dict()
    d[b"a"] = 2
    d[b"a"] = 3
    d[bytes([97])] = 4  # another bytes object with the same content
    assert len(d) == 1 and d[b"a"] == 4
    long_key = b"a long bytes key with a \x00 inside it"
    m = ferry.Map({b"a": 1, "a": 2, long_key: 3, b"": 4})
    assert len(m) == 4, "b'a' and 'a' are two keys, as in a Python dict"
    assert m[b"a"] == 1 and m["a"] == 2 and m[b"" + long_key] == 3 and m[b""] == 4
    assert b"a" in m and long_key[:10] not in m
    assert dict(m.items()) == {b"a": 1, "a": 2, long_key: 3, b"": 4}
    for make in (ferry.Map, ferry.Dict, ferry.convert):
        assert len(make({b"x": 1, "x": 2})) == 2
    del d[b"a"]
    assert b"a" not in d and len(d) == 0
    with pytest.raises(KeyError):
        d[b"a"]
    # Through JSON and back the keys are still found by content.
    again = ferry.load_json(ferry.save_json(m))
    assert again[b"a"] == 1 and again["a"] == 2 and again[long_key] == 3
