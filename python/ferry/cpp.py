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
load. See docs/python.md, "Building C++ from Python".

A function that returns promptly and never waits is marked in its registration,
``FERRY_REGISTER_GLOBAL("demo.neg").quick().set_body_typed(...)``: Python then keeps the GIL
during its calls (the constructors of a ``schema=`` are registered so already).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import types
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

from . import libinfo

__all__ = ["BuildError", "Diagnostic", "LoadedLibrary", "build", "cache_dir", "load", "load_inline"]

#: The flags of a release build of Ferry (CMake's Release: -O3 -DNDEBUG, C++17 without
#: extensions, position-independent code); ``-g`` is added unless ``debug_info=False``.
RELEASE_FLAGS = ("-std=c++17", "-O3", "-DNDEBUG", "-fPIC")
#: Bumped whenever the layout of a cache entry or the meaning of its key changes.
_CACHE_FORMAT = 1

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
        argv = shlex.split(configured)
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
    return name


def _paths(what: str, value, *, must_exist: bool) -> List[str]:
    if value is None:
        return []
    if isinstance(value, (str, os.PathLike)):
        value = [value]
    out = []
    for item in value:
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"ferry.cpp: {what} must be paths, got {type(item).__name__} {item!r}")
        path = os.path.abspath(os.fspath(item))
        if must_exist and not os.path.isfile(path):
            raise BuildError(
                f"ferry.cpp: the {what[:-1] if what.endswith('s') else what} "
                f"{os.fspath(item)} does not exist"
            )
        out.append(path)
    return out


def _strings(what: str, value) -> List[str]:
    if isinstance(value, str):
        return shlex.split(value)
    out = []
    for item in value or ():
        if not isinstance(item, str):
            raise TypeError(
                f"ferry.cpp: {what} must be strings, got {type(item).__name__} {item!r}"
            )
        out.append(item)
    return out


def _file_digest(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class _Request:
    """Everything one build depends on, and the paths it uses."""

    def __init__(
        self,
        name,
        sources,
        inline,
        schema,
        include_dirs,
        extra_cflags,
        extra_ldflags,
        build_dir,
        debug_info,
        verbose,
    ):
        self.name = _check_name(name)
        self.sources = _paths("sources", sources, must_exist=True)
        self.inline = inline
        self.schema = _paths("schema files", schema, must_exist=True)
        self.include_dirs = _paths("include_dirs", include_dirs, must_exist=False)
        self.cflags = _strings("extra_cflags", extra_cflags)
        self.ldflags = _strings("extra_ldflags", extra_ldflags)
        self.debug_info = bool(debug_info)
        self.verbose = bool(verbose)
        if not self.sources and inline is None and not self.schema:
            raise ValueError(
                "ferry.cpp: nothing to build: give sources, an inline source or a schema"
            )
        self.cxx = _find_compiler()  # part of the key; Ninja is looked for only to build
        self.key = self._key()
        if build_dir is not None:
            self.entry = os.path.abspath(os.fspath(build_dir))
        else:
            self.entry = os.path.join(cache_dir(), f"{self.name}-{self.key[:20]}")
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


def _fresh(req: _Request) -> bool:
    """A usable earlier build: the manifest has this key and no dependency changed since."""
    try:
        with open(req.manifest, encoding="utf-8") as f:
            manifest = json.load(f)
        if manifest.get("key") != req.key or not os.path.isfile(req.lib):
            return False
        for path, size, mtime in manifest["deps"]:
            st = os.stat(path)
            if st.st_size != size or st.st_mtime_ns != mtime:
                return False
        if req.schema and not os.path.isfile(req.schema_paths[2]):
            return False
        return True
    except (OSError, ValueError, KeyError, TypeError):
        return False


@contextlib.contextmanager
def _locked(path: str, req: _Request):
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
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


def _ninja_escape(path: str) -> str:
    return path.replace("$", "$$").replace(" ", "$ ").replace(":", "$:").replace("\n", "")


def _ninja_var(args: List[str]) -> str:
    return " ".join(shlex.quote(a) for a in args).replace("$", "$$")


def _ninja_file(req: _Request, sources: List[str]) -> Tuple[str, List[str]]:
    cflags = ["-fdiagnostics-color=never"] + req.flags()
    for d in [req.src_dir] + req.include_dirs + [libinfo.include_dir()]:
        cflags.append(f"-I{d}")
    lib = os.path.realpath(libinfo.lib_path())
    ldflags = [lib, f"-Wl,-rpath,{os.path.dirname(lib)}"] + req.ldflags
    lines = [
        "# Written by ferry.cpp; built once, in a temporary directory.",
        "ninja_required_version = 1.3",
        f"cxx = {_ninja_var(req.cxx)}",
        f"cflags = {_ninja_var(cflags)}",
        f"ldflags = {_ninja_var(ldflags)}",
        "",
        "rule compile",
        "  command = $cxx -MD -MF $out.d $cflags $extra -c $in -o $out",
        "  description = compile $in",
        "",
        "rule link",
        "  command = $cxx -shared $in -o $out $ldflags",
        "  description = link $out",
        "",
    ]
    objects = []
    for i, src in enumerate(sources):
        obj = f"{i}_{re.sub(r'[^A-Za-z0-9_.-]', '_', os.path.basename(src))}.o"
        objects.append(obj)
        lines.append(f"build {obj}: compile {_ninja_escape(src)}")
        if req.inline is not None and src == req.inline_path:
            extra = ["-include", "ferry/ferry.h"]
            if req.schema:
                extra += ["-include", f"{req.name}_schema.h"]
            lines.append(f"  extra = {_ninja_var(extra)}")
    lines.append(f"build lib{req.name}.so: link {' '.join(objects)}")
    lines.append(f"default lib{req.name}.so")
    return "\n".join(lines) + "\n", objects


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


def _build(req: _Request) -> None:
    _find_ninja()  # before writing anything
    os.makedirs(req.src_dir, exist_ok=True)
    deps: List[str] = []
    sources = list(req.sources)
    if req.schema:
        deps += _generate_schema(req)
        sources.append(req.schema_paths[1])
    if req.inline is not None:
        # Kept byte for byte, so the compiler's line numbers are the string's; the includes
        # come from -include flags.
        text = req.inline if req.inline.endswith("\n") else req.inline + "\n"
        _write_if_changed(req.inline_path, text.encode("utf-8"))
        sources.append(req.inline_path)
    tmp = tempfile.mkdtemp(dir=req.entry, prefix="build-")
    try:
        ninja_text, objects = _ninja_file(req, sources)
        with open(os.path.join(tmp, "build.ninja"), "w", encoding="utf-8") as f:
            f.write(ninja_text)
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
            st = os.stat(dep)
            manifest_deps.append([dep, st.st_size, st.st_mtime_ns])
        # The library first, then the manifest that makes it a hit: a reader that sees the new
        # manifest sees the new library.
        os.replace(os.path.join(tmp, f"lib{req.name}.so"), req.lib)
        with open(os.path.join(tmp, "manifest.json"), "w", encoding="utf-8") as f:
            json.dump({"key": req.key, "name": req.name, "deps": manifest_deps}, f)
        os.replace(os.path.join(tmp, "manifest.json"), req.manifest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _ensure_built(req: _Request) -> str:
    if _fresh(req):
        return req.lib
    os.makedirs(req.entry, exist_ok=True)
    with _locked(os.path.join(req.entry, ".lock"), req):
        if _fresh(req):  # another process built it while we waited
            what = "built by another process"
        else:
            _build(req)
            what = "built"
    if req.verbose:
        print(f"ferry.cpp: {what}: {req.lib}", file=sys.stderr)
    return req.lib


# ---------------------------------------------------------------------------------------------
# The public functions


def build(
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
) -> str:
    """Compiles ``sources`` (paths; with ``schema=``, a schema file or a list of them, also the
    C++ tschema generates, whose header ``<name>_schema.h`` the sources may include) into
    ``lib<name>.so`` and returns its path. Cached by a hash of every input (see the module
    docstring); ``build_dir`` builds there instead of the cache. A compiler error is a
    `BuildError` with the compiler's ``file:line`` diagnostics and the command line."""
    req = _Request(
        name,
        sources,
        None,
        schema,
        include_dirs,
        extra_cflags,
        extra_ldflags,
        build_dir,
        debug_info,
        verbose,
    )
    return _ensure_built(req)


class LoadedLibrary(str):
    """What `load` and `load_inline` return: the library's path (a ``str``, as docs/python.md
    promises, so ``os.path.exists(ferry.cpp.load(...))`` holds), whose attributes are those
    of the library's module: the schema's Python classes and the global functions named
    ``<name>.<identifier>`` (``lib.IntImm``, ``lib.fold``), ``path`` and ``module``."""

    module: types.ModuleType

    def __new__(cls, path: str, module: types.ModuleType) -> "LoadedLibrary":
        self = super().__new__(cls, path)
        self.module = module
        return self

    @property
    def path(self) -> str:
        return str(self)

    def __getattr__(self, name: str):
        try:
            return getattr(self.__dict__["module"], name)
        except (KeyError, AttributeError):
            raise AttributeError(f"the library {str(self)!r} has no attribute {name!r}") from None

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(dir(self.module)))

    def __reduce__(self):
        return (str, (str(self),))  # a path travels as a path


_loaded: Dict[str, types.ModuleType] = {}  # library path -> its module
_loaded_names: Dict[str, str] = {}  # library name -> the path loaded under it


def _load(req: _Request) -> LoadedLibrary:
    from . import registry

    path = _ensure_built(req)
    module = _loaded.get(path)
    if module is not None:
        return LoadedLibrary(path, module)
    try:
        registry.load_library(path)
    except RuntimeError as e:
        earlier = _loaded_names.get(req.name)
        if earlier is not None and earlier != path:
            raise RuntimeError(
                f"{e}\nferry.cpp: another build of {req.name} ({earlier}) is already loaded in "
                "this process, and its global functions and types cannot be replaced: restart "
                "the process, or give the changed code new global names and type keys (and a "
                "new library name)"
            ) from None
        raise
    module = types.ModuleType(req.name, f"The library {path}, built by ferry.cpp.")
    module.__file__ = path
    module.__dict__["path"] = path
    text = req.python_module_text()
    if text is not None:
        exec(compile(text, req.schema_paths[2], "exec"), module.__dict__)
    prefix = req.name + "."
    for full in registry.list_global_func_names():
        short = full[len(prefix) :]
        if full.startswith(prefix) and short.isidentifier() and short not in module.__dict__:
            setattr(module, short, registry.get_global_func(full))
    _loaded[path] = module
    _loaded_names.setdefault(req.name, path)
    return LoadedLibrary(path, module)


def load(
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
) -> LoadedLibrary:
    """`build`, then load the library. Returns its path (a `LoadedLibrary`, a ``str``) whose
    attributes are those of the library's module: the schema's Python classes (registered, so
    objects come back as them), the global functions named ``<name>.<identifier>``, and
    ``module`` itself. Loading the same build again returns the same module."""
    req = _Request(
        name,
        sources,
        None,
        schema,
        include_dirs,
        extra_cflags,
        extra_ldflags,
        build_dir,
        debug_info,
        verbose,
    )
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
    req = _Request(
        name,
        sources,
        cpp_source,
        schema,
        include_dirs,
        extra_cflags,
        extra_ldflags,
        build_dir,
        debug_info,
        verbose,
    )
    return _load(req)
