"""ferry.cpp: C++ (and a tschema schema) to a loaded library in one call, cached.

Each library is compiled once per session (session fixtures, a cache directory of their own);
the tests that only need the cache machinery build sources that do not include Ferry's headers,
which compile in a fraction of a second.
"""

import ctypes
import hashlib
import inspect
import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

import ferry
import ferry.cpp

ROOT = pathlib.Path(__file__).resolve().parents[2]
TSCHEMA_DIR = pathlib.Path(__file__).resolve().parent / "tschema"
if str(TSCHEMA_DIR) not in sys.path:
    sys.path.insert(0, str(TSCHEMA_DIR))

FAST = ["-O0", "-g0"]  # appended after the release flags: for tests that do not need -O3


@pytest.fixture(scope="session")
def cache(tmp_path_factory):
    """FERRY_CACHE_DIR for the whole session, in a fresh directory."""
    path = tmp_path_factory.mktemp("ferry_cache")
    saved = os.environ.get("FERRY_CACHE_DIR")
    os.environ["FERRY_CACHE_DIR"] = str(path)
    yield path
    if saved is None:
        os.environ.pop("FERRY_CACHE_DIR", None)
    else:
        os.environ["FERRY_CACHE_DIR"] = saved


INLINE = """\
FERRY_REGISTER_GLOBAL("jit_inline.add").set_body_typed([](int64_t a, int64_t b) {
  return a + b;
});
FERRY_REGISTER_GLOBAL("jit_inline.greet").set_body_typed([](ferry::String who) {
  return ferry::String("hello " + std::string(who));
});
"""


@pytest.fixture(scope="session")
def inline_lib(cache):
    return ferry.cpp.load_inline("jit_inline", INLINE)


SCHEMA = """\
from ferry.tschema import Object, declare, ty


@declare
class JitExprNode(Object):
    type_key = "jit_shapes.Expr"


@declare
class JitConstNode(JitExprNode):
    type_key = "jit_shapes.Const"
    value: ty.int64_t


@declare
class JitAddNode(JitExprNode):
    type_key = "jit_shapes.Add"
    a: JitExprNode
    b: JitExprNode
"""

PASS = """\
#include "jit_shapes_schema.h"

// A hand-written pass over the schema's nodes: folds constants.
JitExpr Fold(JitExpr e) {
  if (const auto* add = e.as<JitAddNode>()) {
    JitExpr a = Fold(add->a), b = Fold(add->b);
    const auto* ca = a.as<JitConstNode>();
    const auto* cb = b.as<JitConstNode>();
    if (ca && cb) return JitConst(ca->value + cb->value);
    return JitAdd(a, b);
  }
  return e;
}

FERRY_REGISTER_GLOBAL("jit_shapes.fold").set_body_typed(Fold);
"""


@pytest.fixture(scope="session")
def schema_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("jit_shapes")
    (d / "jit_shapes_schema.py").write_text(SCHEMA)
    (d / "fold.cc").write_text(PASS)
    return d


@pytest.fixture(scope="session")
def schema_lib(cache, schema_files):
    return ferry.cpp.load(
        "jit_shapes", [schema_files / "fold.cc"], schema=schema_files / "jit_shapes_schema.py"
    )


def test_an_inline_global_function_is_built_loaded_and_called(inline_lib, cache):
    assert inline_lib.add(2, 40) == 42
    assert inline_lib.greet("you") == "hello you"
    assert ferry.get_global_func("jit_inline.add")(1, 2) == 3
    assert inline_lib.path == inline_lib.__file__
    assert inline_lib.path.startswith(str(cache) + os.sep)
    assert os.path.basename(inline_lib.path) == "libjit_inline.so"
    # What load returns stands for the library's path (docs/python.md), with the module's
    # attributes, and no attributes of its own a library name could collide with.
    assert not isinstance(inline_lib, str) and inline_lib == inline_lib.path
    assert os.fspath(inline_lib) == str(inline_lib) == inline_lib.path
    assert os.path.exists(inline_lib) and hash(inline_lib) == hash(inline_lib.path)
    assert {"add", "greet"} <= set(dir(inline_lib)) and not hasattr(inline_lib, "upper")
    # Loading it again returns the same module, without registering anything twice.
    again = ferry.cpp.load_inline("jit_inline", INLINE)
    assert again == inline_lib and again.module is inline_lib.module


def test_an_inline_source_is_kept_for_its_diagnostics(inline_lib):
    kept = pathlib.Path(inline_lib.path).parent / "src" / "jit_inline.cc"
    assert kept.read_text() == INLINE


def test_a_schema_and_a_hand_written_pass(schema_lib, schema_files):
    m = schema_lib
    e = m.JitAdd(m.JitAdd(m.JitConst(1), m.JitConst(2)), m.JitConst(39))
    assert isinstance(e, m.JitExpr) and e.a.b.value == 2
    folded = m.fold(e)
    assert type(folded) is m.JitConst and folded.value == 42
    # Objects made in C++ come back as the generated classes.
    assert (
        type(m.fold(m.JitAdd(m.JitConst(1), m.JitAdd(m.JitConst(0), m.JitConst(0))))) is m.JitConst
    )
    assert ferry.structural_equal(m.fold(m.JitAdd(m.JitConst(1), m.JitConst(2))), m.JitConst(3))
    src = pathlib.Path(m.path).parent / "src"
    assert sorted(p.name for p in src.iterdir()) == [
        "jit_shapes_schema.cc",
        "jit_shapes_schema.h",
        "jit_shapes_schema.py",
    ]
    assert "class JitAddNode" in (src / "jit_shapes_schema.h").read_text()


def test_a_cache_hit_does_not_recompile(schema_lib, schema_files):
    lib = pathlib.Path(schema_lib.path)
    before = lib.stat()
    manifest = (lib.parent / "manifest.json").read_text()
    again = ferry.cpp.build(
        "jit_shapes", [schema_files / "fold.cc"], schema=schema_files / "jit_shapes_schema.py"
    )
    assert again == str(lib)
    after = lib.stat()
    assert (after.st_mtime_ns, after.st_ino) == (before.st_mtime_ns, before.st_ino)
    assert (lib.parent / "manifest.json").read_text() == manifest
    assert not [p for p in lib.parent.iterdir() if p.name.startswith("build-")]


def test_tschema_build_uses_the_same_cache(schema_lib, schema_files, tmp_path):
    from tschema_support import run_cli

    out = tmp_path / "out" / "libjit_shapes.so"
    before = pathlib.Path(schema_lib.path).stat().st_mtime_ns
    code, stdout, err = run_cli(
        "build",
        schema_files / "jit_shapes_schema.py",
        "--source",
        schema_files / "fold.cc",
        "-o",
        out,
    )
    assert code == 0, err
    assert stdout.strip() == str(out)
    assert out.read_bytes() == pathlib.Path(schema_lib.path).read_bytes()
    assert pathlib.Path(schema_lib.path).stat().st_mtime_ns == before  # a hit
    # Without -o it prints the library in the cache; the name comes from the schema file.
    code, stdout, err = run_cli(
        "build", schema_files / "jit_shapes_schema.py", "--source", schema_files / "fold.cc"
    )
    assert (code, stdout.strip()) == (0, schema_lib.path), err


def test_tschema_build_errors(tmp_path, cache, schema_files):
    from tschema_support import run_cli

    code, _, err = run_cli(
        "build", schema_files / "jit_shapes_schema.py", "-o", tmp_path / "shapes.so"
    )
    assert code == 2 and "expected lib<name>.so" in err
    bad = tmp_path / "bad_schema.py"
    bad.write_text(
        "from ferry.tschema import Object, declare, ty\n\n\n@declare\n"
        "class BadNode(Object):\n    type_key = 'jit_bad.Bad'\n    x: ty.nonsense\n"
    )
    code, _, err = run_cli("build", bad)
    assert code == 2 and f"{bad}:7:" in err and "Traceback" not in err
    assert not list(cache.glob("bad-*/libbad.so"))


def _tiny(tmp_path, name, body):
    """A source that does not include Ferry's headers: compiles in a blink."""
    path = tmp_path / f"{name}.cc"
    path.write_text(body)
    return path


def test_a_changed_dependency_is_rebuilt(tmp_path, cache):
    header = tmp_path / "value.h"
    header.write_text("#define JIT_VALUE 1\n")
    src = _tiny(
        tmp_path, "dep", '#include "value.h"\nextern "C" int jit_value() { return JIT_VALUE; }\n'
    )
    first = ferry.cpp.build("jit_dep", [src], include_dirs=[tmp_path])
    mtime = os.stat(first).st_mtime_ns
    assert ferry.cpp.build("jit_dep", [src], include_dirs=[tmp_path]) == first
    assert os.stat(first).st_mtime_ns == mtime
    header.write_text("#define JIT_VALUE 22\n")  # not an argument: found by the dependency scan
    os.utime(header, ns=(mtime + 10**9, mtime + 10**9))
    assert ferry.cpp.build("jit_dep", [src], include_dirs=[tmp_path]) == first
    assert os.stat(first).st_mtime_ns != mtime
    # A changed source, or changed flags, is another entry of the cache.
    other = ferry.cpp.build("jit_dep", [src], include_dirs=[tmp_path], extra_cflags=["-O1"])
    assert other != first and os.path.exists(other) and os.path.exists(first)
    manifest = json.loads((pathlib.Path(first).parent / "manifest.json").read_text())
    assert str(header) in [d[0] for d in manifest["deps"]]


def test_a_compiler_error_names_the_users_file_and_line(tmp_path, cache):
    src = _tiny(
        tmp_path,
        "broken",
        'extern "C" int ok() { return 1; }\n\n'
        'extern "C" int broken() {\n  return undeclared_name;\n}\n',
    )
    with pytest.raises(ferry.cpp.BuildError) as info:
        ferry.cpp.build("jit_broken", [src])
    e = info.value
    message = str(e)
    assert f"{src}:4:" in message and "undeclared_name" in message
    assert e.diagnostics and (e.diagnostics[0].file, e.diagnostics[0].line) == (str(src), 4)
    assert e.diagnostics[0].severity == "error"
    assert "command: " in message and e.command and "-c" in e.command and str(src) in e.command
    assert isinstance(e, RuntimeError)
    # Nothing half-built is kept: no library, no manifest, no build directory.
    entries = list(cache.glob("jit_broken-*"))
    assert entries and not [
        p for e_ in entries for p in e_.iterdir() if p.name not in (".lock", "src")
    ]


def test_an_inline_error_points_into_the_kept_copy(cache):
    source = 'extern "C" int first() { return 1; }\nextern "C" int second() { return nope; }\n'
    with pytest.raises(ferry.cpp.BuildError) as info:
        ferry.cpp.load_inline("jit_inline_broken", source, extra_cflags=FAST)
    d = info.value.diagnostics[0]
    assert d.line == 2 and d.file.endswith(os.path.join("src", "jit_inline_broken.cc"))
    assert pathlib.Path(d.file).read_text().splitlines()[1] == source.splitlines()[1]
    assert f"{d.file}:2:" in str(info.value)


def test_a_link_error_is_a_build_error(tmp_path, cache):
    src = _tiny(
        tmp_path,
        "unresolved",
        'extern "C" int missing_symbol_xyz();\n'
        'extern "C" int use() { return missing_symbol_xyz(); }\n',
    )
    with pytest.raises(ferry.cpp.BuildError) as info:
        ferry.cpp.build("jit_unresolved", [src], extra_ldflags=["-Wl,--no-undefined"])
    assert "missing_symbol_xyz" in str(info.value) and "command: " in str(info.value)
    assert not list(cache.glob("jit_unresolved-*/libjit_unresolved.so"))


def test_a_schema_error_is_a_build_error_at_the_schema_line(tmp_path, cache):
    bad = tmp_path / "s.py"
    bad.write_text(
        "from ferry.tschema import Object, declare, ty\n\n\n@declare\n"
        "class JitBadNode(Object):\n    type_key = 'jit_bad.Bad'\n"
        "    x: ty.nonsense\n"
    )
    with pytest.raises(ferry.cpp.BuildError, match=rf"{bad}:7: .*nonsense"):
        ferry.cpp.build("jit_bad", schema=bad)


def test_a_missing_compiler(tmp_path, cache, monkeypatch):
    src = _tiny(tmp_path, "never", 'extern "C" int never() { return 0; }\n')
    monkeypatch.setenv("CXX", "/nonexistent")
    with pytest.raises(
        ferry.cpp.BuildError,
        match=r"CXX='/nonexistent' does not exist.*"
        r"apt-get install g\+\+",
    ):
        ferry.cpp.build("jit_never", [src])
    monkeypatch.setenv("CXX", "no-such-compiler-xyz")
    with pytest.raises(ferry.cpp.BuildError, match="is not on PATH"):
        ferry.cpp.build("jit_never", [src])
    assert not list(cache.glob("jit_never-*"))


def test_a_missing_ninja(tmp_path, cache, monkeypatch):
    src = _tiny(tmp_path, "never2", 'extern "C" int never() { return 0; }\n')
    real_which = ferry.cpp.shutil.which
    monkeypatch.setattr(
        ferry.cpp.shutil,
        "which",
        lambda name: None if name.startswith("ninja") else real_which(name),
    )
    monkeypatch.setitem(sys.modules, "ninja", None)  # nor the PyPI package
    with pytest.raises(ferry.cpp.BuildError, match="Ninja is not installed.*pip install ninja"):
        ferry.cpp.build("jit_never2", [src])


def test_bad_arguments(tmp_path, cache):
    with pytest.raises(ValueError, match="must be an identifier"):
        ferry.cpp.build("lib-x", [])
    with pytest.raises(ValueError, match="nothing to build"):
        ferry.cpp.build("jit_nothing", [])
    with pytest.raises(ferry.cpp.BuildError, match="does not exist"):
        ferry.cpp.build("jit_missing", [tmp_path / "missing.cc"])
    with pytest.raises(TypeError, match="cpp_source must be a str"):
        ferry.cpp.load_inline("jit_x", b"int x;")
    with pytest.raises(ValueError, match=r"cpp_source holds '\\ud800' at offset 4"):
        ferry.cpp.load_inline("jit_x", "int \ud800;")
    with pytest.raises(TypeError, match="extra_cflags must be strings"):
        ferry.cpp.build("jit_x", [_tiny(tmp_path, "x", "int x;\n")], extra_cflags=[1])


def test_build_and_load_share_one_signature(tmp_path, cache):
    # build and load take the same arguments (one declaration), by position or keyword; an
    # argument that does not fit names the public function, like Python's own TypeError.
    for f in (ferry.cpp.build, ferry.cpp.load):
        params = inspect.signature(f).parameters
        assert list(params)[:2] == ["name", "sources"] and "debug_info" in params
        assert "cpp_source" not in params and f.__doc__
        with pytest.raises(TypeError, match=rf"ferry\.cpp\.{f.__name__}\(\): .*'bogus'"):
            f("jit_x", [], bogus=1)
        with pytest.raises(TypeError, match=rf"ferry\.cpp\.{f.__name__}\(\): .*'cpp_source'"):
            f("jit_x", cpp_source="int x;")
        with pytest.raises(TypeError, match=rf"ferry\.cpp\.{f.__name__}\(\): .*positional"):
            f("jit_x", [], None)
        with pytest.raises(TypeError, match=rf"ferry\.cpp\.{f.__name__}\(\): .*'name'"):
            f()
    assert inspect.signature(ferry.cpp.build).return_annotation == "str"
    src = _tiny(tmp_path, "both", 'extern "C" int both() { return 3; }\n')
    path = ferry.cpp.build("jit_both", sources=[src], build_dir=tmp_path / "b", verbose=False)
    assert ferry.cpp.load("jit_both", [src], build_dir=tmp_path / "b") == path


def test_build_dir_builds_outside_the_cache(tmp_path, cache):
    src = _tiny(tmp_path, "here", 'extern "C" int here() { return 7; }\n')
    out = ferry.cpp.build("jit_here", [src], build_dir=tmp_path / "b")
    assert out == str(tmp_path / "b" / "libjit_here.so") and os.path.exists(out)
    assert ferry.cpp.build("jit_here", [src], build_dir=tmp_path / "b") == out


_RACE = """\
import sys, ferry.cpp
print(ferry.cpp.build("jit_race", [sys.argv[1]], verbose=True))
"""


def test_two_processes_building_the_same_source_at_once(tmp_path, cache):
    src = _tiny(
        tmp_path,
        "race",
        "".join(f'extern "C" int race{i}() {{ return {i}; }}\n' for i in range(200)),
    )
    env = dict(os.environ, FERRY_CACHE_DIR=str(cache / "race"))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _RACE, str(src)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    results = [p.communicate(timeout=240) for p in procs]
    for p, (_out, err) in zip(procs, results):
        assert p.returncode == 0, err
    # Exactly one of them ran the build; the other found its library (after waiting for it).
    assert sum(err.count("ninja: Entering directory") for _, err in results) == 1
    assert sum(err.count("ferry.cpp: built: ") for _, err in results) == 1
    paths = {out.strip() for out, _ in results}
    assert len(paths) == 1
    lib = pathlib.Path(paths.pop())
    assert lib.exists()
    entry = lib.parent
    assert sorted(p.name for p in entry.iterdir()) == [
        ".lock",
        "libjit_race.so",
        "manifest.json",
        "src",
    ]
    check = subprocess.run(["nm", "-D", str(lib)], capture_output=True, text=True, check=True)
    assert "race199" in check.stdout


CHANGED = """\
FERRY_REGISTER_GLOBAL("jit_inline.add").set_body_typed([](int64_t a, int64_t b) {
  return a - b;
});
"""


def test_a_changed_library_cannot_replace_the_loaded_one(inline_lib, cache):
    with pytest.raises(
        RuntimeError,
        match=r"(?s)already registered.*another build of "
        r"jit_inline .* is already loaded.*restart the process",
    ):
        ferry.cpp.load_inline("jit_inline", CHANGED, extra_cflags=FAST)
    assert inline_lib.add(5, 3) == 8  # the first one still works


# --- Build inputs are data (issue 31) ------------------------------------------------------------


def _injection(marker):
    """A value that, copied into build.ninja as it is, ends its line and adds a rule running
    `touch marker` as a default target."""
    return f"-DX\nrule evil\n  command = touch {marker}\nbuild evil: evil\ndefault evil\nx = "


def test_a_newline_in_a_build_input_is_refused_before_anything_runs(tmp_path, cache):
    src = _tiny(tmp_path, "inject", 'extern "C" int inject() { return 1; }\n')
    marker = tmp_path / "marker"
    for kwargs, what in (
        ({"extra_cflags": [_injection(marker)]}, r"extra_cflags\[0\] contains a newline"),
        ({"include_dirs": [tmp_path, _injection(marker)]}, r"include_dirs\[1\] contains a newline"),
        ({"extra_ldflags": ["-O0", "a\rb"]}, r"extra_ldflags\[1\] contains a carriage return"),
        ({"extra_cflags": ["a\0b"]}, r"extra_cflags\[0\] contains a NUL"),
        ({"build_dir": tmp_path / "b\nc"}, r"build_dir contains a newline"),
    ):
        with pytest.raises(ValueError, match=what):
            ferry.cpp.build("jit_inject", [src], **kwargs)
    assert not marker.exists()
    assert not list(cache.glob("jit_inject-*"))


def test_paths_and_flags_reach_the_compiler_literally(tmp_path, cache):
    # A source path with |, spaces, $ and : (| ends a path in a ninja build line and cannot be
    # escaped there), an include directory and flags with shell syntax: all arrive as written.
    weird = tmp_path / "we|ird $dir:x"
    weird.mkdir()
    inc = tmp_path / "inc |$:'dir"
    inc.mkdir()
    (inc / "jit_weird.h").write_text("#define JIT_HEADER 5\n")
    src = weird / "s|r c$x:y.cc"
    src.write_text(
        '#include "jit_weird.h"\n'
        'extern "C" const char* jit_text() { return JIT_TEXT; }\n'
        'extern "C" int jit_header() { return JIT_HEADER; }\n'
    )
    marker = tmp_path / "ran"
    text = f"a b;touch {marker}; $(touch {marker}) `touch {marker}` | c:d $x ${{y}} 'q' \"z\""
    path = ferry.cpp.build(
        "jit_weird", [src], include_dirs=[inc], extra_cflags=[f"-DJIT_TEXT={json.dumps(text)}"]
    )
    lib = ctypes.CDLL(path)
    lib.jit_text.restype = ctypes.c_char_p
    assert lib.jit_text().decode() == text and lib.jit_header() == 5
    assert not marker.exists()
    # The dependency scan found the header in the odd directory: a change rebuilds.
    manifest = json.loads((pathlib.Path(path).parent / "manifest.json").read_text())
    assert str(inc / "jit_weird.h") in [d[0] for d in manifest["deps"]]


# --- The cache is verified (issue 31) ------------------------------------------------------------

_LOAD_AND_CALL = """\
import ctypes, os, sys, ferry.cpp
lib = ferry.cpp.load("jit_damaged", [sys.argv[1]])
print(ctypes.CDLL(os.fspath(lib)).jit_damaged())
"""


def test_a_damaged_cached_library_is_rebuilt_not_loaded(tmp_path, cache):
    src = _tiny(tmp_path, "damaged", 'extern "C" int jit_damaged() { return 42; }\n')
    lib = pathlib.Path(ferry.cpp.build("jit_damaged", [src]))
    size = lib.stat().st_size
    manifest = lib.parent / "manifest.json"

    def flip_a_byte(data):
        return data[: size // 2] + bytes([data[size // 2] ^ 0xFF]) + data[size // 2 + 1 :]

    # A crash or a full disk (half, or nothing, written), and a same-size corruption.
    for damage in (lambda d: d[: size // 2], lambda d: b"", flip_a_byte):
        lib.write_bytes(damage(lib.read_bytes()))  # in place: the same file, shorter or changed
        run = subprocess.run(
            [sys.executable, "-c", _LOAD_AND_CALL, str(src)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert (run.returncode, run.stdout.strip()) == (0, "42"), run.stderr
        recorded = json.loads(manifest.read_text())["library"]
        assert lib.stat().st_size == size == recorded["size"]
        assert hashlib.sha256(lib.read_bytes()).hexdigest() == recorded["sha256"]


# --- One build directory, changed code (issue 31) ------------------------------------------------

V1 = 'FERRY_REGISTER_GLOBAL("jit_again.count").set_body_typed([](int64_t x) { return x + 1; });'
V2 = 'FERRY_REGISTER_GLOBAL("jit_again.index").set_body_typed([](int64_t x) { return x * 10; });'
V3 = 'FERRY_REGISTER_GLOBAL("jit_again.count").set_body_typed([](int64_t x) { return x + 2; });'


def test_changed_code_in_one_build_dir_is_loaded_or_refused_never_stale(tmp_path, cache):
    d = tmp_path / "b"
    first = ferry.cpp.load_inline("jit_again", V1, build_dir=d, extra_cflags=FAST)
    # A global named like a str method is the library's function.
    assert first.count(3) == 4
    assert os.fspath(first) == str(d / "libjit_again.so")
    # New code under new global names: loaded (from a file of its own), and it is what runs.
    second = ferry.cpp.load_inline("jit_again", V2, build_dir=d, extra_cflags=FAST)
    assert second.index(3) == 30 and not hasattr(second, "count")
    assert os.fspath(second) != os.fspath(first) and os.path.exists(second)
    assert first.count(3) == 4
    # New code under the same global names cannot replace the loaded one: an error, not v1.
    with pytest.raises(RuntimeError, match=r"(?s)already registered.*another build of jit_again"):
        ferry.cpp.load_inline("jit_again", V3, build_dir=d, extra_cflags=FAST)
    assert first.count(3) == 4 and ferry.get_global_func("jit_again.count")(3) == 4


# --- Names, directories, killed builds (issue 31) ------------------------------------------------


def test_a_long_name_and_an_unwritable_directory_are_clear_errors(tmp_path, cache, monkeypatch):
    src = _tiny(tmp_path, "nowhere", 'extern "C" int nowhere() { return 0; }\n')
    with pytest.raises(ValueError, match=r"is 300 characters long; at most 128"):
        ferry.cpp.build("j" * 300, [src])
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    with pytest.raises(
        ferry.cpp.BuildError, match=rf"build directory {blocker}/b \(build_dir=\).*writable"
    ):
        ferry.cpp.build("jit_nowhere", [src], build_dir=blocker / "b")
    monkeypatch.setenv("FERRY_CACHE_DIR", str(blocker / "cache"))
    with pytest.raises(
        ferry.cpp.BuildError,
        match=rf"cache directory {blocker}/cache \(FERRY_CACHE_DIR\).*set FERRY_CACHE_DIR",
    ):
        ferry.cpp.build("jit_nowhere", [src])


_SLOW_CXX = """\
#!/bin/sh
case "$1" in --version) echo "slow c++ 1.0" ;; *) exec sleep 300 ;; esac
"""

_BUILD_IN = """\
import sys, ferry.cpp
ferry.cpp.build("jit_killed", [sys.argv[1]], build_dir=sys.argv[2])
"""


def test_a_killed_build_leaves_nothing_behind_after_the_next_build(tmp_path, cache):
    src = _tiny(tmp_path, "killed", 'extern "C" int killed() { return 0; }\n')
    slow = tmp_path / "slow-cxx"
    slow.write_text(_SLOW_CXX)
    slow.chmod(0o755)
    d = tmp_path / "b"
    proc = subprocess.Popen(
        [sys.executable, "-c", _BUILD_IN, str(src), str(d)],
        env=dict(os.environ, CXX=str(slow)),
        start_new_session=True,  # its own process group: ninja and the "compiler" die with it
    )
    try:
        deadline = time.monotonic() + 120
        while not list(d.glob("*/build.ninja")) and time.monotonic() < deadline:
            assert proc.poll() is None
            time.sleep(0.05)
        assert list(d.glob("*/build.ninja")), "the build never started"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    left = [p for p in d.iterdir() if p.is_dir() and p.name != "src"]
    assert left  # what a killed build leaves
    ferry.cpp.build("jit_killed", [src], build_dir=d)
    assert sorted(p.name for p in d.iterdir()) == [
        ".lock",
        "libjit_killed.so",
        "manifest.json",
        "src",
    ]


def test_a_cold_ferry_cpp_build_says_so_once(tmp_path):
    script = (
        "import ferry.cpp\n"
        "lib = ferry.cpp.load_inline('setup_cold', 'FERRY_REGISTER_GLOBAL(\"setup_cold.one\")"
        ".set_body_typed([]() { return 1; });')\n"
        "assert lib.one() == 1\n"
    )
    env = {**os.environ, "FERRY_CACHE_DIR": str(tmp_path / "cache")}

    def run():
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
        return done.stderr

    assert run() == "ferry.cpp: building libsetup_cold.so (first time; cached afterwards)...\n"
    assert run() == ""  # a cache hit is silent


UNLOAD_SOURCE = """\
FERRY_REGISTER_GLOBAL("jit_unload.value").set_body_typed([]() -> int64_t { return %d; });
"""


def _closed(path):
    """Waits (up to a minute, the machine may be loaded) until `path` is no longer mapped."""
    for _ in range(6000):
        with open("/proc/self/maps") as maps:  # its code: backtraces may map the file read-only
            if not any(path in line and "x" in line.split()[1] for line in maps):
                return True
        time.sleep(0.01)
    return False


def test_unload_library_then_the_cache_loads_the_same_and_changed_code_again(cache):
    lib = ferry.cpp.load_inline("jit_unload", UNLOAD_SOURCE % 1, extra_cflags=FAST)
    path = os.path.realpath(os.fspath(lib))
    assert lib.value() == 1
    ferry.unload_library(lib)
    assert ferry.get_global_func("jit_unload.value", allow_missing=True) is None
    del lib  # its module held the library's function: the last pin
    assert _closed(path)
    # The same code again: loaded again, not the unloaded library from ferry.cpp's cache.
    lib = ferry.cpp.load_inline("jit_unload", UNLOAD_SOURCE % 1, extra_cflags=FAST)
    assert lib.value() == 1 and os.path.realpath(os.fspath(lib)) == path
    ferry.unload_library(lib)
    del lib
    assert _closed(path)
    lib = ferry.cpp.load_inline("jit_unload", UNLOAD_SOURCE % 2, extra_cflags=FAST)  # rebuilt
    assert lib.value() == 2
