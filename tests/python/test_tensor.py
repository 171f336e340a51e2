"""ferry.Tensor and NumPy: zero-copy both ways, strided views, dtypes, 0-d and empty tensors,
lifetimes, errors, serialization and structural equality."""

import gc
import os
import pathlib
import pickle
import subprocess
import sys
import textwrap
import weakref

import ferry_testing  # noqa: F401  (loads the support library)
import numpy as np
import pytest

import ferry

identity = ferry.get_global_func("test.tensor_identity")
tensor_sum = ferry.get_global_func("test.tensor_sum")
tensor_fill = ferry.get_global_func("test.tensor_fill")
tensor_keep = ferry.get_global_func("test.tensor_keep")
tensor_drop = ferry.get_global_func("test.tensor_drop")
tensor_info = ferry.get_global_func("test.tensor_info")
tensor_empty = ferry.get_global_func("test.tensor_empty")
ndim_ptr = ferry.get_global_func("test.tensor_ndim_ptr")
use_count = ferry.get_global_func("test.tensor_use_count")
call_with_ptr = ferry.get_global_func("test.tensor_call_with_ptr")

# Every NumPy dtype that DLPack can carry, with the DataType Ferry names it by.
DTYPES = {
    "bool": "bool8",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "float16": "float16",
    "float32": "float32",
    "float64": "float64",
    "complex64": "complex64",
    "complex128": "complex128",
}


def test_numpy_to_cpp_shares_memory():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    t = identity(a)
    assert isinstance(t, ferry.Tensor)
    assert t.shape == (2, 3) and t.strides == (3, 1) and t.ndim == 2
    assert t.dtype == "float64" and isinstance(t.dtype, ferry.DataType)
    assert t.device == (1, 0) and str(t.device) == "cpu:0"
    assert t.__dlpack_device__() == (1, 0)
    assert ferry.tensor.Tensor is ferry.Tensor
    assert _core_data(t) == a.ctypes.data, "no copy on the way in"
    tensor_fill(a, 7.0)  # C++ writes, NumPy reads
    assert (a == 7.0).all()
    a[1, 2] = -1.0  # NumPy writes, C++ reads
    assert tensor_sum(t) == 7.0 * 5 - 1.0


def test_tensor_to_numpy_shares_memory():
    t = tensor_empty([3, 4], ferry.DataType("int32"))
    assert tensor_info(t)[5] == 0, "64-byte aligned"
    a = t.numpy()
    assert a.shape == (3, 4) and a.dtype == np.int32
    assert a.ctypes.data == _core_data(t), "no copy on the way out"
    a[...] = 2
    assert tensor_sum(t) == 24
    tensor_fill(t, 5)
    assert (a == 5).all()
    b = np.from_dlpack(t)
    assert b.ctypes.data == a.ctypes.data
    # The round trip through C++ and back keeps the same memory.
    c = identity(a).numpy()
    c[0, 0] = 9
    assert a[0, 0] == 9


def _core_data(t):
    data, offset, _ = ferry._core._tensor_info(t)
    return data + offset


@pytest.mark.parametrize(
    "view",
    [
        lambda a: a.T,
        lambda a: a[::2, 1:],
        lambda a: a[:, ::-1],
        lambda a: a[1],
        lambda a: np.broadcast_to(a[0], (4, 4)),
    ],
    ids=["transpose", "step-slice", "reversed", "row", "broadcast"],
)
def test_non_contiguous_views(view):
    base = np.arange(16, dtype=np.float64).reshape(4, 4)
    v = view(base)
    t = ferry.from_dlpack(v)
    assert t.shape == v.shape
    assert t.strides == tuple(s // v.itemsize for s in v.strides)
    assert tensor_sum(v) == v.sum()
    info = tensor_info(v)
    assert bool(info[3]) == (v.flags.c_contiguous or v.size <= 1)
    back = t.numpy()
    assert np.shares_memory(back, base)
    np.testing.assert_array_equal(back, v)


def test_strided_write_through():
    base = np.zeros((4, 4), dtype=np.float64)
    tensor_fill(base[::2, ::2], 1.0)
    expected = np.zeros((4, 4))
    expected[::2, ::2] = 1.0
    np.testing.assert_array_equal(base, expected)


@pytest.mark.parametrize("np_dtype,ferry_dtype", sorted(DTYPES.items()))
def test_every_dlpack_dtype_round_trips(np_dtype, ferry_dtype):
    a = (np.arange(5) % 2).astype(np_dtype)
    t = ferry.from_dlpack(a)
    assert t.dtype == ferry_dtype
    assert identity(a).dtype == ferry_dtype
    b = t.numpy()
    assert b.dtype == a.dtype
    assert np.shares_memory(a, b)
    np.testing.assert_array_equal(a, b)


def test_zero_d_and_empty():
    s = np.array(3.5)
    t = identity(s)
    assert t.shape == () and t.strides == ()
    assert tensor_info(t)[:3] == [0, 1, 8]
    assert t.numpy().shape == () and float(t.numpy()) == 3.5
    e = np.zeros((3, 0), dtype=np.float32)
    t = identity(e)
    assert t.shape == (3, 0)
    assert tensor_info(t)[:3] == [2, 0, 0]
    assert t.numpy().shape == (3, 0)
    made = tensor_empty([0], ferry.DataType("float64"))
    assert made.numpy().shape == (0,)
    assert tensor_empty([], ferry.DataType("int64")).numpy().shape == ()


def test_read_only_is_honoured():
    a = np.arange(3.0)
    a.flags.writeable = False
    t = ferry.from_dlpack(a)
    assert t.is_read_only
    assert tensor_info(a)[4] == 1
    with pytest.raises(ferry.FerryError if False else ValueError, match="read-only"):
        tensor_fill(a, 1.0)
    b = t.numpy()
    assert not b.flags.writeable
    with pytest.raises(BufferError, match="read-only"):
        t.__dlpack__()  # the unversioned capsule cannot say read-only
    assert not ferry.from_dlpack(np.arange(2.0)).is_read_only


def test_numpy_array_lives_as_long_as_cpp_holds_it():
    class Array(np.ndarray):  # plain ndarrays take no weak references
        pass

    a = np.arange(10.0).view(Array)
    ref = weakref.ref(a)
    tensor_keep(a)
    del a
    gc.collect()
    assert ref() is not None, "C++ still holds the tensor: the array must live"
    assert tensor_sum(ref()) == 45.0
    tensor_drop()
    gc.collect()
    assert ref() is None, "dropped by C++: the array is freed"


def test_refcounts_stay_flat():
    a = np.arange(4.0)
    before = sys.getrefcount(a)
    for _ in range(10_000):
        identity(a)
        tensor_sum(a)
    gc.collect()
    assert sys.getrefcount(a) == before
    t = tensor_empty([2], ferry.DataType("float32"))
    assert use_count(t) == 1
    arrays = [t.numpy() for _ in range(5)]
    assert use_count(t) == 6, "each NumPy array holds one reference"
    del arrays
    gc.collect()
    assert use_count(t) == 1


def test_tensor_outlives_its_python_wrapper_through_numpy():
    t = tensor_empty([3], ferry.DataType("float64"))
    a = t.numpy()
    a[:] = [1, 2, 3]
    del t
    gc.collect()
    assert a.sum() == 6.0  # the array's capsule keeps the tensor


def test_dlpack_pointer_parameter_borrows():
    a = np.zeros((2, 3, 4))
    assert ndim_ptr(a) == 3
    assert ndim_ptr(ferry.from_dlpack(a)) == 3
    seen = []
    # A borrowed DLTensor* cell reaches Python as a Tensor view for the callback's duration.
    call_with_ptr(ferry.from_dlpack(a), lambda t: seen.append(t.shape))
    assert seen == [(2, 3, 4)]


def test_dunder_dlpack_arguments():
    t = ferry.from_dlpack(np.arange(3.0))
    assert type(t.__dlpack__()).__name__ == "PyCapsule"
    assert type(t.__dlpack__(max_version=(1, 0))).__name__ == "PyCapsule"
    assert np.from_dlpack(t, device="cpu").shape == (3,)
    with pytest.raises(BufferError, match="does not copy"):
        t.__dlpack__(dl_device=(2, 0))
    with pytest.raises(BufferError, match="copy=True"):
        t.__dlpack__(copy=True)
    with pytest.raises(ValueError, match="stream"):
        t.__dlpack__(stream=1)
    # An unused capsule frees its hand-over when dropped.
    assert use_count(t) == 1
    c = t.__dlpack__(max_version=(1, 0))
    assert use_count(t) == 2
    del c
    assert use_count(t) == 1


def test_errors():
    with pytest.raises(
        TypeError,
        match=r"argument 0 .*test\.tensor_identity.*expected "
        r"ferry\.Tensor but got int",
    ):
        identity(3)
    with pytest.raises(TypeError, match="argument 't': cannot convert a value of type 'object'"):
        identity(object())
    with pytest.raises(TypeError, match="int has no __dlpack__"):
        ferry.from_dlpack(3)

    class NotACapsule:
        def __dlpack__(self, **kwargs):
            return 5

    with pytest.raises(TypeError, match="not an unused DLPack capsule"):
        identity(NotACapsule())
    # Dtypes and byte orders DLPack cannot carry are refused by NumPy's export, clearly.
    with pytest.raises(BufferError, match="byte order"):
        identity(np.zeros(2, dtype=">f8"))
    with pytest.raises(BufferError, match="dtype"):
        identity(np.zeros(2, dtype="datetime64[s]"))


def test_old_style_producer_without_max_version():
    class Old:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None):  # DLPack 0.x: no max_version keyword
            return self.a.__dlpack__()

    a = np.arange(4.0)
    t = identity(Old(a))
    assert t.shape == (4,)
    assert np.shares_memory(t.numpy(), a)


def test_repr():
    a = np.arange(8, dtype=np.int64).reshape(2, 4)
    assert repr(ferry.from_dlpack(a)) == (
        "ferry.Tensor(int64, shape=(2, 4), cpu:0, [0, 1, 2, 3, 4, 5, ...])"
    )
    assert repr(ferry.from_dlpack(np.array([0.5]))) == (
        "ferry.Tensor(float64, shape=(1,), cpu:0, [0.5])"
    )


def test_structural_equality_compares_contents():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    ta, tb = ferry.from_dlpack(a), ferry.from_dlpack(a.copy())
    assert ta != tb, "== is identity, as for every Ferry object"
    assert ferry.structural_equal(ta, tb)
    assert ferry.structural_hash(ta) == ferry.structural_hash(tb)
    assert not ferry.structural_equal(ta, ferry.from_dlpack(a.reshape(3, 2)))
    assert not ferry.structural_equal(ta, ferry.from_dlpack(a.view(np.int32)))
    assert not ferry.structural_equal(ta, ferry.from_dlpack(a + 1))
    # A strided view equals a compact copy of it.
    tv = ferry.from_dlpack(a.T)
    assert ferry.structural_equal(tv, ferry.from_dlpack(np.ascontiguousarray(a.T)))
    assert ferry.structural_hash(tv) == ferry.structural_hash(
        ferry.from_dlpack(np.ascontiguousarray(a.T))
    )


@pytest.mark.parametrize("np_dtype", sorted(DTYPES))
def test_pickle_and_json_carry_the_bytes(np_dtype):
    a = (np.arange(7) * 3).astype(np_dtype)
    t = ferry.from_dlpack(a)
    for back in (pickle.loads(pickle.dumps(t)), ferry.load_json(ferry.save_json(t))):
        assert isinstance(back, ferry.Tensor)
        assert back.dtype == t.dtype and back.shape == (7,)
        b = back.numpy()
        assert not np.shares_memory(a, b)
        np.testing.assert_array_equal(a, b)


def test_serialization_keeps_sharing_and_views():
    a = ferry.from_dlpack(np.arange(12.0).reshape(3, 4)[:, ::2])  # strided
    data = ferry.convert([a, a, {"t": a}])
    back = pickle.loads(pickle.dumps(data))
    assert back[0].same_as(back[1]) and back[0].same_as(back[2]["t"])
    np.testing.assert_array_equal(back[0].numpy(), np.arange(12.0).reshape(3, 4)[:, ::2])
    assert back[0].strides == (2, 1), "loaded compact"
    assert ferry.structural_equal(back, data)
    text = ferry.save_json(a)
    assert '"type": "ferry.Tensor"' in text and '"data": "' in text
    zero_d = ferry.from_dlpack(np.array(7, dtype=np.int16))
    assert pickle.loads(pickle.dumps(zero_d)).numpy() == 7
    empty = ferry.from_dlpack(np.zeros((0, 3)))
    assert pickle.loads(pickle.dumps(empty)).shape == (0, 3)


def test_bad_tensor_json_is_a_value_error():
    text = ferry.save_json(ferry.from_dlpack(np.arange(2.0)))
    with pytest.raises(ValueError, match="cannot hold"):
        ferry.load_json(text.replace('"shape": [2]', '"shape": [5]'))
    with pytest.raises(ValueError, match="invalid base64"):
        ferry.load_json(text.replace('"data": "A', '"data": "!'))


def test_numpy_returns_the_original_array_while_its_view_is_unchanged():
    a = np.arange(6.0)
    t = identity(a)
    assert t.numpy() is a, "no new array for a tensor made from one"
    a.shape = (2, 3)  # reassigned in place: the tensor keeps its own (6,) view
    b = t.numpy()
    assert b is not a and b.shape == (6,) and np.shares_memory(a, b)
    sub = a.view(type("Sub", (np.ndarray,), {}))  # a subclass goes through __dlpack__
    ts = identity(sub)
    assert type(ts.numpy()) is np.ndarray and np.shares_memory(ts.numpy(), a)


def test_plain_ndarray_is_held_exactly_while_cpp_holds_the_tensor():
    a = np.arange(5.0)
    before = sys.getrefcount(a)
    tensor_keep(a)
    assert sys.getrefcount(a) == before + 1, "C++'s tensor holds one reference"
    t = identity(a)
    assert sys.getrefcount(a) == before + 2
    del t
    tensor_drop()
    gc.collect()
    assert sys.getrefcount(a) == before


def test_wrapper_has_no_state_of_its_own():
    t = ferry.from_dlpack(np.arange(2.0))
    assert not hasattr(t, "__dict__")
    with pytest.raises(AttributeError):
        t.anything = 1


def _run_isolated(code):
    """Runs `code` in a fresh interpreter (a crash there fails this test, not the test run);
    returns the completed process."""
    here = str(pathlib.Path(__file__).resolve().parent)
    path = os.pathsep.join([here, *sys.path])
    env = dict(os.environ, PYTHONPATH=path)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_an_unused_capsule_dropped_by_an_exception_keeps_it():
    # The capsule's destructor ran while ZeroDivisionError propagated and cleared it: a crash.
    result = _run_isolated(
        """
        import numpy as np
        import ferry
        t = ferry.from_dlpack(np.arange(3.0))
        for _ in range(100):
            try:
                [t.__dlpack__(), 1 / 0]
            except ZeroDivisionError as e:
                assert "division" in str(e)
            try:
                [t.__dlpack__(max_version=(1, 0)), {}["missing"]]
            except KeyError:
                pass
        del t  # released before exit: a tensor alive at finalization keeps its array (leak check)
        print("kept")
        """
    )
    assert result.returncode == 0 and result.stdout.strip() == "kept", result.stderr[-2000:]


def test_a_dealloc_during_an_exception_keeps_it():
    # A ferry object freed while an exception propagates runs C++ destructors, here one calling a
    # Python callback: the callback runs normally and the exception arrives unchanged.
    result = _run_isolated(
        """
        import ferry, ferry_testing
        calls = []
        make = ferry.get_global_func("test.call_on_destroy")
        for _ in range(100):
            try:
                [make(lambda: calls.append(1)), 1 / 0]
            except ZeroDivisionError as e:
                assert "division" in str(e), e
        assert len(calls) == 100, calls
        print("kept")
        """
    )
    assert result.returncode == 0 and result.stdout.strip() == "kept", result.stderr[-2000:]


@pytest.mark.parametrize("dtype", ["bfloat16", "int4", "float32x4", "uint1"])
def test_a_dtype_numpy_cannot_hold_is_refused_cleanly(dtype):
    t = tensor_empty([2], ferry.DataType(dtype))
    # NumPy's own refusal (RuntimeError in NumPy 2.x) arrives as NumPy raised it; it was a
    # SystemError while the capsule's destructor cleared it.
    with pytest.raises((RuntimeError, BufferError, TypeError)) as info:
        np.from_dlpack(t)
    assert not isinstance(info.value, SystemError), info.value
    name = str(t.dtype)  # uint1 prints as bool
    with pytest.raises(TypeError, match=f"NumPy has no dtype for {name} elements"):
        t.numpy()
    gc.collect()
    assert use_count(t) == 1, "the refused capsule gave its reference back"


def test_more_dimensions_than_numpy_holds_is_refused_cleanly():
    t = tensor_empty([1] * 65, ferry.DataType("float32"))
    assert t.ndim == 65
    with pytest.raises((RuntimeError, BufferError, ValueError)) as info:
        np.from_dlpack(t)
    assert not isinstance(info.value, SystemError), info.value
    with pytest.raises(BufferError, match="65 dimensions and NumPy holds at most 64"):
        t.numpy()


@pytest.mark.parametrize("device", ["x", 1, [1, 0], None.__class__])
def test_dlpack_device_of_the_wrong_type_is_a_type_error(device):
    t = ferry.from_dlpack(np.arange(3.0))
    with pytest.raises(TypeError, match="dl_device"):
        t.__dlpack__(dl_device=device)


def test_sizes_that_overflow_are_value_errors():
    big = 2**63 - 1
    text = ferry.save_json(ferry.from_dlpack(np.zeros((0, 1, 1), dtype=np.int32)))
    assert '"shape": [0, 1, 1]' in text
    with pytest.raises(ValueError, match="too big"):
        ferry.load_json(text.replace('"shape": [0, 1, 1]', f'"shape": [0, {big}, {big}]'))
    with pytest.raises(ValueError, match="too big"):
        tensor_empty([0, big, big], ferry.DataType("int32"))
    with pytest.raises(ValueError, match="overflow int64 bytes"):
        tensor_empty([2**61], ferry.DataType("float64"))


def test_an_empty_tensor_is_contiguous_whatever_its_strides():
    v = np.zeros((4, 3))[:0, ::2]
    assert v.shape == (0, 2) and v.strides == (24, 16) and v.flags.c_contiguous
    ndim, numel, nbytes, contiguous = tensor_info(v)[:4]
    assert (ndim, numel, nbytes, contiguous) == (2, 0, 0, 1)


ndim_const_ptr = ferry.get_global_func("test.tensor_ndim_const_ptr")
first_const_ptr = ferry.get_global_func("test.tensor_first_const_ptr")
call_with_const_ptr = ferry.get_global_func("test.tensor_call_with_const_ptr")
const_export_flags = ferry.get_global_func("test.tensor_const_export_flags")


class _Producer:
    """A DLPack producer that is not a numpy.ndarray (the capsule path, not the direct read)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kwargs):
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def _read_only_sources():
    """(name, array-like, the bytes it shows) for every kind of read-only memory."""
    frozen = np.arange(4.0)
    frozen.flags.writeable = False
    over_bytes = bytes(np.arange(4.0).tobytes())
    ndarray_subclass = np.arange(4.0).view(type("Sub", (np.ndarray,), {}))
    ndarray_subclass.flags.writeable = False
    return [
        ("writeable=False", frozen, over_bytes),
        ("broadcast_to", np.broadcast_to(np.arange(4.0), (2, 4)), None),
        ("frombuffer(bytes)", np.frombuffer(over_bytes, "f8"), over_bytes),
        ("ndarray subclass (DLPack flag)", ndarray_subclass, None),
        ("DLPack producer (flag)", _Producer(frozen), None),
    ]


@pytest.mark.parametrize("case", range(5), ids=[c[0] for c in _read_only_sources()])
def test_read_only_memory_stays_read_only(case):
    name, source, backing = _read_only_sources()[case]
    array = source.a if isinstance(source, _Producer) else source
    before = np.array(array, copy=True)
    backing_before = bytes(backing) if backing is not None else None
    t = ferry.from_dlpack(source)
    assert t.is_read_only, name
    # A parameter that may write (Tensor, DLTensor*) refuses, naming the function and argument.
    with pytest.raises(ValueError, match=r"argument 0 of `test\.tensor_fill\(.*read-only"):
        tensor_fill(source, 9.0)
    with pytest.raises(ValueError, match=r"argument 0 of `test\.tensor_ndim_ptr\(.*read-only"):
        ndim_ptr(source)
    with pytest.raises(ValueError, match="read-only"):
        tensor_fill(t, 9.0)
    np.testing.assert_array_equal(array, before)
    if backing is not None:
        assert bytes(backing) == backing_before, "the bytes object is unchanged"
        assert backing == np.arange(4.0).tobytes()
    # A parameter that only reads (ConstTensor, const DLTensor*) accepts it and reads it.
    assert tensor_sum(source) == before.sum()
    assert tensor_info(source)[4] == 1
    assert ndim_const_ptr(source) == array.ndim
    assert first_const_ptr(source) == before.flat[0]
    # Going back out keeps it read-only.
    assert not t.numpy().flags.writeable
    assert not np.from_dlpack(t).flags.writeable
    with pytest.raises(BufferError, match="read-only"):
        t.__dlpack__()  # the unversioned capsule cannot say read-only: refused, not copied


def test_writable_memory_is_still_written():
    a = np.zeros(3)
    t = ferry.from_dlpack(a)
    assert not t.is_read_only
    tensor_fill(a, 2.0)
    assert a.tolist() == [2.0, 2.0, 2.0]
    assert ndim_ptr(a) == 1 and ndim_const_ptr(a) == 1
    assert t.numpy().flags.writeable and np.from_dlpack(t).flags.writeable


def test_a_const_pointer_reaches_python_as_a_read_only_view():
    a = np.arange(3.0)  # writable, but lent through `const DLTensor*`
    seen = []

    def callback(view):
        seen.append((view.is_read_only, view.numpy().flags.writeable))
        with pytest.raises(ValueError, match="read-only"):
            tensor_fill(view, 1.0)
        return tensor_sum(view)

    assert call_with_const_ptr(a, callback) == 3.0
    assert seen == [(True, False)]
    assert a.tolist() == [0.0, 1.0, 2.0]
    # A ConstTensor's own export says read-only (DLPACK_FLAG_BITMASK_READ_ONLY is bit 0).
    assert const_export_flags(a) & 1 == 1
