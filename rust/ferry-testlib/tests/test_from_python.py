"""A Ferry library written in Rust (rust/ferry-testlib, a cdylib) used from Python.

Run by the `rust` stage of scripts/test.sh:

    FERRY_BUILD_DIR=$PWD/build PYTHONPATH=$PWD/python python3 -m pytest rust/ferry-testlib/tests

The library is built here with cargo against FERRY_BUILD_DIR's libferry (the one `ferry._core`
uses: one process, one registry).
"""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import ferry

RUST = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("FERRY_BUILD_DIR", RUST.parent / "build"))


@pytest.fixture(scope="module")
def library():
    cargo = shutil.which("cargo") or str(pathlib.Path.home() / ".cargo" / "bin" / "cargo")
    env = dict(os.environ, FERRY_DIR=str(BUILD))
    result = subprocess.run(
        [cargo, "build", "--locked", "-p", "ferry-testlib"],
        cwd=RUST,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, f"cargo build failed:\n{result.stderr[-4000:]}"
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", RUST / "target"))
    path = target / "debug" / "libferry_testlib.so"
    assert path.exists(), path
    ferry.load_library(str(path))
    return path


def test_globals_of_a_rust_library(library):
    add = ferry.get_global_func("rs_lib.add")
    assert add(1, 2) == 3
    assert ferry.get_global_func("rs_lib.type_key")(ferry.Array([1])) == "ferry.Array"
    with pytest.raises(TypeError, match=r"Mismatched type on argument 1 when calling"):
        add(1, "two")


def test_a_python_callback_passed_into_rust(library):
    call = ferry.get_global_func("rs_lib.call")
    assert call(lambda x: x * 10, 4) == 41

    class MyError(Exception):
        pass

    raised = MyError("from the callback")

    def fails(x):
        raise raised

    with pytest.raises(MyError) as info:
        call(fails, 1)
    assert info.value is raised  # through Rust and back: the very same exception


def test_rust_errors_and_panics_reach_python(library):
    with pytest.raises(ValueError, match="^bad thing$"):
        ferry.get_global_func("rs_lib.fail")("bad thing")
    with pytest.raises(RuntimeError, match="a Rust function panicked: oops"):
        ferry.get_global_func("rs_lib.panic")("oops")
    assert ferry.get_global_func("rs_lib.add")(2, 2) == 4  # the process goes on


def test_a_taken_name_is_reported_not_fatal(library):
    # The library registers "rs_lib.add" twice: the second is refused and said on stderr.
    code = (
        "import ferry, sys\n"
        f"ferry.load_library({str(library)!r})\n"
        "assert ferry.get_global_func('rs_lib.add')(1, 2) == 3\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "ferry::register_global!: cannot register 'rs_lib.add'" in result.stderr


def test_a_type_defined_in_rust_seen_from_python(library):
    p = ferry.get_global_func("rs_lib.make_point")(1, 2.5)
    assert p.__ferry_type_key__ == "rs_lib.Point"
    assert repr(p) == "rs_lib.Point(x=1, y=2.5)"
    assert (p.x, p.y) == (1, 2.5)  # reflected fields read as attributes
    q = ferry.make_node("rs_lib.Point", x=1, y=2.5)
    assert ferry.structural_equal(p, q) and not p.same_as(q)
    assert ferry.get_global_func("rs_lib.norm1")(q) == 3.5  # a Python-made one into Rust
    with pytest.raises(TypeError, match="rs_lib.Point"):
        ferry.get_global_func("rs_lib.norm1")(ferry.Array([1]))
    with pytest.raises(TypeError):
        ferry.make_node("rs_lib.Point", x="one", y=2.5)


def test_python_makes_a_rust_type_taking_its_field_defaults(library):
    made = ferry.make_node("rs_lib.Labeled", name="a")
    assert (made.name, made.weight, made.label, list(made.marks)) == ("a", 1.5, "none", [0])
    assert ferry.get_global_func("rs_lib.describe")(made) == "a 1.5 none [0]"
    other = ferry.make_node("rs_lib.Labeled", name="b", weight=2.0)
    assert other.weight == 2.0
    assert not made.marks.same_as(other.marks)  # a factory: one array per object
    with pytest.raises(ValueError, match="name"):  # no default: still required
        ferry.make_node("rs_lib.Labeled", weight=2.0)


def test_an_exported_rust_fn(library):
    f = ferry.get_global_func("rs_lib.scaled_sum")
    assert f(2.0, ferry.Array([1.0, 2.5])) == 7.0
    with pytest.raises(
        TypeError,
        match=r"Mismatched type on argument 1 when calling "
        r"`rs_lib.scaled_sum\(factor: float, values: ferry.Array\[float\]\)`: expected ferry.Array\[float\] but got str",
    ):
        f(2.0, "not an array")
    with pytest.raises(TypeError, match=r"rs_lib.scaled_sum\(\) takes 2 arguments but 1 were"):
        f(2.0)
