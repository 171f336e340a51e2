"""FERRY_LEAK_CHECK=1: programs that leave Ferry objects behind fail at exit with a report by type
key; clean programs exit 0 and print nothing. Each program runs in its own interpreter."""

import os
import subprocess
import sys
import textwrap

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def run(code, check="1"):
    """Runs `code` in a fresh interpreter with FERRY_LEAK_CHECK=`check` (None: unset)."""
    env = dict(os.environ)
    env.pop("FERRY_LEAK_CHECK", None)
    if check is not None:
        env["FERRY_LEAK_CHECK"] = check
    if "ASAN_OPTIONS" in env:
        # Under scripts/asan_python.sh: these programs leak on purpose, and what is under test is
        # Ferry's own count and exit status, which LeakSanitizer's report would replace.
        env["ASAN_OPTIONS"] += ":detect_leaks=0"
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def report_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("ferry:")]


CLEAN = """
    import ferry
    x = ferry.List([1, "two", ferry.Map({"k": 3})])
    f = ferry.convert(lambda v: v + 1)
    assert f(1) == 2
    ferry.register_func("leak_test.inc", lambda v: v + 1)
    assert ferry.get_global_func("leak_test.inc")(2) == 3
    del x, f
    print("done")
"""


def test_a_clean_program_exits_zero_and_prints_no_report():
    r = run(CLEAN)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "done\n"
    assert report_lines(r.stderr) == []


def test_a_cycle_of_ferry_objects_fails_the_exit_naming_its_type_and_count():
    r = run(
        """
        import ferry
        a = ferry.List([1])
        b = ferry.List([a])
        a.append(b)   # a -> b -> a: reference counts never reach zero
        del a, b
        print("done")
        """
    )
    assert r.stdout == "done\n"  # the program itself ran to its end
    assert r.returncode == 1, r.stderr
    lines = report_lines(r.stderr)
    assert "ferry: leak check: Ferry objects alive at exit, by type key:" in lines
    assert any(line.split() == ["ferry:", "2", "ferry.List"] for line in lines), lines
    assert "ferry: leak check failed: " in r.stderr
    assert "exiting with status 1" in r.stderr
    assert "Python wrappers" not in r.stderr  # the wrappers were freed; only the cycle is left


def test_a_leaked_wrapper_and_python_callable_function_are_reported():
    # A Function made from a lambda, stored in a List the lambda's own globals hold: the cycle
    # runs through Ferry, where Python's garbage collector cannot see it.
    r = run(
        """
        import ferry
        keep = ferry.List([])
        keep.append(ferry.convert(lambda: keep))
        """
    )
    assert r.returncode == 1, r.stderr
    assert "ferry: leak check: Python wrappers alive at exit, by type key:" in r.stderr
    assert "Function(s) made from Python callables alive at exit" in r.stderr
    lines = report_lines(r.stderr)
    assert any(line.split() == ["ferry:", "1", "ferry.List"] for line in lines), lines


def test_an_object_leaked_through_the_c_abi_is_reported():
    r = run(
        """
        import ctypes
        import ferry, ferry.libinfo
        lib = ctypes.CDLL(ferry.libinfo.lib_path())
        out = ctypes.c_void_p()
        assert lib.FerryStringCreate(b"leaked on purpose", 17, ctypes.byref(out)) == 0
        # no FerryObjectDecRef: the reference is lost
        """
    )
    assert r.returncode == 1, r.stderr
    lines = report_lines(r.stderr)
    assert any(line.split() == ["ferry:", "1", "ferry.String"] for line in lines), lines


def test_a_py_class_instance_kept_in_a_cycle_is_reported_by_its_type_key():
    r = run(
        """
        import ferry
        @ferry.py_class("leak_test.Node")
        class Node(ferry.Object):
            items: ferry.List
        n = Node(items=ferry.List([]))
        n.items.append(n)
        del n
        """
    )
    assert r.returncode == 1, r.stderr
    lines = report_lines(r.stderr)
    assert any(line.split() == ["ferry:", "1", "leak_test.Node"] for line in lines), lines


@pytest.mark.parametrize("value", [None, "", "0"])
def test_the_check_is_off_unless_asked_for(value):
    r = run(
        """
        import ferry
        a = ferry.List([1])
        a.append(a)
        """,
        check=value,
    )
    assert r.returncode == 0, r.stderr
    assert report_lines(r.stderr) == []


def test_a_value_other_than_0_or_1_is_named_and_turns_the_check_on():
    r = run("import ferry\n", check="yes")
    assert "FERRY_LEAK_CHECK should be 1 (on) or 0 (off), got 'yes'" in r.stderr
    assert r.returncode == 0, r.stderr
    r = run("import ferry\na = ferry.List([1])\na.append(a)\n", check="yes")
    assert r.returncode == 1, r.stderr


def test_an_atexit_hook_that_runs_after_ferrys_own_still_works_under_the_check():
    # atexit hooks run last-registered first: `late`, registered before ferry's import, runs
    # after ferry's hook. Ferry's caches are dropped only when its modules are torn down.
    r = run(
        """
        import atexit
        def late():
            import ferry
            print(ferry.List([1, 2])[1], ferry.get_global_func("ferry.Repr") is not None)
        atexit.register(late)
        import ferry
        """
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout == "2 True\n"
    assert report_lines(r.stderr) == []


def test_callables_the_registries_hold_are_not_leaks():
    # A default factory and a registered global made from Python callables: libferry's
    # registries hold them for the process, and drop them before counting.
    r = run(
        """
        import ferry

        @ferry.py_class("leak_test.WithFactory")
        class WithFactory(ferry.Object):
            x: int = ferry.field(default_factory=lambda: 1)

        assert WithFactory().x == 1
        ferry.register_func("leak_test.twice", lambda v: 2 * v)
        """
    )
    assert r.returncode == 0, r.stderr
    assert report_lines(r.stderr) == []
