"""python/ferry/_core.pyi describes the built extension: mypy's stubtest compares the stub with
the module (every name, its kind, signatures where the runtime has them)."""

import os
import subprocess
import sys

from ferry_testing import ROOT


def test_the_stub_matches_the_extension():
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy.stubtest",
            "ferry._core",
            "--mypy-config-file",
            str(ROOT / "pyproject.toml"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success" in result.stdout
    assert (ROOT / "python/ferry/py.typed").exists(), "the package says it is typed"


def test_the_stub_names_the_private_functions_too():
    # stubtest does not report runtime names with a leading underscore that the stub lacks; the
    # package's modules call them, and mypy checks those calls against the stub.
    import ferry._core

    stub = (ROOT / "python/ferry/_core.pyi").read_text()
    missing = [
        name
        for name in dir(ferry._core)
        if name.startswith("_") and not name.startswith("__") and f"def {name}(" not in stub
    ]
    assert missing == []
