"""From C++ sources (and a tschema schema) to a loaded library in one call.

    import ferry.cpp
    lib = ferry.cpp.load_inline("demo", '''
        FERRY_REGISTER_GLOBAL("demo.add").set_body_typed([](int64_t a, int64_t b) { return a + b; });
    ''')
    assert lib.add(1, 2) == 3

`build` compiles the sources (and, with ``schema=``, the C++ that tschema generates from the
schema: the header ``<name>_schema.h``, which the sources may include, and its registration
source) against the headers and libferry of this `ferry` package into ``lib<name>.so`` and
returns its path; `load` also loads it and returns a module holding the schema's Python classes
and the ``<name>.*`` global functions; `load_inline` takes the source as a string.

The build writes a ninja file and runs Ninja (compiles in parallel, nothing else to configure),
with the compiler CMake would pick (``$CXX``, else ``c++``) and the flags of a release build of
Ferry plus ``-g``. Results are cached in ``$FERRY_CACHE_DIR`` (default ``~/.cache/ferry``)
under a hash of every input: a second call with the same inputs costs a few ``stat`` calls and a
load. A build prints one line to stderr before it starts (``ferry.cpp: building libdemo.so
(first time; cached afterwards)...``); a cache hit prints nothing. See docs/python.md,
"Building C++ from Python".

A function that returns promptly and never waits is marked in its registration,
``FERRY_REGISTER_GLOBAL("demo.neg").quick().set_body_typed(...)``: Python then keeps the GIL
during its calls (the constructors of a ``schema=`` are registered so already).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import inspect
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import types
from typing import (
    Any,
    Callable,
    Dict,
    List,
    NamedTuple,
    Optional,
    ParamSpec,
    Sequence,
    Tuple,
    TypeVar,
    Union,
)

from . import libinfo

__all__ = ["BuildError", "Diagnostic", "LoadedLibrary", "build", "cache_dir", "load", "load_inline"]

#: The flags of a release build of Ferry (CMake's Release: -O3 -DNDEBUG, C++17 without
#: extensions, position-independent code); ``-g`` is added unless ``debug_info=False``.
RELEASE_FLAGS = ("-std=c++17", "-O3", "-DNDEBUG", "-fPIC")
#: Bumped whenever the layout of a cache entry or the meaning of its key changes.
_CACHE_FORMAT = 2
#: The longest library name: it is part of file names (``lib<name>.so``, the cache entry's
#: ``<name>-<hash>``, ``<name>_schema.h``), which most file systems cap at 255 bytes.
MAX_NAME_LENGTH = 128

PathLike = Union[str, "os.PathLike[str]"]


class Diagnostic(NamedTuple):
    """One ``file:line:column: severity: message`` line of the compiler's output."""

    file: str
    line: int
    column: Optional[int]
    severity: str
    message: str

    def __str__(self) -> str:
        column = f"{self.column}:" if self.column is not None else ""
        return f"{self.file}:{self.line}:{column} {self.severity}: {self.message}"


class BuildError(RuntimeError):
    """A build that failed: the compiler's or linker's diagnostics, the command line, or a
    missing tool. ``diagnostics`` holds the parsed ``file:line`` messages, ``log`` the whole
    output and ``command`` the failing command line (when a command failed)."""

    def __init__(
        self,
        message: str,
        *,
        log: str = "",
        command: Optional[str] = None,
        diagnostics: Sequence[Diagnostic] = (),
    ):
        super().__init__(message)
        self.log = log
        self.command = command
        self.diagnostics = list(diagnostics)


def cache_dir() -> str:
    """Where built libraries are cached: ``$FERRY_CACHE_DIR``, else ``~/.cache/ferry``."""
    configured = os.environ.get("FERRY_CACHE_DIR")
    if configured:
        return os.path.abspath(os.path.expanduser(configured))
    return os.path.join(os.path.expanduser("~"), ".cache", "ferry")


# ---------------------------------------------------------------------------------------------
# Tools


def _find_compiler() -> List[str]:
    """The compiler as CMake picks it: ``$CXX`` (a program, possibly with arguments), else
    ``c++`` (then ``g++``, ``clang++``) on PATH."""
    configured = os.environ.get("CXX", "").strip()
    if configured:
        try:
            argv = shlex.split(configured)
        except ValueError as e:
            raise ValueError(
                f"ferry.cpp: CXX={configured!r} cannot be split into words: {e}"
            ) from None
        for arg in argv:
            _check_arg("CXX", arg)
        found = shutil.which(argv[0])
        if found is None:
            why = "does not exist" if not os.path.exists(argv[0]) else "is not executable"
            if os.sep not in argv[0] and not os.path.exists(argv[0]):
                why = "is not on PATH"
            raise BuildError(
                f"ferry.cpp: the C++ compiler CXX={configured!r} {why}; set CXX to a C++17 "
                "compiler (g++ or clang++), or unset it to use c++ from PATH. To install one: "
                "apt-get install g++ (Debian, Ubuntu), dnf install gcc-c++ (Fedora), "
                "xcode-select --install (macOS)"
            )
        return [found] + argv[1:]
    for candidate in ("c++", "g++", "clang++"):
        found = shutil.which(candidate)
        if found is not None:
            return [found]
    raise BuildError(
        "ferry.cpp: no C++ compiler found (CXX is not set and none of c++, g++, clang++ is on "
        "PATH); install one: apt-get install g++ (Debian, Ubuntu), dnf install gcc-c++ "
        "(Fedora), xcode-select --install (macOS); or set CXX"
    )


def _find_ninja() -> str:
    for candidate in ("ninja", "ninja-build"):
        found = shutil.which(candidate)
        if found is not None:
            return found
    try:  # the `ninja` package from PyPI
        import ninja  # type: ignore[import-not-found]

        found = os.path.join(ninja.BIN_DIR, "ninja")
        if os.access(found, os.X_OK):
            return found
    except ImportError:
        pass
    raise BuildError(
        "ferry.cpp: Ninja is not installed (no ninja on PATH); install it with "
        "pip install ninja, or apt-get install ninja-build (Debian, Ubuntu), "
        "dnf install ninja-build (Fedora), brew install ninja (macOS)"
    )


_compiler_ids: Dict[Tuple, str] = {}


def _compiler_id(cxx: List[str]) -> str:
    """The compiler's identity for the cache key: its resolved path, size, mtime and
    ``--version`` (run once per process and compiler)."""
    real = os.path.realpath(cxx[0])
    st = os.stat(real)
    key = (tuple(cxx), real, st.st_size, st.st_mtime_ns)
    if key not in _compiler_ids:
        try:
            result = subprocess.run(
                cxx + ["--version"], capture_output=True, text=True, timeout=60, check=False
            )
        except OSError as e:
            raise BuildError(f"ferry.cpp: cannot run the C++ compiler {cxx[0]}: {e}") from None
        if result.returncode != 0:
            raise BuildError(
                f"ferry.cpp: {shlex.join(cxx)} --version failed (exit status "
                f"{result.returncode}): {result.stderr.strip()}"
            )
        _compiler_ids[key] = f"{real}:{st.st_size}:{st.st_mtime_ns}:{result.stdout.strip()}"
    return _compiler_ids[key]


_ferry_id: List[str] = []


def _ferry_identity() -> str:
    """Ferry's version, the library linked against, a hash of its headers and of this
    module (which decides how a library is built)."""
    if not _ferry_id:
        from . import __version__

        h = hashlib.sha256()
        include = libinfo.include_dir()
        for root, dirs, files in os.walk(os.path.join(include, "ferry")):
            dirs.sort()
            for f in sorted(files):
                path = os.path.join(root, f)
                h.update(os.path.relpath(path, include).encode() + b"\0")
                with open(path, "rb") as fh:
                    h.update(hashlib.sha256(fh.read()).digest())
        lib = os.path.realpath(libinfo.lib_path())
        st = os.stat(lib)
        with open(os.path.abspath(__file__), "rb") as fh:  # how this module builds
            builder = hashlib.sha256(fh.read()).hexdigest()
        _ferry_id.append(
            f"{__version__}:{include}:{h.hexdigest()}:{lib}:{st.st_size}:{st.st_mtime_ns}:{builder}"
        )
    return _ferry_id[0]


_tschema_id: List[str] = []


def _tschema_identity() -> str:
    """A hash of tschema's own sources: the generated code depends on them."""
    if not _tschema_id:
        here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tschema")
        h = hashlib.sha256()
        for f in sorted(os.listdir(here)):
            if f.endswith(".py"):
                with open(os.path.join(here, f), "rb") as fh:
                    h.update(f.encode() + b"\0" + hashlib.sha256(fh.read()).digest())
        _tschema_id.append(h.hexdigest())
    return _tschema_id[0]


# ---------------------------------------------------------------------------------------------
# Inputs and the cache key


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(
            f"ferry.cpp: the library name must be an identifier (letters, digits, "
            f"underscores), got {name!r}"
        )
    if len(name) > MAX_NAME_LENGTH:
        raise ValueError(
            f"ferry.cpp: the library name {name[:40]}... is {len(name)} characters long; at "
            f"most {MAX_NAME_LENGTH} fit in the file names of its build"
        )
    return name


# What neither a line of build.ninja nor a word of /bin/sh can carry: Ninja ends a line at a
# newline (or refuses a lone carriage return) whatever comes before it, and a C string ends at NUL.
_UNCARRIABLE = {"\n": "a newline", "\r": "a carriage return", "\0": "a NUL character"}


def _check_arg(what: str, value: str) -> str:
    """Refuses a value that cannot reach the compiler as one argument, naming the input
    (``what``: ``extra_cflags[2]``, ``include_dirs[0]``, ...). Everything else is escaped on
    the way (`_ninja_value`), so it arrives as the very same string."""
    for char, description in _UNCARRIABLE.items():
        if char in value:
            raise ValueError(
                f"ferry.cpp: {what} contains {description}, which a build command cannot "
                f"carry: {value!r}"
            )
    try:
        value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as e:
        raise ValueError(
            f"ferry.cpp: {what} is not valid text (the character {value[e.start]!r} has no "
            f"encoding): {value!r}"
        ) from None
    return value


def _paths(what: str, value, *, must_exist: bool) -> List[str]:
    if value is None:
        return []
    if isinstance(value, (str, os.PathLike)):
        value = [value]
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"ferry.cpp: {what} must be paths, got {type(item).__name__} {item!r}")
        given = os.fspath(item)
        if not isinstance(given, str):
            raise TypeError(f"ferry.cpp: {what} must be str paths, got bytes {given!r}")
        path = os.path.abspath(_check_arg(f"{what}[{i}]", given))
        if must_exist and not os.path.isfile(path):
            raise BuildError(
                f"ferry.cpp: the {what[:-1] if what.endswith('s') else what} {given} does not exist"
            )
        out.append(path)
    return out


def _strings(what: str, value) -> List[str]:
    if isinstance(value, str):
        try:
            value = shlex.split(value)
        except ValueError as e:
            raise ValueError(
                f"ferry.cpp: {what}={value!r} cannot be split into words: {e}"
            ) from None
    out = []
    for i, item in enumerate(value or ()):
        if not isinstance(item, str):
            raise TypeError(
                f"ferry.cpp: {what} must be strings, got {type(item).__name__} {item!r}"
            )
        out.append(_check_arg(f"{what}[{i}]", item))
    return out


def _file_digest(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class _Request:
    """Everything one build depends on, and the paths it uses."""

    def __init__(
        self,
        name: str,
        sources: Union[PathLike, Sequence[PathLike]] = (),
        *,
        schema=None,
        include_dirs: Sequence[PathLike] = (),
        extra_cflags: Sequence[str] = (),
        extra_ldflags: Sequence[str] = (),
        build_dir: Optional[PathLike] = None,
        verbose: bool = False,
        debug_info: bool = True,
        cpp_source: Optional[str] = None,
    ) -> None:
        """The arguments of `build` and `load` (their signature is this one's), and
        ``cpp_source``, load_inline's own."""
        self.name = _check_name(name)
        self.sources = _paths("sources", sources, must_exist=True)
        self.inline = cpp_source
        self.schema = _paths("schema files", schema, must_exist=True)
        self.include_dirs = _paths("include_dirs", include_dirs, must_exist=False)
        self.cflags = _strings("extra_cflags", extra_cflags)
        self.ldflags = _strings("extra_ldflags", extra_ldflags)
        self.debug_info = bool(debug_info)
        self.verbose = bool(verbose)
        if not self.sources and cpp_source is None and not self.schema:
            raise ValueError(
                "ferry.cpp: nothing to build: give sources, an inline source or a schema"
            )
        self.cxx = _find_compiler()  # part of the key; Ninja is looked for only to build
        self.key = self._key()
        self.in_cache = build_dir is None
        if build_dir is not None:
            given = os.fspath(build_dir)
            if not isinstance(given, str):
                raise TypeError(f"ferry.cpp: build_dir must be a str path, got bytes {given!r}")
            self.entry = os.path.abspath(_check_arg("build_dir", given))
        else:
            where = _check_arg("the cache directory (FERRY_CACHE_DIR)", cache_dir())
            self.entry = os.path.join(where, f"{self.name}-{self.key[:20]}")
        self.src_dir = os.path.join(self.entry, "src")
        self.lib = os.path.join(self.entry, f"lib{self.name}.so")
        self.manifest = os.path.join(self.entry, "manifest.json")

    def _key(self) -> str:
        parts = {
            "format": _CACHE_FORMAT,
            "name": self.name,
            "sources": [(p, _file_digest(p)) for p in self.sources],
            "inline": self.inline,
            "schema": [(p, _file_digest(p)) for p in self.schema],
            "tschema": _tschema_identity() if self.schema else None,
            "include_dirs": self.include_dirs,
            "cflags": self.flags(),
            "ldflags": self.ldflags,
            "compiler": [self.cxx, _compiler_id(self.cxx)],
            "ferry": _ferry_identity(),
            "platform": sys.platform,
        }
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()

    def flags(self) -> List[str]:
        return list(RELEASE_FLAGS) + (["-g"] if self.debug_info else []) + self.cflags

    # The kept sources --------------------------------------------------------------------
    @property
    def inline_path(self) -> str:
        return os.path.join(self.src_dir, f"{self.name}.cc")

    @property
    def schema_paths(self) -> Tuple[str, str, str]:
        base = os.path.join(self.src_dir, f"{self.name}_schema")
        return base + ".h", base + ".cc", base + ".py"

    def python_module_text(self) -> Optional[str]:
        if not self.schema:
            return None
        with open(self.schema_paths[2], encoding="utf-8") as f:
            return f.read()


# ---------------------------------------------------------------------------------------------
# The cache entry


# A library verified in this process, by what `stat` says of it: (path, size, mtime, inode,
# ctime) -> its sha256. A truncation, a rewrite or a copy changes one of them.
_verified: Dict[Tuple, str] = {}


def _library_digest(path: str, size: int) -> Optional[str]:
    """The sha256 of the library at ``path`` when it is ``size`` bytes long, else None."""
    st = os.stat(path)
    if st.st_size != size:
        return None
    stamp = (path, st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
    digest = _verified.get(stamp)
    if digest is None:
        digest = _file_digest(path)
        _verified[stamp] = digest
    return digest


def _fresh(req: _Request) -> Optional[str]:
    """A usable earlier build: the manifest has this key, the library has the size and sha256
    the manifest recorded (a library truncated by a crash, a full disk or a partial copy is
    rebuilt, never loaded), and no dependency changed since. Returns the library's sha256."""
    try:
        with open(req.manifest, encoding="utf-8") as f:
            manifest = json.load(f)
        if manifest.get("key") != req.key:
            return None
        library = manifest["library"]
        if _library_digest(req.lib, library["size"]) != library["sha256"]:
            return None
        for path, size, mtime in manifest["deps"]:
            st = os.stat(path)
            if st.st_size != size or st.st_mtime_ns != mtime:
                return None
        if req.schema and not os.path.isfile(req.schema_paths[2]):
            return None
        return str(library["sha256"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _unwritable(req: _Request, e: OSError) -> BuildError:
    where = (
        f"the cache directory {os.path.dirname(req.entry)} (FERRY_CACHE_DIR)"
        if req.in_cache
        else f"the build directory {req.entry} (build_dir=)"
    )
    hint = (
        "set FERRY_CACHE_DIR to a writable directory, or pass build_dir="
        if req.in_cache
        else "pass a writable build_dir="
    )
    failed = f" ({e.filename})" if e.filename and e.filename != req.entry else ""
    return BuildError(
        f"ferry.cpp: cannot build lib{req.name}.so in {where}: {e.strerror or e}{failed}; {hint}"
    )


@contextlib.contextmanager
def _locked(path: str, req: _Request):
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as e:
        raise _unwritable(req, e) from e
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if req.verbose:
                print(
                    f"ferry.cpp: waiting for another process building {req.entry}", file=sys.stderr
                )
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _write_if_changed(path: str, data: bytes) -> None:
    """Writes atomically, and not at all when the bytes are already there (so the mtime of a
    kept source stays, and a process compiling it never sees a partial file)."""
    try:
        with open(path, "rb") as f:
            if f.read() == data:
                return
    except FileNotFoundError:
        pass
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _generate_schema(req: _Request) -> List[str]:
    """Writes the schema's header, registration source and Python module into src/; returns
    the files the schema was read from (for the manifest)."""
    from .tschema import driver
    from .tschema.errors import SchemaError

    header, source, python = req.schema_paths
    guard = re.sub(r"[^A-Za-z0-9]", "_", req.name).upper() + "_SCHEMA_H_"
    options = driver.Options(
        schemas=req.schema, header=header, source=source, python=python, pyi=os.devnull, guard=guard
    )
    try:
        schema, outputs = driver.plan(options)
    except SchemaError as e:
        text = "\n".join(str(d) for d in e.diagnostics)
        raise BuildError(
            f"ferry.cpp: the schema of {req.name} has errors:\n{text}", log=text
        ) from None
    for output in outputs:
        if output.path in (header, source, python):
            _write_if_changed(output.path, output.new)
    return sorted({os.path.abspath(n.file) for n in schema.nodes} | set(req.schema))


def _ninja_value(what: str, args: Sequence[str], *, program: bool = False) -> str:
    """``args`` as the value of a build.ninja variable that the rule's command uses as words:
    each argument quoted for /bin/sh (Ninja runs commands through it), then every ``$``
    doubled (Ninja's only escape in a value; spaces, ``:`` and ``|`` are plain text there).
    With ``program``, the first word is quoted even when it needs no quotes, so the shell never
    reads it as an assignment (``A=b``) or a reserved word. A newline, a carriage return or a
    NUL cannot be carried at all: `_check_arg` refuses them."""
    words = [shlex.quote(_check_arg(what, a)) for a in args]
    if program and words and not words[0].startswith("'"):
        words[0] = f"'{words[0]}'"
    return " ".join(words).replace("$", "$$")


def _object_name(i: int, source: str) -> str:
    """The object file of the ``i``-th source, a name with nothing to escape."""
    return f"{i}_{re.sub(r'[^A-Za-z0-9_.-]', '_', os.path.basename(source))}.o"


def _ninja_text(
    name: str,
    cxx: Sequence[str],
    cflags: Sequence[str],
    ldflags: Sequence[str],
    sources: Sequence[Tuple[str, Sequence[str]]],
) -> Tuple[str, List[str]]:
    """The build.ninja that compiles each ``(source, extra flags)`` with ``cxx`` and
    ``cflags`` and links ``lib<name>.so`` with ``ldflags``; returns it and the object files.

    No input is written where Ninja reads paths (a build line, where ``|`` cannot be escaped
    at all): the build lines name only the objects and the library, whose names are safe, and
    each source reaches its compile command through the variable ``src``. Ninja does not need
    to know the sources: every build runs in a new directory, and the dependencies come from
    the compiler's depfiles. Raises ValueError naming an input that a command cannot carry."""
    name = _check_name(name)
    lines = [
        "# Written by ferry.cpp; built once, in a temporary directory.",
        "ninja_required_version = 1.3",
        f"cxx = {_ninja_value('CXX', cxx, program=True)}",
        f"cflags = {_ninja_value('the compile flags', cflags)}",
        f"ldflags = {_ninja_value('the link flags', ldflags)}",
        "",
        "rule compile",
        "  command = $cxx -MD -MF $out.d $cflags $extra -c $src -o $out",
        "  description = compile $src",
        "",
        "rule link",
        "  command = $cxx -shared $in -o $out $ldflags",
        "  description = link $out",
        "",
    ]
    objects = []
    for i, (src, extra) in enumerate(sources):
        obj = _object_name(i, src)
        objects.append(obj)
        lines.append(f"build {obj}: compile")
        lines.append(f"  src = {_ninja_value(f'sources[{i}]', [src])}")
        if extra:
            lines.append(f"  extra = {_ninja_value('extra', extra)}")
    lines.append(f"build lib{name}.so: link {' '.join(objects)}")
    lines.append(f"default lib{name}.so")
    return "\n".join(lines) + "\n", objects


def _ninja_file(req: _Request, sources: List[str]) -> Tuple[str, List[str]]:
    cflags = ["-fdiagnostics-color=never"] + req.flags()
    for d in [req.src_dir] + req.include_dirs + [libinfo.include_dir()]:
        cflags.append(f"-I{d}")
    lib = os.path.realpath(libinfo.lib_path())
    # -Xlinker passes the directory whole (-Wl, would split it at commas).
    ldflags = [lib, "-Xlinker", "-rpath", "-Xlinker", os.path.dirname(lib)] + req.ldflags
    with_extra: List[Tuple[str, Sequence[str]]] = []
    for src in sources:
        extra: List[str] = []
        if req.inline is not None and src == req.inline_path:
            extra = ["-include", "ferry/ferry.h"]
            if req.schema:
                extra += ["-include", f"{req.name}_schema.h"]
        with_extra.append((src, extra))
    return _ninja_text(req.name, req.cxx, cflags, ldflags, with_extra)


def _read_depfile(path: str) -> List[str]:
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        text = f.read().replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        _, sep, deps = line.partition(": ")
        if not sep:
            continue
        for item in re.findall(r"(?:\\.|[^\s\\])+", deps):
            out.append(re.sub(r"\\(.)", r"\1", item).replace("$$", "$"))
    return out


_DIAGNOSTIC = re.compile(
    r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)? ?(?P<sev>fatal error|error|warning"
    r"|note): (?P<msg>.*)$"
)


def _failure(req: _Request, output: str) -> BuildError:
    lines = [
        line
        for line in output.splitlines()
        if not re.match(r"^\[\d+/\d+\] ", line)
        and not line.startswith(("ninja: build stopped", "ninja: Entering directory"))
    ]
    commands, body = [], []
    i = 0
    while i < len(lines):
        if lines[i].startswith("FAILED: "):
            if i + 1 < len(lines):
                commands.append(lines[i + 1])
            i += 2
            continue
        body.append(lines[i])
        i += 1
    diagnostics = []
    for line in body:
        m = _DIAGNOSTIC.match(line)
        if m:
            diagnostics.append(
                Diagnostic(
                    m["file"],
                    int(m["line"]),
                    int(m["col"]) if m["col"] else None,
                    m["sev"],
                    m["msg"],
                )
            )
    text = "\n".join(body).strip()
    message = f"ferry.cpp: building lib{req.name}.so failed:\n{text}"
    if commands:
        message += "\n" + "\n".join(f"command: {c}" for c in commands)
    return BuildError(
        message, log=output, command=commands[0] if commands else None, diagnostics=diagnostics
    )


_TEMP_PREFIX = ".ferry-build-"
# The build directories of the previous cache format (``tempfile.mkdtemp(prefix="build-")``).
_OLD_TEMP = re.compile(r"build-[a-z0-9_]{8}\Z")


def _remove_stale(req: _Request) -> None:
    """Removes what killed builds left in the entry: their build directories and half-written
    kept sources. Runs under the entry's lock, so no live build owns any of them."""
    for dirname, pattern in ((req.entry, None), (req.src_dir, ".tmp-")):
        try:
            names = os.listdir(dirname)
        except OSError:
            continue
        for n in names:
            path = os.path.join(dirname, n)
            if pattern is not None:
                if n.startswith(pattern):
                    with contextlib.suppress(OSError):
                        os.unlink(path)
            elif n.startswith(_TEMP_PREFIX):
                shutil.rmtree(path, ignore_errors=True)
            elif _OLD_TEMP.match(n) and os.path.isfile(os.path.join(path, "build.ninja")):
                with open(
                    os.path.join(path, "build.ninja"), encoding="utf-8", errors="replace"
                ) as f:
                    if f.readline().startswith("# Written by ferry.cpp"):
                        shutil.rmtree(path, ignore_errors=True)


def _build(req: _Request) -> str:
    """Builds the library into the entry (under its lock); returns its sha256."""
    _find_ninja()  # before writing anything
    _remove_stale(req)
    try:
        os.makedirs(req.src_dir, exist_ok=True)
        tmp = tempfile.mkdtemp(dir=req.entry, prefix=_TEMP_PREFIX)
    except OSError as e:
        raise _unwritable(req, e) from e
    try:
        deps: List[str] = []
        sources = list(req.sources)
        if req.schema:
            deps += _generate_schema(req)
            sources.append(req.schema_paths[1])
        if req.inline is not None:
            # Kept byte for byte, so the compiler's line numbers are the string's; the
            # includes come from -include flags.
            text = req.inline if req.inline.endswith("\n") else req.inline + "\n"
            _write_if_changed(req.inline_path, text.encode("utf-8"))
            sources.append(req.inline_path)
        # The one line a slow step prints before it starts (seconds; a hit prints nothing).
        print(
            f"ferry.cpp: building lib{req.name}.so (first time; cached afterwards)...",
            file=sys.stderr,
            flush=True,
        )
        ninja_text, objects = _ninja_file(req, sources)
        with open(os.path.join(tmp, "build.ninja"), "wb") as f:
            f.write(ninja_text.encode("utf-8", "surrogateescape"))
        jobs = str(max(1, min(len(sources), os.cpu_count() or 1)))
        command = [_find_ninja(), "-C", tmp, "-k", "0", "-j", jobs]
        if req.verbose:
            command.append("-v")
        result = subprocess.run(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            check=False,
        )
        if req.verbose:
            sys.stderr.write(result.stdout)
        if result.returncode != 0:
            raise _failure(req, result.stdout)
        for obj in objects:
            deps += _read_depfile(os.path.join(tmp, obj + ".d"))
        manifest_deps = []
        own = req.entry + os.sep
        for dep in sorted(set(os.path.abspath(d) for d in deps)):
            if dep.startswith(own):
                continue  # the kept sources: their content is part of the key
            try:
                st = os.stat(dep)
                manifest_deps.append([dep, st.st_size, st.st_mtime_ns])
            except OSError:  # a depfile path not parsed back: never matches, so rebuilds
                manifest_deps.append([dep, -1, -1])
        built = os.path.join(tmp, f"lib{req.name}.so")
        digest = _file_digest(built)
        library = {"size": os.stat(built).st_size, "sha256": digest}
        # The library first, then the manifest that makes it a hit: a reader that sees the new
        # manifest sees the new library.
        os.replace(built, req.lib)
        with open(os.path.join(tmp, "manifest.json"), "w", encoding="utf-8") as f:
            json.dump(
                {"key": req.key, "name": req.name, "library": library, "deps": manifest_deps}, f
            )
        os.replace(os.path.join(tmp, "manifest.json"), req.manifest)
        return digest
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _ensure_built(req: _Request) -> Tuple[str, str]:
    """The library of ``req``, built unless a verified earlier build is there: its path and
    its sha256."""
    digest = _fresh(req)
    if digest is not None:
        return req.lib, digest
    try:
        os.makedirs(req.entry, exist_ok=True)
    except OSError as e:
        raise _unwritable(req, e) from e
    with _locked(os.path.join(req.entry, ".lock"), req):
        digest = _fresh(req)
        if digest is not None:  # another process built it while we waited
            what = "built by another process"
        else:
            digest = _build(req)
            what = "built"
    if req.verbose:
        print(f"ferry.cpp: {what}: {req.lib}", file=sys.stderr)
    return req.lib, digest


# ---------------------------------------------------------------------------------------------
# The public functions


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _taking_arguments_of(
    make: Callable[_P, _Request],
) -> Callable[[Callable[[_Request], _R]], Callable[_P, _R]]:
    """Turns ``run(req)`` into the public function that takes the arguments of ``make`` but
    ``cpp_source`` (load_inline's own), and runs ``run`` on the request ``make`` makes of them.
    An argument that does not fit is a TypeError naming the public function, as Python's own
    would (a type checker lets ``cpp_source`` through; the call does not)."""
    full = inspect.signature(make)
    parameters = [p for p in full.parameters.values() if p.name != "cpp_source"]

    def wrap(run: Callable[[_Request], _R]) -> Callable[_P, _R]:
        signature = full.replace(
            parameters=parameters, return_annotation=inspect.signature(run).return_annotation
        )

        @functools.wraps(run)
        def public(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as e:
                raise TypeError(f"ferry.cpp.{run.__name__}(): {e}") from None
            return run(make(*bound.args, **bound.kwargs))

        public.__signature__ = signature  # type: ignore[attr-defined]
        return public

    return wrap


@_taking_arguments_of(_Request)
def build(req: _Request) -> str:
    """Compiles ``sources`` (paths; with ``schema=``, a schema file or a list of them, also the
    C++ tschema generates, whose header ``<name>_schema.h`` the sources may include) into
    ``lib<name>.so`` and returns its path. Cached by a hash of every input (see the module
    docstring); ``build_dir`` builds there instead of the cache. A compiler error is a
    `BuildError` with the compiler's ``file:line`` diagnostics and the command line."""
    return _ensure_built(req)[0]


class LoadedLibrary:
    """What `load` and `load_inline` return: the loaded library, whose attributes are the
    library's own names, and only those: the schema's Python classes and the global functions
    named ``<name>.<identifier>`` (``lib.IntImm``, ``lib.fold``, and ``lib.count`` or
    ``lib.index`` too, which a ``str`` would shadow). ``os.fspath(lib)`` and ``str(lib)`` give
    the library's path, and it compares equal to that path. ``lib.path`` and ``lib.module``
    (the module holding the names) work too unless the library defines those names itself."""

    __slots__ = ("__path", "__module")

    def __init__(self, path: str, module: types.ModuleType) -> None:
        self.__path = path
        self.__module = module

    def __getattr__(self, name: str) -> Any:
        module = self.__module
        try:
            return module.__dict__[name]
        except KeyError:
            pass
        if name == "path":
            return self.__path
        if name == "module":
            return module
        raise AttributeError(
            f"the library {module.__name__} ({self.__path}) has no attribute {name!r}"
        )

    def __dir__(self) -> List[str]:
        return sorted(set(self.__module.__dict__) | {"path", "module"})

    def __fspath__(self) -> str:
        return self.__path

    def __str__(self) -> str:
        return self.__path

    def __repr__(self) -> str:
        return f"<ferry.cpp.LoadedLibrary {self.__module.__name__} from {self.__path!r}>"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LoadedLibrary):
            return self.__path == other.__path and self.__module is other.__module
        if isinstance(other, str):
            return self.__path == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.__path)

    def __reduce__(self):
        return (str, (self.__path,))  # a path travels as a path


_loaded: Dict[Tuple[str, str], LoadedLibrary] = {}  # (name, sha256 of the library) -> it
_loaded_paths: Dict[str, str] = {}  # library path dlopened -> the sha256 it had then
_loaded_names: Dict[str, str] = {}  # library name -> the path first loaded under it


def _forget_unloaded(path: str) -> None:
    """``ferry.unload_library(path)`` ran: a later `load` of the same code loads it again
    instead of handing back the unloaded library."""
    real = os.path.realpath(path)
    for key, lib in list(_loaded.items()):
        if os.path.realpath(os.fspath(lib)) == real:
            del _loaded[key]
    for name, loaded_path in list(_loaded_names.items()):
        if os.path.realpath(loaded_path) == real:
            del _loaded_names[name]


def _private_copy(req: _Request, path: str, digest: str) -> str:
    """A file of the library's own, named by its content, for a build whose path this process
    already loaded with other content (``build_dir=`` reused for changed code): ``dlopen`` of
    that path would hand back the library loaded first."""
    target = os.path.join(req.entry, f"lib{req.name}.{digest[:16]}.so")
    with open(path, "rb") as f:
        data = f.read()
    if hashlib.sha256(data).hexdigest() != digest:
        raise RuntimeError(
            f"ferry.cpp: {path} changed while it was being loaded (another process rebuilt it?); "
            "load it again"
        )
    try:
        with open(target, "rb") as f:
            if hashlib.sha256(f.read()).hexdigest() == digest:
                return target
    except FileNotFoundError:
        pass
    _write_if_changed(target, data)
    os.chmod(target, 0o755)
    return target


def _load(req: _Request) -> LoadedLibrary:
    from . import _core, registry

    path, digest = _ensure_built(req)
    found = _loaded.get((req.name, digest))
    if found is not None:
        return found
    if path in _loaded_paths and _loaded_paths[path] != digest:
        path = _private_copy(req, path, digest)
    # Recorded even if the load fails: the loader may keep a library it refused mapped.
    _loaded_paths[path] = digest
    try:
        registry.load_library(path)
    except RuntimeError as e:
        earlier = _loaded_names.get(req.name)
        if earlier is not None and "already registered" in str(e):
            raise RuntimeError(
                f"{e}\nferry.cpp: another build of {req.name} ({earlier}) is already loaded in "
                "this process, and its global functions and types cannot be replaced: restart "
                "the process, or give the changed code new global names and type keys"
            ) from None
        raise
    module = types.ModuleType(req.name, f"The library {path}, built by ferry.cpp.")
    module.__file__ = path
    text = req.python_module_text()
    if text is not None:
        exec(compile(text, req.schema_paths[2], "exec"), module.__dict__)
    prefix = req.name + "."
    resolved = os.path.realpath(path)
    for full in registry.list_global_func_names():
        short = full[len(prefix) :]
        if full.startswith(prefix) and short.isidentifier() and short not in module.__dict__:
            # Not the globals of another library (an earlier build of the same name).
            if _core._library_of_global(full) in (None, resolved):
                setattr(module, short, registry.get_global_func(full))
    library = LoadedLibrary(path, module)
    _loaded[(req.name, digest)] = library
    _loaded_names.setdefault(req.name, path)
    return library


@_taking_arguments_of(_Request)
def load(req: _Request) -> LoadedLibrary:
    """`build`, then load the library. Returns its path (a `LoadedLibrary`, a ``str``) whose
    attributes are those of the library's module: the schema's Python classes (registered, so
    objects come back as them), the global functions named ``<name>.<identifier>``, and
    ``module`` itself. Loading the same build again returns the same module."""
    return _load(req)


def load_inline(
    name: str,
    cpp_source: str,
    *,
    sources: Sequence[PathLike] = (),
    schema=None,
    include_dirs: Sequence[PathLike] = (),
    extra_cflags: Sequence[str] = (),
    extra_ldflags: Sequence[str] = (),
    build_dir: Optional[PathLike] = None,
    verbose: bool = False,
    debug_info: bool = True,
) -> LoadedLibrary:
    """`load` with the C++ source given as a string. ``#include <ferry/ferry.h>`` (and, with
    ``schema=``, ``#include "<name>_schema.h"``) come first; a copy is kept in the cache entry,
    and diagnostics point at its lines (line 1 is the string's first line)."""
    if not isinstance(cpp_source, str):
        raise TypeError(
            f"ferry.cpp.load_inline: cpp_source must be a str, got {type(cpp_source).__name__}"
        )
    try:
        cpp_source.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(
            f"ferry.cpp.load_inline: cpp_source holds {cpp_source[e.start]!r} at offset "
            f"{e.start}, a character UTF-8 cannot encode"
        ) from None
    req = _Request(
        name,
        sources,
        schema=schema,
        include_dirs=include_dirs,
        extra_cflags=extra_cflags,
        extra_ldflags=extra_ldflags,
        build_dir=build_dir,
        verbose=verbose,
        debug_info=debug_info,
        cpp_source=cpp_source,
    )
    return _load(req)
