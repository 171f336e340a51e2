"""The generated C++ compiles (-Wall -Wextra -Werror) and behaves: a C++ test program (the
`build` fixture of conftest.py compiles it), and the CMake function.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tschema_support import FIXTURES, REPO, needs_toolchain


@needs_toolchain
def test_generated_cpp_compiles_without_warnings(build):
    for key, (code, out) in build.results.items():
        assert code == 0, f"{key} failed to compile:\n{out}"


@needs_toolchain
def test_generated_cpp_runs(build):
    assert build.results["exe"][0] == 0, build.results["exe"][1]
    run = subprocess.run([str(build.exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "all generated-code checks passed" in run.stdout


def test_cmake_function_adds_check_and_update_targets(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(FIXTURES / "seed_expr.h", src / "seed_expr.h")
    shutil.copy(FIXTURES / "seed.py", src / "seed.py")
    (src / "CMakeLists.txt").write_text(f"""cmake_minimum_required(VERSION 3.16)
project(tschema_user NONE)
enable_testing()
list(APPEND CMAKE_MODULE_PATH "{(REPO / "cmake").as_posix()}")
include(FerryTschema)
set(Python_EXECUTABLE "{Path(sys.executable).as_posix()}")
ferry_tschema(seed
  SCHEMA seed.py
  IN_PLACE seed_expr.h
  SOURCE gen/seed_reg.cc
  PYTHON gen/seed_nodes.py
  PYTHONPATH "{(REPO / "python").as_posix()}"
  ADD_TEST)
""")
    bld = tmp_path / "build"
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []

    def cmake(*args, check=True):
        run = subprocess.run(["cmake", *args], capture_output=True, text=True, timeout=120)
        if check:
            assert run.returncode == 0, run.stdout + run.stderr
        return run

    cmake("-S", str(src), "-B", str(bld), *gen)
    stale = cmake("--build", str(bld), "--target", "seed_tschema_check", check=False)
    assert stale.returncode != 0 and "seed_expr.h" in stale.stdout + stale.stderr
    cmake("--build", str(bld), "--target", "seed_tschema_update")
    assert (src / "gen" / "seed_reg.cc").exists() and (src / "gen" / "seed_nodes.pyi").exists()
    assert "class IntImmNode" in (src / "seed_expr.h").read_text()
    cmake("--build", str(bld), "--target", "seed_tschema_check")
    ctest = subprocess.run(
        ["ctest", "--test-dir", str(bld), "-R", "seed_tschema_check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ctest.returncode == 0, ctest.stdout + ctest.stderr
