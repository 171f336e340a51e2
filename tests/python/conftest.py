"""Shared fixtures of the Python tests; the support library is loaded by ferry_testing."""

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
