"""scripts/wheel.sh refuses what it cannot do before building anything: an unknown argument, a
Python version that is not one or that this machine does not have (never a skipped wheel). The
wheels themselves are built and tested by the script (scripts/test.sh's stage `wheel`)."""

import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]


def wheel_sh(*args):
    return subprocess.run(
        ["bash", str(ROOT / "scripts" / "wheel.sh"), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_an_unknown_argument_is_refused_by_name():
    out = wheel_sh("--bogus")
    assert out.returncode == 2
    assert "unknown argument '--bogus'" in out.stderr


def test_python_needs_a_value():
    out = wheel_sh("--python")
    assert out.returncode == 2
    assert "--python needs a version" in out.stderr


def test_a_version_that_is_not_one_is_refused():
    out = wheel_sh("--python", "3.x")
    assert out.returncode == 1
    assert "'3.x' is not a version like 3.12" in out.stderr


def test_a_missing_python_is_an_error_not_a_skipped_wheel():
    out = wheel_sh("--python", "3.99", "--no-test")
    assert out.returncode == 1
    assert "no CPython 3.99 found" in out.stderr
    assert "== wheel" not in out.stdout  # nothing was built


def test_a_missing_interpreter_path_is_named(tmp_path):
    out = wheel_sh("--python", str(tmp_path / "python9"), "--no-test")
    assert out.returncode == 1
    assert f"no interpreter at {tmp_path / 'python9'}" in out.stderr
