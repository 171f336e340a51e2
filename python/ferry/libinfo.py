"""Where the installed Ferry keeps its library, headers and CMake package config."""

import os
import pathlib

from . import _core

__all__ = ["lib_path", "lib_dir", "include_dir", "cmake_dir", "docs_dir"]

_PACKAGE = pathlib.Path(__file__).resolve().parent
_SOURCE_ROOT = _PACKAGE.parent.parent  # a development checkout: <root>/python/ferry


def lib_path():
    """The libferry shared library this process uses."""
    return _core._lib_path()


def lib_dir():
    return os.path.dirname(lib_path())


def include_dir():
    """The directory holding ferry/*.h."""
    for candidate in (_PACKAGE / "include", _SOURCE_ROOT / "include"):
        if (candidate / "ferry" / "c_api.h").exists():
            return str(candidate)
    raise RuntimeError("ferry: the C++ headers are not installed with this package")


def cmake_dir():
    """The directory holding ferryConfig.cmake (for CMAKE_PREFIX_PATH or ferry_DIR)."""
    candidate = _PACKAGE / "share" / "cmake" / "ferry"
    if (candidate / "ferryConfig.cmake").exists():
        return str(candidate)
    raise RuntimeError(
        "ferry: no CMake package config in this package; a development checkout has none "
        "(install with `pip install .`)"
    )


def docs_dir():
    """The directory of the documentation pages (index README.md, python.md, tschema.md, ...):
    installed with the package (ferry/docs/), or a development checkout's docs/."""
    for candidate in (_PACKAGE / "docs", _SOURCE_ROOT / "docs"):
        if (candidate / "tschema.md").exists():
            return str(candidate)
    raise RuntimeError("ferry: the documentation is not installed with this package")
