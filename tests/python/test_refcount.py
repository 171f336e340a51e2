"""Reference counts on both sides stay exact: no conversion path leaks or drops a reference."""

import gc
import sys
import weakref

import pytest
from ferry_testing import IntImm

import ferry

N = 100_000


@pytest.mark.parametrize(
    "value",
    [
        "short",
        "a long string beyond the inline size",
        "nul\0inside, long enough",
        b"bytes",
        2**40,
        1.5,
        [1, 2],
        {"k": "v"},
        (1,),
    ],
    ids=["small-str", "str", "str-nul", "bytes", "int", "float", "list", "dict", "tuple"],
)
def test_arguments_keep_python_refcounts_flat(f, value):
    echo = f.echo
    before = sys.getrefcount(value)
    for _ in range(N // 10):
        echo(value)
    assert sys.getrefcount(value) == before


def test_objects_keep_exact_cpp_counts(f):
    x = IntImm(1)
    assert f.use_count(x) == 1, "the Python handle owns exactly one reference"
    y = f.echo(x)
    assert y is x, "an object that comes back is its live wrapper"
    assert f.use_count(x) == 1, "and no second reference is kept for it"
    del y
    assert f.use_count(x) == 1
    for _ in range(N):
        f.echo(x)
    assert f.use_count(x) == 1
    a = ferry.convert([x, x])
    assert f.use_count(x) == 3
    del a
    assert f.use_count(x) == 1
    f.keep(x)
    assert f.use_count(x) == 2
    f.drop()
    assert f.use_count(x) == 1
    for _ in range(1000):
        x.value, x.dtype  # field reads hand out new references only
    assert f.use_count(x) == 1


def test_cpp_objects_are_freed(f):
    base = f.live_counted()
    objs = [f.Counted(i) for i in range(100)]
    assert f.live_counted() == base + 100
    assert [o.value for o in objs[:3]] == [0, 1, 2]
    arr = ferry.convert(objs)
    del objs
    assert f.live_counted() == base + 100
    del arr
    assert f.live_counted() == base
    for _ in range(1000):  # the error path too
        with pytest.raises(TypeError):
            f.add(f.Counted(1), 2)
    assert f.live_counted() == base


def test_callbacks_are_released(f):
    def callback(i):
        return i

    ref = weakref.ref(callback)
    before = sys.getrefcount(callback)
    assert f.call_n(callback, N) == sum(range(N))
    for _ in range(1000):
        f.call(callback, 1)
    assert sys.getrefcount(callback) == before
    fn = ferry.convert(callback)
    f.keep(fn)
    assert sys.getrefcount(callback) == before + 1, "the Function holds one reference"
    del fn
    f.drop()
    assert sys.getrefcount(callback) == before
    del callback
    gc.collect()
    assert ref() is None


def test_results_have_exact_refcounts(f):
    out = f.echo([1, 2])
    assert sys.getrefcount(out) == 2  # `out` and the call's argument
    s = f.echo("a long string beyond the inline size")
    assert sys.getrefcount(s) == 2


def test_wrappers_do_not_accumulate(f):
    x = IntImm(5)
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(N // 10):
        f.echo(x).value
    gc.collect()
    assert len(gc.get_objects()) - before < 10
