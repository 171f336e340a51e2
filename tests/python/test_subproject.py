"""Ferry as a CMake subproject (add_subdirectory): only the library is built, with the parent's
build type; tests, examples and install rules stay off unless asked for. Configures, builds
nothing, so it is quick."""

import subprocess

from ferry_testing import ROOT


def configure(tmp_path, *options):
    parent = tmp_path / "parent"
    parent.mkdir()
    (parent / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\n"
        "project(parent LANGUAGES C CXX)\n"
        f'add_subdirectory("{ROOT}" ferry)\n'
        "add_executable(app main.cc)\n"
        "target_link_libraries(app PRIVATE ferry::ferry)\n"
    )
    (parent / "main.cc").write_text("#include <ferry/ferry.h>\nint main() { return 0; }\n")
    build = tmp_path / "build"
    result = subprocess.run(
        ["cmake", "-S", str(parent), "-B", str(build), "-G", "Ninja", *options],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    targets = subprocess.run(
        ["ninja", "-C", str(build), "-t", "targets", "all"], capture_output=True, text=True
    ).stdout
    cache = (build / "CMakeCache.txt").read_text()
    return targets, cache


def test_a_subproject_builds_only_the_library(tmp_path):
    targets, cache = configure(tmp_path)
    assert "libferry.so" in targets and "app:" in targets
    assert "test_object" not in targets and "quickstart" not in targets
    assert "CMAKE_BUILD_TYPE:STRING=\n" in cache, "the build type stays the parent's"
    assert "FERRY_INSTALL:BOOL=OFF" in cache


def test_a_subproject_may_ask_for_the_tests(tmp_path):
    targets, _ = configure(tmp_path, "-DFERRY_BUILD_TESTS=ON")
    assert "test_object" in targets
