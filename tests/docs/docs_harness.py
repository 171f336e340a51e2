"""The machinery behind test_docs.py: reading the fenced blocks of a Markdown page and running
or checking each one. The conventions it implements are documented at the top of test_docs.py
and, for writers, in docs/README.md ("About this guide").
"""

import hashlib
import json
import os
import pathlib
import queue
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(
    os.environ.get("FERRY_DOCS_BUILD") or os.environ.get("FERRY_BUILD_DIR") or ROOT / "build"
).resolve()
PYTHONPATH = pathlib.Path(os.environ.get("FERRY_DOCS_PYTHONPATH", ROOT / "python")).resolve()
CACHE = pathlib.Path(
    os.environ.get("FERRY_DOCS_CACHE") or pathlib.Path(tempfile.gettempdir()) / "ferry-docs-cache"
)
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
LANGUAGES = {"text", "json", "python", "cpp", "c", "sh", "console", "cmake", "rust", "java"}
# `rust` blocks run as doc tests of the `ferry` crate, whose lib.rs includes the page
# (`cargo test` in rust/, the `rust` stage of scripts/test.sh); here we check it does.
RUST_DOC_INCLUDER = ROOT / "rust" / "ferry" / "src" / "lib.rs"
# `java` blocks compile and run in the JUnit test DocsTest (the `java` stage of scripts/test.sh),
# which lists the pages it reads; here we check the page is listed.
JAVA_DOCS_TEST = ROOT / "java" / "src" / "test" / "java" / "dev" / "ferry" / "DocsTest.java"
ATTRIBUTES = {"file", "lib"}
LINKED = [
    "include",
    "python",
    "scripts",
    "examples",
    "cmake",
    "bench",
    "tests",
    "src",
    "docs",
    "CMakeLists.txt",
    "pyproject.toml",
    "README.md",
]
TIMEOUT = 240  # seconds, for one block

WARNINGS = [
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wno-error=unused-variable",
    "-Wno-error=unused-but-set-variable",
    "-Wno-error=unused-parameter",
    "-Wno-error=unused-function",
]
CPP_PRELUDE = """#include <ferry/ferry.h>
#include <cassert>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>
using namespace ferry;
"""
C_PRELUDE = """#include <ferry/c_api.h>
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
"""


class DocError(Exception):
    """A block that failed: the message names the page and line."""


# ---------------------------------------------------------------------------------------------
# Markdown: fenced blocks.


class Block:
    def __init__(self, page, line, lang, attrs, code):
        self.page, self.line, self.lang, self.attrs, self.code = page, line, lang, attrs, code

    @property
    def where(self):
        return f"{rel(self.page)}:{self.line}"

    def __repr__(self):
        return f"<```{self.lang} at {self.where}>"


def rel(path):
    try:
        return str(pathlib.Path(path).relative_to(ROOT))
    except ValueError:
        return str(path)


_FENCE = re.compile(r"^( {0,3}|\s*)(`{3,}|~{3,})(.*)$")


def parse_blocks(page, text=None):
    """The fenced blocks of a Markdown page. `line` is the line of the first code line."""
    if text is None:
        text = pathlib.Path(page).read_text(encoding="utf-8")
    lines = text.split("\n")
    blocks = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = len(m.group(1)), m.group(2), m.group(3).strip()
        start = i + 1
        j = start
        while j < len(lines):
            close = lines[j].strip()
            if close.startswith(fence[0] * len(fence)) and set(close) == {fence[0]}:
                break
            j += 1
        if j == len(lines):
            raise DocError(f"{rel(page)}:{i + 1}: unclosed code fence")
        body = [ln[indent:] if ln[:indent].strip() == "" else ln.lstrip() for ln in lines[start:j]]
        words = info.split()
        if not words:
            raise DocError(
                f"{rel(page)}:{i + 1}: a code block without a language; use ```text "
                "for text that is not meant to run"
            )
        lang, attrs = words[0], {}
        if lang not in LANGUAGES:
            raise DocError(
                f"{rel(page)}:{i + 1}: unknown code block language '{lang}' (known: "
                f"{', '.join(sorted(LANGUAGES))})"
            )
        for word in words[1:]:
            if lang == "rust" and word == "no_run":  # rustdoc: compiled, not run
                attrs["no_run"] = "1"
                continue
            key, eq, value = word.partition("=")
            if not eq or key not in ATTRIBUTES or not value:
                raise DocError(
                    f"{rel(page)}:{i + 1}: unknown block attribute '{word}' (known: "
                    f"{', '.join(f'{a}=...' for a in sorted(ATTRIBUTES))})"
                )
            attrs[key] = value
        if "lib" in attrs and lang not in ("cpp", "c"):
            raise DocError(f"{rel(page)}:{i + 1}: lib= is for cpp and c snippets")
        if "file" in attrs and lang not in ("python", "cpp", "c", "cmake", "sh", "text", "json"):
            raise DocError(f"{rel(page)}:{i + 1}: file= is not supported for {lang}")
        blocks.append(Block(page, start + 1, lang, attrs, "\n".join(body) + "\n"))
        i = j + 1
    return blocks


# ---------------------------------------------------------------------------------------------
# C and C++ snippets: cut into top-level statements, declarations vs statements of main().

DECL_WORDS = {
    "class",
    "struct",
    "union",
    "enum",
    "namespace",
    "template",
    "using",
    "typedef",
    "extern",
    "static",
    "inline",
    "constexpr",
    "static_assert",
}
STMT_WORDS = {
    "if",
    "for",
    "while",
    "switch",
    "do",
    "try",
    "return",
    "else",
    "throw",
    "break",
    "continue",
    "goto",
    "case",
    "default",
    "delete",
    "new",
}
_WORD = re.compile(r"[A-Za-z_]\w*")


def _skip_space_and_comments(code, i):
    while i < len(code):
        if code[i].isspace():
            i += 1
        elif code.startswith("//", i):
            j = code.find("\n", i)
            i = len(code) if j < 0 else j
        elif code.startswith("/*", i):
            j = code.find("*/", i + 2)
            i = len(code) if j < 0 else j + 2
        else:
            break
    return i


def _end_of_line_if_blank(code, i):
    """`i`, or the end of its line when only blanks and a // comment follow on it."""
    j = i
    while j < len(code) and code[j] in " \t":
        j += 1
    if j < len(code) and code[j] == "\n":
        return j
    if code.startswith("//", j):
        k = code.find("\n", j)
        return len(code) if k < 0 else k
    return i


def _skip_literal(code, i):
    """`i` at a quote: the index after the string or character literal."""
    quote = code[i]
    if quote == '"':
        m = (
            re.match(r'R"([^(\s]*)\(', code[i - 1 : i + 20])
            if i > 0 and code[i - 1] == "R"
            else None
        )
        if m:
            end = code.find(")" + m.group(1) + '"', i)
            return len(code) if end < 0 else end + len(m.group(1)) + 2
    j = i + 1
    while j < len(code) and code[j] != quote:
        j += 2 if code[j] == "\\" else 1
    return j + 1


def split_statements(code):
    """Top-level pieces of a snippet: [(offset, text)]; a piece keeps its leading comments."""
    pieces = []
    i, n = 0, len(code)
    start = None
    braces = parens = 0
    while i < n:
        if start is None:
            while i < n and code[i].isspace():
                i += 1
            if i >= n:
                break
            start = i
        c = code[i]
        if code.startswith("//", i):
            j = code.find("\n", i)
            i = n if j < 0 else j
            continue
        if code.startswith("/*", i):
            j = code.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        if c == "#" and code[code.rfind("\n", 0, i) + 1 : i].strip() == "":
            # A preprocessor line (with continuations). At the top of a piece it is a piece.
            j = i
            while True:
                k = code.find("\n", j)
                if k < 0:
                    k = n
                    break
                if code[k - 1] != "\\":
                    break
                j = k + 1
            if braces == 0 and parens == 0 and _skip_space_and_comments(code, start) == i:
                pieces.append((start, code[start:k]))
                start = None
            i = k
            continue
        if c in "\"'":
            i = _skip_literal(code, i)
            continue
        if c in "([":
            parens += 1
        elif c in ")]":
            parens -= 1
        elif c == "{":
            braces += 1
        elif c == "}":
            braces -= 1
            if braces == 0 and parens == 0:
                k = _skip_space_and_comments(code, i + 1)
                word = _WORD.match(code, k)
                head = _first_word(code[start:i])
                if k < n and code[k] == ";":
                    end = _end_of_line_if_blank(code, k + 1)
                    pieces.append((start, code[start:end]))
                    start, i = None, end
                    continue
                if (
                    (word and word.group(0) in ("else", "catch", "while"))
                    or head in ("class", "struct", "union", "enum", "typedef")
                    or _assigns(code[start:i])
                ):
                    i += 1
                    continue
                end = _end_of_line_if_blank(code, i + 1)
                pieces.append((start, code[start:end]))
                start, i = None, end
                continue
        elif c == ";" and braces == 0 and parens == 0:
            end = _end_of_line_if_blank(code, i + 1)
            pieces.append((start, code[start:end]))
            start, i = None, end
            continue
        i += 1
    if start is not None and code[start:].strip():
        rest = code[start:]
        if _skip_space_and_comments(rest, 0) < len(rest):
            raise DocError(f"unterminated statement: {rest.strip()[:60]!r}")
        pieces.append((start, rest))  # trailing comments
    return pieces


def _first_word(text):
    i = _skip_space_and_comments(text, 0)
    if text.startswith("#", i):
        return "#"
    m = _WORD.match(text, i)
    return m.group(0) if m else ""


def _assigns(text):
    """Whether the piece so far is `... = {` (a braced initializer, ended by `;`)."""
    head = text[: text.find("{")] if "{" in text else text
    return bool(re.search(r"[^=!<>]=\s*$", head.rstrip()))


def is_declaration(piece):
    word = _first_word(piece)
    if word == "#" or word in DECL_WORDS or word.startswith("FERRY_REGISTER_"):
        return True
    if word in STMT_WORDS or word == "":
        return False
    body = piece[_skip_space_and_comments(piece, 0) :].rstrip()
    if body.endswith("}") and not body.endswith("};"):
        head = body[: body.find("{")]
        # A function definition: `type name(params) [qualifiers] {`.
        return bool(re.search(r"[\w>*&]\s+[*&]*[\w:~]+\s*\([^;]*\)[\w\s:&>-]*$", head, re.DOTALL))
    return False


def is_comment_only(piece):
    return _skip_space_and_comments(piece, 0) >= len(piece)


# ---------------------------------------------------------------------------------------------
# Compiling and running.


def _headers_digest():
    h = hashlib.sha256()
    for path in sorted((ROOT / "include").rglob("*")):
        if path.is_file():
            h.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


_HEADERS = None


def compile_cached(lang, source, shared=False):
    """Compiles `source` (C or C++) into a program or a shared library; returns its path."""
    global _HEADERS
    if _HEADERS is None:
        _HEADERS = _headers_digest()
    lib = BUILD / "libferry.so"
    if not lib.exists():
        raise DocError(f"{lib} does not exist: build Ferry first (or set FERRY_DOCS_BUILD)")
    if lang == "cpp":
        cmd = ["g++", "-std=c++17"]
        suffix = ".cc"
    else:
        cmd = ["gcc", "-std=c99", "-pedantic"]
        suffix = ".c"
    cmd += WARNINGS + [f"-I{ROOT / 'include'}"]
    if shared:
        cmd += ["-shared", "-fPIC"]
    stat = lib.resolve().stat()
    key = hashlib.sha256(
        json.dumps(
            [cmd, source, _HEADERS, str(lib.resolve()), stat.st_mtime_ns, stat.st_size, str(BUILD)]
        ).encode()
    ).hexdigest()[:32]
    out_dir = CACHE / key
    out = out_dir / ("lib.so" if shared else "a.out")
    if out.exists():
        return out
    out_dir.mkdir(parents=True, exist_ok=True)
    src = out_dir / ("source" + suffix)
    src.write_text(source, encoding="utf-8")
    tmp = out_dir / (out.name + f".tmp{os.getpid()}")
    full = cmd + ["-o", str(tmp), str(src), f"-L{BUILD}", "-lferry", f"-Wl,-rpath,{BUILD}"]
    result = subprocess.run(
        full, check=False, capture_output=True, text=True, cwd=ROOT, timeout=TIMEOUT
    )
    if result.returncode != 0:
        raise DocError("compilation failed:\n" + result.stderr[-6000:] + _numbered(source))
    os.replace(tmp, out)
    return out


def _numbered(source):
    return "\n--- the compiled source ---\n" + "\n".join(
        f"{i + 1:4} {line}" for i, line in enumerate(source.split("\n"))
    )


def assemble(lang, blocks):
    """One translation unit from the snippets of a page."""
    decls, stmts = [], []
    for block in blocks:
        for offset, piece in split_statements(block.code):
            if is_comment_only(piece):
                continue
            line = block.line + block.code.count("\n", 0, offset)
            text = f'#line {line} "{rel(block.page)}"\n{piece}\n'
            (decls if is_declaration(piece) else stmts).append(text)
    prelude = CPP_PRELUDE if lang == "cpp" else C_PRELUDE
    body = "".join(stmts)
    if lang == "cpp":
        main = (
            "int main() {\n  try {\n" + body + "  } catch (const std::exception& e) {\n"
            '    std::fprintf(stderr, "uncaught exception: %s\\n", e.what());\n'
            "    return 1;\n  }\n  return 0;\n}\n"
        )
    else:
        main = "int main(void) {\n" + body + "  return 0;\n}\n"
    return prelude + "".join(decls) + '#line 1 "<main>"\n' + main


def full_program(block):
    return f'#line {block.line} "{rel(block.page)}"\n' + block.code


# ---------------------------------------------------------------------------------------------
# Shell commands: run, or check what they name.

CHECK_PROGRAMS = {"git", "apt-get", "apt", "sudo"}


def _repo_path_problems(tokens):
    """Tokens naming a path inside the checkout that does not exist."""
    problems = []
    tops = {p.name for p in ROOT.iterdir()}
    for tok in tokens:
        if tok.startswith("-") or "$" in tok:
            tok = tok.split("=", 1)[1] if tok.startswith("-") and "=" in tok else None
            if tok is None or "$" in tok:
                continue
        first = tok.split("/", 1)[0]
        if first == "." and tok.startswith("./"):
            first = tok[2:].split("/", 1)[0]
            tok = tok[2:]
        if (
            first in tops
            and first not in ("build",)
            and not first.startswith("build")
            and not (ROOT / tok).exists()
        ):
            problems.append(f"{tok} does not exist in the checkout")
    return problems


_CMAKE_VARS = None


def _cmake_variables():
    global _CMAKE_VARS
    if _CMAKE_VARS is None:
        names = set()
        paths = list((ROOT / "cmake").glob("*.cmake"))
        for dirpath, dirnames, filenames in os.walk(ROOT):
            dirnames[:] = [d for d in dirnames if not d.startswith(("build", "."))]
            paths += [pathlib.Path(dirpath, f) for f in filenames if f == "CMakeLists.txt"]
        for path in paths:
            text = path.read_text(errors="replace")
            names.update(re.findall(r"option\(\s*(\w+)", text))
            names.update(re.findall(r"set\(\s*(\w+)[^)]*\bCACHE\b", text))
            names.update(re.findall(r"\$\{(\w+)\}", text))
            names.update(re.findall(r"if\(\s*(?:NOT\s+)?(\w+)", text))
        _CMAKE_VARS = names
    return _CMAKE_VARS


def check_command(tokens, installed_context):
    """Problems with a command that is checked instead of run, or None if it should run."""
    while tokens and re.match(r"^\w+=", tokens[0]):
        tokens = tokens[1:]
    if not tokens:
        return None
    prog = tokens[0]
    args = tokens[1:]
    if prog in ("bash", "sh") and args and args[0].startswith(("scripts/", "./scripts/")):
        prog, args = args[0], args[1:]
    if re.match(r"^(\./)?scripts/[\w.-]+$", prog):
        script = ROOT / prog.lstrip("./") if not prog.startswith("./") else ROOT / prog[2:]
        if not script.exists():
            return [f"{prog} does not exist"]
        problems = [] if os.access(script, os.X_OK) else [f"{prog} is not executable"]
        text = script.read_text(errors="replace")
        for arg in args:
            if arg.startswith("--") and arg.split("=")[0] not in text:
                problems.append(f"{prog} does not handle {arg.split('=')[0]}")
        return problems
    if prog in ("pip", "pip3") or (prog in ("python", "python3") and args[:2] == ["-m", "pip"]):
        rest = args[2:] if prog.startswith("python") else args
        problems = []
        for arg in rest[1:]:
            names_path = not arg.startswith("-") and (arg.startswith(".") or "/" in arg)
            if names_path and not (ROOT / arg).exists():
                problems.append(f"pip install {arg}: {arg} does not exist in the checkout")
        return problems
    if prog in ("python", "python3") and args[:2] == ["-m", "pytest"]:
        return _repo_path_problems(args[2:])
    if prog in CHECK_PROGRAMS:
        return _repo_path_problems(args)
    if prog == "ctest" and any(re.match(r"^(\./)?build[\w-]*/?$", a) for a in args):
        return _repo_path_problems(args)
    if prog == "cmake":
        repo_tree = False
        for k, arg in enumerate(args):
            nxt = args[k + 1] if k + 1 < len(args) else ""
            if (arg == "-S" and nxt in (".", "./")) or arg in ("-S.",):
                repo_tree = True
            if arg in ("-B", "--build") and re.match(r"^(\./)?build[\w-]*/?$", nxt):
                repo_tree = True
            if arg == "--install":
                prefix = args[args.index("--prefix") + 1] if "--prefix" in args else "/usr/local"
                if prefix.startswith("/") and not prefix.startswith("$PWD"):
                    repo_tree = True
        if not repo_tree and not installed_context:
            return None
        problems = _repo_path_problems(args)
        for arg in args if repo_tree else []:
            m = re.match(r"^-D(\w+)(:\w+)?=", arg)
            if m and not m.group(1).startswith("CMAKE_") and m.group(1) not in _cmake_variables():
                problems.append(f"-D{m.group(1)} is not a variable of the checkout's CMake files")
        return problems
    if re.match(r"^(\./)?build[\w-]*/", prog):
        parts = prog.split("/")
        parts = parts[2:] if parts[0] == "." else parts[1:]
        if len(parts) >= 2:
            base = ROOT.joinpath(*parts)
            if not any(
                p.exists()
                for p in (
                    base.with_suffix(".cc"),
                    base.with_suffix(".c"),
                    base.with_suffix(".cpp"),
                    base,
                )
            ):
                return [f"{prog}: no source {rel(base)}.cc (or .c, or a directory) in the checkout"]
        return _repo_path_problems(args)
    if installed_context:
        if prog in ("python", "python3") and len(args) >= 2 and args[0] == "-m":
            helptext = subprocess.run(
                [sys.executable, "-m", args[1], "--help"],
                check=False,
                capture_output=True,
                text=True,
                env=_env(None),
                timeout=60,
            ).stdout
            return [
                f"python -m {args[1]} has no option {a}"
                for a in args[2:]
                if a.startswith("--") and a.split("=")[0] not in helptext
            ]
        return _repo_path_problems(args)
    return None


_OPERATORS = {"&&", "||", ";", "|", "&", "(", ")"}


def split_commands(line):
    """The simple commands of one logical shell line, as token lists (no expansion)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    commands, current = [], []
    try:
        tokens = list(lexer)
    except ValueError:
        return [shlex.split(line, comments=True)] if line.strip() else []
    for tok in tokens:
        if tok in _OPERATORS or set(tok) <= set("&|;()"):
            if current:
                commands.append(current)
            current = []
        else:
            current.append(tok)
    if current:
        commands.append(current)
    return commands


def logical_lines(code):
    """Lines of a shell block with backslash continuations joined: [(line_offset, text)]."""
    out, buf, first = [], "", None
    for k, line in enumerate(code.split("\n")):
        if first is None:
            first = k
        if line.rstrip().endswith("\\"):
            buf += line.rstrip()[:-1] + " "
            continue
        buf += line
        if buf.strip():
            out.append((first, buf))
        buf, first = "", None
    if buf.strip():
        out.append((first, buf))
    return out


def plan_shell(code):
    """[(line_offset, text, problems_or_None)]: problems is None for a line to run."""
    plan = []
    installed = False
    for offset, line in logical_lines(code):
        commands = split_commands(line)
        checked = None
        for tokens in commands:
            problems = check_command(tokens, installed)
            if problems is not None:
                checked = (checked or []) + problems
            bare = [t for t in tokens if not re.match(r"^\w+=", t)]
            if bare[:2] in (["pip", "install"], ["pip3", "install"]) or bare[1:4] == [
                "-m",
                "pip",
                "install",
            ]:
                installed = True
        if checked is None and installed and commands:
            checked = []
        plan.append((offset, line, checked))
    return plan


_SHIMS = None


def _shims(tmp_root):
    global _SHIMS
    if _SHIMS is None or not _SHIMS.exists():
        d = tmp_root / "bin"
        d.mkdir(parents=True, exist_ok=True)
        for name in ("python", "python3"):
            if not (d / name).exists():
                (d / name).symlink_to(sys.executable)
        tschema = d / "tschema"
        tschema.write_text(
            f"#!/bin/sh\nexec '{sys.executable}' -c 'import sys; from "
            'ferry.tschema.__main__ import main; sys.exit(main())\' "$@"\n'
        )
        tschema.chmod(0o755)
        _SHIMS = d
    return _SHIMS


def _env(workdir):
    env = dict(os.environ)
    if _SHIMS is not None:
        env["PATH"] = f"{_SHIMS}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(PYTHONPATH)
    env["FERRY_BUILD_DIR"] = str(BUILD)  # `import ferry` from python/ takes this build's extension
    env.pop("PYTHONSTARTUP", None)
    # ferry.cpp builds of the pages: not in the user's ~/.cache/ferry.
    env.setdefault("FERRY_CACHE_DIR", str(CACHE / "ferry-cpp"))
    return env


def _run_in(workdir, cmd):
    """Runs `cmd` in `workdir` with the pages' environment, its output captured, for at most
    TIMEOUT seconds."""
    return subprocess.run(
        cmd,
        cwd=workdir,
        env=_env(workdir),
        check=False,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def _output(result):
    """The tails of a finished run's stdout and stderr, for a DocError."""
    return f"--- stdout ---\n{result.stdout[-4000:]}\n--- stderr ---\n{result.stderr[-4000:]}"


def run_shell(script, workdir, where):
    result = _run_in(workdir, ["bash", "-eu", "-o", "pipefail", "-c", script])
    if result.returncode != 0:
        raise DocError(
            f"{where}: exit status {result.returncode}\n--- script ---\n{script}\n"
            + _output(result)
        )
    return result


def match_output(expected, actual):
    """Line-by-line comparison; a line `...` matches any run of lines."""
    exp = [ln.rstrip() for ln in expected]
    act = [ln.rstrip() for ln in actual]
    while exp and exp[-1] == "":
        exp.pop()
    while act and act[-1] == "":
        act.pop()

    def go(i, j):
        if i == len(exp):
            return j == len(act)
        if exp[i] == "...":
            return any(go(i + 1, k) for k in range(j, len(act) + 1))
        return j < len(act) and exp[i] == act[j] and go(i + 1, j + 1)

    return go(0, 0)


# ---------------------------------------------------------------------------------------------
# The page runner.


class PythonSession:
    """One interpreter per page, running its python blocks in order (python_runner.py)."""

    def __init__(self, workdir):
        self.log = open(workdir / "python.log", "w+")
        read_fd, write_fd = os.pipe()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                str(pathlib.Path(__file__).with_name("python_runner.py")),
                str(write_fd),
            ],
            stdin=subprocess.PIPE,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            cwd=workdir,
            env=_env(workdir),
            pass_fds=(write_fd,),
            text=True,
        )
        os.close(write_fd)
        self.answers = queue.Queue()
        reader = os.fdopen(read_fd)
        threading.Thread(
            target=lambda: [self.answers.put(ln) for ln in reader] + [self.answers.put(None)],
            daemon=True,
        ).start()

    def run(self, block):
        request = {"code": block.code, "file": str(block.page), "line": block.line}
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        try:
            answer = self.answers.get(timeout=TIMEOUT)
        except queue.Empty:
            self.close()
            raise DocError(f"{block.where}: timed out after {TIMEOUT} s{self.output()}") from None
        if answer is None:
            raise DocError(f"{block.where}: the interpreter died{self.output()}")
        answer = json.loads(answer)
        if not answer["ok"]:
            raise DocError(
                f"{block.where}: the python block raised:\n{answer['error']}{self.output()}"
            )

    def output(self):
        self.log.flush()
        self.log.seek(0)
        text = self.log.read()[-4000:]
        return f"\n--- output of the page's python ---\n{text}" if text.strip() else ""

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def make_workdir(path):
    path.mkdir(parents=True, exist_ok=True)
    for name in LINKED:
        if (ROOT / name).exists() and not (path / name).exists():
            (path / name).symlink_to(ROOT / name)
    if not (path / "build").exists():
        (path / "build").symlink_to(BUILD)
    return path


def write_file(workdir, block):
    target = (workdir / block.attrs["file"]).resolve()
    if workdir.resolve() not in target.parents:
        raise DocError(f"{block.where}: file={block.attrs['file']} must stay in the work directory")
    if any((workdir / name).resolve() in [target, *target.parents] for name in LINKED + ["build"]):
        raise DocError(f"{block.where}: file={block.attrs['file']} would write into the checkout")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(block.code, encoding="utf-8")


def run_program(path, workdir, where):
    result = _run_in(workdir, [str(path)])
    if result.returncode != 0:
        raise DocError(
            f"{where}: the program exited with status {result.returncode}\n" + _output(result)
        )


def cmake_fragment(block, workdir, prefix):
    project = workdir / f"_cmake_{block.line}"
    project.mkdir()
    code = block.code
    head = ""
    if "cmake_minimum_required" not in code:
        head += "cmake_minimum_required(VERSION 3.18)\n"
    if not re.search(r"^\s*project\(", code, re.MULTILINE):
        head += "project(doc_fragment LANGUAGES C CXX)\n"
    defined = set(re.findall(r"add_(?:library|executable)\(\s*([\w:-]+)", code))
    used = set(re.findall(r"target_\w+\(\s*([\w-]+)", code)) - defined
    (project / "_doc_main.cc").write_text("int main() { return 0; }\n")
    for target in sorted(used):
        head += f"add_executable({target} _doc_main.cc)\n"
    for sources in re.findall(r"add_(?:library|executable)\(\s*[\w:-]+([^)]*)\)", code):
        for src in sources.split():
            if re.search(r"\.(cc|cpp|c|h)$", src) and not (project / src).exists():
                (project / src).parent.mkdir(parents=True, exist_ok=True)
                (project / src).write_text("int docs_placeholder;\n")
    (project / "CMakeLists.txt").write_text(head + f"# {block.where}\n" + code)
    cmd = [
        "cmake",
        "-S",
        str(project),
        "-B",
        str(project / "build"),
        f"-DCMAKE_PREFIX_PATH={prefix}",
        f"-DPython_EXECUTABLE={sys.executable}",
    ]
    if shutil.which("ninja"):
        cmd += ["-G", "Ninja"]
    result = _run_in(workdir, cmd)
    if result.returncode != 0:
        raise DocError(
            f"{block.where}: configuring the block as a CMake project failed\n" + _output(result)
        )


def run_page(page, workdir, prefix):
    """Runs the blocks of `page` in order; raises DocError at the first failure."""
    blocks = parse_blocks(page)
    snippets = {
        lang: [
            b
            for b in blocks
            if b.lang == lang and "file" not in b.attrs and "int main(" not in b.code
        ]
        for lang in ("cpp", "c")
    }
    last_snippet = {lang: (bs[-1] if bs else None) for lang, bs in snippets.items()}
    files = [b for b in blocks if "file" in b.attrs]
    for f in files:
        path = pathlib.PurePosixPath(f.attrs["file"])
        names = {path.name, str(path)} | (
            {str(path.parent)}
            if path.name == "CMakeLists.txt" and str(path.parent) != "."
            else set()
        )
        later = blocks[blocks.index(f) + 1 :]
        if not any(name in b.code for b in later for name in names):
            raise DocError(
                f"{f.where}: file={f.attrs['file']} is not used by a later block of the page"
            )
    session = None
    report = []
    try:
        for block in blocks:
            try:
                if "file" in block.attrs:
                    write_file(workdir, block)
                elif block.lang in ("text",):
                    pass
                elif block.lang == "json":
                    json.loads(block.code)
                elif block.lang == "python":
                    if session is None:
                        session = PythonSession(workdir)
                    session.run(block)
                elif block.lang in ("cpp", "c"):
                    if "int main(" in block.code:
                        run_program(
                            compile_cached(block.lang, full_program(block)), workdir, block.where
                        )
                    elif block is last_snippet[block.lang]:
                        source = assemble(block.lang, snippets[block.lang])
                        run_program(compile_cached(block.lang, source), workdir, block.where)
                        for b in snippets[block.lang]:
                            if "lib" in b.attrs:
                                shutil.copy(
                                    compile_cached(block.lang, source, shared=True),
                                    workdir / b.attrs["lib"],
                                )
                elif block.lang == "sh":
                    script = []
                    for offset, line, problems in plan_shell(block.code):
                        if problems is None:
                            script.append(line)
                        elif problems:
                            raise DocError(
                                f"{rel(page)}:{block.line + offset}: " + "; ".join(problems)
                            )
                        else:
                            report.append(f"checked, not run: {line.strip()}")
                    if script:
                        run_shell("\n".join(script), workdir, block.where)
                elif block.lang == "console":
                    run_console(block, workdir, report)
                elif block.lang == "cmake":
                    cmake_fragment(block, workdir, prefix)
                elif block.lang == "rust":
                    check_rust_doc_test(block)
                elif block.lang == "java":
                    check_java_doc_test(block)
            except DocError as e:
                msg = str(e)
                raise DocError(
                    msg if msg.startswith(rel(page)) else f"{block.where}: {msg}"
                ) from None
            except subprocess.TimeoutExpired as e:
                raise DocError(f"{block.where}: timed out: {e}") from None
    finally:
        if session is not None:
            session.close()
    return report


def check_rust_doc_test(block):
    """A `rust` block is a doc test of the ferry crate: its lib.rs must include the page."""
    page = block.page.resolve()
    source = RUST_DOC_INCLUDER.read_text(encoding="utf-8") if RUST_DOC_INCLUDER.exists() else ""
    for included in re.findall(r'include_str!\("([^"]+)"\)', source):
        if (RUST_DOC_INCLUDER.parent / included).resolve() == page:
            return
    raise DocError(
        f"{block.where}: rust blocks run as doc tests of the ferry crate, but "
        f"{rel(RUST_DOC_INCLUDER)} does not include {rel(block.page)} "
        f'(#[doc = include_str!("...")])'
    )


def check_java_doc_test(block):
    """A `java` block runs in the JUnit test DocsTest: its page must be one DocsTest reads."""
    source = JAVA_DOCS_TEST.read_text(encoding="utf-8") if JAVA_DOCS_TEST.exists() else ""
    listed = re.search(r"PAGES = List\.of\(([^)]*)\)", source)
    pages = re.findall(r'"([^"]+)"', listed.group(1)) if listed else []
    if any((ROOT / page).resolve() == block.page.resolve() for page in pages):
        return
    raise DocError(
        f"{block.where}: java blocks compile and run in the JUnit test {rel(JAVA_DOCS_TEST)}, "
        f"but its PAGES do not list {rel(block.page)}"
    )


def run_console(block, workdir, report):
    lines = block.code.split("\n")
    k = 0
    while k < len(lines):
        if not lines[k].startswith("$ "):
            if lines[k].strip():
                raise DocError(
                    f"{rel(block.page)}:{block.line + k}: output before any `$ ` command"
                )
            k += 1
            continue
        start = k
        command = lines[k][2:]
        while command.rstrip().endswith("\\") and k + 1 < len(lines):
            k += 1
            command = command.rstrip()[:-1] + " " + lines[k]
        k += 1
        expected = []
        while k < len(lines) and not lines[k].startswith("$ "):
            expected.append(lines[k])
            k += 1
        ((_, _, problems),) = plan_shell(command) or [(0, command, None)]
        where = f"{rel(block.page)}:{block.line + start}"
        if problems is not None:
            if problems:
                raise DocError(f"{where}: " + "; ".join(problems))
            report.append(f"checked, not run: {command}")
            continue
        result = subprocess.run(
            ["bash", "-eu", "-o", "pipefail", "-c", command],
            cwd=workdir,
            env=_env(workdir),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        actual = result.stdout.split("\n")
        if result.returncode != 0 or not match_output(expected, actual):
            raise DocError(
                f"{where}: `{command}` (exit status {result.returncode}) printed\n"
                f"{result.stdout}\n--- the page expects ---\n" + "\n".join(expected)
            )
