//! The Rust declarations of ferry-sys against the C compiler's view of `c_api.h`: every size,
//! alignment, offset and constant that `csrc/layout.c` reports must match the Rust one.
use ferry_sys::*;
use std::collections::BTreeMap;
use std::ffi::CStr;
use std::mem::{align_of, offset_of, size_of};

fn probe() -> BTreeMap<String, i64> {
    let mut count = 0usize;
    // SAFETY: the probe returns a static table of `count` entries with static C strings.
    let entries = unsafe { std::slice::from_raw_parts(ferry_sys_layout(&mut count), count) };
    entries
        .iter()
        .map(|e| {
            // SAFETY: every name is a static NUL-terminated literal of layout.c.
            let name = unsafe { CStr::from_ptr(e.name) }
                .to_str()
                .unwrap()
                .to_string();
            (name, e.value)
        })
        .collect()
}

/// Checks every (name, Rust value) pair against the probe and that the probe has no entry the
/// Rust side forgot.
fn check(rust: &[(&str, i64)]) {
    let c = probe();
    let mut mismatches = Vec::new();
    for (name, value) in rust {
        match c.get(*name) {
            Some(c_value) if c_value == value => {}
            Some(c_value) => mismatches.push(format!("{name}: C {c_value}, Rust {value}")),
            None => mismatches.push(format!("{name}: not in the C probe")),
        }
    }
    for name in c.keys() {
        if !rust.iter().any(|(n, _)| n == name) {
            mismatches.push(format!("{name}: probed in C but not checked in Rust"));
        }
    }
    assert!(
        mismatches.is_empty(),
        "layout mismatches:\n{}",
        mismatches.join("\n")
    );
}

macro_rules! size {
    ($t:ty) => {
        [
            (concat!("sizeof ", stringify!($t)), size_of::<$t>() as i64),
            (concat!("alignof ", stringify!($t)), align_of::<$t>() as i64),
        ]
    };
}
macro_rules! off {
    ($t:ident . $f:ident) => {
        (
            concat!("offsetof ", stringify!($t), ".", stringify!($f)),
            offset_of!($t, $f) as i64,
        )
    };
}
/// A member of FerryAny's anonymous union, which Rust names `value.<member>`.
macro_rules! any_off {
    ($f:ident) => {
        (
            concat!("offsetof FerryAny.", stringify!($f)),
            (offset_of!(FerryAny, value) + offset_of!(FerryAnyValue, $f)) as i64,
        )
    };
}
macro_rules! konst {
    ($c:ident) => {
        (stringify!($c), $c as i64)
    };
}

#[test]
fn structs_match_the_c_header() {
    let mut rust: Vec<(&str, i64)> = Vec::new();
    rust.extend(size!(FerryObject));
    rust.extend([off!(FerryObject.ref_counter), off!(FerryObject.type_index)]);
    rust.push(off!(FerryObject.deleter));
    rust.extend(size!(FerryAny));
    rust.extend([off!(FerryAny.type_index), off!(FerryAny.small_len)]);
    rust.extend([
        any_off!(v_int64),
        any_off!(v_float64),
        any_off!(v_ptr),
        any_off!(v_obj),
    ]);
    rust.extend([any_off!(v_c_str), any_off!(v_dtype), any_off!(v_bytes)]);
    rust.extend(size!(FerryStringObject));
    rust.extend([
        off!(FerryStringObject.header),
        off!(FerryStringObject.data),
        off!(FerryStringObject.size),
    ]);
    rust.extend(size!(FerryTensorObject));
    rust.extend([
        off!(FerryTensorObject.header),
        off!(FerryTensorObject.dl_tensor),
        off!(FerryTensorObject.flags),
    ]);
    rust.extend(size!(FerryDataType));
    rust.extend([
        off!(FerryDataType.code),
        off!(FerryDataType.bits),
        off!(FerryDataType.lanes),
    ]);
    rust.extend(size!(FerryTypeInfo));
    rust.extend([
        off!(FerryTypeInfo.type_index),
        off!(FerryTypeInfo.type_depth),
        off!(FerryTypeInfo.type_key),
        off!(FerryTypeInfo.type_ancestors),
        off!(FerryTypeInfo.num_child_slots),
        off!(FerryTypeInfo.child_slots_can_overflow),
    ]);
    rust.extend(size!(FerryFieldSpec));
    rust.extend([off!(FerryFieldSpec.name), off!(FerryFieldSpec.flags)]);
    rust.push((
        "offsetof FerryFieldSpec.type",
        offset_of!(FerryFieldSpec, type_) as i64,
    ));
    rust.extend(size!(FerryErrorFrame));
    rust.extend([
        off!(FerryErrorFrame.function),
        off!(FerryErrorFrame.file),
        off!(FerryErrorFrame.line),
        off!(FerryErrorFrame.library),
        off!(FerryErrorFrame.address),
    ]);
    rust.extend(size!(DLPackVersion));
    rust.extend(size!(DLDevice));
    rust.extend([off!(DLDevice.device_type), off!(DLDevice.device_id)]);
    rust.extend(size!(DLDataType));
    rust.extend(size!(DLTensor));
    rust.extend([
        off!(DLTensor.data),
        off!(DLTensor.device),
        off!(DLTensor.ndim),
        off!(DLTensor.dtype),
        off!(DLTensor.shape),
        off!(DLTensor.strides),
        off!(DLTensor.byte_offset),
    ]);
    rust.extend(size!(DLManagedTensor));
    rust.extend([
        off!(DLManagedTensor.dl_tensor),
        off!(DLManagedTensor.manager_ctx),
        off!(DLManagedTensor.deleter),
    ]);
    rust.extend(size!(DLManagedTensorVersioned));
    rust.extend([
        off!(DLManagedTensorVersioned.version),
        off!(DLManagedTensorVersioned.manager_ctx),
        off!(DLManagedTensorVersioned.deleter),
        off!(DLManagedTensorVersioned.flags),
        off!(DLManagedTensorVersioned.dl_tensor),
    ]);
    rust.extend([
        konst!(kFerryNone),
        konst!(kFerryInt),
        konst!(kFerryBool),
        konst!(kFerryFloat),
        konst!(kFerryOpaquePtr),
        konst!(kFerryDataType),
        konst!(kFerryRawStr),
        konst!(kFerrySmallStr),
        konst!(kFerryDLTensorPtr),
        konst!(kFerryStaticObjectBegin),
        konst!(kFerryObject),
        konst!(kFerryString),
        konst!(kFerryError),
        konst!(kFerryFunction),
        konst!(kFerryArray),
        konst!(kFerryMap),
        konst!(kFerryShape),
        konst!(kFerryBytes),
        konst!(kFerryTensor),
        konst!(kFerryList),
        konst!(kFerryDict),
        konst!(kFerryStaticObjectEnd),
        konst!(kFerryDynamicObjectBegin),
        konst!(kFerryDTypeInt),
        konst!(kFerryDTypeUInt),
        konst!(kFerryDTypeFloat),
        konst!(kFerryDTypeHandle),
        konst!(kFerryDTypeBFloat),
        konst!(kFerryDTypeComplex),
        konst!(kFerryDTypeBool),
        konst!(kFerryFieldNoCompare),
        konst!(kFerryFieldNoRepr),
        konst!(kFerryTypeFinal),
        konst!(kFerryTypeFrozen),
        konst!(kFerryFunctionQuick),
        konst!(kFerryDefaultFactory),
        konst!(kDLCPU),
        konst!(kDLCUDA),
        konst!(DLPACK_FLAG_BITMASK_READ_ONLY),
        konst!(FERRY_VERSION_MAJOR),
        konst!(FERRY_VERSION_MINOR),
        konst!(FERRY_VERSION_PATCH),
    ]);
    check(&rust);
}

#[test]
fn links_and_counts_like_the_library() {
    // A String made by libferry, counted by the inline Rust protocol and by the library's own
    // functions: both see the same header.
    let mut handle: FerryObjectHandle = std::ptr::null_mut();
    // SAFETY: valid pointers; the handle is a new reference released below.
    unsafe {
        assert_eq!(FerryStringCreate(b"abc".as_ptr().cast(), 3, &mut handle), 0);
        let header = handle as *const FerryObject;
        assert_eq!((*header).type_index, kFerryString);
        assert_eq!((*header).ref_counter, 1);
        FerryObjectIncRefInline(handle);
        assert_eq!(FerryObjectIncRef(handle), 0);
        assert_eq!((*header).ref_counter, 3);
        FerryObjectDecRefInline(handle);
        assert_eq!(FerryObjectDecRef(handle), 0);
        let string = handle as *const FerryStringObject;
        assert_eq!((*string).size, 3);
        assert_eq!(CStr::from_ptr((*string).data).to_bytes(), b"abc");
        FerryObjectDecRefInline(handle);
    }
}
