"""Ferry objects and registered Functions sent to multiprocessing (spawn, forkserver) and
concurrent.futures.ProcessPoolExecutor workers that have no initializer: the pickles load the
tree library (tests/python/support/pickle_module.cc) in the worker. One pool of one worker per
kind for the whole module; every wait has a timeout."""

import concurrent.futures
import multiprocessing
import os
import pickle

import dist_support
import pytest
from dist_support import call, echo, run_pickled, tree_sum, unpickle

import ferry

balanced = dist_support.load_tree_library()
TREE_LIB = os.path.realpath(dist_support.TREE_LIB)
TIMEOUT = 120  # seconds; a hung worker fails the test instead of the CI job


class Pool:
    """One worker of one kind: call(fn, *args) and map(fn, items), both with timeouts."""

    def __init__(self, kind):
        self.kind = kind
        if kind == "ProcessPoolExecutor":
            self.executor = concurrent.futures.ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn")
            )
        else:
            self.pool = multiprocessing.get_context(kind).Pool(processes=1)

    def call(self, fn, *args):
        if self.kind == "ProcessPoolExecutor":
            return self.executor.submit(fn, *args).result(timeout=TIMEOUT)
        return self.pool.apply_async(fn, args).get(timeout=TIMEOUT)

    def map(self, fn, items):
        if self.kind == "ProcessPoolExecutor":
            return list(self.executor.map(fn, items, timeout=TIMEOUT))
        return self.pool.map_async(fn, items).get(timeout=TIMEOUT)

    def close(self):
        if self.kind == "ProcessPoolExecutor":
            self.executor.shutdown(wait=True, cancel_futures=True)
        else:
            self.pool.terminate()
            self.pool.join()


@pytest.fixture(scope="module", params=["spawn", "forkserver", "ProcessPoolExecutor"])
def pool(request):
    made = Pool(request.param)
    try:
        yield made
    finally:
        made.close()


# First in the module, so it runs first in each fresh worker.
def test_a_fresh_worker_loads_the_library_from_the_pickle(pool):
    tree = balanced(10)
    data = pickle.dumps((ferry.get_global_func("ptest.sum"), (tree,)))
    before, total, library = pool.call(run_pickled, data)
    assert before is False, "the worker had the library before it unpickled anything"
    assert total == 45 and library == TREE_LIB


def test_objects_travel_both_ways(pool):
    tree = balanced(6)
    back = pool.call(echo, ferry.Array([tree, ferry.Map({"same": tree})]))
    assert ferry.structural_equal(back[0], tree)
    assert back[1]["same"].same_as(back[0]), "sharing kept across the round trip"


def test_a_cpp_pass_runs_in_the_worker_on_objects_built_here(pool):
    tree = balanced(5)  # leaves 0..4
    scaled = pool.call(call, ferry.get_global_func("ptest.scale"), tree, 10)
    assert type(scaled).__name__ == "Pair"
    assert ferry.get_global_func("ptest.sum")(scaled) == 100
    assert pool.map(tree_sum, [balanced(n) for n in range(1, 9)]) == [
        n * (n - 1) // 2 for n in range(1, 9)
    ]


def test_a_missing_library_in_the_worker_is_an_error_naming_it(pool):
    data, path = dist_support.pickle_from_deleted_library()
    with pytest.raises(pickle.UnpicklingError) as info:
        pool.call(unpickle, data)
    message = str(info.value)
    assert f"'{path}'" in message and "'pmissing.Leaf'" in message and "no such file" in message
    assert pool.call(echo, 5) == 5, "the worker survives"


def test_an_unregistered_function_is_a_pickling_error_here(pool, f):
    adder = f.make_adder(1)
    with pytest.raises(pickle.PicklingError, match="not registered as a global"):
        pool.call(call, adder, 2)
    assert pool.call(echo, 6) == 6


def test_an_unpicklable_python_callable_fails_as_it_would(pool):
    fn = ferry.convert(lambda x: x + 1)
    with pytest.raises((pickle.PicklingError, AttributeError), match="lambda"):
        pool.call(call, fn, 1)
    assert pool.call(call, ferry.convert(dist_support.pid), None) != os.getpid()


def test_an_argument_a_worker_cannot_unpickle_is_no_task_error_in_stdlib_pools():
    # What docs/distributed.md warns about: the standard library's pools lose the worker
    # instead of failing the task (hence: send bytes and unpickle in the task, and timeouts).
    data, _ = dist_support.pickle_from_deleted_library()
    gone = pickle.loads(data)  # fine here: this process still has the library mapped
    spawn = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=spawn) as executor:
        with pytest.raises(concurrent.futures.process.BrokenProcessPool):
            executor.submit(echo, gone).result(timeout=TIMEOUT)
    pool = spawn.Pool(processes=1)
    try:
        with pytest.raises(multiprocessing.TimeoutError):
            pool.apply_async(echo, (gone,)).get(timeout=2)
    finally:
        pool.terminate()
        pool.join()
