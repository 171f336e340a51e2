"""Shared helpers of the tschema tests (imported by name; conftest.py re-exports the fixture).

tschema is pure Python, but the end-to-end tests compile its output and load it through the
compiled `ferry._core`; like every Python test they need the build of scripts/test.sh, and
nothing here skips: a missing compiler or library is a failure that says so.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

REPO = Path(__file__).resolve().parents[3]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
GOLDEN = Path(__file__).resolve().parent / "golden"

if str(REPO / "python") not in sys.path:
    sys.path.insert(0, str(REPO / "python"))
import ferry  # noqa: F401,E402

HAVE_CORE = True

tschema_main = importlib.import_module("ferry.tschema.__main__")


def run_cli(*argv: str) -> Tuple[int, str, str]:
    """Runs `python -m ferry.tschema argv...` in-process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = tschema_main.main([str(a) for a in argv])
        except SystemExit as e:  # argparse errors
            code = int(e.code or 0)
    return code, out.getvalue(), err.getvalue()


def snapshot(root: Path) -> Dict[str, str]:
    """Path -> (hash, mtime) of every file under `root`: equal snapshots mean nothing was
    written (not even the same bytes again)."""
    out = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            if "__pycache__" in p.parts:
                continue
            st = p.stat()
            out[str(p.relative_to(root))] = (
                f"{hashlib.sha256(p.read_bytes()).hexdigest()}:{st.st_mtime_ns}:{st.st_ino}"
            )
    return out


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


SCHEMA_HEAD = "from ferry.tschema import Object, declare, ty\n\n\n"


def schema(tmp_path: Path, body: str, name: str = "schema.py") -> Path:
    """Writes a schema file whose body follows the usual imports (line 4 is body line 1)."""
    return write(tmp_path / name, SCHEMA_HEAD + body)


def line_of(path: Path, needle: str) -> int:
    """1-based line of the first line of `path` containing `needle`."""
    for i, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if needle in line:
            return i
    raise AssertionError(f"{needle!r} not in {path}")


def expect_error(tmp_path: Path, argv: List[str], *fragments: str) -> str:
    """Runs the CLI expecting an error: exit code 2, every fragment in stderr, and no file
    under `tmp_path` written. Returns stderr."""
    before = snapshot(tmp_path)
    code, out, err = run_cli(*argv)
    assert code == 2, (code, out, err)
    for fragment in fragments:
        assert fragment in err, f"{fragment!r} not in:\n{err}"
    assert "Traceback" not in err
    assert snapshot(tmp_path) == before, "an error run changed files"
    return err


# Compiling the generated C++ ---------------------------------------------------------------
# FERRY_INCLUDE_DIR / FERRY_LIB_DIR point at another Ferry build (default: <repo>/include and
# <repo>/build). The `build` fixture compiles once per session, its two compiler runs in
# parallel.

INCLUDE_DIR = Path(os.environ.get("FERRY_INCLUDE_DIR", REPO / "include"))
LIB_DIR = Path(os.environ.get("FERRY_LIB_DIR", REPO / "build"))
CXX = os.environ.get("CXX", "g++")


def have_toolchain() -> bool:
    return (
        shutil.which(CXX) is not None
        and (INCLUDE_DIR / "ferry" / "ferry.h").exists()
        and any(LIB_DIR.glob("libferry.*"))
    )


def _require_toolchain(test):
    assert have_toolchain(), f"needs {CXX}, {INCLUDE_DIR}/ferry/ferry.h and libferry in {LIB_DIR}"
    return test


needs_toolchain = _require_toolchain


class Build:
    def __init__(self, root: Path):
        self.root = root
        self.exe = root / "generated_test"
        self.lib = root / "libtschema_generated.so"
        self.results = {}


def _generate(d: Path) -> None:
    for name in ("seed_expr.h", "kitchen_base.h", "generated_test_main.cc"):
        shutil.copy(FIXTURES / name, d / name)
    for argv in (
        [
            "generate",
            FIXTURES / "seed.py",
            "--in-place",
            d / "seed_expr.h",
            "--source",
            d / "seed_reg.cc",
            "--python",
            d / "seed_nodes.py",
        ],
        [
            "generate",
            FIXTURES / "kitchen.py",
            FIXTURES / "kitchen_ops.py",
            "--in-place",
            d / "kitchen_base.h",
            "--header",
            d / "kitchen.h",
            "--source",
            d / "kitchen.cc",
            "--python",
            d / "kitchen_nodes.py",
        ],
    ):
        code, _, err = run_cli(*argv)
        assert code == 0, err


@pytest.fixture(scope="session")
def build(tmp_path_factory) -> Build:
    """Generates the seed and kitchen outputs and compiles them (once per test session)."""
    assert have_toolchain(), f"needs {CXX}, {INCLUDE_DIR}/ferry/ferry.h and libferry in {LIB_DIR}"
    b = Build(tmp_path_factory.mktemp("tschema_build"))
    _generate(b.root)
    common = [
        CXX,
        "-std=c++17",
        "-O0",
        "-Wall",
        "-Wextra",
        "-Werror",
        f"-I{INCLUDE_DIR}",
        f"-I{b.root}",
    ]
    link = [f"-L{LIB_DIR}", "-lferry", f"-Wl,-rpath,{LIB_DIR}"]
    sources = [str(b.root / "seed_reg.cc"), str(b.root / "kitchen.cc")]
    commands = {
        "exe": common
        + [str(b.root / "generated_test_main.cc")]
        + sources
        + ["-o", str(b.exe)]
        + link,
        "lib": common + ["-shared", "-fPIC"] + sources + ["-o", str(b.lib)] + link,
    }
    procs = {
        k: subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for k, c in commands.items()
    }
    for key, proc in procs.items():
        out, _ = proc.communicate(timeout=300)
        b.results[key] = (proc.returncode, out)
    return b
