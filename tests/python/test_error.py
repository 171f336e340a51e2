"""Errors both ways: C++ kinds raise the matching Python exceptions with C++ frames in the
traceback; a Python exception raised in a callback comes back as the same object."""

import builtins
import gc
import os
import sys
import traceback
import weakref

import pytest

import ferry

KINDS = [
    ("ValueError", ValueError),
    ("TypeError", TypeError),
    ("KeyError", KeyError),
    ("IndexError", IndexError),
    ("AttributeError", AttributeError),
    ("NotImplementedError", NotImplementedError),
    ("RuntimeError", RuntimeError),
    ("MemoryError", MemoryError),
    ("OverflowError", OverflowError),
]


@pytest.mark.parametrize("kind,cls", KINDS)
def test_cpp_error_kinds_raise_matching_python_exceptions(f, kind, cls):
    with pytest.raises(cls) as info:
        f.raise_(kind, "the message") if False else ferry.get_global_func("test.raise")(kind, "msg")
    assert type(info.value) is cls
    assert "msg" in str(info.value)


def test_unknown_and_internal_kinds_are_ferry_errors(f):
    raise_ = ferry.get_global_func("test.raise")
    with pytest.raises(ferry.InternalError, match="broken"):
        raise_("InternalError", "broken")
    with pytest.raises(ferry.FerryError) as info:
        raise_("SchemaError", "bad schema")
    assert type(info.value).__name__ == "SchemaError"
    assert isinstance(info.value, RuntimeError)
    with pytest.raises(type(info.value)):  # the same class the next time
        raise_("SchemaError", "again")


def test_cpp_frames_are_appended_to_the_traceback(f):
    with pytest.raises(ValueError, match="bad value") as info:
        f.raise_value_error("bad value")
    entries = traceback.extract_tb(info.value.__traceback__)
    assert entries[0].name == "test_cpp_frames_are_appended_to_the_traceback"
    last = entries[-1]
    assert last.filename.endswith("testing_module.cc") and last.lineno > 0
    assert "FERRY_THROW" in (last.line or "")
    assert "testing_module.cc" in info.value.__ferry_backtrace__


def test_non_std_exception_becomes_runtime_error(f):
    with pytest.raises(RuntimeError, match="not derived from std::exception"):
        f.throw_int()


def test_python_exception_comes_back_as_the_same_object(f):
    raised = []

    def callback():
        exc = KeyError("py key")
        raised.append(exc)
        raise exc

    with pytest.raises(KeyError) as info:
        f.call(callback)
    assert info.value is raised[0]
    names = [e.name for e in traceback.extract_tb(info.value.__traceback__)]
    assert "callback" in names, "the callback's own frame is kept"


def test_custom_python_exception_classes_survive_the_trip(f):
    class MyError(Exception):
        pass

    def callback(x):
        raise MyError(f"bad {x}")

    with pytest.raises(MyError, match="bad 3"):
        f.call(callback, 3)
    with pytest.raises(MyError):  # through two levels of C++
        f.call(lambda: f.call(callback, 1))


def test_cpp_sees_the_python_kind_and_message(f):
    def raises_key():
        raise KeyError("k")

    def raises_custom():
        class Boom(ValueError):
            pass

        raise Boom("boom")

    def raises_plain():
        raise ZeroDivisionError("zero")

    assert f.catch_kind(raises_key) == "KeyError: 'k'"
    assert f.catch_kind(raises_custom) == "ValueError: boom"
    assert f.catch_kind(raises_plain) == "ZeroDivisionError: zero"
    assert f.catch_kind(lambda: None) == ""


def test_an_unusable_ferry_kind_falls_back_to_the_class(f):
    # A __ferry_kind__ that is not UTF-8 once hung the process: a C++ exception unwound past
    # the callback's GIL release.
    class Odd(ValueError):
        __ferry_kind__ = "Bad\ud800Kind"

    def callback():
        raise Odd("odd")

    assert f.catch_kind(callback) == "ValueError: odd"
    call = ferry.get_global_func("test.call")  # the one shared Function object of the name
    try:
        for release in (True, False):
            call.release_gil = release
            with pytest.raises(Odd, match="odd"):
                call(callback)
    finally:
        call.release_gil = True


def test_argument_errors_keep_their_class_and_say_where(f):
    # Errors whose class takes more than a message are raised as they are, with a note.
    with pytest.raises(UnicodeEncodeError) as info:
        f.echo("\ud800 not UTF-8")
    if sys.version_info >= (3, 11):
        assert info.value.__notes__ == ["while converting argument 0"]
    with pytest.raises(UnicodeEncodeError) as info:
        f.add(a=1, b="\udc80" * 3)
    if sys.version_info >= (3, 11):
        assert info.value.__notes__ == ["while converting argument 'b'"]
    with pytest.raises(TypeError, match="argument 0: cannot convert a value of type 'object'"):
        f.echo(object())


def test_attribute_names_that_are_not_utf8_are_attribute_errors(f):
    x = ferry.get_global_func("test.IntImm")(1)
    with pytest.raises(AttributeError, match="has no attribute"):
        getattr(x, "\ud800")
    assert not hasattr(x, "\ud800")


def test_errors_without_the_package_factory_keep_their_message(tmp_path):
    # _core alone (no ferry package, so no factory that builds Python exceptions) raises a
    # RuntimeError with the C++ message, read before the error is released.
    import subprocess

    core = ferry._core.__file__
    script = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('_core', {core!r})\n"
        "core = importlib.util.module_from_spec(spec); spec.loader.exec_module(core)\n"
        "load = core.get_global_func('ferry.LoadJSON')\n"
        "for _ in range(3):\n"
        "    try:\n"
        "        load('{xxx')\n"
        "    except RuntimeError as e:\n"
        "        print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["LoadJSON: line 1, column 2: expected a string key"] * 3


def test_registered_error_classes_map_kinds_both_ways(f):
    @ferry.register_error("test.Custom")
    class Custom(Exception):
        pass

    with pytest.raises(Custom, match="from C"):
        ferry.get_global_func("test.raise")("test.Custom", "from C")

    def callback():
        raise Custom("from Python")

    assert f.catch_kind(callback) == "test.Custom: from Python"


def test_errors_from_callbacks_in_cpp_threads(f):
    def callback(i):
        if i == 3:
            raise ValueError("three")
        return i

    with pytest.raises(RuntimeError, match="ValueError: three"):
        f.call_in_threads(callback, 2, 5)


def test_error_path_leaks_nothing(f):
    class Marker(Exception):
        pass

    refs = []

    def callback():
        exc = Marker()
        refs.append(weakref.ref(exc))
        raise exc

    for _ in range(100):
        with pytest.raises(Marker):
            f.call(callback)
    gc.collect()
    assert all(r() is None for r in refs), "an exception object outlived its error"

    def one_cpp_error():
        try:
            f.raise_value_error("x")
        except ValueError:
            pass

    one_cpp_error()
    before = len(gc.get_objects())
    for _ in range(1000):
        one_cpp_error()
    gc.collect()
    assert len(gc.get_objects()) - before < 50
    assert sys.getrefcount(callback) == 2


# ---------------------------------------------------------------------------------------------
# A caught error frees its frames: no reference cycle on any path (checked with the collector
# off, through a weakref to a local of the catching function).


class _Local:
    pass


def _frees_frames(action, expected):
    def catching():
        local = _Local()
        ref = weakref.ref(local)
        try:
            action()
        except expected as e:
            assert e.__traceback__ is not None
        else:
            raise AssertionError("no error raised")
        return ref

    enabled = gc.isenabled()
    gc.disable()
    try:
        ref = catching()
        assert ref() is None, "the catching function's frame outlived the call"
    finally:
        if enabled:
            gc.enable()


def _raise_in_callback():
    raise KeyError("from the callback")


@pytest.mark.parametrize("kind,cls", KINDS + [("InternalError", ferry.InternalError)])
def test_cpp_error_kinds_free_their_frames(f, kind, cls):
    _frees_frames(lambda: ferry.get_global_func("test.raise")(kind, "m"), cls)
    _frees_frames(lambda: f.raise_value_error("m"), ValueError)
    _frees_frames(lambda: f.throw_from_static(1), ValueError)


@pytest.mark.parametrize(
    "name,action,cls",
    [
        ("bad argument", lambda f: f.add("x", 1), TypeError),
        ("unconvertible argument", lambda f: f.echo(object()), TypeError),
        ("argument that is not UTF-8", lambda f: f.echo("\ud800"), UnicodeEncodeError),
        ("map lookup", lambda f: ferry.Map({"a": 1})["b"], KeyError),
        ("array lookup", lambda f: ferry.Array([1, 2])[5], IndexError),
        ("load_json", lambda f: ferry.load_json("{xxx"), ValueError),
        ("callback", lambda f: f.call(_raise_in_callback), KeyError),
        (
            "C++ error through a callback",
            lambda f: f.call(lambda: f.throw_from_static(0)),
            ValueError,
        ),
        ("two levels of callbacks", lambda f: f.call(lambda: f.call(_raise_in_callback)), KeyError),
    ],
)
def test_every_error_path_frees_its_frames(f, name, action, cls):
    _frees_frames(lambda: action(f), cls)


def test_many_caught_errors_hold_no_memory_with_the_collector_off(f):
    import tracemalloc

    lookup = ferry.Map({"a": 1})

    def one():
        try:
            lookup["missing"]
        except KeyError:
            pass
        try:
            f.raise_value_error("x")
        except ValueError:
            pass

    one()
    gc.disable()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(2000):
            one()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
        gc.enable()
    assert grown < 200_000, f"2,000 caught errors kept {grown} bytes"


# ---------------------------------------------------------------------------------------------
# Tracebacks: every C++ frame between the Python caller and the throw site, and between a
# Python caller and a callback, with its function name and file:line (the support library is
# built with debug information).

SUPPORT_SOURCE = os.path.join(os.path.dirname(__file__), "support", "testing_module.cc")


def _line_of(text):
    with open(SUPPORT_SOURCE, encoding="utf-8") as source:
        for number, line in enumerate(source, 1):
            if text in line:
                return number
    raise AssertionError(f"{text!r} not in {SUPPORT_SOURCE}")


def _entries(exc):
    return [
        (os.path.basename(e.filename), e.lineno, e.name)
        for e in traceback.extract_tb(exc.__traceback__)
    ]


def test_traceback_names_static_functions_with_file_and_line(f):
    with pytest.raises(ValueError, match="from a static function 2") as info:
        f.throw_from_static(1)
    text = "".join(traceback.format_exception(info.value))
    entries = _entries(info.value)
    assert entries[0][2] == "test_traceback_names_static_functions_with_file_and_line"
    throw_line = _line_of('FERRY_THROW(ValueError) << "from a static function "')
    call_line = _line_of("ThrowFromStaticFunction(value + 1);")
    assert entries[-1][0] == "testing_module.cc" and entries[-1][1] == throw_line, entries
    assert "ThrowFromStaticFunction" in entries[-1][2]
    assert ("testing_module.cc", call_line) in [e[:2] for e in entries]
    assert any("CallStaticThrower" in e[2] for e in entries)
    assert f'testing_module.cc", line {throw_line}, in ' in text
    assert "ThrowFromStaticFunction" in text and "CallStaticThrower" in text
    # Nothing of the extension or the interpreter, nor Ferry's throwing machinery.
    assert not any(
        "ErrorBuilder" in e[2] or e[0].startswith(("_core", "libpython")) for e in entries
    ), entries


def test_traceback_names_lambdas_with_file_and_line(f):
    with pytest.raises(KeyError) as info:
        f.throw_from_lambda()
    entries = _entries(info.value)
    assert entries[-1][:2] == ("testing_module.cc", _line_of('"from a lambda "')), entries
    assert "lambda" in entries[-1][2]
    assert ("testing_module.cc", _line_of("thrower(7);")) in [e[:2] for e in entries]


def test_traceback_shows_cpp_frames_between_caller_and_callback(f):
    def callback():
        raise KeyError("k")

    with pytest.raises(KeyError) as info:
        f.call(callback)
    entries = _entries(info.value)
    names = [e[2] for e in entries]
    assert names[0] == "test_traceback_shows_cpp_frames_between_caller_and_callback"
    assert names[-1] == "callback"
    between = entries[1:-1]
    call_line = _line_of("args[0].cast<Function>().CallPacked(args + 1, n - 1, out);")
    assert ("testing_module.cc", call_line) in [e[:2] for e in between], entries
    # Ferry's calling machinery (Function::CallPacked, the callback's C++ side) is left out.
    assert not any(_is_call_machinery(e) for e in between), entries


def test_cpp_error_through_a_callback_keeps_both_sides(f):
    def callback():
        f.throw_from_static(5)

    with pytest.raises(ValueError, match="static function 6") as info:
        f.call(callback)
    entries = _entries(info.value)
    names = [e[2] for e in entries]
    i = names.index("callback")
    call_line = _line_of("args[0].cast<Function>().CallPacked(args + 1, n - 1, out);")
    assert ("testing_module.cc", call_line) in [e[:2] for e in entries[:i]], entries  # outer call
    assert "ThrowFromStaticFunction" in names[-1], names  # the inner throw site
    assert not any(_is_call_machinery(e) for e in entries), entries


_MACHINERY_FILES = ("function.h", "function_traits.h")
_MACHINERY_NAMES = (
    "PackedSafeCall",
    "TypedCaller",
    "CallTyped",
    "CallPacked",
    "CallbackFunctionObj",
)


def _is_call_machinery(entry):
    return entry[0] in _MACHINERY_FILES or any(n in entry[2] for n in _MACHINERY_NAMES)


def test_traceback_leaves_out_the_calling_machinery(f):
    # Between the Python caller and the user's C++ lambda stood 4-7 frames of Ferry's dispatch
    # templates (PackedSafeCall, NamedTypedFunctionObj::CppCall, TypedCaller::Call, CallTyped),
    # with names of up to 300 characters: they are left out as the throwing machinery is.
    with pytest.raises(ValueError, match="from a static function 2") as info:
        f.throw_from_static(1)
    entries = _entries(info.value)
    assert entries[0][2] == "test_traceback_leaves_out_the_calling_machinery"
    assert not any(_is_call_machinery(e) for e in entries), entries
    assert all(e[0] == "testing_module.cc" for e in entries[1:]), entries
    assert max(len(e[2]) for e in entries) < 200, entries
    # A call whose argument does not convert fails in the machinery: the caller's line is last.
    with pytest.raises(TypeError) as info:
        f.add("one", 1)
    assert [e[0] for e in _entries(info.value)] == ["test_error.py"], _entries(info.value)


def test_ferry_backtrace_full_shows_the_machinery_too():
    # FERRY_BACKTRACE=full (docs/python.md, Tracebacks) keeps every frame, for debugging Ferry.
    import subprocess

    script = (
        "import traceback, ferry_testing, ferry\n"
        "try:\n"
        "    ferry.get_global_func('test.throw_from_static')(1)\n"
        "except ValueError as e:\n"
        "    print('\\n'.join(f'{x.filename}|{x.name}' for x in traceback.extract_tb(e.__traceback__)))\n"
    )
    from ferry_testing import ROOT

    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(
        os.environ, FERRY_BACKTRACE="full", PYTHONPATH=os.pathsep.join([str(ROOT / "python"), here])
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    frames = [line.split("|", 1) for line in out.stdout.splitlines()]
    assert any(file.endswith("function.h") for file, _ in frames), out.stdout
    assert any("PackedSafeCall" in name for _, name in frames), out.stdout
    assert any("ErrorBuilder" in name for _, name in frames), out.stdout  # the throwing one too
    assert any("ThrowFromStaticFunction" in name for _, name in frames), out.stdout


def test_cpp_can_read_a_callbacks_python_traceback(f):
    def callback():
        raise ValueError("from Python")

    text = f.backtrace_of(callback)
    assert "Traceback (most recent call last)" in text and "in callback" in text
    assert "ValueError: from Python" in text


def test_cpp_backtrace_text_names_the_static_function(f):
    text = f.backtrace_of(lambda: f.throw_from_static(0))
    assert "ThrowFromStaticFunction" in text and "testing_module.cc" in text


# ---------------------------------------------------------------------------------------------
# Re-raising one exception object stays linear: crossing C++ formats nothing.


def test_reraising_one_exception_through_callbacks_formats_nothing(f, monkeypatch):
    calls = []
    for name in ("format_exception", "format_tb", "format_list", "extract_tb"):
        original = getattr(traceback, name)

        def counting(*args, _original=original, _name=name, **kwargs):
            calls.append(_name)
            return _original(*args, **kwargs)

        monkeypatch.setattr(traceback, name, counting)
    exc = ValueError("again")

    def callback():
        raise exc

    lengths = []
    for i in range(2000):
        with pytest.raises(ValueError) as info:
            f.call(callback)
        assert info.value is exc
        if i % 500 == 0:
            lengths.append(sum(1 for _ in traceback.walk_tb(exc.__traceback__)))
    assert calls == [], "a crossing formatted the traceback"
    # The traceback grows by the same number of entries per crossing (as for plain Python).
    steps = [b - a for a, b in zip(lengths, lengths[1:])]
    assert len(set(steps)) == 1 and steps[0] > 0, lengths
    exc.__traceback__ = None
    assert "ValueError: again" in f.backtrace_of(callback)
    assert calls.count("format_exception") == 1, calls  # formatted once, when C++ asked


# ---------------------------------------------------------------------------------------------
# Messages: whole characters, decoded with replacement, long inputs shortened.


def test_json_error_quotes_whole_characters():
    with pytest.raises(ValueError) as info:
        ferry.load_json("é")
    assert "'é'" in str(info.value)
    with pytest.raises(ValueError, match="'日'"):
        ferry.load_json("[1, 日]")
    with pytest.raises(ValueError, match=r"invalid escape '\\é'"):
        ferry.load_json('"\\é"')


def test_messages_that_are_not_utf8_are_decoded_with_replacement(f):
    with pytest.raises(ValueError) as info:
        f.raise_bytes(b"bad \xc3 byte \xff")
    assert str(info.value) == "bad \ufffd byte \ufffd"


def test_a_huge_offending_input_is_quoted_shortened():
    with pytest.raises(ValueError, match="out of range") as info:
        ferry.load_json("1" * 10_000_000)
    assert len(str(info.value)) < 300 and "10000000 bytes" in str(info.value)
    key = "ü" * 100_000
    with pytest.raises(ValueError, match="duplicate key") as info:
        ferry.load_json('{"%s": 1, "%s": 2}' % (key, key))
    assert len(str(info.value)) < 300


# ---------------------------------------------------------------------------------------------
# One list of builtin kinds, libferry's.


def test_builtin_kinds_come_from_libferry(f):
    kinds = ferry._core._builtin_error_kinds()
    assert "ValueError" in kinds and "InternalError" in kinds
    assert {k for k, _ in KINDS} <= set(kinds)
    raise_ = ferry.get_global_func("test.raise")
    for kind in kinds:
        with pytest.raises(Exception) as info:
            raise_(kind, "m")
        expected = ferry.InternalError if kind == "InternalError" else getattr(builtins, kind)
        assert type(info.value) is expected

        if kind != "InternalError":

            def callback(cls=expected):
                raise cls("m")

            assert f.catch_kind(callback).split(":")[0] == kind

    # The nearest builtin kind in the MRO: NotImplementedError is a RuntimeError.
    def not_implemented():
        raise NotImplementedError("later")

    def decode_error():
        b"\xff".decode()

    assert f.catch_kind(not_implemented).startswith("NotImplementedError:")
    assert f.catch_kind(decode_error).startswith("ValueError:")


def test_ferry_backtrace_0_captures_no_frames(tmp_path):
    import subprocess

    import ferry_testing

    lib = str(ferry_testing.TESTING_LIB)
    script = (
        "import traceback, ferry\n"
        f"ferry.load_library({lib!r})\n"
        "try:\n"
        "    ferry.get_global_func('test.throw_from_static')(1)\n"
        "except ValueError as e:\n"
        "    print([x.filename for x in traceback.extract_tb(e.__traceback__)])\n"
        "    print(repr(e.__ferry_backtrace__))\n"
    )
    env = dict(os.environ, FERRY_BACKTRACE="0")
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["['<string>']", "''"]


def _run_counting_throws(code):
    """Runs `code` in a subprocess whose C++ throws and rethrows are counted (throw_counter.cc:
    ctypes.CDLL(None).ferry_test_throw_count and ferry_test_rethrow_count)."""
    import subprocess

    import ferry_testing

    counter = ferry_testing.TESTING_LIB.parent / "ferry_throw_counter.so"
    assert counter.exists(), counter
    env = dict(os.environ)
    # Before the C++ runtime (so that its __cxa_throw is the one found), after a sanitizer's
    # runtime (which must come first, and itself wraps __cxa_throw: it then calls this one).
    preload = env.get("LD_PRELOAD", "").replace(":", " ").split()
    at = 1 if preload and "san" in os.path.basename(preload[0]) else 0
    env["LD_PRELOAD"] = " ".join(preload[:at] + [str(counter)] + preload[at:])
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_a_cpp_error_crossing_the_c_abi_is_thrown_once_and_never_rethrown():
    # Each rethrow unwinds the stack again: the C ABI entry (PackedSafeCall, FERRY_C_API_END)
    # catches a ferry::Error by type instead of catching everything and rethrowing to sort it
    # (two rethrows per error before).
    import ferry_testing

    code = (
        "import ctypes, ferry\n"
        "lib = ctypes.CDLL(None)\n"
        f"ferry.load_library({str(ferry_testing.TESTING_LIB)!r})\n"
        "f = ferry.get_global_func('test.raise_value_error')\n"
        "before = lib.ferry_test_throw_count(), lib.ferry_test_rethrow_count()\n"
        "for _ in range(10):\n"
        "    try:\n"
        "        f('x')\n"
        "    except ValueError as e:\n"
        "        assert 'testing_module.cc' in e.__ferry_backtrace__\n"
        "after = lib.ferry_test_throw_count(), lib.ferry_test_rethrow_count()\n"
        "print(after[0] - before[0], after[1] - before[1])\n"
    )
    throws, rethrows = map(int, _run_counting_throws(code).split())
    assert throws == 10
    assert rethrows == 0


def test_importing_ferry_throws_no_cpp_exception():
    # An error is not free: the first one in a process loads the symbol tables of every loaded
    # library for its C++ frames (a quarter of a second with debug information), so the normal
    # paths of `import ferry` (registering the container classes, looking up node fields)
    # must not use exceptions for answers. Counted by wrapping __cxa_throw in a subprocess.
    import subprocess

    import ferry_testing

    counter = ferry_testing.TESTING_LIB.parent / "ferry_throw_counter.so"
    assert counter.exists(), counter
    env = dict(os.environ)
    # Before the C++ runtime (so that its __cxa_throw is the one found), after a sanitizer's
    # runtime (which must come first, and itself wraps __cxa_throw: it then calls this one).
    preload = env.get("LD_PRELOAD", "").replace(":", " ").split()
    at = 1 if preload and "san" in os.path.basename(preload[0]) else 0
    env["LD_PRELOAD"] = " ".join(preload[:at] + [str(counter)] + preload[at:])
    code = (
        "import ctypes\n"
        "count = ctypes.CDLL(None).ferry_test_throw_count\n"
        "import ferry, ferry.dataclasses\n"
        "@ferry.py_class('throwcount.P')\n"
        "class P(ferry.Object):\n"
        "    x: int = 0\n"
        "P(1)\n"
        "quiet = count()\n"
        "try:\n"
        "    ferry.get_global_func('ferry.NodeFields')('ferry.Array')\n"
        "except ValueError:\n"
        "    pass\n"
        "print(quiet, count())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    quiet, after_error = map(int, out.stdout.split())
    assert quiet == 0, f"{quiet} C++ exceptions while importing ferry and defining a py_class"
    assert after_error >= 1  # the counter sees a throw
