"""Type checkers accept correct code and catch wrong code: mypy (tests/python/typing/mypy.ini,
strict) over scripts written as a user writes them, over a module `tschema generate --python`
writes, and over the Python blocks of the docs.

tests/python/typing/ok_*.py must pass; each bad_*.py must fail with exactly the errors its
``# E: message`` comments name, on those lines. mypy's cache lives in the build tree.
"""

import os
import re
import subprocess
import sys

import pytest
from ferry_testing import BUILD, ROOT

HERE = ROOT / "tests" / "python" / "typing"
CONFIG = HERE / "mypy.ini"

# The docs' blocks define helpers without annotations, as a page does: there mypy checks the
# calls into Ferry and the bodies (check_untyped_defs), not the page's own annotations.
DOCS_FLAGS = [
    "--allow-untyped-defs",
    "--allow-untyped-calls",
    "--allow-incomplete-defs",
    "--allow-untyped-decorators",
    "--allow-any-generics",
    "--no-strict-equality",
]


def mypy(*args):
    """mypy's (exit status, output) over `args`, with the user-code configuration."""
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(CONFIG),
            "--cache-dir",
            str(BUILD / "mypy-cache"),
            "--no-error-summary",
            "--show-absolute-path",
            *map(str, args),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=600,
    )
    return result.returncode, result.stdout + result.stderr


def errors_of(output):
    """{(path, line): [message, ...]} of mypy's error lines (notes left out)."""
    found = {}
    for m in re.finditer(r"^(.+?):(\d+): error: (.*?)(?:  \[[a-z-]+\])?$", output, re.M):
        found.setdefault((m.group(1), int(m.group(2))), []).append(m.group(3))
    return found


def test_a_user_script_type_checks():
    status, output = mypy(*sorted(HERE.glob("ok_*.py")))
    assert status == 0, output


@pytest.mark.parametrize("name", sorted(p.name for p in HERE.glob("bad_*.py")))
def test_wrong_code_is_caught(name):
    path = HERE / name
    expected = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if "# E: " in line:
            expected[(str(path), number)] = [line.split("# E: ", 1)[1]]
    assert expected, f"{name} names no expected error"
    status, output = mypy(path)
    assert status == 1, output
    assert errors_of(output) == expected, output


def test_a_tschema_generated_module_type_checks(tmp_path):
    schema = ROOT / "tests" / "python" / "tschema" / "fixtures" / "kitchen.py"
    module = tmp_path / "kitchen_nodes.py"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    generated = subprocess.run(
        [sys.executable, "-m", "ferry.tschema", "generate", str(schema), "--python", str(module)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert generated.returncode == 0, generated.stdout + generated.stderr
    assert module.exists() and module.with_suffix(".pyi").exists()
    for checked in (module, module.with_suffix(".pyi")):  # one at a time: the same module
        status, output = mypy(checked)
        assert status == 0, output


def test_the_docs_python_blocks_type_check(tmp_path):
    sys.path.insert(0, str(ROOT / "tests" / "docs"))
    try:
        from docs_harness import parse_blocks
    finally:
        sys.path.pop(0)
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    written = {}
    for page in pages:
        blocks = [b for b in parse_blocks(page) if b.lang == "python" and "file" not in b.attrs]
        if not blocks:
            continue
        # One module per page (its blocks run in one interpreter), each block at its page line,
        # so that an error names the line of the page.
        lines = []
        for block in blocks:
            lines += [""] * (block.line - 1 - len(lines))
            lines += block.code.split("\n")
        out = tmp_path / f"{page.stem.lower()}_page.py"
        out.write_text("\n".join(lines) + "\n")
        written[str(out)] = page.relative_to(ROOT)
    assert len(written) >= 5, "the docs have Python blocks on several pages"
    status, output = mypy(*DOCS_FLAGS, *written)
    for path, page in written.items():
        output = output.replace(os.path.realpath(path), str(page)).replace(path, str(page))
    assert status == 0, output
