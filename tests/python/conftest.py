"""Shared fixtures of the Python tests; the support library is loaded by ferry_testing."""

import os

# The leak check (docs/python.md, "Leak check") is on for the whole run and for every
# subprocess a test starts: set before the first import of ferry loads libferry, which reads it
# once. FERRY_LEAK_CHECK=0 in the environment turns it off.
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
