"""ferry.load_library is all or nothing: a library whose registrations fail raises a RuntimeError
and leaves nothing of itself callable. Each case runs in a fresh interpreter (a subprocess with
a timeout), since a regression here used to terminate the process from a static initializer."""

import os
import pathlib
import shutil
import subprocess
import sys

from ferry_testing import BUILD

import ferry

# The test libraries of the build under test (scripts/asan_python.sh points at build-asan/).
MODULES = pathlib.Path(os.environ.get("FERRY_TEST_MODULE_DIR", BUILD / "tests" / "modules"))
# The subprocesses import the same ferry package as this process.
PACKAGE_ROOT = pathlib.Path(ferry.__file__).resolve().parents[1]


def run_python(script, **extra_env):
    env = dict(os.environ, **extra_env)
    env["PYTHONPATH"] = str(PACKAGE_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )


def test_a_type_key_registered_with_another_parent_is_a_runtime_error():
    script = f"""
import ferry
ferry.load_library({str(MODULES / "good_module.so")!r})
# good_module registers its counter's type at the first counter it makes.
counter = ferry.get_global_func("testing.module.make_counter")(5)
for attempt in range(2):
    try:
        ferry.load_library({str(MODULES / "conflict_parent_module.so")!r})
    except RuntimeError as e:
        print("ERROR", e)
    else:
        raise SystemExit("the load succeeded")
names = ferry.list_global_func_names()
print("LEFT", sorted(n for n in names if n.startswith("testing.conflict.")))
print("COUNTER", ferry.get_global_func("testing.module.counter_value")(counter))
"""
    out = run_python(script)
    assert out.returncode == 0, out.stderr
    errors = [line for line in out.stdout.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 2 and errors[0] == errors[1], out.stdout
    for part in (
        "'testing.module.Counter'",
        "'ferry.Object'",
        "'testing.conflict.Base'",
        "conflict_parent_module.so",
    ):
        assert part in errors[0], errors[0]
    assert "LEFT []" in out.stdout
    assert "COUNTER 5" in out.stdout


def test_a_registration_that_throws_leaves_nothing_of_the_library():
    script = f"""
import ferry
for attempt in range(2):
    try:
        ferry.load_library({str(MODULES / "throwing_module.so")!r})
    except RuntimeError as e:
        print("ERROR", e)
print("LEFT", sorted(n for n in ferry.list_global_func_names() if n.startswith("testing.throwing.")))
try:
    ferry.get_global_func("ferry.NodeFields")("testing.throwing.Exploding")
except ValueError as e:
    print("NODE", e)
"""
    out = run_python(script)
    assert out.returncode == 0, out.stderr
    errors = [line for line in out.stdout.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 2 and "ExplodingNode refuses to be built" in errors[0], out.stdout
    assert "LEFT []" in out.stdout
    assert "NODE no node type is registered as 'testing.throwing.Exploding'" in out.stdout


def test_cpp_threads_calling_python_while_the_interpreter_exits_do_not_abort():
    # Detached C++ threads call a Python callback in a loop (some inside time.sleep, with the GIL
    # released) while the main thread returns and the interpreter finalizes. A call that starts
    # then fails with an error; one that was inside Python is ended by CPython's thread exit,
    # which must unwind through Ferry's frames. This aborted with "FATAL: exception not
    # rethrown" in 3 runs of 3.
    script = f"""
import time
import ferry
ferry.load_library({str(MODULES / "background_caller_module.so")!r})
def callback():
    time.sleep(0.0005)
ferry.get_global_func("testing.background.start")(callback, 4)
ferry.get_global_func("testing.background.start")(lambda: None, 2)
time.sleep(0.05)
print("main done")
"""
    for _ in range(3):
        # Without the leak check: the threads still run, and hold their callbacks, at exit.
        out = run_python(script, FERRY_LEAK_CHECK="0")
        assert out.returncode == 0, out.stderr
        assert "main done" in out.stdout
        assert "FATAL" not in out.stderr and "terminate" not in out.stderr, out.stderr
        for line in out.stderr.splitlines():
            assert (
                line.startswith("background call failed: RuntimeError: ") and "finaliz" in line
            ), out.stderr


def test_a_library_built_for_another_abi_is_an_import_error_before_any_of_it_runs():
    # Built against copies of include/ (tests/CMakeLists.txt): one with FERRY_ABI_VERSION raised,
    # one whose FunctionObj has a field more.
    script = f"""
import os
import ferry
for name in ("abi_bumped_module.so", "abi_layout_module.so"):
    path = {str(MODULES)!r} + "/" + name
    try:
        ferry.load_library(path)
    except ImportError as e:
        assert isinstance(e, RuntimeError) and isinstance(e, ferry.AbiMismatchError), type(e)
        assert name in str(e) and "running libferry is ABI version" in str(e), str(e)
        assert "layout fingerprint" in str(e) and "rebuild it" in str(e), str(e)
    else:
        raise AssertionError("loaded " + name)
    assert "FERRY_TEST_ABI_MODULE_RAN" not in os.environ, "its initializer ran"
    assert ferry.get_global_func("testing.abi.version", allow_missing=True) is None
ferry.load_library({str(MODULES / "abi_module.so")!r})
assert ferry.get_global_func("testing.abi.version")() >= 1
ferry.load_library({str(MODULES / "plain_c_module.so")!r})  # C, no record: loads
assert ferry.get_global_func("testing.plain_c.answer")() == 42
print("ok")
"""
    result = run_python(script)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_unload_library_removes_registrations_and_closes_after_the_last_object(tmp_path):
    path = tmp_path / "libunload.so"
    shutil.copy(MODULES / "unload_module_v1.so", path)
    script = f"""
import time
import ferry
path = {str(path.resolve())!r}
def mapped():  # its code, that is: libbacktrace may keep a read-only map of the file
    with open("/proc/self/maps") as maps:
        return any(path in line and "x" in line.split()[1] for line in maps)
ferry.load_library(path)
add3 = ferry.get_global_func("testing.unload.adder")(3)
box = ferry.get_global_func("testing.unload.make_box")(5)
ferry.unload_library(path)
try:
    ferry.get_global_func("testing.unload.make_box")
except Exception as e:
    assert "testing.unload.make_box" in str(e), str(e)
else:
    raise AssertionError("still registered")
assert add3(4) == 7 and mapped()
try:
    ferry.unload_library(path)
except RuntimeError as e:
    assert path in str(e) and "no library of that path was loaded" in str(e), str(e)
else:
    raise AssertionError("unloaded twice")
del add3, box
for _ in range(6000):
    if not mapped():
        break
    time.sleep(0.01)
assert not mapped(), "never closed"
print("ok")
"""
    result = run_python(script)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
