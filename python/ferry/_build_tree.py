"""Where `import ferry` finds its extension, ferry._core.

An installed package (`pip install .`, a wheel) has it next to ``__init__.py``, and that copy is
the one imported. A development checkout keeps no build output in its sources: with
``PYTHONPATH=python``, the extension is found in the build tree, ``<build>/python/ferry/``, where
CMake writes it (python/CMakeLists.txt). The build tree is ``$FERRY_BUILD_DIR`` if set, otherwise
``build/`` at the checkout's root (as the C and C++ tests, the docs test and the scripts assume).
"""

import importlib.machinery
import os

__all__ = ["core_dir"]


def _has_core(directory):
    return any(
        os.path.isfile(os.path.join(directory, "_core" + suffix))
        for suffix in importlib.machinery.EXTENSION_SUFFIXES
    )


def core_dir(package_dir, environ=os.environ):
    """None if ``package_dir`` (the package's own directory) holds the extension; otherwise the
    build tree's directory that does, to be appended to the package's ``__path__``. ImportError
    saying where it looked and how to build it when neither does."""
    if _has_core(package_dir):
        return None
    root = os.path.dirname(os.path.dirname(os.path.realpath(package_dir)))
    build = environ.get("FERRY_BUILD_DIR") or os.path.join(root, "build")
    directory = os.path.join(os.path.abspath(build), "python", "ferry")
    if _has_core(directory):
        return directory
    name = "_core" + importlib.machinery.EXTENSION_SUFFIXES[0]
    how = "FERRY_BUILD_DIR" if environ.get("FERRY_BUILD_DIR") else "the default build tree"
    raise ImportError(
        f"ferry: the extension ferry._core is not built for this Python: no {name} in "
        f"{package_dir} (an installed package) nor in {directory} ({how}). In a checkout, "
        "build it with `cmake -S . -B build -DFERRY_BUILD_PYTHON=ON && cmake --build build` "
        "(or set FERRY_BUILD_DIR to the build tree that has it); or `pip install .`"
    )
