"""Ferry on Dask: a distributed.LocalCluster of 2 worker processes (1 thread each) and a
Client, started once for the module and always closed. The workers get no set-up: the tree
library (tests/python/support/pickle_module.cc) reaches them inside the pickles of the objects
and functions sent to them. Every wait has a timeout, so a broken cluster fails the tests
instead of hanging them."""

import logging
import pickle
import subprocess
import sys

import dist_support
import distributed  # a test dependency: scripts/setup.sh installs it
import pytest
from dist_support import (
    call,
    class_pickle_of_result,
    echo,
    loaded_types,
    sum_and_handle,
    tree_sum,
    unpickle,
)

import ferry

balanced = dist_support.load_tree_library()
TIMEOUT = 60  # seconds for any one wait


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
    )
    try:
        with distributed.Client(cluster, timeout=TIMEOUT) as made:
            made.wait_for_workers(2, timeout=TIMEOUT)
            yield made
    finally:
        cluster.close(timeout=TIMEOUT)


def gather(client, futures):
    distributed.wait(futures, timeout=TIMEOUT)
    return client.gather(futures)


def test_workers_start_without_the_library(client):
    # First in the module: nothing has been sent to the workers yet.
    states = client.run(loaded_types, "ptest.Leaf", "ptest.Pair")
    assert len(states) == 2 and all(s == [False, False] for s in states.values())


def test_submit_and_map_over_ferry_objects(client):
    tree = balanced(10)
    assert client.submit(tree_sum, tree).result(timeout=TIMEOUT) == 45
    trees = [balanced(n) for n in range(1, 21)]
    sums = gather(client, client.map(tree_sum, trees))
    assert sums == [n * (n - 1) // 2 for n in range(1, 21)]
    # Both workers took part, and each loaded the library from the pickles it received.
    states = client.run(loaded_types, "ptest.Leaf")
    assert all(s == [True] for s in states.values())


def test_objects_come_back(client):
    tree = balanced(6)
    back = client.submit(echo, ferry.Array([tree, ferry.Map({"t": tree})]), pure=False).result(
        timeout=TIMEOUT
    )
    assert ferry.structural_equal(back[0], tree) and back[1]["t"].same_as(back[0])


def test_objects_of_classes_made_on_first_sight_come_back_with_no_serialization_error(client):
    # A worker pickles the class of each result too (distributed's task metadata): a class made
    # on first sight (ferry.auto.ptest.Pair) pickles by reference, so no "Failed to serialize".
    made = client.submit(call, balanced, 5, pure=False).result(timeout=TIMEOUT)
    assert type(made) is type(balanced(5)) and type(made).__module__ == "ferry.auto"
    assert ferry.get_global_func("ptest.sum")(made) == 10
    data = client.submit(class_pickle_of_result, balanced, 5, pure=False).result(timeout=TIMEOUT)
    assert pickle.loads(data) is type(made)


def test_a_cpp_pass_runs_in_the_workers_on_objects_built_here(client):
    scale = ferry.get_global_func("ptest.scale")  # a registered global: pickled by name
    trees = [balanced(n) for n in range(2, 12)]
    scaled = gather(client, client.map(call, [scale] * len(trees), trees, [3] * len(trees)))
    total = ferry.get_global_func("ptest.sum")
    assert [total(t) for t in scaled] == [3 * n * (n - 1) // 2 for n in range(2, 12)]
    assert all(type(t).__name__ == "Pair" for t in scaled)


def test_a_large_object_scattered_once_serves_many_tasks(client):
    big = balanced(20_000)  # 39,999 nodes
    [remote] = client.scatter([big], broadcast=True)
    futures = [client.submit(sum_and_handle, remote, k, pure=False) for k in range(40)]
    results = gather(client, futures)
    expected = 20_000 * 19_999 // 2
    assert [r[0] for r in results] == [expected + k for k in range(40)]
    copies = {r[1] for r in results}
    assert len({pid for pid, _ in copies}) == 2, "both workers used it"
    assert len(copies) == 2, "one copy per worker, unpickled once, not once per task"


def test_errors_reach_the_client(client, f):
    data, path = dist_support.pickle_from_deleted_library()
    with pytest.raises(pickle.UnpicklingError, match=f"'pmissing.Leaf'.*'{path}'.*no such file"):
        client.submit(unpickle, data).result(timeout=TIMEOUT)
    # Dask reports a pickling failure as "Could not serialize object", caused by ours.
    with pytest.raises(Exception) as info:
        client.submit(call, f.make_adder(1), 2).result(timeout=TIMEOUT)
    causes = []
    error = info.value
    while error is not None:
        causes.append(error)
        error = error.__cause__ or error.__context__
    assert any(
        isinstance(e, pickle.PicklingError) and "not registered as a global" in str(e)
        for e in causes
    ), causes
    assert client.submit(echo, 7).result(timeout=TIMEOUT) == 7


def test_dask_names_tasks_after_the_contents_of_ferry_objects():
    # What docs/distributed.md says about pure=True: equal contents, one key (no cluster needed).
    from dask.base import tokenize

    assert tokenize(balanced(8)) == tokenize(balanced(8))
    assert tokenize(balanced(8)) != tokenize(balanced(9))


MAIN_SCRIPT = """
import logging
import distributed
import ferry


@ferry.py_class("pydask.Point")
class Point(ferry.Object):
    x: int
    y: float = 0.0


def shift(p, by):
    return Point(p.x + by, p.y)


if __name__ == "__main__":
    with (
        distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                 dashboard_address=None, silence_logs=logging.ERROR) as cluster,
        distributed.Client(cluster, timeout=60) as client,
    ):
        back = client.submit(shift, Point(1, 2.5), 2).result(timeout=60)
        print("back", type(back) is Point, back.x, back.y)
"""


def test_a_py_class_defined_in_main_travels_to_a_worker_and_back(tmp_path):
    # Dask sends the class by value (cloudpickle); the worker registers it under its key.
    script = tmp_path / "main_dask.py"
    script.write_text(MAIN_SCRIPT)
    run = subprocess.run(
        [sys.executable, str(script)], capture_output=True, timeout=300, cwd=tmp_path
    )
    assert run.stdout.decode().strip() == "back True 3 2.5", run.stderr.decode()
    assert "Failed to serialize" not in run.stderr.decode(), run.stderr.decode()
