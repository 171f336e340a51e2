"""A development build keeps its output in its build tree: CMake writes ferry._core into
<build>/python/ferry/, never into python/ (the package's sources), and `import ferry` from
python/ finds it there (python/ferry/_build_tree.py): in build/, or in the tree FERRY_BUILD_DIR
names. An installed package's own extension comes first."""

import importlib.machinery
import os
import pathlib
import subprocess
import sys

from ferry_testing import BUILD, ROOT

import ferry
from ferry._build_tree import core_dir

SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]


def test_the_build_left_no_shared_object_under_python():
    # This runs after the build under test: python/ holds sources only.
    found = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "python").rglob("*.so"))
    assert found == []


def test_the_extension_is_the_build_trees():
    assert pathlib.Path(ferry.__file__).resolve().parent == ROOT / "python" / "ferry"
    core = pathlib.Path(ferry._core.__file__).resolve()
    assert core.parent == BUILD.resolve() / "python" / "ferry"
    assert core.name == "_core" + SUFFIX, "named for the Python it was built for"


def test_a_configure_writes_the_extension_into_the_build_tree(tmp_path):
    # A copy of the checkout's layout (links to its files), so that a stale extension can be put
    # where builds before this layout wrote it: the configure removes it, the build rule of
    # ferry._core names a file in the build tree, and the worked example's tschema targets run
    # the package with this tree's extension.
    source = tmp_path / "source"
    (source / "python" / "ferry").mkdir(parents=True)
    for name in ["CMakeLists.txt", "cmake", "include", "src", "examples"]:
        (source / name).symlink_to(ROOT / name)
    for name in ["CMakeLists.txt", "src"]:
        (source / "python" / name).symlink_to(ROOT / "python" / name)
    stale = source / "python" / "ferry" / "_core.so"
    stale.write_bytes(b"an older build's extension")
    build = tmp_path / "build"
    options = ["-DFERRY_BUILD_PYTHON=ON", "-DFERRY_BUILD_TESTS=OFF", "-DFERRY_BUILD_EXAMPLES=ON"]
    configured = subprocess.run(
        ["cmake", "-S", str(source), "-B", str(build), "-G", "Ninja", *options],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert configured.returncode == 0, configured.stdout + configured.stderr
    assert not stale.exists()
    assert "removing" in configured.stdout and str(stale) in configured.stdout
    targets = subprocess.run(
        ["ninja", "-C", str(build), "-t", "targets", "all"],
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.splitlines()
    outputs = [line.split(":")[0] for line in targets]
    outputs = [path for path in outputs if os.path.basename(path).startswith("_core")]
    assert "python/ferry/_core" + SUFFIX in outputs, outputs  # relative: in the build tree
    assert not [path for path in outputs if path.startswith(str(source))], outputs
    tschema = subprocess.run(
        ["ninja", "-C", str(build), "-t", "commands", "arith_tschema_check"],
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.splitlines()[-1]
    assert f"FERRY_BUILD_DIR={build}" in tschema and "ferry.tschema check" in tschema


def test_without_a_build_the_import_error_says_where_it_looked(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), FERRY_BUILD_DIR=str(tmp_path))
    result = subprocess.run(
        [sys.executable, "-c", "import ferry"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    assert result.returncode != 0
    assert "ImportError" in result.stderr
    assert str(tmp_path / "python" / "ferry") in result.stderr
    assert "FERRY_BUILD_DIR" in result.stderr and "cmake --build" in result.stderr


def test_the_lookup_order(tmp_path):
    checkout = tmp_path / "checkout"
    package = checkout / "python" / "ferry"
    package.mkdir(parents=True)
    default = checkout / "build" / "python" / "ferry"
    other = tmp_path / "other" / "python" / "ferry"
    for directory in (default, other):
        directory.mkdir(parents=True)
        (directory / ("_core" + SUFFIX)).write_bytes(b"")
    # A checkout: build/ by default, FERRY_BUILD_DIR's tree when set.
    assert core_dir(str(package), {}) == str(default)
    assert core_dir(str(package), {"FERRY_BUILD_DIR": str(tmp_path / "other")}) == str(other)
    # An installed package (the extension next to __init__.py): its own, whatever is set.
    (package / ("_core" + SUFFIX)).write_bytes(b"")
    assert core_dir(str(package), {"FERRY_BUILD_DIR": str(tmp_path / "other")}) is None
