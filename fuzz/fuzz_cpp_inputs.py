"""Atheris (libFuzzer for Python) target: ferry.cpp's build inputs (library name, sources,
include directories, compiler and linker flags, the compiler's words) on arbitrary text, through
the checks of ferry.cpp and the function that writes build.ninja; nothing is compiled.

Properties checked on every input, any failure (or any other exception) is a finding:
- the inputs are refused (ValueError) exactly when they cannot be carried: a name that is not
  an identifier of at most MAX_NAME_LENGTH characters, or a value with a newline, a carriage
  return, a NUL or a character with no encoding;
- otherwise build.ninja, read by a lexer following Ninja's own rules (its `lexer.in.cc`: what
  ends a path, what ends a value, the `$` escapes), holds exactly the statements ferry.cpp
  means to write: four variables, the rules `compile` and `link`, one compile per source, one
  link, one default, and nothing else (no statement smuggled in by an input);
- each command, expanded as Ninja expands it and split into words as /bin/sh does, is exactly
  the compiler, the flags and the paths given, each one argument.
For one input in 32 (chosen by its hash, so a run is reproducible), the real `ninja -t commands`
and the real /bin/sh check the last property as well.

Run by scripts/fuzz.sh: python3 fuzz/fuzz_cpp_inputs.py CORPUS_DIR -max_total_time=N
(`import ferry` needs the extension: FERRY_BUILD_DIR, or build/ at the checkout's root).
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import zlib

import atheris

import ferry  # noqa: F401  (the extension, uninstrumented)

with atheris.instrument_imports(include=["ferry.cpp"]):
    from ferry import cpp

# Bytes >= 0x80 of the input stand for these: what Ninja, the shell or the encoding treat
# specially, beyond the ASCII characters (all of which, controls included, come as themselves).
SPECIAL = [
    "$",
    "$$",
    "$\n",
    "$ ",
    "$:",
    "${cflags}",
    "$out",
    "|",
    "||",
    "|@",
    ":",
    " ",
    "\n",
    "\r",
    "\r\n",
    "\0",
    "\t",
    "'",
    '"',
    "\\",
    ";",
    "`",
    "$(",
    "#",
    "=",
    "-",
    "é",
    "€",
    "\U0001f600",
    "\udcff",  # a byte that is not UTF-8, as os.fsdecode gives it: carried
    "\ud800",  # a lone surrogate: no encoding, refused
    "\n  command = touch /tmp/fuzz_cpp_ran\nbuild x: phony\ndefault x\n",
]


def text(fdp, limit):
    out = []
    for b in fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, limit)):
        out.append(chr(b) if b < 0x80 else SPECIAL[b % len(SPECIAL)])
    return "".join(out)


def texts(fdp, most, limit):
    return [text(fdp, limit) for _ in range(fdp.ConsumeIntInRange(0, most))]


# ---------------------------------------------------------------------------------------------
# build.ninja as Ninja reads it


class NinjaError(Exception):
    pass


SIMPLE = re.compile(rb"[a-zA-Z0-9_-]+")
BRACED = re.compile(rb"\{([a-zA-Z0-9_.-]+)\}")
IDENT = re.compile(rb"[a-zA-Z0-9_.-]+")


class Lexer:
    """The parts of Ninja's lexer ferry.cpp's output uses, with its rules for everything else
    (so that anything unexpected shows as a statement or an error, not as a value)."""

    def __init__(self, data: bytes):
        self.data = data
        self.i = 0

    def at_end(self):
        return self.i >= len(self.data)

    def peek(self):
        return self.data[self.i : self.i + 1]

    def skip_spaces(self):
        while True:
            if self.data.startswith(b" ", self.i):
                self.i += 1
            elif self.data.startswith(b"$\n", self.i):
                self.i += 2
            elif self.data.startswith(b"$\r\n", self.i):
                self.i += 3
            else:
                return

    def ident(self):
        m = IDENT.match(self.data, self.i)
        if not m:
            raise NinjaError(f"expected an identifier at {self.i}")
        self.i = m.end()
        self.skip_spaces()
        return m.group().decode()

    def newline(self):
        if self.data.startswith(b"\r\n", self.i):
            self.i += 2
        elif self.data.startswith(b"\n", self.i):
            self.i += 1
        elif not self.at_end():
            raise NinjaError(f"expected a newline at {self.i}, got {self.peek()!r}")

    def eval_string(self, path: bool):
        """A list of ('text', bytes) and ('var', name) parts, as ReadEvalString reads it."""
        parts = []
        d = self.data
        while True:
            if self.i >= len(d):
                raise NinjaError("unexpected end of file")
            c = d[self.i : self.i + 1]
            if c == b"\0":
                raise NinjaError("NUL in the file")
            if d.startswith(b"\r\n", self.i):
                if not path:
                    self.i += 2
                break
            if c == b"\r":
                raise NinjaError("a lone carriage return")
            if c in (b" ", b":", b"|", b"\n"):
                if path:
                    break
                if c == b"\n":
                    self.i += 1
                    break
                parts.append(("text", c))
                self.i += 1
                continue
            if c == b"$":
                nxt = d[self.i + 1 : self.i + 2]
                if nxt in (b"$", b" ", b":"):
                    parts.append(("text", nxt))
                    self.i += 2
                elif nxt == b"\n" or d.startswith(b"\r\n", self.i + 1):
                    self.i += 2 if nxt == b"\n" else 3
                    while d.startswith(b" ", self.i):
                        self.i += 1
                elif nxt == b"{":
                    m = BRACED.match(d, self.i + 1)
                    if not m:
                        raise NinjaError("bad ${...}")
                    parts.append(("var", m.group(1).decode()))
                    self.i = m.end()
                else:
                    m = SIMPLE.match(d, self.i + 1)
                    if not m:
                        raise NinjaError(f"bad $-escape at {self.i}")
                    parts.append(("var", m.group().decode()))
                    self.i = m.end()
                continue
            parts.append(("text", c))
            self.i += 1
        if path:
            self.skip_spaces()
        return parts


def literal(parts):
    """The text of an eval string with no variables (what ferry.cpp writes for inputs)."""
    if any(kind == "var" for kind, _ in parts):
        raise NinjaError(f"a variable reference in an input: {parts}")
    return b"".join(value for _, value in parts)


def parse(data: bytes):
    """The statements of a build.ninja: ('let', name, parts), ('rule', name, bindings),
    ('build', outputs, rule, inputs, implicit, order_only, bindings), ('default', targets)."""
    lx = Lexer(data)
    statements = []
    while not lx.at_end():
        if lx.peek() in (b"\n",) or lx.data.startswith(b"\r\n", lx.i):
            lx.newline()
            continue
        if lx.peek() == b"#":
            end = lx.data.find(b"\n", lx.i)
            lx.i = len(lx.data) if end < 0 else end + 1
            continue
        if lx.peek() == b" ":
            raise NinjaError(f"an indented line outside a rule or build at {lx.i}")
        word = lx.ident()
        if word in ("rule", "build", "default", "pool", "include", "subninja"):
            if word == "rule":
                name = lx.ident()
                lx.newline()
                statements.append(("rule", name, bindings(lx)))
            elif word == "build":
                outputs = paths(lx)
                if lx.peek() != b":":
                    raise NinjaError("expected ':' in a build line")
                lx.i += 1
                lx.skip_spaces()
                rule = lx.ident()
                inputs = paths(lx)
                implicit, order_only = [], []
                if lx.data.startswith(b"||", lx.i) or lx.data.startswith(b"|@", lx.i):
                    raise NinjaError("order-only or validation inputs")
                if lx.peek() == b"|":
                    lx.i += 1
                    lx.skip_spaces()
                    implicit = paths(lx)
                lx.newline()
                statements.append(
                    ("build", outputs, rule, inputs, implicit, order_only, bindings(lx))
                )
            elif word == "default":
                targets = paths(lx)
                lx.newline()
                statements.append(("default", targets))
            else:
                raise NinjaError(f"unexpected statement {word}")
        else:
            if lx.peek() != b"=":
                raise NinjaError(f"expected '=' after {word}")
            lx.i += 1
            lx.skip_spaces()
            statements.append(("let", word, lx.eval_string(path=False)))
    return statements


def paths(lx):
    out = []
    while True:
        parts = lx.eval_string(path=True)
        if not parts:
            return out
        out.append(literal(parts))


def bindings(lx):
    out = {}
    while lx.data.startswith(b" ", lx.i):
        lx.skip_spaces()
        key = lx.ident()
        if lx.peek() != b"=":
            raise NinjaError(f"expected '=' after {key}")
        lx.i += 1
        lx.skip_spaces()
        out[key] = lx.eval_string(path=False)
    return out


def expand(parts, *scopes):
    out = []
    for kind, value in parts:
        if kind == "text":
            out.append(value)
            continue
        for scope in scopes:
            if value in scope:
                out.append(scope[value])
                break
    return b"".join(out)


# ---------------------------------------------------------------------------------------------
# The property


def encode(s):
    return s.encode("utf-8", "surrogateescape")


def carriable(value):
    if any(c in value for c in "\n\r\0"):
        return False
    try:
        encode(value)
    except UnicodeEncodeError:
        return False
    return True


def check(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    if fdp.ConsumeBool():
        name = text(fdp, 40)
    else:  # mostly an identifier, sometimes too long
        alphabet = "abcxyz_019ABZ"
        name = "".join(
            alphabet[b % len(alphabet)] for b in fdp.ConsumeBytes(fdp.ConsumeIntInRange(1, 200))
        )
    sources = texts(fdp, 3, 30) or ["a.cc"]
    include_dirs = texts(fdp, 3, 30)
    cflags = texts(fdp, 4, 30)
    ldflags = texts(fdp, 3, 30)
    cxx = [text(fdp, 20) or "c++"] + texts(fdp, 2, 10)
    extra = texts(fdp, 2, 10)

    name_ok = (
        bool(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name)) and len(name) <= cpp.MAX_NAME_LENGTH
    )
    values_ok = all(carriable(v) for v in sources + include_dirs + cflags + ldflags + cxx + extra)
    try:
        cpp._check_name(name)
        srcs = cpp._paths("sources", sources, must_exist=False)
        incs = cpp._paths("include_dirs", include_dirs, must_exist=False)
        cf = cpp._strings("extra_cflags", cflags)
        lf = cpp._strings("extra_ldflags", ldflags)
        for word in cxx:
            cpp._check_arg("CXX", word)
        for word in extra:
            cpp._check_arg("extra", word)
        cf = cf + [f"-I{d}" for d in incs]
        with_extra = [(s, extra if i == len(srcs) - 1 else []) for i, s in enumerate(srcs)]
        ninja, objects = cpp._ninja_text(name, cxx, cf, lf, with_extra)
    except ValueError as e:
        assert not (name_ok and values_ok), f"refused carriable inputs: {e}"
        assert str(e).startswith("ferry.cpp: "), e
        return
    assert name_ok and values_ok, "accepted inputs that cannot be carried"

    raw = encode(ninja)
    statements = parse(raw)
    lets = [s for s in statements if s[0] == "let"]
    rules = {s[1]: s[2] for s in statements if s[0] == "rule"}
    builds = [s for s in statements if s[0] == "build"]
    defaults = [s for s in statements if s[0] == "default"]
    assert [s[1] for s in lets] == ["ninja_required_version", "cxx", "cflags", "ldflags"], lets
    assert len(rules) == 2 and set(rules) == {"compile", "link"}, rules
    assert sum(1 for s in statements if s[0] == "rule") == 2
    assert len(builds) == len(srcs) + 1, builds
    lib = encode(f"lib{name}.so")
    assert defaults == [("default", [lib])], defaults
    scope = {s[1]: expand(s[2]) for s in lets}

    commands = []
    for i, (src, extra_flags) in enumerate(with_extra):
        _, outputs, rule, inputs, implicit, order_only, binds = builds[i]
        obj = objects[i]
        assert (outputs, rule, inputs, implicit, order_only) == (
            [encode(obj)],
            "compile",
            [],
            [],
            [],
        )
        assert set(binds) <= {"src", "extra"}, binds
        edge = {k: expand(v, scope) for k, v in binds.items()}
        edge["out"] = encode(obj)
        command = expand(rules["compile"]["command"], edge, scope)
        expected = [*cxx, "-MD", "-MF", obj + ".d", *cf, *extra_flags, "-c", src, "-o", obj]
        commands.append((command, expected))
    _, outputs, rule, inputs, implicit, order_only, binds = builds[-1]
    assert (outputs, rule, implicit, order_only, binds) == ([lib], "link", [], [], {})
    assert inputs == [encode(o) for o in objects]
    edge = {"in": b" ".join(inputs), "out": lib}
    command = expand(rules["link"]["command"], edge, scope)
    commands.append((command, [*cxx, "-shared", *objects, "-o", f"lib{name}.so", *lf]))
    for command, expected in commands:
        words = shlex.split(command.decode("utf-8", "surrogateescape"))
        assert words == expected, (words, expected)
        # The compiler is quoted even when it needs no quotes: never an assignment (A=b) or a
        # reserved word (if, !) to the shell.
        assert command.startswith(b"'"), command

    if zlib.crc32(data) % 32 == 0:
        check_with_ninja_and_sh(raw, commands)


def check_with_ninja_and_sh(raw, commands):
    """The same property with the real tools: Ninja's expansion and /bin/sh's word splitting."""
    with tempfile.TemporaryDirectory(prefix="fuzz_cpp_") as tmp:
        with open(os.path.join(tmp, "build.ninja"), "wb") as f:
            f.write(raw)
        listed = subprocess.run(
            [NINJA, "-C", tmp, "-t", "commands"], capture_output=True, check=True
        ).stdout.splitlines()
        assert sorted(listed) == sorted(c for c, _ in commands), (listed, commands)
        for command, expected in commands:
            # sh runs the command with a function in place of the compiler: one line per word.
            out = subprocess.run(
                ["/bin/sh", "-c", b"w() { printf '[%s]\\n' \"$@\"; }; w " + command],
                capture_output=True,
                check=True,
                cwd=tmp,
            ).stdout
            words = [line[1:-1] for line in out.split(b"\n")[:-1]]
            assert words == [encode(w) for w in expected], (words, expected)


NINJA = shutil.which("ninja") or shutil.which("ninja-build") or "ninja"


def main():
    # Coverage of this file's lexer too: inputs reaching new statement shapes are kept.
    for f in (Lexer.eval_string, Lexer.skip_spaces, parse, paths, bindings, check):
        atheris.instrument_func(f)
    atheris.Setup(sys.argv, lambda data: check(bytes(data)))
    atheris.Fuzz()


if __name__ == "__main__":
    main()
