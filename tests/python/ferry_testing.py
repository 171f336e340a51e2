"""The test-support library of the Python tests, loaded, and Python classes for its nodes.

Tests import this module by name (`from ferry_testing import IntImm`), so that pickling and
multiprocessing workers find the classes. scripts/test.sh builds the library
(FERRY_BUILD_PYTHON=ON) in build/, or in the build tree FERRY_BUILD_DIR names (the one whose
extension `import ferry` takes); FERRY_TESTING_LIB may point at another build of it.
"""

import os
import pathlib

import ferry

ROOT = pathlib.Path(__file__).resolve().parents[2]
#: The build tree under test: its libferry and extension are the ones this process uses.
BUILD = pathlib.Path(os.environ.get("FERRY_BUILD_DIR") or ROOT / "build")
TESTING_LIB = pathlib.Path(
    os.environ.get("FERRY_TESTING_LIB", BUILD / "tests" / "python" / "ferry_testing.so")
)

if not TESTING_LIB.exists():
    raise RuntimeError(
        f"the test-support library {TESTING_LIB} is missing: build with scripts/test.sh "
        "(or set FERRY_TESTING_LIB)"
    )
ferry.load_library(TESTING_LIB)


@ferry.register_object("test.Expr")
class Expr(ferry.Object):
    def __add__(self, other):
        return ferry.get_global_func("test.Add")(self, other)


@ferry.register_object("test.IntImm")
class IntImm(Expr):
    def __init__(self, value):
        self.__init_handle_by_constructor__(ferry.get_global_func("test.IntImm"), value)


@ferry.register_object("test.Var")
class Var(Expr):
    def __init__(self, name):
        self.__init_handle_by_constructor__(ferry.get_global_func("test.Var"), name)


@ferry.register_object("test.Add")
class Add(Expr):
    pass


@ferry.register_object("test.Mutable")
class Mutable(ferry.Object):
    """A C++ node with writable fields; py_class tests derive from it."""
