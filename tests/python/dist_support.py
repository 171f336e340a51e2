"""Helpers of the tests across processes (test_pickle_libraries.py, test_multiprocessing.py,
test_dask.py), importable by worker processes.

Importing this module loads no library: a worker gets the tree library
(ferry_pickle_ptest.so, tests/python/support/pickle_module.cc) only from the pickles it
receives. The test process loads it with `load_tree_library()`.
"""

import os
import pathlib
import pickle
import shutil
import tempfile

import ferry

ROOT = pathlib.Path(__file__).resolve().parents[2]
# Next to the test-support library (FERRY_TESTING_LIB points at another build's, e.g. ASan's).
LIB_DIR = (
    pathlib.Path(os.environ["FERRY_TESTING_LIB"]).parent
    if "FERRY_TESTING_LIB" in os.environ
    else pathlib.Path(os.environ.get("FERRY_BUILD_DIR") or ROOT / "build") / "tests" / "python"
)
TREE_LIB = LIB_DIR / "ferry_pickle_ptest.so"
#: The same library under the namespace "pmissing": loaded only from a deleted copy.
MISSING_LIB = LIB_DIR / "ferry_pickle_pmissing.so"


def load_tree_library():
    """Loads the tree library into this process (the test process, never a worker)."""
    if not TREE_LIB.exists():
        raise RuntimeError(f"{TREE_LIB} is missing: build with scripts/test.sh")
    ferry.load_library(TREE_LIB)
    return ferry.get_global_func("ptest.balanced")


_missing = {}


def pickle_from_deleted_library():
    """(pickle of a pmissing tree, the path its library was loaded from): the library is copied
    to a temporary directory, loaded from there and deleted, so no other process finds it.
    Made once per process (a library cannot be loaded twice from two paths)."""
    if not _missing:
        tmp = tempfile.mkdtemp(prefix="ferry-missing-")
        copy = os.path.join(tmp, "libferry_gone.so")
        shutil.copy(MISSING_LIB, copy)
        try:
            ferry.load_library(copy)
            tree = ferry.get_global_func("pmissing.balanced")(3)
            _missing["data"] = pickle.dumps(ferry.Array([tree]))
            _missing["path"] = os.path.realpath(copy)
        finally:
            shutil.rmtree(tmp)
    return _missing["data"], _missing["path"]


# ---- tasks run in workers (module-level, so they pickle by reference) ----------------------


def call(f, *args):
    """Calls a pickled Function (a registered global or a Python callable) in the worker."""
    return f(*args)


def class_pickle_of_result(f, *args):
    """The pickle of the class of ``f(*args)``, made as distributed makes it when it reports a
    task's result type (distributed.protocol.pickle.dumps: pickle, then cloudpickle)."""
    from distributed.protocol import pickle as dask_pickle

    return dask_pickle.dumps(type(f(*args)))


def loaded_types(*keys):
    """Which of the type keys this worker has registered."""
    return [ferry.registry._type_known(k) for k in keys]


def tree_sum(tree):
    """The C++ pass ptest.sum on a tree that came in a pickle (the worker loaded the library
    from that pickle, so the global is there)."""
    return ferry.get_global_func("ptest.sum")(tree)


def unpickle(data):
    """Unpickles bytes in the worker (to see what happens there, errors included)."""
    return pickle.loads(data)


def echo(value):
    return value


def pid(_=None):
    return os.getpid()


def run_pickled(data):
    """Unpickles ``(function, args)`` in the worker and calls it; also says whether the tree
    library was loaded before (it must not be, in a fresh worker) and where it came from."""
    before = ferry.registry._type_known("ptest.Leaf")
    f, args = pickle.loads(data)
    return before, f(*args), ferry._core._library_of_type("ptest.Leaf")


def sum_and_handle(tree, offset):
    """The tree's sum plus `offset`, and the address of the tree object in this worker (the
    same address in every task shows a scattered object was unpickled once)."""
    return ferry.get_global_func("ptest.sum")(tree) + offset, (os.getpid(), tree.__ferry_handle__)
