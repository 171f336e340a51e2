"""Shared fixtures of the Python tests; the support library is loaded by ferry_testing.

The suite runs with the leak check on (docs/python.md "Leak check"): set here, before anything
loads libferry (which reads the variable once, as it loads), it covers this pytest process, whose
exit status becomes 1 if Ferry objects or wrappers are left at exit, and every child process a
test starts with this environment. FERRY_LEAK_CHECK=0 in the environment turns it off.
"""

import os

os.environ.setdefault("FERRY_LEAK_CHECK", "1")

import ferry_testing  # noqa: F401  (loads the support library, registers the classes)
import pytest

import ferry


@pytest.fixture
def f():
    """The registered global functions of the support library, as attributes: f.echo(x)."""

    class Funcs:
        def __getattr__(self, name):
            return ferry.get_global_func("test." + name)

    return Funcs()
