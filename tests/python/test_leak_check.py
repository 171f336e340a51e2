"""FERRY_LEAK_CHECK=1: programs that leave Ferry objects behind fail at exit with a report by type
key; clean programs exit 0 and print nothing. Each program runs in its own interpreter."""

import ctypes
import os
import subprocess
import sys
import textwrap

import pytest

import ferry
import ferry.libinfo

HERE = os.path.dirname(os.path.abspath(__file__))


def child_env(check="1"):
    """This environment with FERRY_LEAK_CHECK=`check` (None: unset)."""
    env = dict(os.environ)
    env.pop("FERRY_LEAK_CHECK", None)
    if check is not None:
        env["FERRY_LEAK_CHECK"] = check
    if "ASAN_OPTIONS" in env:
        # Under scripts/asan_python.sh: these programs leak on purpose, and what is under test is
        # Ferry's own count and exit status, which LeakSanitizer's report would replace.
        env["ASAN_OPTIONS"] += ":detect_leaks=0"
    return env


def run(code, check="1", cwd=None):
    """Runs `code` in a fresh interpreter with FERRY_LEAK_CHECK=`check` (None: unset), in `cwd`
    (first on its sys.path: modules written there import)."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=child_env(check),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def write_modules(folder, **modules):
    for name, code in modules.items():
        (folder / f"{name}.py").write_text(textwrap.dedent(code))


def report_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("ferry:")]


def assert_runs_clean(code, stdout="", check="1", cwd=None):
    """Runs `code` as `run` does: it prints `stdout`, exits 0 and reports no leak."""
    r = run(code, check=check, cwd=cwd)
    assert r.stdout == stdout, r.stderr
    assert r.returncode == 0, r.stderr
    assert report_lines(r.stderr) == []


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
    assert_runs_clean(CLEAN, stdout="done\n")


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
    assert_runs_clean(
        """
        import ferry
        a = ferry.List([1])
        a.append(a)
        """,
        check=value,
    )


def test_a_value_other_than_0_or_1_is_named_and_turns_the_check_on():
    r = run("import ferry\n", check="yes")
    assert "FERRY_LEAK_CHECK should be 1 (on) or 0 (off), got 'yes'" in r.stderr
    assert r.returncode == 0, r.stderr
    r = run("import ferry\na = ferry.List([1])\na.append(a)\n", check="yes")
    assert r.returncode == 1, r.stderr


def test_an_atexit_hook_that_runs_after_ferrys_own_still_works_under_the_check():
    # atexit hooks run last-registered first: `late`, registered before ferry's import, runs
    # after ferry's hook. Ferry's caches are dropped only when its modules are torn down.
    assert_runs_clean(
        """
        import atexit
        def late():
            import ferry
            print(ferry.List([1, 2])[1], ferry.get_global_func("ferry.Repr") is not None)
        atexit.register(late)
        import ferry
        """,
        stdout="2 True\n",
    )


def test_callables_the_registries_hold_are_not_leaks():
    # A default factory and a registered global made from Python callables: libferry's
    # registries hold them for the process, and drop them before counting.
    assert_runs_clean(
        """
        import ferry

        @ferry.py_class("leak_test.WithFactory")
        class WithFactory(ferry.Object):
            x: int = ferry.field(default_factory=lambda: 1)

        assert WithFactory().x == 1
        ferry.register_func("leak_test.twice", lambda v: 2 * v)
        """
    )


def test_a_default_factory_that_is_a_class_of_the_package_is_not_a_leak():
    # The factory (a Function in libferry's table of the type's defaults) holds ferry.List, whose
    # methods hold ferry.container's globals: 32 Functions. libferry drops its tables only after
    # Py_Finalize, too late to free a Python object; ferry._core's teardown clears the defaults
    # of the types it registered while the interpreter can still free what they hold.
    assert_runs_clean(
        """
        import ferry

        @ferry.py_class("leak_test.Tagged")
        class Tagged(ferry.Object):
            tags: ferry.List[int] = ferry.field(default_factory=ferry.List)
            scale: float = 1.5

        t = Tagged()
        t.tags.append(1)
        made = ferry.make_node("leak_test.Tagged")  # libferry's recorded defaults
        print(list(t.tags), list(made.tags), made.scale, made.tags.same_as(t.tags))
        """,
        stdout="[1] [] 1.5 False\n",
    )


def test_a_global_registered_by_a_module_python_frees_first_is_not_a_leak(tmp_path):
    # At exit the module object goes before its globals, which the registered function holds
    # (and with them the List and the package's modules): ferry._core's teardown removes the
    # global functions made from Python callables while the interpreter can still free them.
    write_modules(
        tmp_path,
        registers="""
            import ferry
            KEPT = ferry.List([1, 2])

            @ferry.register_func("leak_test.kept")
            def kept():
                return KEPT
            """,
    )
    assert_runs_clean(
        """
        import registers, ferry
        print(len(ferry.get_global_func("leak_test.kept")()))
        """,
        stdout="2\n",
        cwd=tmp_path,
    )


def test_a_callable_freed_while_python_finalizes_releases_what_it_holds(tmp_path):
    # holder's List holds a Function made from other.g and goes while the interpreter finalizes:
    # the Function's deleter releases g there, on the finalizing thread (which holds the GIL),
    # so other's globals, which only g still holds, are freed too.
    write_modules(
        tmp_path,
        other="""
            import ferry
            W = ferry.List([1])

            def g():
                return W
            """,
        holder="""
            import ferry, other
            HELD = ferry.List([ferry.convert(other.g)])
            """,
    )
    assert_runs_clean("import holder\nprint(len(holder.HELD[0]()))\n", stdout="1\n", cwd=tmp_path)


def test_a_module_level_function_made_from_a_lambda_is_not_a_leak(tmp_path):
    # globals -> ferry.Function wrapper -> Function -> lambda -> the same globals: Python's
    # collector does not see the middle link, so the Function was reported at exit. The teardown
    # releases a Function that only its wrapper holds.
    assert_runs_clean(
        """
        import ferry
        fn = ferry.convert(lambda v: v + 1)
        print(fn(1))
        """,
        stdout="2\n",
    )
    write_modules(
        tmp_path,
        made="""
            import ferry

            def g(v):
                return FNS[0](v) * 2

            FNS = [ferry.convert(lambda v: v + 1), ferry.convert(g)]
            ON_CLASS = type("C", (), {"f": ferry.convert(lambda: ON_CLASS.__name__)})
            BY_KEY = {"f": ferry.convert(lambda: len(BY_KEY))}
            """,
    )
    assert_runs_clean(
        """
        import atexit, made
        atexit.register(lambda: print(made.FNS[1](2)))  # still callable in an atexit hook
        print(made.FNS[1](1), made.ON_CLASS.f(), made.BY_KEY["f"]())
        """,
        stdout="4 C 1\n6\n",
        cwd=tmp_path,
    )


def test_a_function_a_ferry_object_also_holds_is_still_reported(tmp_path):
    # The wrapper is not the Function's only holder: the List (kept by the lambda's globals) is
    # a cycle through Ferry's containers, which the teardown leaves to the report.
    r = run(
        """
        import ferry
        fn = ferry.convert(lambda: HELD)
        HELD = ferry.List([fn])
        """
    )
    assert r.returncode == 1, r.stderr
    assert "1 Function(s) made from Python callables alive at exit" in r.stderr
    lines = report_lines(r.stderr)
    assert any(line.split()[2:] == ["ferry.List"] for line in lines), lines


def test_a_cycle_through_a_module_level_callable_is_still_reported(tmp_path):
    # HELD -> Function -> g -> g's module globals -> HELD: Python's collector cannot see the
    # middle link, so nothing ever frees the cycle. The teardown drops only what libferry's
    # tables hold; this stays a leak.
    write_modules(
        tmp_path,
        cyclic="""
            import ferry

            def g():
                return HELD

            HELD = ferry.List([ferry.convert(g)])
            """,
    )
    r = run("import cyclic\n", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert "1 Function(s) made from Python callables alive at exit" in r.stderr
    lines = report_lines(r.stderr)
    assert any(line.split()[2:] == ["ferry.List"] for line in lines), lines


def test_this_suite_runs_with_the_check_on():
    # tests/python/conftest.py sets the variable before anything loads libferry: this process
    # counts (libferry read it as it loaded) and every child started with os.environ does too.
    assert os.environ["FERRY_LEAK_CHECK"] != "", "conftest.py sets FERRY_LEAK_CHECK"
    lib = ctypes.CDLL(ferry.libinfo.lib_path())
    on = ctypes.c_int32(-1)
    assert lib.FerryLeakCheckEnabled(ctypes.byref(on)) == 0
    assert on.value == (0 if os.environ["FERRY_LEAK_CHECK"] == "0" else 1)


SESSION_CONFTEST = """
import os

os.environ.setdefault("FERRY_LEAK_CHECK", "1")  # as tests/python/conftest.py does
"""


def run_pytest_session(tmp_path, test_code):
    """Runs pytest over one test file in a child whose conftest.py turns the check on the way the
    suite's does (the variable is not in its environment)."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(SESSION_CONFTEST)
    (tmp_path / "test_session.py").write_text(textwrap.dedent(test_code))
    return subprocess.run(
        [sys.executable, "-m", "pytest", "test_session.py", "-q", "-p", "no:cacheprovider"],
        env=child_env(check=None),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_pytest_session_whose_tests_pass_but_leak_exits_non_zero(tmp_path):
    # pytest ends with sys.exit(0); the report runs after Py_Finalize, in exit(), and replaces
    # the status with 1: a leak turns the run red though every test passed.
    r = run_pytest_session(
        tmp_path,
        """
        import ferry

        @ferry.py_class("leak_session.Node")
        class Node(ferry.Object):
            items: ferry.List

        def test_passes_and_leaks_a_cycle():
            n = Node(items=ferry.List([]))
            n.items.append(n)
        """,
    )
    assert "1 passed" in r.stdout, r.stdout + r.stderr
    assert r.returncode == 1, r.stdout + r.stderr
    lines = report_lines(r.stderr)
    assert ["ferry:", "1", "leak_session.Node"] in [line.split() for line in lines], lines
    assert ["ferry:", "1", "ferry.List"] in [line.split() for line in lines], lines
    assert "ferry: leak check failed: " in r.stderr


def test_a_pytest_session_that_leaks_nothing_exits_zero(tmp_path):
    r = run_pytest_session(
        tmp_path,
        """
        import ferry

        @ferry.py_class("leak_session.Tagged")
        class Tagged(ferry.Object):
            tags: ferry.List[int] = ferry.field(default_factory=ferry.List)

        def test_passes_without_a_leak():
            t = Tagged()
            t.tags.append(1)
            assert list(t.tags) == [1]
        """,
    )
    assert "1 passed" in r.stdout, r.stdout + r.stderr
    assert r.returncode == 0, r.stdout + r.stderr
    assert report_lines(r.stderr) == []
