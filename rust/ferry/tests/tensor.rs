//! Tensors: shape, dtype, device, slices of CPU data that honour read-only, shared with C++.
mod common;

use ferry::{Any, DataType, Device, Function, Tensor};

fn global(name: &str) -> Function {
    common::load_demo();
    Function::get_global_required(name).unwrap()
}

#[test]
fn a_tensor_over_a_vec() {
    let t = Tensor::from_vec(&[2, 3], (0..6).map(f64::from).collect()).unwrap();
    assert_eq!(t.ndim(), 2);
    assert_eq!(t.shape(), [2, 3]);
    assert_eq!(t.strides(), [3, 1]);
    assert_eq!(t.numel(), 6);
    assert_eq!(t.dtype(), DataType::parse("float64").unwrap());
    assert_eq!(t.device(), Device::CPU);
    assert!(t.is_contiguous());
    assert!(!t.is_read_only());
    assert_eq!(t.as_slice::<f64>().unwrap(), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    assert_eq!(t.to_vec::<f64>().unwrap().len(), 6);
    let err = t.as_slice::<i64>().unwrap_err();
    assert_eq!(err.kind(), "TypeError");
    assert_eq!(
        err.message(),
        "a tensor of float64 viewed as a slice of int64"
    );
    let err = Tensor::from_vec(&[4], vec![1i32, 2, 3]).unwrap_err();
    assert_eq!(err.kind(), "ValueError");
    assert_eq!(
        err.message(),
        "a tensor of shape [4] does not hold 3 elements"
    );
    assert!(Tensor::from_vec(&[-1], Vec::<i32>::new()).is_err());
    let scalar = Tensor::from_vec(&[], vec![7u8]).unwrap();
    assert_eq!((scalar.ndim(), scalar.numel()), (0, 1));
    assert_eq!(scalar.as_slice::<u8>().unwrap(), [7]);
}

#[test]
fn read_only_is_honoured() {
    let mut frozen = Tensor::from_vec_read_only(&[3], vec![1.0f64, 2.0, 3.0]).unwrap();
    assert!(frozen.is_read_only());
    assert_eq!(
        frozen.as_slice::<f64>().unwrap(),
        [1.0, 2.0, 3.0],
        "reading is fine"
    );
    let err = frozen.as_mut_slice::<f64>().unwrap_err();
    assert_eq!(err.kind(), "ValueError");
    assert_eq!(
        err.message(),
        "the tensor is read-only: its producer did not allow writes"
    );
    // SAFETY: no other view of the data is in use (and the call refuses anyway).
    let err = unsafe { frozen.as_mut_slice_unchecked::<f64>() }.unwrap_err();
    assert_eq!(
        err.message(),
        "the tensor is read-only: its producer did not allow writes",
        "the unchecked view still honours read-only"
    );
    let seen: bool = global("demo.tensor_is_read_only")
        .call((&frozen,))
        .unwrap()
        .try_into()
        .unwrap();
    assert!(seen, "C++ sees the flag");
    let writable = Tensor::from_vec(&[3], vec![1.0f64, 2.0, 3.0]).unwrap();
    let seen: bool = global("demo.tensor_is_read_only")
        .call((&writable,))
        .unwrap()
        .try_into()
        .unwrap();
    assert!(!seen);
}

#[test]
fn writes_are_seen_by_cpp() {
    let mut t = Tensor::from_vec(&[4], vec![1.0f64; 4]).unwrap();
    let sum = global("demo.tensor_sum");
    assert_eq!(sum.call((&t,)).unwrap().cast::<f64>().unwrap(), 4.0);
    // C++ held the tensor during the call and let it go: `t` is again its only holder.
    t.as_mut_slice::<f64>()
        .unwrap()
        .copy_from_slice(&[1.0, 2.0, 3.0, 4.5]);
    assert_eq!(sum.call((&t,)).unwrap().cast::<f64>().unwrap(), 10.5);
    // Every element type's Vec goes in and is written and freed (memcheck: no leak).
    let mut bytes = Tensor::from_vec(&[2, 2], vec![0u8; 4]).unwrap();
    bytes.as_mut_slice::<u8>().unwrap()[3] = 9;
    assert_eq!(bytes.to_vec::<u8>().unwrap(), [0, 0, 0, 9]);
    let mut none = Tensor::from_vec(&[0, 3], Vec::<i16>::new()).unwrap();
    assert!(none.as_mut_slice::<i16>().unwrap().is_empty());
}

/// The safe `as_mut_slice` hands out `&mut [T]` only when no one else can reach the data: it
/// refuses while any other reference to the tensor lives (in Rust, in a value, in C++ or on
/// another thread), and for data the tensor does not own alone.
#[test]
fn a_writable_slice_needs_the_only_reference() {
    let mut t = Tensor::from_vec(&[3], vec![1i64, 2, 3]).unwrap();
    let expect_shared = |t: &mut Tensor, holders: u32| {
        let err = t.as_mut_slice::<i64>().unwrap_err();
        assert_eq!(err.kind(), "ValueError");
        assert!(
            err.message().starts_with(&format!(
                "the tensor's data may be shared ({holders} references to the tensor;"
            )),
            "{err}"
        );
        assert!(err.message().contains("as_mut_slice_unchecked"), "{err}");
    };
    let clone = t.clone();
    expect_shared(&mut t, 2);
    let reader = std::thread::spawn(move || clone.as_slice::<i64>().unwrap()[0]);
    // The clone lives on (or has just died on) the other thread: refused until it is joined.
    assert_eq!(reader.join().unwrap(), 1);
    let held = Any::from(t.clone());
    expect_shared(&mut t, 2);
    // A C++ holder: the Array object holds a reference.
    let in_array = ferry::Array::<Any>::from(vec![held]);
    expect_shared(&mut t, 2);
    drop(in_array);
    t.as_mut_slice::<i64>().unwrap()[0] = 10;
    assert_eq!(t.as_slice::<i64>().unwrap(), [10, 2, 3]);
}

/// Tensors whose data may be another holder's are refused by the safe `as_mut_slice` even when
/// the tensor has one reference: a tensor over memory borrowed from a live Vec, one made in
/// C++. `as_mut_slice_unchecked` writes them.
#[test]
fn data_owned_elsewhere_needs_the_unchecked_view() {
    let expect_not_owned = |t: &mut Tensor| {
        assert_eq!(t.as_object().use_count(), 1);
        let err = t.as_mut_slice::<f64>().unwrap_err();
        assert!(
            err.message()
                .starts_with("the tensor's data may be shared (1 references to the tensor;"),
            "{err}"
        );
    };
    // A writable tensor over a Vec that Rust still reads: the hostile case. No owner.
    let mut backing = vec![1.0f64, 2.0];
    let mut shape = [2i64];
    let view = ferry::sys::DLTensor {
        data: backing.as_mut_ptr().cast(),
        device: ferry::sys::DLDevice {
            device_type: ferry::sys::kDLCPU,
            device_id: 0,
        },
        ndim: 1,
        dtype: ferry::sys::DLDataType {
            code: ferry::sys::kFerryDTypeFloat,
            bits: 64,
            lanes: 1,
        },
        shape: shape.as_mut_ptr(),
        strides: std::ptr::null_mut(),
        byte_offset: 0,
    };
    let mut handle: ferry::sys::FerryObjectHandle = std::ptr::null_mut();
    // SAFETY: `backing` outlives the tensor (dropped below, before it); no owner.
    let rc = unsafe {
        ferry::sys::FerryTensorFromDLTensor(&view, 0, std::ptr::null_mut(), None, &mut handle)
    };
    assert_eq!(rc, 0);
    // SAFETY: a new reference.
    let mut borrowed: Tensor = unsafe { ferry::ObjectRef::from_owned_handle(handle) }
        .downcast()
        .unwrap();
    expect_not_owned(&mut borrowed);
    drop(borrowed);
    assert_eq!(backing, [1.0, 2.0]);

    let mut made_in_cpp: Tensor = global("demo.arange")
        .call((3i64,))
        .unwrap()
        .try_into()
        .unwrap();
    expect_not_owned(&mut made_in_cpp);
    // SAFETY: this thread alone holds the tensor and its data.
    unsafe { made_in_cpp.as_mut_slice_unchecked::<f64>() }.unwrap()[2] = 7.5;
    let sum = global("demo.tensor_sum");
    assert_eq!(
        sum.call((&made_in_cpp,)).unwrap().cast::<f64>().unwrap(),
        8.5
    );
}

/// `Tensor::empty` on the CPU: zeroed data the tensor owns alone, written through the safe
/// view; hostile shapes and dtypes are errors, never an abort.
#[test]
fn empty_tensors_own_their_zeroed_data() {
    let float64 = DataType::parse("float64").unwrap();
    let mut empty = Tensor::empty(&[2, 3], float64, Device::CPU).unwrap();
    assert_eq!(empty.as_slice::<f64>().unwrap(), [0.0; 6]);
    assert_eq!(empty.strides(), [3, 1]);
    empty.as_mut_slice::<f64>().unwrap()[5] = 0.75;
    let sum = global("demo.tensor_sum");
    assert_eq!(sum.call((&empty,)).unwrap().cast::<f64>().unwrap(), 0.75);
    let data = empty.as_slice::<f64>().unwrap().as_ptr() as usize;
    assert_eq!(data % 64, 0, "aligned as libferry aligns CPU data");
    let none = Tensor::empty(&[0], float64, Device::CPU).unwrap();
    assert_eq!(none.numel(), 0);
    let scalar = Tensor::empty(&[], DataType::parse("int8").unwrap(), Device::CPU).unwrap();
    assert_eq!(scalar.as_slice::<i8>().unwrap(), [0]);
    let hostile: [(&[i64], &str); 4] = [
        (&[-1], "ValueError"),
        (&[1 << 45], "MemoryError"), // 256 TiB: Rust's allocator has none, nor has libferry's
        (&[1 << 40, 1 << 30], "ValueError"),
        (&[i64::MAX, 2], "ValueError"),
    ];
    for (shape, kind) in hostile {
        let err = Tensor::empty(shape, float64, Device::CPU).unwrap_err();
        assert_eq!(err.kind(), kind, "{shape:?}: {err}");
    }
    let err = Tensor::empty(&[1 << 45], float64, Device::CPU).unwrap_err();
    assert_eq!(
        err.message(),
        "Tensor::empty: cannot allocate 281474976710656 bytes"
    );
    let bad = DataType {
        code: 99,
        bits: 8,
        lanes: 1,
    };
    let err = Tensor::empty(&[1], bad, Device::CPU).unwrap_err();
    assert_eq!(err.kind(), "ValueError", "{err}");
}

/// A shape libferry refuses after the Vec was handed over: the Vec is freed once, by Rust
/// (memcheck: no leak, no double free), and the error names the problem.
#[test]
fn a_refused_vec_is_freed_once() {
    let err = Tensor::from_vec(&[1; 70_000], vec![1u32]).unwrap_err();
    assert_eq!(err.kind(), "ValueError");
    assert!(
        err.message().contains("ndim 70000 is out of range"),
        "{err}"
    );
}

#[test]
fn tensors_made_in_cpp() {
    let t: Tensor = global("demo.arange")
        .call((5i64,))
        .unwrap()
        .try_into()
        .unwrap();
    assert_eq!(t.shape(), [5]);
    assert_eq!(t.as_slice::<f64>().unwrap(), [0.0, 1.0, 2.0, 3.0, 4.0]);
    let empty = Tensor::empty(&[2, 2], DataType::parse("float32").unwrap(), Device::CPU).unwrap();
    assert_eq!(empty.as_slice::<f32>().unwrap().len(), 4);
    let err = Tensor::empty(
        &[2],
        DataType::parse("float32").unwrap(),
        Device {
            device_type: 2,
            device_id: 0,
        },
    )
    .unwrap_err();
    assert!(
        !err.message().is_empty(),
        "no allocator for CUDA here: {err}"
    );
}

#[test]
fn tensors_as_values_and_arguments() {
    let t = Tensor::from_vec(&[2], vec![3i64, 4]).unwrap();
    let any = Any::from(t.clone());
    let back: Tensor = any.try_into().unwrap();
    assert!(back.as_object().same_as(t.as_object()));
    let first = Function::from_fn(|t: Tensor| Ok(t.as_slice::<i64>()?[0]));
    assert_eq!(first.call((&t,)).unwrap().cast::<i64>().unwrap(), 3);
    let err = first.call(("not a tensor",)).unwrap_err();
    assert_eq!(
        err.message(),
        "Mismatched type on argument 0 when calling `<rust closure>(0: ferry.Tensor)`: \
         expected ferry.Tensor but got ferry.String"
    );
    let err = first
        .call((Tensor::from_vec(&[1], vec![1.5f64]).unwrap(),))
        .unwrap_err();
    assert_eq!(err.kind(), "TypeError", "the closure's own error: {err}");
}

#[test]
fn strided_views_are_not_slices() {
    // A transposed 2x2 view made through the C ABI: strides (1, 2).
    static DATA: [f64; 4] = [1.0, 2.0, 3.0, 4.0];
    let mut shape = [2i64, 2];
    let mut strides = [1i64, 2];
    let view = ferry::sys::DLTensor {
        data: DATA.as_ptr() as *mut std::ffi::c_void,
        device: ferry::sys::DLDevice {
            device_type: ferry::sys::kDLCPU,
            device_id: 0,
        },
        ndim: 2,
        dtype: ferry::sys::DLDataType {
            code: ferry::sys::kFerryDTypeFloat,
            bits: 64,
            lanes: 1,
        },
        shape: shape.as_mut_ptr(),
        strides: strides.as_mut_ptr(),
        byte_offset: 0,
    };
    let mut handle: ferry::sys::FerryObjectHandle = std::ptr::null_mut();
    // SAFETY: static data outlives the tensor; read-only flag since DATA is immutable.
    let rc = unsafe {
        ferry::sys::FerryTensorFromDLTensor(
            &view,
            ferry::sys::DLPACK_FLAG_BITMASK_READ_ONLY,
            std::ptr::null_mut(),
            None,
            &mut handle,
        )
    };
    assert_eq!(rc, 0);
    // SAFETY: a new reference.
    let obj = unsafe { ferry::ObjectRef::from_owned_handle(handle) };
    let t: Tensor = obj.downcast().unwrap();
    assert_eq!(t.strides(), [1, 2]);
    assert!(!t.is_contiguous());
    let err = t.as_slice::<f64>().unwrap_err();
    assert_eq!(err.kind(), "ValueError");
    assert!(err.message().contains("not contiguous"), "{err}");
}

#[test]
fn data_types() {
    let t = DataType::parse("int32x4").unwrap();
    assert_eq!(
        (t.code, t.bits, t.lanes),
        (ferry::sys::kFerryDTypeInt, 32, 4)
    );
    assert_eq!(t.to_string(), "int32x4");
    assert_eq!(DataType::parse("bogus").unwrap_err().kind(), "ValueError");
}
