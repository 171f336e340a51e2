"""Errors both ways: C++ kinds raise the matching Python exceptions with C++ frames in the
traceback; a Python exception raised in a callback comes back as the same object."""
import gc
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
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60)
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
