"""Pickles that name the libraries their types and functions need, and load them when
unpickled in a process that lacks them (docs/distributed.md)."""

import os
import pathlib
import pickle
import subprocess
import sys

import dist_support
import pytest

import ferry

balanced = dist_support.load_tree_library()
TREE_LIB = os.path.realpath(dist_support.TREE_LIB)
PYTHONPATH = os.pathsep.join(
    [str(pathlib.Path(ferry.__file__).parents[1]), str(pathlib.Path(__file__).parent)]
)


def run_fresh(script, data, **env):
    """Runs `script` in a fresh interpreter (which imports only ferry) with `data` on stdin;
    returns the completed process (stdout and stderr as text)."""
    full_env = {**os.environ, "PYTHONPATH": PYTHONPATH, **env}
    return subprocess.run(
        [sys.executable, "-c", script], input=data, env=full_env, capture_output=True, timeout=120
    )


UNPICKLE = """
import pickle, sys, ferry
value = pickle.loads(sys.stdin.buffer.read())
print(repr(value))
"""


def test_loaded_libraries_record_what_they_registered():
    assert ferry._core._library_of_type("ptest.Leaf") == TREE_LIB
    assert ferry._core._library_of_type("ptest.Pair") == TREE_LIB
    assert ferry._core._library_of_global("ptest.sum") == TREE_LIB
    for core_type in ("ferry.Array", "ferry.Map", "ferry.String"):
        assert ferry._core._library_of_type(core_type) is None
    assert ferry._core._library_of_global("ferry.SaveJSON") is None
    assert ferry._core._library_of_type("no.such.Type") is None
    assert ferry._core._library_of_global("no.such.global") is None


def test_core_only_pickles_carry_no_library_and_stay_as_small():
    value = ferry.Array([1, "a", {"k": ferry.Array([2.5])}])
    reduced = value.__reduce__()
    assert reduced[1] == (ferry.save_json(value),), "the JSON alone, as before"
    assert pickle.loads(pickle.dumps(value))[2]["k"][0] == 2.5
    assert ferry.get_global_func("ferry.SaveJSON").__reduce__()[0] is ferry.get_global_func


def test_a_pickle_names_each_library_its_types_need_once():
    tree = balanced(8)
    text, libraries = tree.__reduce__()[1]
    assert text == ferry.save_json(tree)
    assert libraries == ((TREE_LIB, "ptest.Leaf"),), "one record per library, not per type"
    inside = ferry.Array([tree, ferry.Map({"t": tree}), 3])
    assert inside.__reduce__()[1][1] == ((TREE_LIB, "ptest.Leaf"),)
    back = pickle.loads(pickle.dumps(inside))
    assert ferry.structural_equal(back[0], tree) and back[1]["t"].same_as(back[0])


def test_objects_of_registered_classes_carry_their_library_in_their_state():
    import ferry_testing
    from ferry_testing import Add, IntImm, Var

    expr = IntImm(1) + Var("x")
    text, libraries = expr.__getstate__()
    testing_lib = os.path.realpath(ferry_testing.TESTING_LIB)
    assert text == ferry.save_json(expr) and libraries == ((testing_lib, "test.IntImm"),)
    back = pickle.loads(pickle.dumps(expr))
    assert type(back) is Add and ferry.structural_equal(back, expr, map_free_vars=True)


def test_json_stays_library_agnostic():
    text = ferry.save_json(balanced(4))
    assert "ferry_pickle" not in text and "/" not in text


def test_a_fresh_process_loads_the_libraries_a_pickle_needs():
    tree = balanced(10)
    script = """
import pickle, sys, ferry
assert ferry.get_global_func("ptest.sum", allow_missing=True) is None, "nothing loaded yet"
tree, sum_fn, scale = pickle.loads(sys.stdin.buffer.read())
print(sum_fn(tree), sum_fn(scale(tree, 2)), type(tree).__name__,
      ferry._core._library_of_type("ptest.Pair"))
"""
    data = pickle.dumps(
        (tree, ferry.get_global_func("ptest.sum"), ferry.get_global_func("ptest.scale"))
    )
    done = run_fresh(script, data)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().split() == ["45", "90", "Pair", TREE_LIB]


def test_a_global_alone_loads_its_library():
    data = pickle.dumps(ferry.get_global_func("ptest.leaf"))
    done = run_fresh(UNPICKLE.replace("repr(value)", "value(7)"), data)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().strip() == "ptest.Leaf(value=7)"


def test_a_missing_library_is_an_error_naming_it_and_the_type():
    data, path = dist_support.pickle_from_deleted_library()
    assert not os.path.exists(path)
    done = run_fresh(UNPICKLE, data)
    assert done.returncode != 0
    err = done.stderr.decode()
    assert "UnpicklingError" in err and f"'{path}'" in err and "'pmissing.Leaf'" in err, err
    assert "no such file" in err and "FERRY_LIBRARY_PATH" in err, err


def test_ferry_library_path_finds_a_library_moved_elsewhere(tmp_path):
    data, path = dist_support.pickle_from_deleted_library()
    # The build's copy has another name: link it under the recorded one in a directory listed.
    (tmp_path / os.path.basename(path)).symlink_to(dist_support.MISSING_LIB)
    done = run_fresh(UNPICKLE, data, FERRY_LIBRARY_PATH=f"/nonexistent{os.pathsep}{tmp_path}")
    assert done.returncode == 0, done.stderr.decode()
    assert "pmissing.Pair" in done.stdout.decode()


def test_turned_off_pickles_carry_and_load_nothing(monkeypatch):
    tree = balanced(4)
    with_records = pickle.dumps(tree)
    monkeypatch.setenv("FERRY_PICKLE_LIBRARIES", "0")
    assert tree.__reduce__()[1] == (ferry.save_json(tree),)
    assert ferry.get_global_func("ptest.sum").__reduce__()[0] is ferry.get_global_func
    without = pickle.dumps(tree)
    assert len(without) < len(with_records) and TREE_LIB.encode() not in without
    done = run_fresh(UNPICKLE, with_records, FERRY_PICKLE_LIBRARIES="0")
    err = done.stderr.decode()
    assert done.returncode != 0 and "FERRY_PICKLE_LIBRARIES=0" in err and TREE_LIB in err, err
    assert "'ptest.Leaf'" in err and "ferry.load_library" in err


def test_a_process_that_has_the_types_loads_nothing():
    # Already registered here (this process loaded the library): nothing is loaded again,
    # even when the recorded path does not exist on this machine.
    text = ferry.save_json(balanced(2))
    forged = ferry.container._from_json(text, (("/nowhere/libtree.so", "ptest.Leaf"),))
    assert ferry.get_global_func("ptest.sum")(forged) == 1
    with pytest.raises(pickle.UnpicklingError, match="'/nowhere/libother.so'.*no such file"):
        ferry.container._from_json(text, (("/nowhere/libother.so", "ptest.NotThere"),))
    with pytest.raises(pickle.UnpicklingError, match="did not register that type"):
        ferry.container._from_json(text, ((TREE_LIB, "ptest.NotThere"),))
    with pytest.raises(pickle.UnpicklingError, match="did not register that name"):
        ferry.registry._global_from_library("ptest.no_such_global", TREE_LIB)


@pytest.mark.parametrize(
    "value,on",
    [("0", False), ("off", False), ("false", False), ("no", False), ("1", True), ("", True)],
)
def test_the_switch_values(monkeypatch, value, on):
    monkeypatch.setenv("FERRY_PICKLE_LIBRARIES", value)
    assert ferry._core._pickle_libraries_on() is on
    assert (len(balanced(2).__reduce__()[1]) == 2) is on
