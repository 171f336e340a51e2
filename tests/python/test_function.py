"""Calling C++ from Python and Python from C++: conversions, keywords, callbacks, threads."""

import sys
import threading
import time

import pytest

import ferry


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        1,
        -1,
        2**63 - 1,
        -(2**63),
        0.5,
        float("inf"),
        "",
        "short",
        "a string longer than seven bytes",
        "ünïcödé ✓",
        "with\0nul inside, long enough",
    ],
)
def test_plain_values_round_trip(f, value):
    out = f.echo(value)
    assert out == value and type(out) is type(value)


def test_strings_with_a_nul_at_every_position_round_trip(f):
    # A str goes inline (< 8 bytes), borrowed (no NUL) or copied (a NUL inside); lengths 8-16
    # are checked for a NUL word-wise, longer ones by memchr.
    for n in range(1, 40):
        base = "".join(chr(ord("a") + i % 26) for i in range(n))
        assert f.echo(base) == base
        for i in range(n):
            s = base[:i] + "\0" + base[i + 1 :]
            assert f.echo(s) == s, (n, i)
            assert f.echo(s.encode()) == s.encode()
        assert f.echo("\x80" * n) == "\x80" * n  # bytes >= 0x80 are not NULs


def test_a_borrowed_str_carries_its_utf8_length(f):
    # A str of 8 bytes or more without a NUL is lent to C++ as kFerryRawStr (6) with its length
    # in UTF-8 bytes, so no reader has to count to the NUL; shorter ones are inline (7).
    assert list(f.cell_of("short")) == [7, 5]
    for s in ["short str", "x" * 1000, "ünïcödé ✓", "✓" * 40]:
        assert list(f.cell_of(s)) == [6, len(s.encode())], s
        assert f.echo(s) == s and f.concat(s, "!") == s + "!"
    assert f.cell_of("with\0nul inside")[0] == 65, "a NUL inside: copied into a String"


def test_strings_from_cpp_are_decoded_whatever_their_length_and_form(f):
    # Returned text is ASCII-copied (2-256 bytes) or decoded: either way the same str, and bytes
    # that are not UTF-8 are a UnicodeDecodeError wherever the bad byte is, in every form
    # (inline under 8 bytes, a String object longer).
    for n in [1, 2, 5, 7, 8, 9, 16, 17, 255, 256, 257, 1000]:
        ascii_text = "".join(chr(32 + i % 95) for i in range(n))
        assert f.bytes_as_string(ascii_text.encode()) == ascii_text
        assert f.echo(ascii_text) == ascii_text
        wide = "é" * n
        assert f.bytes_as_string(wide.encode()) == wide
        for i in sorted({0, n // 2, n - 1}):
            bad = bytearray(ascii_text.encode())
            bad[i] = 0xFF
            with pytest.raises(UnicodeDecodeError):
                f.bytes_as_string(bytes(bad))
            bad[i] = 0x7F  # the last ASCII byte
            assert f.bytes_as_string(bytes(bad)) == bytes(bad).decode()
    assert f.bytes_as_string(b"") == "" and f.bytes_as_string(b"x") == "x"


def test_ints_at_every_digit_boundary_round_trip(f):
    # Ints of one internal digit are read straight from the object; longer ones are not.
    edges = [0, 1, 2**15, 2**30 - 1, 2**30, 2**31, 2**32, 2**60 - 1, 2**60, 2**62, 2**63 - 1]
    for v in edges + [-e for e in edges] + [-(2**63)]:
        assert f.echo(v) == v
        assert f.add(v // 2, v - v // 2) == v
    assert f.call_n(lambda i: -(2**40) * i, 3) == -(2**40) * 3  # callback results too
    assert f.call_n(lambda i: -i, 4) == -6
    assert f.call(lambda i: None, 1) is None

    class MyInt(int):
        pass

    assert f.echo(MyInt(2**31)) == 2**31 and type(f.echo(MyInt(5))) is int


def test_nan_round_trips(f):
    out = f.echo(float("nan"))
    assert out != out


def test_ints_out_of_range_are_overflow_errors(f):
    with pytest.raises(OverflowError, match="argument 0: int 9223372036854775808 does not fit"):
        f.echo(2**63)
    with pytest.raises(OverflowError):
        f.echo(-(2**63) - 1)


def test_typed_argument_errors_name_function_position_and_types(f):
    with pytest.raises(TypeError, match=r"argument 1 .*test\.add.*int.*"):
        f.add(1, "x")
    with pytest.raises(TypeError, match="takes 2 arguments but 3 were given"):
        f.add(1, 2, 3)


def test_a_wrong_type_for_a_typed_parameter_names_both_types(f):
    with pytest.raises(
        TypeError, match=r"argument 0 .*test\.dtype_bits.*expected DataType but got int"
    ):
        f.dtype_bits(1)
    assert f.dtype_bits(ferry.DataType("float16")) == 16
    assert f.dtype_bits("float16") == 16  # a str converts where a DataType is expected


def test_unconvertible_values_are_type_errors(f):
    with pytest.raises(TypeError, match="argument 0: cannot convert a value of type 'set'"):
        f.echo({1, 2})
    with pytest.raises(TypeError, match="cannot convert a value of type 'object'"):
        f.echo([1, object()])


def test_bytes_and_bytearray(f):
    assert f.echo(b"\x00\x01\xff") == b"\x00\x01\xff"
    assert type(f.echo(b"")) is bytes
    assert f.bytes_size(bytearray(b"abc")) == 3
    assert f.make_bytes(5) == bytes(range(5))
    assert f.type_key(b"x") == "ferry.Bytes"


def test_strings_reach_cpp_as_strings(f):
    assert f.concat("ab", "cd") == "abcd"
    assert f.concat("a" * 100, "b") == "a" * 100 + "b"
    assert f.type_key("short") == "ferry.String"
    assert f.type_key("x" * 20) == "ferry.String"


def test_lists_tuples_and_dicts_become_containers(f):
    a = f.echo([1, "two", [3.0]])
    assert isinstance(a, ferry.Array)
    assert list(a)[:2] == [1, "two"] and list(a[2]) == [3.0]
    assert isinstance(f.echo((1, 2)), ferry.Array)
    m = f.echo({"k": 1, "j": [2]})
    assert isinstance(m, ferry.Map)
    assert m["k"] == 1 and list(m["j"]) == [2]
    assert f.sum_array([1, 2, 3]) == 6
    with pytest.raises(TypeError, match="element 1"):
        f.sum_array([1, "x"])


def test_datatype_round_trips(f):
    t = f.echo(ferry.DataType("float32x4"))
    assert isinstance(t, ferry.DataType) and t == "float32x4"
    assert (t.type_code, t.bits, t.lanes) == (2, 32, 4)
    with pytest.raises(ValueError):
        ferry.DataType("notatype")
    forged = str.__new__(ferry.DataType, "\ud800")  # a DataType that skipped its parser
    with pytest.raises(UnicodeEncodeError):
        f.echo(forged)
    with pytest.raises(TypeError, match="not a subclass of str"):
        ferry._core._set_dtype_class(int)


def test_keyword_arguments(f):
    assert f.sub(a=5, b=2) == 3
    assert f.sub(5, b=2) == 3
    assert f.sub(b=2, a=5) == 3
    assert f.sub.param_names == ("a", "b")
    with pytest.raises(TypeError, match="unexpected keyword argument 'c'"):
        f.sub(a=1, c=2)
    with pytest.raises(TypeError, match="multiple values for argument 'a'"):
        f.sub(1, a=2)
    with pytest.raises(TypeError, match="missing argument 'b'"):
        f.sub(a=1)
    with pytest.raises(TypeError, match="registered without parameter names"):
        f.echo(x=1)


def test_python_callbacks_called_from_cpp(f):
    calls = []

    def callback(i):
        calls.append(i)
        return i * 2

    assert f.call_n(callback, 5) == 20
    assert calls == [0, 1, 2, 3, 4]
    fn = ferry.convert(lambda a, b: a + b)
    assert isinstance(fn, ferry.Function)
    assert fn(1, 2) == 3
    assert f.call(fn, "x", "y") == "xy"
    assert not fn.release_gil  # a Python function keeps the GIL when called from Python


def test_callback_arguments_and_results_convert(f):
    seen = []
    out = f.call(lambda *args: seen.extend(args) or {"r": [1, 2]}, 1, "s", [1], None)
    assert seen[:2] == [1, "s"] and isinstance(seen[2], ferry.Array) and seen[3] is None
    assert isinstance(out, ferry.Map) and list(out["r"]) == [1, 2]


def test_nested_callbacks(f):
    # Python -> C++ -> Python -> C++ -> Python.
    inner = lambda x: x + 1  # noqa: E731
    outer = lambda x: f.call(inner, x) * 10  # noqa: E731
    assert f.call(outer, 1) == 20


def test_callbacks_from_cpp_threads(f):
    lock = threading.Lock()
    seen = set()

    def callback(i):
        with lock:
            seen.add(threading.get_ident())
        return i

    assert f.call_in_threads(callback, 4, 50) == 4 * sum(range(50))
    assert len(seen) >= 1 and threading.get_ident() not in seen


def test_callbacks_while_another_python_thread_holds_the_gil(f):
    # call_n releases the GIL, so between callbacks a busy Python thread may hold it: each callback
    # must see that its own thread does not hold the GIL (another one does) and wait for it.
    # With release_gil off the same callbacks run straight on the caller's GIL. Every 1000th
    # callback hands the GIL to the busy thread and waits until it has run, so the two contend
    # for the GIL throughout the call.
    stop = threading.Event()
    ran = threading.Event()
    spins = [0]

    def busy():
        while not stop.is_set():
            spins[0] += 1
            ran.set()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)  # the waits for the GIL: 0.1 ms, not 5
    t = threading.Thread(target=busy)
    t.start()
    try:
        me = threading.get_ident()
        threads = set()

        def callback(i):
            threads.add(threading.get_ident())
            if i % 1000 == 0:
                ran.clear()
                assert ran.wait(10), "the busy thread did not run"
            return i

        for release in (True, False):
            call_n = f.echo(f.call_n)  # a Function object of its own: f.call_n stays as it is
            assert call_n is not f.call_n
            call_n.release_gil = release
            before = spins[0]
            assert call_n(callback, 100000) == sum(range(100000))
            assert threads == {me} and spins[0] > before
    finally:
        stop.set()
        t.join()
        sys.setswitchinterval(interval)


def ticks_during(call):
    """How many times a Python worker thread ran while call() ran."""
    ticks = []
    stop = threading.Event()

    def worker():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    t = threading.Thread(target=worker)
    t.start()
    try:
        time.sleep(0.01)
        before = len(ticks)
        call()
        return len(ticks) - before
    finally:
        stop.set()
        t.join()


def test_a_long_cpp_call_lets_other_python_threads_run(f):
    during = ticks_during(lambda: f.sleep_ms(200))
    assert during > 20, "the worker thread did not run while C++ slept"


def test_release_gil_can_be_turned_off_per_function(f):
    nop = f.nop
    assert nop.release_gil
    try:
        nop.release_gil = False
        assert nop() is None and not nop.release_gil
        assert not ferry.get_global_func("test.nop").release_gil, "one Function per registration"
    finally:
        nop.release_gil = True


def test_calls_without_arguments_follow_release_gil(f):
    # A call of no arguments has a vectorcall entry for each GIL policy: setting release_gil
    # must switch between them, both ways.
    sleeper = f.echo(f.sleep_100ms)  # a Function object of its own
    assert sleeper.release_gil
    assert ticks_during(sleeper) > 10, "the worker thread did not run while C++ slept"
    sleeper.release_gil = False
    # At most two ticks: the worker may run once between reading the count and the call, and
    # once when the call returns (it asked for the GIL during the call) before the count is
    # read again; a call that released the GIL for 100 ms gives it ten or more.
    assert ticks_during(sleeper) <= 2, "another Python thread ran during the call"
    sleeper.release_gil = True
    assert ticks_during(sleeper) > 10


def test_functions_registered_quick_keep_the_gil(f):
    quick = f.sleep_ms_quick
    assert not quick.release_gil, "FERRY_REGISTER_GLOBAL(...).quick() keeps the GIL"
    assert f.sleep_ms.release_gil, "a registration without quick() releases the GIL"
    # Every function Ferry itself registers returns promptly and is registered quick.
    ferry_names = [n for n in ferry.list_global_func_names() if n.startswith("ferry.")]
    assert "ferry.MapGetItem" in ferry_names and "ferry.StructuralHash" in ferry_names
    slow = [n for n in ferry_names if ferry.get_global_func(n).release_gil]
    assert slow == [], f"registered by Ferry without quick(): {slow}"
    # At most two ticks: the worker may run once between reading the count and the call, and
    # once as the call returns, before the count is read again.
    assert ticks_during(lambda: quick(100)) <= 2, "another Python thread ran during the call"
    try:
        quick.release_gil = True  # the caller may still choose
        assert ticks_during(lambda: quick(200)) > 20
    finally:
        quick.release_gil = False


def test_register_func_and_call_from_cpp():
    @ferry.register_func("test.py.double")
    def double(x):
        return 2 * x

    assert double(2) == 4  # the decorator returns the function itself
    g = ferry.get_global_func("test.py.double")
    assert g(21) == 42
    assert "test.py.double" in ferry.list_global_func_names()
    with pytest.raises(RuntimeError, match="'test.py.double' is already registered"):
        ferry.register_func("test.py.double", lambda x: x)
    ferry.register_func("test.py.double", lambda x: 3 * x, override=True)
    assert ferry.get_global_func("test.py.double")(2) == 6
    assert ferry.remove_global_func("test.py.double")
    assert ferry.get_global_func("test.py.double", allow_missing=True) is None
    with pytest.raises(KeyError, match="test.py.double"):
        ferry.get_global_func("test.py.double")
    with pytest.raises(ValueError, match=r"register_func\('test.py.raw'\): .* not initialized"):
        ferry.register_func("test.py.raw", ferry.Function.__new__(ferry.Function))


def test_init_api_fills_a_module():
    import types

    mod = types.ModuleType("fake")
    added = ferry.init_api("test", mod)
    assert "add" in added and "echo" in added
    assert mod.add(2, 3) == 5
    assert not hasattr(mod, "py")  # "test.py.x" names have a further dot


def test_many_arguments_use_the_heap_path(f):
    args = list(range(20))
    got = f.call(lambda *a: sum(a), *args)
    assert got == sum(args)


def test_load_library_errors_name_the_path(tmp_path):
    missing = tmp_path / "nope.so"
    with pytest.raises(RuntimeError, match="nope.so"):
        ferry.load_library(missing)


def test_function_objects_are_objects(f):
    assert isinstance(f.echo, ferry.Object)
    assert f.echo(f.echo).same_as(f.echo)
    assert sys.getrefcount(f.echo) >= 1


def test_a_library_registering_a_node_twice_fails_cleanly():
    from ferry_testing import BUILD

    path = BUILD / "tests" / "modules" / "duplicate_node_module.so"
    with pytest.raises(RuntimeError, match="testing.Twice.*registered twice"):
        ferry.load_library(path)


def test_load_library_by_bare_file_name_in_the_current_directory(tmp_path, monkeypatch):
    import shutil

    from ferry_testing import BUILD

    shutil.copy(BUILD / "tests" / "modules" / "good_module.so", tmp_path / "good.so")
    monkeypatch.chdir(tmp_path)
    ferry.load_library("good.so")  # the file here, not a search of the system path
    assert "testing.module.make_counter" in ferry.list_global_func_names()


def test_functions_cannot_be_created_empty():
    with pytest.raises(TypeError, match="use ferry.convert"):
        ferry.Function()


def test_get_global_func_returns_one_object_per_registration():
    assert ferry.get_global_func("test.echo") is ferry.get_global_func("test.echo")
    ferry.register_func("test.py.cached", lambda: 1)
    first = ferry.get_global_func("test.py.cached")
    ferry.register_func("test.py.cached", lambda: 2, override=True)
    second = ferry.get_global_func("test.py.cached")
    assert first is not second and first() == 1 and second() == 2
    ferry.remove_global_func("test.py.cached")
    assert ferry.get_global_func("test.py.cached", allow_missing=True) is None
    with pytest.raises(TypeError, match="unexpected or repeated keyword argument 'bogus'"):
        ferry.get_global_func("test.echo", bogus=1)
    with pytest.raises(TypeError, match="must be str, not int"):
        ferry.get_global_func(1)


def test_constructors_must_return_objects(f):
    from ferry_testing import IntImm

    raw = IntImm.__new__(IntImm)
    with pytest.raises(TypeError, match="the constructor returned 3, not a Ferry object"):
        raw.__init_handle_by_constructor__(f.add, 1, 2)
    with pytest.raises(TypeError, match="argument 0"):
        raw.__init_handle_by_constructor__(f.IntImm, "x")
    raw.__init_handle_by_constructor__(f.IntImm, 4)
    assert raw.value == 4 and f.use_count(raw) == 1
    raw.__init_handle_by_constructor__(lambda: IntImm(5))  # any callable returning an object
    assert raw.value == 5 and f.use_count(raw) == 1


@pytest.mark.parametrize("release_gil", [False, True], ids=["gil-held", "gil-released"])
def test_calls_without_arguments_match_calls_with_them(f, release_gil):
    # `g()` takes a path of its own (no argument cells, no scope for temporaries): every kind of
    # result, every error and every reference count must come out as on the general path.
    from ferry_testing import IntImm

    def fresh(name):
        g = f.echo(ferry.get_global_func("test." + name))  # a Function object of its own
        g.release_gil = release_gil
        return g

    nop, kept, keep, drop = fresh("nop"), fresh("kept"), fresh("keep"), fresh("drop")
    x = IntImm(3)
    values = [None, True, 7, -(2**40), 1.5, "abc", "a long string value", "nul\0inside", x]
    for value in values:
        keep(value)
        got, via_args = kept(), f.echo(value)
        assert type(got) is type(via_args) and got == via_args, value
    assert kept() is x, "an object comes back as its live wrapper"
    drop()
    assert nop() is None and kept() is None

    with pytest.raises(KeyError, match="from a lambda 7"):
        fresh("throw_from_lambda")()
    with pytest.raises(RuntimeError):
        fresh("throw_int")()
    with pytest.raises(TypeError, match="takes no keyword arguments"):
        nop(x=1)
    assert nop() is None, "a failed call leaves nothing behind"
    blank = ferry.Function.__new__(ferry.Function)
    blank.release_gil = release_gil
    with pytest.raises(ValueError, match="ferry.Function is not initialized"):
        blank()

    # No leak over 1e5 calls: of the result (an object, a string, None) or of the function.
    keep(x)
    before = (f.use_count(x), sys.getrefcount(x), sys.getrefcount(kept))
    for _ in range(100_000):
        kept()
    assert (f.use_count(x), sys.getrefcount(x), sys.getrefcount(kept)) == before
    base = f.live_counted()
    keep(f.Counted(1))
    for _ in range(100_000):
        kept()
    drop()
    assert f.live_counted() == base
    none_before = sys.getrefcount(None)
    for _ in range(100_000):
        nop()
    assert abs(sys.getrefcount(None) - none_before) < 100, "None's count does not drift"
    thrower = fresh("throw_from_lambda")
    for _ in range(1000):
        with pytest.raises(KeyError):
            thrower()
    assert sys.getrefcount(thrower) == 2
