"""`pip install .` installs a working package: the extension, libferry, the headers and a CMake
config that a C++ project finds with `python -m ferry --cmake-dir`; the project's library then
loads into the installed package. Builds a wheel, so it takes a while (about half a minute)."""

import os
import pathlib
import subprocess
import venv

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run(*cmd, **kwargs):
    # Without PYTHONPATH: the venv's python must import the installed package, not the tree's.
    env = kwargs.pop("env", None) or {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, **kwargs)
    assert result.returncode == 0, (
        f"{' '.join(map(str, cmd))} failed:\n{result.stdout}\n{result.stderr}"
    )
    return result.stdout.strip()


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    env_dir = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    run(python, "-m", "pip", "install", "-q", "--disable-pip-version-check", str(ROOT), cwd=env_dir)
    return python


def test_python_m_ferry_reports_the_install(installed):
    cmake_dir = pathlib.Path(run(installed, "-m", "ferry", "--cmake-dir", cwd="/"))
    assert (cmake_dir / "ferryConfig.cmake").exists()
    include_dir = pathlib.Path(run(installed, "-m", "ferry", "--include-dir", cwd="/"))
    assert (include_dir / "ferry" / "c_api.h").exists()
    lib_dir = pathlib.Path(run(installed, "-m", "ferry", "--lib-dir", cwd="/"))
    assert str(lib_dir).startswith(str(installed.parents[1]))
    version = run(installed, "-m", "ferry", "--version", cwd="/")
    assert version.count(".") == 2
    # The documentation ships in the wheel: what `tschema --help` points at.
    docs = pathlib.Path(run(installed, "-m", "ferry", "--docs", cwd="/"))
    assert str(docs).startswith(str(installed.parents[1]))
    assert (docs / "tschema.md").exists() and (docs / "README.md").exists()


def test_a_cmake_project_builds_against_it_and_loads(installed, tmp_path):
    cmake_dir = run(installed, "-m", "ferry", "--cmake-dir", cwd="/")
    build = tmp_path / "build"
    run(
        "cmake",
        "-S",
        str(ROOT / "tests" / "python" / "packaging"),
        "-B",
        str(build),
        "-G",
        "Ninja",
        f"-Dferry_DIR={cmake_dir}",
    )
    run("cmake", "--build", str(build))
    lib = build / "consumer.so"
    script = (
        "import ferry\n"
        f"ferry.load_library({str(lib)!r})\n"
        "assert ferry.get_global_func('consumer.hello')('you') == 'hello you'\n"
        "p = ferry.make_node('consumer.Point', x=1, y=2)\n"
        "assert (p.x, p.y) == (1, 2)\n"
        "print('ok')\n"
    )
    assert run(installed, "-c", script, cwd="/") == "ok"


def test_ferry_cpp_builds_against_the_installed_package(installed, tmp_path):
    script = (
        "import os, ferry, ferry.cpp, ferry.libinfo\n"
        "lib = ferry.cpp.load_inline('pkg_jit', 'FERRY_REGISTER_GLOBAL(\"pkg_jit.twice\")"
        ".set_body_typed([](int64_t x) { return 2 * x; });')\n"
        "assert lib.twice(21) == 42\n"
        "assert ferry.libinfo.include_dir().startswith(os.path.dirname(ferry.__file__))\n"
        "print(lib.path)\n"
    )
    env_cache = tmp_path / "cache"
    out = run(
        installed,
        "-c",
        script,
        cwd="/",
        env={
            **{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
            "FERRY_CACHE_DIR": str(env_cache),
        },
    )
    assert out.startswith(str(env_cache)) and out.endswith("libpkg_jit.so")


def test_it_declares_ninja_and_cmake_finds_it_without_ferry_dir(installed, tmp_path):
    # ferry.cpp runs Ninja: the wheel depends on the PyPI package, so a venv has it.
    script = (
        "import importlib.metadata as m, os\n"
        "print([r for r in m.requires('ferry') or () if r.split(';')[0].strip() == 'ninja'])\n"
        "(ep,) = [e for e in m.entry_points(group='cmake.prefix') if e.name == 'ferry']\n"
        "print(os.path.dirname(ep.load().__file__))\n"
    )
    requires, prefix = run(installed, "-c", script, cwd="/").splitlines()
    assert requires == "['ninja']"
    # What scikit-build-core does for a project that depends on ferry (its `cmake.prefix` entry
    # point): the package directory on CMAKE_PREFIX_PATH; find_package(ferry) needs no ferry_DIR.
    build = tmp_path / "build"
    run(
        "cmake",
        "-S",
        str(ROOT / "tests" / "python" / "packaging"),
        "-B",
        str(build),
        "-G",
        "Ninja",
        f"-DCMAKE_PREFIX_PATH={prefix}",
    )
    assert f"ferry_DIR:PATH={prefix}/share/cmake/ferry" in (build / "CMakeCache.txt").read_text()
