"""Python's cyclic collector and ferry.Function: a wrapper that alone holds a Function made from
a Python callable shows the collector that callable, so a cycle through it is freed; a Function
C++ also holds is never broken. docs/python.md "Reference cycles"."""

import gc
import os
import subprocess
import sys
import textwrap
import typing
import weakref

import ferry_testing  # noqa: F401  (registers test.echo)
import pytest

import ferry
from ferry import _core


class Collector:
    """The collector off except for the explicit collections a test makes."""

    def __enter__(self):
        self.was_enabled = gc.isenabled()
        gc.disable()
        gc.collect()
        return self

    def __exit__(self, *exc):
        if self.was_enabled:
            gc.enable()


def make_cycle():
    """d -> wrapper -> Function -> lambda -> closure cell -> d. A weak reference to the lambda."""
    d: dict = {}
    fn = lambda: d  # noqa: E731
    d["f"] = ferry.convert(fn)
    return weakref.ref(fn), weakref.ref(d["f"])


def test_a_cycle_through_a_converted_callable_is_collected():
    with Collector():
        callable_ref, wrapper_ref = make_cycle()
        assert callable_ref() is not None  # nothing but the collector can free it
        gc.collect()
        assert callable_ref() is None
        assert wrapper_ref() is None


def test_the_collector_sees_the_callable_only_while_the_wrapper_alone_holds_it():
    fn = lambda: 1  # noqa: E731
    f = ferry.convert(fn)
    assert gc.is_tracked(f)
    assert fn in gc.get_referents(f)
    kept = ferry.List([f])  # C++ holds the Function too
    assert fn not in gc.get_referents(f)
    del kept
    assert fn in gc.get_referents(f)
    cpp = ferry.get_global_func("test.nop")
    assert gc.get_referents(cpp) == []  # a C++ function holds nothing of Python's
    empty = ferry.Function.__new__(ferry.Function)  # no handle: traversed, nothing to see
    assert gc.is_tracked(empty) and gc.get_referents(empty) == []
    gc.collect()
    with pytest.raises(ValueError, match="not initialized"):
        empty()


def cycle_with(extra):
    """make_cycle's cycle, and what `extra(wrapper, lambda)` returns; the lambda's weak ref."""
    d: dict = {}
    fn = lambda: d  # noqa: E731
    d["f"] = ferry.convert(fn)
    return weakref.ref(fn), extra(d, fn)


def test_a_function_a_list_also_holds_is_not_broken_until_the_list_goes():
    with Collector():
        callable_ref, kept = cycle_with(lambda d, fn: ferry.List([d["f"]]))
        gc.collect()
        assert callable_ref() is not None
        assert "f" in kept[0]()  # still callable (its dict comes back as a ferry.Map)
        del kept
        gc.collect()
        assert callable_ref() is None


def test_a_function_registered_as_a_global_is_not_broken_until_it_is_removed():
    name = "pytest.gc_registered"
    echo = ferry.get_global_func("test.echo")
    with Collector():
        callable_ref, registered = cycle_with(
            lambda d, fn: _core._register_global(name, echo(d["f"]), False)
        )
        del registered  # a wrapper of its own
        gc.collect()
        try:
            assert callable_ref() is not None
            assert "f" in ferry.get_global_func(name)()
        finally:
            ferry.remove_global_func(name)
        gc.collect()
        assert callable_ref() is None


def test_a_function_held_by_several_wrappers_is_kept_until_all_but_one_go():
    echo = ferry.get_global_func("test.echo")
    with Collector():
        callable_ref, other = cycle_with(lambda d, fn: echo(d["f"]))
        gc.collect()
        assert callable_ref() is not None  # `other` holds the Function: not visited, not broken
        assert "f" in other()
        assert other is not other()["f"]  # each return of a Function is a wrapper of its own
        del other
        gc.collect()
        assert callable_ref() is None


def test_two_wrappers_inside_one_cycle_keep_it_alive_until_one_goes():
    # Documented limit: each wrapper sees a count of 2, so neither shows the collector the
    # callable. Break such a cycle by hand (here: drop one of the wrappers).
    echo = ferry.get_global_func("test.echo")
    with Collector():

        def second_wrapper(d, fn):
            d["g"] = echo(d["f"])
            return d

        callable_ref, d = cycle_with(second_wrapper)
        del d
        gc.collect()
        assert callable_ref() is not None
        callable_ref()()["g"] = None  # broken by hand
        gc.collect()
        assert callable_ref() is None


@ferry.py_class("pytest.GcHolder")
class GcHolder(ferry.Object):
    fn: typing.Optional[ferry.Object] = None


def test_a_cycle_through_a_py_class_field_must_be_broken_by_hand():
    # d -> GcHolder wrapper -> Ferry object -> Function -> lambda -> d: the Ferry object is not
    # visible to the collector (docs/python.md), so this cycle stays until a field is cleared.
    def holder(d, fn):
        d["holder"] = GcHolder(fn=d.pop("f"))
        return d["holder"]

    with Collector():
        callable_ref, held = cycle_with(holder)
        gc.collect()
        assert callable_ref() is not None
        assert "holder" in held.fn()
        held.fn = None  # broken by hand
        del held
        gc.collect()
        assert callable_ref() is None


def test_many_make_and_drop_cycles_leak_nothing():
    def churn(n):
        for _ in range(n):
            make_cycle()

    churn(1000)  # warm caches
    gc.collect()
    before = len(gc.get_objects())
    blocks = __import__("sys").getallocatedblocks()
    churn(100_000)
    gc.collect()
    assert len(gc.get_objects()) - before < 100
    assert __import__("sys").getallocatedblocks() - blocks < 1000


def test_collections_while_other_threads_make_call_and_share_functions():
    # Crash-prone if traverse and clear raced the calls: in a child process, under the leak check
    # (its exit status says no Function made from a callable outlived the run). Every cycle is
    # collected before exit: the leak check's teardown would otherwise free what is left.
    code = """
        import gc, threading, weakref, ferry

        made = []

        def cycle():
            d = {}
            fn = lambda x: (d, x)[1]
            made.append(weakref.ref(fn))
            d["f"] = ferry.convert(fn)
            d["f"].release_gil = True  # the call leaves the GIL, then the callback takes it back
            return d["f"]

        errors = []

        def worker():
            try:
                for i in range(2000):
                    f = cycle()
                    assert f(i) == i
                    shared = ferry.List([f])
                    assert shared[0](i) == i
            except BaseException as e:
                errors.append(e)

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            gc.collect()
        for t in threads:
            t.join()
        assert not errors, errors
        gc.collect()
        print(len(made), sum(r() is not None for r in made))
    """
    env = dict(os.environ, FERRY_LEAK_CHECK="1")
    if "ASAN_OPTIONS" in env:
        env["ASAN_OPTIONS"] += ":detect_leaks=0"  # Ferry's own count is under test
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0 and run.stdout == "8000 0\n", run.stdout + run.stderr
