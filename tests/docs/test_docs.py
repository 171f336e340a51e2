"""Every fenced code block of README.md and docs/*.md, run or checked, so the guide cannot rot.

    PYTHONPATH=python python3 -m pytest tests/docs    # after building build/ (FERRY_BUILD_PYTHON)

One test per page (``test_page[docs/python.md]``); a page stops at its first failing block and
the failure names the page and line. Environment:

    FERRY_DOCS_BUILD       build tree holding libferry.so for the C and C++ blocks (default: build/)
    FERRY_DOCS_PYTHONPATH  where the pages' Python imports ``ferry`` from (default: python/)
    FERRY_DOCS_CACHE       compile cache, keyed by content hash (default: $TMPDIR/ferry-docs-cache)

The conventions below are repeated for writers in docs/README.md ("About this guide").

A block opens with ```<language> [name=value ...]. Every block is either run or checked; a
language not listed here (or a bare ```) fails the page: text that is not meant to run is
```text.

text     Not run: output, grammars, illustrations.
json     Must parse as JSON.
python   Run. The python blocks of a page run in order in one fresh interpreter, in the
         namespace of ``__main__`` (so a page builds up state, and pickle/multiprocessing find
         what it defines), in the page's work directory. ``python file=PATH`` is not run but
         written to PATH (a schema or module that later blocks use).
cpp      C++17, compiled with ``g++ -std=c++17 -Wall -Wextra -I include -L build -lferry``;
         warnings are errors, except unused variables, parameters and functions.
         - A block containing ``int main(`` is a complete program: compiled and run where it
           stands; it must exit with status 0.
         - ``cpp file=PATH`` is written to PATH for a later block to build.
         - Any other block is a snippet. All snippets of a page form ONE program whose prelude
           is ``#include <ferry/ferry.h>``, <cassert>, <cstdio>, <iostream>, <string>,
           <vector> and ``using namespace ferry;``. Each snippet is cut into its top-level
           statements: declarations (preprocessor lines; statements starting with class,
           struct, union, enum, namespace, template, using, typedef, extern, static, inline,
           constexpr or FERRY_REGISTER_; function definitions) go to namespace scope, every
           other statement into ``main()`` -- both in page order, so later snippets use the
           types, functions and variables of earlier ones (use distinct variable names on a
           page). ``#line`` directives make compiler errors and failed asserts name the page
           and line. The program is compiled and run at the page's last snippet.
         - ``lib=NAME`` on a snippet also builds the page's snippet program as the shared
           library NAME in the work directory, for later blocks (``ferry.load_library(NAME)``).
c        C99, ``gcc -std=c99 -pedantic`` with the same warnings, against ferry/c_api.h; the
         same three kinds as cpp. The snippet prelude includes ferry/c_api.h, assert.h,
         stdio.h, stdlib.h and string.h.
sh       Run with ``bash -eu -o pipefail`` in the page's work directory, one shell per block,
         except commands that are slow or change the machine, which are checked instead:
         - ``scripts/NAME.sh [--flag ...]``: the script exists and is executable, and it
           mentions every ``--flag``;
         - ``pip install ARGS``: the paths exist; the rest of that block is about the
           installed package: ``python -m MOD --flag`` is checked against ``--help``;
         - ``cmake`` configuring or building the checkout itself (``-S .``, ``-B build``,
           ``--build build``), or installing it outside the work directory: every ``-DNAME=``
           is an option or cache variable of the checkout (or a CMAKE_ variable);
         - a program in a build tree (``build*/DIR/NAME``): ``DIR/NAME.cc``, ``.c`` or
           ``DIR/NAME/`` exists;
         - ``git``, ``apt-get``, ``sudo``, ``python -m pytest``, ``ctest`` on the checkout's
           build trees: the paths exist.
console  ``$ command`` lines run as in sh (or are checked by the same rules) and must exit with
         0 (show a failure with ``cmd || echo "exit status $?"``); the lines up to the next
         ``$`` are the expected output (stdout and stderr, compared line by line after
         stripping trailing blanks); a line ``...`` matches any number of lines.
cmake    ``cmake file=PATH`` is written to PATH for a later block. Any other block is
         configured (not built) as the CMakeLists.txt of a scratch project against an
         installed copy of the build tree (CMAKE_PREFIX_PATH), with cmake_minimum_required
         and project() added when missing and an executable for every target it uses but
         does not define.
rust     A doc test of the ``ferry`` crate: rust/ferry/src/lib.rs includes the page
         (``#[doc = include_str!(...)]``), so ``cargo test`` in rust/ (the ``rust`` stage of
         scripts/test.sh) compiles and runs it, ``rust no_run`` compiles it only; here it is
         checked that the crate includes the page.
java     Compiled (``javac -Xlint:all -Werror``) and run, in order, by the JUnit test
         java/src/test/java/dev/ferry/DocsTest.java (the ``java`` stage of scripts/test.sh),
         as the body of a method importing ``dev.ferry.*`` and ``java.util.*``; here it is
         checked that DocsTest lists the page.

A ``file=`` block must be used by a later block of its page (its name or path appears there;
for a CMakeLists.txt, its directory).

The work directory is a fresh temporary directory per page holding symlinks to the checkout's
include/, python/, scripts/, examples/, cmake/, bench/, tests/, src/, docs/, CMakeLists.txt,
pyproject.toml, README.md and build/ (the build tree in use), so commands read as if run from
the root of a checkout; files a page writes stay in the work directory. PATH starts with
``python``/``python3`` (this interpreter) and ``tschema`` (what ``pip install`` puts on PATH);
PYTHONPATH is FERRY_DOCS_PYTHONPATH.
"""

import re
import subprocess

import pytest
from docs_harness import (
    BUILD,
    PAGES,
    ROOT,
    DocError,
    _first_word,
    _shims,
    check_java_doc_test,
    check_rust_doc_test,
    is_declaration,
    make_workdir,
    parse_blocks,
    plan_shell,
    rel,
    run_page,
    run_program,
    run_shell,
    split_statements,
)


@pytest.fixture(scope="session")
def ferry_prefix(tmp_path_factory):
    """The build tree installed into a scratch prefix, for find_package(ferry)."""
    root = tmp_path_factory.mktemp("docs")
    _shims(root)
    prefix = root / "prefix"
    result = subprocess.run(
        ["cmake", "--install", str(BUILD), "--prefix", str(prefix)],
        check=False,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        pytest.fail(f"cmake --install {BUILD} failed:\n{result.stdout}{result.stderr}")
    return prefix


@pytest.mark.parametrize("page", PAGES, ids=[rel(p) for p in PAGES])
def test_page(page, tmp_path, ferry_prefix):
    workdir = make_workdir(tmp_path / "work")
    try:
        report, failure = run_page(page, workdir, ferry_prefix), None
    except DocError as e:
        report, failure = [], str(e)
    if failure:
        pytest.fail(failure, pytrace=False)
    for line in report:
        print(line)


def test_every_page_is_tested():
    """README.md and every docs/*.md page are in the list (a new page cannot be forgotten)."""
    assert ROOT / "README.md" in PAGES
    assert set((ROOT / "docs").glob("*.md")) <= set(PAGES)


def test_relative_links_resolve():
    """Every relative Markdown link of the guide points at a file or directory that exists."""
    problems = []
    for page in PAGES:
        text = re.sub(r"(?ms)^\s*(```|~~~).*?^\s*\1", "", page.read_text(encoding="utf-8"))
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            path = target.split("#", 1)[0]
            if path and not (page.parent / path).exists():
                problems.append(f"{rel(page)}: link to {target} does not resolve")
    assert not problems, "\n".join(problems)


# The harness itself: the conventions above, on small inputs.


def test_unknown_language_and_bare_fences_fail(tmp_path):
    page = tmp_path / "p.md"
    for opening in ("```", "```cobol", "```python nonsense", "```cpp no_run"):
        with pytest.raises(DocError):
            parse_blocks(page, f"{opening}\nx\n```\n")


def test_a_failing_shell_block_or_program_reports_its_status_and_output(tmp_path):
    # What a failing block shows: where, the exit status, the script, and both streams' tails.
    with pytest.raises(DocError) as info:
        run_shell("echo to-stdout; echo to-stderr >&2; exit 3", tmp_path, "page.md:7")
    text = str(info.value)
    assert text.startswith("page.md:7: exit status 3\n--- script ---\necho to-stdout")
    assert "--- stdout ---\nto-stdout\n" in text and "--- stderr ---\nto-stderr\n" in text
    program = tmp_path / "prog.sh"
    program.write_text("#!/bin/sh\necho said; echo " + "x" * 5000 + " >&2; exit 4\n")
    program.chmod(0o755)
    with pytest.raises(DocError) as info:
        run_program(program, tmp_path, "page.md:9")
    text = str(info.value)
    assert text.startswith("page.md:9: the program exited with status 4\n--- stdout ---\nsaid")
    assert text.endswith("x" * 3999 + "\n")  # the tail of stderr, 4000 characters
    run_shell("true", tmp_path, "page.md:11")  # success: nothing raised


def test_snippets_split_into_declarations_and_statements():
    code = (
        "#include <map>\n"
        "class A : public Object {\n public:\n  int f() { return 1; }\n};\n"
        'FERRY_REGISTER_GLOBAL("x").set_body_typed([](int a) { return a; });\n'
        "int twice(int x) { return 2 * x; }\n"
        "Array<int64_t> a = {1, 2};  // a comment\n"
        "if (a.size() == 2) {\n  a.push_back(3);\n} else {\n  a.clear();\n}\n"
        "try { Downcast<String>(a); } catch (const Error& e) { }\n"
        "auto f = [](int b) { return b; };\n"
    )
    kinds = [(is_declaration(p), _first_word(p)) for _, p in split_statements(code)]
    assert kinds == [
        (True, "#"),
        (True, "class"),
        (True, "FERRY_REGISTER_GLOBAL"),
        (True, "int"),
        (False, "Array"),
        (False, "if"),
        (False, "try"),
        (False, "auto"),
    ]


def test_shell_commands_that_are_checked():
    plan = plan_shell(
        "scripts/test.sh\npython -m ferry --version\n"
        "cmake -S . -B build -DFERRY_BUILD_PYTHON=ON && cmake --build build\n"
    )
    assert [p is None for _, _, p in plan] == [False, True, False]
    assert plan[0][2] == [] and plan[2][2] == []
    assert plan_shell("scripts/nonexistent.sh\n")[0][2]
    assert plan_shell("cmake -S . -B build -DFERRY_NO_SUCH_OPTION=ON\n")[0][2]
    assert plan_shell("pip install .\npython -m ferry --cmake-dir\n")[1][2] == []


def test_java_blocks_must_be_on_a_page_the_junit_docs_test_reads(tmp_path):
    """A `java` block compiles and runs in java/'s DocsTest, so its page must be listed there;
    docs/java.md is."""
    page = tmp_path / "p.md"
    (block,) = parse_blocks(page, "```java\nlong x = 1L;\n```\n")
    with pytest.raises(DocError, match="do not list"):
        check_java_doc_test(block)
    java_page = ROOT / "docs" / "java.md"
    blocks = [b for b in parse_blocks(java_page, java_page.read_text()) if b.lang == "java"]
    assert len(blocks) >= 8
    for b in blocks:
        check_java_doc_test(b)


def test_rust_blocks_must_be_doc_tests_of_the_ferry_crate(tmp_path):
    """A `rust` block runs as a doc test of rust/ferry (cargo test), so its page must be
    included by the crate's lib.rs; docs/rust.md is."""
    page = tmp_path / "p.md"
    (block,) = parse_blocks(page, "```rust no_run\nfn main() {}\n```\n")
    assert block.attrs == {"no_run": "1"}
    with pytest.raises(DocError, match="does not include"):
        check_rust_doc_test(block)
    rust_page = ROOT / "docs" / "rust.md"
    blocks = [b for b in parse_blocks(rust_page, rust_page.read_text()) if b.lang == "rust"]
    assert len(blocks) >= 5
    for b in blocks:
        check_rust_doc_test(b)
