//! The raw C ABI of Ferry: `include/ferry/c_api.h` (and the DLPack structs it uses) declared by
//! hand, linked against libferry.
//!
//! This crate is the only place in the Rust frontend with `extern "C"` declarations; the safe
//! API is the `ferry` crate. Every declaration mirrors the header one to one (same names, same
//! field order); `tests/layout.rs` compares sizes, alignments, offsets and constants with what
//! the C compiler makes of the header itself (`csrc/layout.c`), so a change on either side that
//! breaks the ABI fails the tests rather than memory.
//!
//! Where libferry was found (`FERRY_DIR`, `python3 -m ferry`, or built from the sources) is
//! [`FOUND_BY`]; see the crate's build script and `rust/README.md`.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]
#![no_std]
#![deny(clippy::undocumented_unsafe_blocks)]

use core::ffi::{c_char, c_int, c_void};
use core::sync::atomic::{AtomicU32, Ordering};

/// The directory holding the libferry this crate links (and puts in its tests' rpath).
pub const LIB_DIR: &str = env!("FERRY_SYS_LIB_DIR");
/// The directory holding `ferry/c_api.h` and the C++ headers of that libferry.
pub const INCLUDE_DIR: &str = env!("FERRY_SYS_INCLUDE_DIR");
/// How the build script found libferry, e.g. `FERRY_DIR=/path (a build tree)`.
pub const FOUND_BY: &str = env!("FERRY_SYS_FOUND_BY");

// ------------------------------------------------------------------------------------------
// Type indices (FerryTypeIndex).

pub const kFerryNone: i32 = 0;
pub const kFerryInt: i32 = 1;
pub const kFerryBool: i32 = 2;
pub const kFerryFloat: i32 = 3;
pub const kFerryOpaquePtr: i32 = 4;
pub const kFerryDataType: i32 = 5;
pub const kFerryRawStr: i32 = 6;
pub const kFerrySmallStr: i32 = 7;
pub const kFerryDLTensorPtr: i32 = 8;
pub const kFerryStaticObjectBegin: i32 = 64;
pub const kFerryObject: i32 = 64;
pub const kFerryString: i32 = 65;
pub const kFerryError: i32 = 66;
pub const kFerryFunction: i32 = 67;
pub const kFerryArray: i32 = 68;
pub const kFerryMap: i32 = 69;
pub const kFerryShape: i32 = 70;
pub const kFerryBytes: i32 = 71;
pub const kFerryTensor: i32 = 72;
pub const kFerryList: i32 = 73;
pub const kFerryDict: i32 = 74;
pub const kFerryStaticObjectEnd: i32 = 128;
pub const kFerryDynamicObjectBegin: i32 = 128;

// FerryDataTypeCode.
pub const kFerryDTypeInt: u8 = 0;
pub const kFerryDTypeUInt: u8 = 1;
pub const kFerryDTypeFloat: u8 = 2;
pub const kFerryDTypeHandle: u8 = 3;
pub const kFerryDTypeBFloat: u8 = 4;
pub const kFerryDTypeComplex: u8 = 5;
pub const kFerryDTypeBool: u8 = 6;

// FerryFieldFlag, FerryTypeFlag, FerryFunctionFlag.
pub const kFerryFieldNoCompare: i32 = 1;
pub const kFerryFieldNoRepr: i32 = 2;
pub const kFerryTypeFinal: i32 = 1;
pub const kFerryTypeFrozen: i32 = 2;
pub const kFerryFunctionQuick: i32 = 1;
pub const kFerryDefaultFactory: i32 = 1;

// ferry/version.h
pub const FERRY_VERSION_MAJOR: i32 = 0;
pub const FERRY_VERSION_MINOR: i32 = 1;
pub const FERRY_VERSION_PATCH: i32 = 0;

// ------------------------------------------------------------------------------------------
// DLPack (ferry/dlpack.h).

pub const kDLCPU: i32 = 1;
pub const kDLCUDA: i32 = 2;
pub const DLPACK_FLAG_BITMASK_READ_ONLY: u64 = 1;
pub const DLPACK_FLAG_BITMASK_IS_COPIED: u64 = 2;

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DLPackVersion {
    pub major: u32,
    pub minor: u32,
}

/// `device_type` is a `DLDeviceType` (an `int`-sized C enum).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DLDevice {
    pub device_type: i32,
    pub device_id: i32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DLDataType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DLTensor {
    pub data: *mut c_void,
    pub device: DLDevice,
    pub ndim: i32,
    pub dtype: DLDataType,
    pub shape: *mut i64,
    pub strides: *mut i64,
    pub byte_offset: u64,
}

#[repr(C)]
pub struct DLManagedTensor {
    pub dl_tensor: DLTensor,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensor)>,
}

#[repr(C)]
pub struct DLManagedTensorVersioned {
    pub version: DLPackVersion,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensorVersioned)>,
    pub flags: u64,
    pub dl_tensor: DLTensor,
}

// ------------------------------------------------------------------------------------------
// The structs of c_api.h.

/// An object pointer as other languages hold it; always points at a [`FerryObject`] header.
pub type FerryObjectHandle = *mut c_void;

/// The 16-byte header every object starts with.
#[repr(C)]
pub struct FerryObject {
    /// Atomic strong count: relaxed increment, acq_rel decrement.
    pub ref_counter: u32,
    pub type_index: i32,
    pub deleter: Option<unsafe extern "C" fn(self_: *mut FerryObject)>,
}

/// The layout of ferry.String and ferry.Bytes objects.
#[repr(C)]
pub struct FerryStringObject {
    pub header: FerryObject,
    pub data: *const c_char,
    pub size: u64,
}

/// The layout of ferry.Tensor objects.
#[repr(C)]
pub struct FerryTensorObject {
    pub header: FerryObject,
    pub dl_tensor: DLTensor,
    pub flags: u64,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FerryDataType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

/// The payload of a [`FerryAny`] (the header's anonymous union).
#[repr(C)]
#[derive(Clone, Copy)]
pub union FerryAnyValue {
    pub v_int64: i64,
    pub v_float64: f64,
    pub v_ptr: *mut c_void,
    pub v_obj: *mut FerryObject,
    pub v_c_str: *const c_char,
    pub v_dtype: FerryDataType,
    pub v_bytes: [c_char; 8],
}

/// The 16-byte value cell.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct FerryAny {
    pub type_index: i32,
    pub small_len: u32,
    pub value: FerryAnyValue,
}

impl FerryAny {
    /// The None cell.
    pub const NONE: FerryAny = FerryAny {
        type_index: kFerryNone,
        small_len: 0,
        value: FerryAnyValue { v_int64: 0 },
    };
}

#[repr(C)]
pub struct FerryTypeInfo {
    pub type_index: i32,
    pub type_depth: i32,
    pub type_key: *const c_char,
    pub type_ancestors: *const i32,
    pub num_child_slots: i32,
    pub child_slots_can_overflow: i32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct FerryFieldSpec {
    pub name: *const c_char,
    pub type_: *const c_char,
    pub flags: i32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct FerryErrorFrame {
    pub function: *const c_char,
    pub file: *const c_char,
    pub line: i32,
    pub library: *const c_char,
    pub address: usize,
}

pub type FerryFieldGetter = unsafe extern "C" fn(field: *const c_void, out: *mut FerryAny) -> c_int;
pub type FerryFieldSetter =
    unsafe extern "C" fn(field: *mut c_void, value: *const FerryAny) -> c_int;
pub type FerryFunctionSafeCall = unsafe extern "C" fn(
    self_: *mut c_void,
    args: *const FerryAny,
    num_args: i32,
    result: *mut FerryAny,
) -> c_int;
pub type FerryFunctionCallback = unsafe extern "C" fn(
    resource: *mut c_void,
    args: *const FerryAny,
    num_args: i32,
    result: *mut FerryAny,
) -> c_int;
/// A frontend's part of the leak report (`FerryLeakCheckAddReporter`): how many leaks it printed.
pub type FerryLeakCheckReporter = unsafe extern "C" fn() -> i64;

extern "C" {
    // Objects and the type registry.
    pub fn FerryObjectIncRef(obj: FerryObjectHandle) -> c_int;
    pub fn FerryObjectDecRef(obj: FerryObjectHandle) -> c_int;
    pub fn FerryTypeKeyToIndex(type_key: *const c_char, out_type_index: *mut i32) -> c_int;
    pub fn FerryTypeIndexToKey(type_index: i32, out_type_key: *mut *const c_char) -> c_int;
    pub fn FerryTypeGetOrAllocIndex(
        type_key: *const c_char,
        static_type_index: i32,
        parent_type_index: i32,
        num_child_slots: i32,
        child_slots_can_overflow: i32,
        out_type_index: *mut i32,
    ) -> c_int;
    pub fn FerryTypeGetInfo(type_index: i32, out_info: *mut *const FerryTypeInfo) -> c_int;
    pub fn FerryTypeRegisterWithFields(
        type_key: *const c_char,
        parent_type_index: i32,
        num_child_slots: i32,
        flags: i32,
        fields: *const FerryFieldSpec,
        num_fields: i32,
        out_type_index: *mut i32,
    ) -> c_int;
    pub fn FerryTypeSetFieldDefault(
        type_index: i32,
        field_name: *const c_char,
        value: *const FerryAny,
        flags: i32,
    ) -> c_int;
    pub fn FerryTypeClearFieldDefaults(type_index: i32) -> c_int;
    pub fn FerryObjectCreate(
        type_index: i32,
        values: *const FerryAny,
        num_values: i32,
        out: *mut FerryObjectHandle,
    ) -> c_int;

    // Values.
    pub fn FerryDataTypeFromString(text: *const c_char, out_dtype: *mut FerryDataType) -> c_int;
    pub fn FerryDataTypeToString(dtype: FerryDataType, out_string: *mut FerryObjectHandle)
        -> c_int;
    pub fn FerryStringCreate(
        data: *const c_char,
        size: usize,
        out_string: *mut FerryObjectHandle,
    ) -> c_int;
    pub fn FerryBytesCreate(
        data: *const c_char,
        size: usize,
        out_bytes: *mut FerryObjectHandle,
    ) -> c_int;
    pub fn FerryStringGetData(
        str_: FerryObjectHandle,
        out_data: *mut *const c_char,
        out_size: *mut usize,
    ) -> c_int;
    pub fn FerryAnyRelease(value: *mut FerryAny) -> c_int;
    pub fn FerryObjectGetFieldGetter(
        obj: FerryObjectHandle,
        name: *const c_char,
        out_offset: *mut i64,
        out_getter: *mut Option<FerryFieldGetter>,
    ) -> c_int;
    pub fn FerryObjectGetAttr(
        obj: FerryObjectHandle,
        name: *const c_char,
        out: *mut FerryAny,
    ) -> c_int;
    pub fn FerryObjectGetFieldSetter(
        obj: FerryObjectHandle,
        name: *const c_char,
        out_offset: *mut i64,
        out_setter: *mut Option<FerryFieldSetter>,
    ) -> c_int;
    pub fn FerryObjectSetAttr(
        obj: FerryObjectHandle,
        name: *const c_char,
        value: *const FerryAny,
    ) -> c_int;
    pub fn FerryArrayGetData(
        array: FerryObjectHandle,
        out_size: *mut i64,
        out_data: *mut *const FerryAny,
    ) -> c_int;
    pub fn FerryListGetData(
        list: FerryObjectHandle,
        out_size: *mut i64,
        out_data: *mut *const FerryAny,
    ) -> c_int;
    pub fn FerryListAppend(list: FerryObjectHandle, value: *const FerryAny) -> c_int;
    pub fn FerryListSetItem(list: FerryObjectHandle, index: i64, value: *const FerryAny) -> c_int;

    // Functions.
    pub fn FerryFunctionCreate(
        resource: *mut c_void,
        callback: FerryFunctionCallback,
        resource_deleter: Option<unsafe extern "C" fn(resource: *mut c_void)>,
        out_func: *mut FerryObjectHandle,
    ) -> c_int;
    pub fn FerryFunctionCall(
        func: FerryObjectHandle,
        args: *const FerryAny,
        num_args: i32,
        result: *mut FerryAny,
    ) -> c_int;
    pub fn FerryFunctionGetSafeCall(
        func: FerryObjectHandle,
        out_call: *mut Option<FerryFunctionSafeCall>,
    ) -> c_int;
    pub fn FerryFunctionGetCallback(
        func: FerryObjectHandle,
        out_callback: *mut Option<FerryFunctionCallback>,
        out_resource: *mut *mut c_void,
    ) -> c_int;
    pub fn FerryFunctionSetStackReserve(func: FerryObjectHandle, bytes: usize) -> c_int;
    pub fn FerryDeleterSetStackReserve(
        deleter: Option<unsafe extern "C" fn(arg: *mut c_void)>,
        bytes: usize,
    ) -> c_int;
    pub fn FerryFunctionGetParamNames(
        func: FerryObjectHandle,
        out_count: *mut i32,
        out_names: *mut *const *const c_char,
    ) -> c_int;
    pub fn FerryFunctionGetSignature(
        func: FerryObjectHandle,
        out_name: *mut *const c_char,
        out_num_types: *mut i32,
        out_types: *mut *const *const c_char,
    ) -> c_int;
    pub fn FerryFunctionGetFlags(func: FerryObjectHandle, out_flags: *mut i32) -> c_int;
    pub fn FerryFunctionGetGlobal(name: *const c_char, out_func: *mut FerryObjectHandle) -> c_int;
    pub fn FerryFunctionSetGlobal(
        name: *const c_char,
        func: FerryObjectHandle,
        override_: i32,
    ) -> c_int;
    pub fn FerryFunctionRemoveGlobal(name: *const c_char, out_removed: *mut i32) -> c_int;
    pub fn FerryFunctionListGlobalNames(
        out_count: *mut i32,
        out_names: *mut *const *const c_char,
    ) -> c_int;

    // Tensors.
    pub fn FerryTensorFromDLPack(
        managed: *mut DLManagedTensor,
        out_tensor: *mut FerryObjectHandle,
    ) -> c_int;
    pub fn FerryTensorFromDLPackVersioned(
        managed: *mut DLManagedTensorVersioned,
        out_tensor: *mut FerryObjectHandle,
    ) -> c_int;
    pub fn FerryTensorToDLPack(
        tensor: FerryObjectHandle,
        out_managed: *mut *mut DLManagedTensor,
    ) -> c_int;
    pub fn FerryTensorToDLPackVersioned(
        tensor: FerryObjectHandle,
        out_managed: *mut *mut DLManagedTensorVersioned,
    ) -> c_int;
    pub fn FerryTensorFromDLTensor(
        view: *const DLTensor,
        flags: u64,
        owner: *mut c_void,
        owner_deleter: Option<unsafe extern "C" fn(owner: *mut c_void)>,
        out_tensor: *mut FerryObjectHandle,
    ) -> c_int;
    pub fn FerryTensorGetOwner(
        tensor: FerryObjectHandle,
        out_owner: *mut *mut c_void,
        out_owner_deleter: *mut Option<unsafe extern "C" fn(owner: *mut c_void)>,
    ) -> c_int;
    pub fn FerryTensorViewOf(tensor: *const DLTensor, out_tensor: *mut FerryObjectHandle) -> c_int;
    pub fn FerryTensorEmpty(
        shape: *const i64,
        ndim: i32,
        dtype: FerryDataType,
        device: DLDevice,
        out_tensor: *mut FerryObjectHandle,
    ) -> c_int;

    // Libraries.
    pub fn FerryLibraryLoad(path: *const c_char) -> c_int;
    pub fn FerryLibraryUnload(path: *const c_char) -> c_int;
    pub fn FerryLibraryAbiMismatch(path: *const c_char, out_problem: *mut *const c_char) -> c_int;
    pub fn FerryLibraryOfTypeKey(type_key: *const c_char, out_path: *mut *const c_char) -> c_int;
    pub fn FerryLibraryOfGlobal(name: *const c_char, out_path: *mut *const c_char) -> c_int;

    // The leak check.
    pub fn FerryLeakCheckEnabled(out_enabled: *mut i32) -> c_int;
    pub fn FerryLeakCheckAddReporter(reporter: FerryLeakCheckReporter) -> c_int;

    // Errors.
    pub fn FerryErrorCreate(
        kind: *const c_char,
        message: *const c_char,
        backtrace: *const c_char,
        out_error: *mut FerryObjectHandle,
    ) -> c_int;
    pub fn FerryErrorGetInfo(
        error: FerryObjectHandle,
        out_kind: *mut *const c_char,
        out_message: *mut *const c_char,
        out_backtrace: *mut *const c_char,
    ) -> c_int;
    pub fn FerryErrorSetRaised(error: FerryObjectHandle);
    pub fn FerryErrorSetRaisedFromCStr(kind: *const c_char, message: *const c_char);
    pub fn FerryErrorMoveFromRaised(out_error: *mut FerryObjectHandle);
    pub fn FerryErrorSetPayload(
        error: FerryObjectHandle,
        payload: *mut c_void,
        deleter: Option<unsafe extern "C" fn(payload: *mut c_void)>,
    ) -> c_int;
    pub fn FerryErrorGetPayload(
        error: FerryObjectHandle,
        out_payload: *mut *mut c_void,
        out_deleter: *mut Option<unsafe extern "C" fn(payload: *mut c_void)>,
    ) -> c_int;
    pub fn FerryErrorSetPayloadFormatter(
        error: FerryObjectHandle,
        format: Option<unsafe extern "C" fn(payload: *mut c_void) -> *mut c_char>,
    ) -> c_int;
    pub fn FerryErrorGetFrames(
        error: FerryObjectHandle,
        out_frames: *mut *const FerryErrorFrame,
        out_num_frames: *mut i32,
    ) -> c_int;
    pub fn FerryErrorBuiltinKinds() -> *const *const c_char;
}

/// `FerryObjectIncRefInline` of the header (a `static inline` C function, so not in the
/// library): a relaxed increment of the header's count, the protocol C++ counts with.
///
/// # Safety
/// `obj` points at a live object header.
#[inline]
pub unsafe fn FerryObjectIncRefInline(obj: FerryObjectHandle) {
    let header = obj as *mut FerryObject;
    // SAFETY: the header's count is a naturally aligned u32 that every language updates only
    // atomically (c_api.h); the caller guarantees the object is alive.
    let count = unsafe { AtomicU32::from_ptr(core::ptr::addr_of_mut!((*header).ref_counter)) };
    count.fetch_add(1, Ordering::Relaxed);
}

/// `FerryObjectDecRefInline` of the header: acq_rel decrement, the deleter at zero (a plain
/// acquire load suffices for the last reference, as in C).
///
/// # Safety
/// `obj` points at a live object header and the caller owns one reference, which this drops.
#[inline]
pub unsafe fn FerryObjectDecRefInline(obj: FerryObjectHandle) {
    let header = obj as *mut FerryObject;
    // SAFETY: as in FerryObjectIncRefInline; the caller owns the reference dropped here.
    unsafe {
        let count = AtomicU32::from_ptr(core::ptr::addr_of_mut!((*header).ref_counter));
        if count.load(Ordering::Acquire) == 1 || count.fetch_sub(1, Ordering::AcqRel) == 1 {
            if let Some(deleter) = (*header).deleter {
                deleter(header);
            }
        }
    }
}

/// `FerryRawStrLength` of the header (a `static inline` C function): the length of the
/// kFerryRawStr in `cell`, the producer's `small_len` when it gave one, else counted up to the
/// NUL.
///
/// # Safety
/// `cell` holds a kFerryRawStr whose `v_c_str` points at a NUL-terminated string (or at least
/// `small_len` bytes when that is not 0).
#[inline]
pub unsafe fn FerryRawStrLength(cell: &FerryAny) -> usize {
    if cell.small_len != 0 {
        return cell.small_len as usize;
    }
    // SAFETY: the caller guarantees a NUL-terminated string behind v_c_str.
    unsafe { core::ffi::CStr::from_ptr(cell.value.v_c_str) }
        .to_bytes()
        .len()
}

/// One entry of the layout probe compiled from `csrc/layout.c`: a C expression such as
/// `sizeof FerryAny` or `offsetof FerryAny.v_int64` or a constant name, and its value in C.
#[doc(hidden)]
#[repr(C)]
pub struct FerrySysLayoutEntry {
    pub name: *const c_char,
    pub value: i64,
}

extern "C" {
    /// The layout probe's table (tests/layout.rs).
    #[doc(hidden)]
    pub fn ferry_sys_layout(count: *mut usize) -> *const FerrySysLayoutEntry;
}

/// The pure-Rust parts of this crate (the header's inline functions) on objects made here, no
/// libferry involved: what Miri can check (`cargo +nightly miri test -p ferry-sys --lib`).
#[cfg(test)]
mod tests {
    use super::*;
    use core::sync::atomic::AtomicUsize;

    static FREED: AtomicUsize = AtomicUsize::new(0);

    unsafe extern "C" fn free_header(obj: *mut FerryObject) {
        FREED.fetch_add(1, Ordering::SeqCst);
        // SAFETY: made by Box::into_raw in the test, freed once (the count reached zero).
        drop(unsafe { Box::from_raw(obj) });
    }

    extern crate std;
    use std::boxed::Box;

    #[test]
    fn inline_counting_frees_once_at_zero() {
        let header = Box::into_raw(Box::new(FerryObject {
            ref_counter: 1,
            type_index: kFerryObject,
            deleter: Some(free_header),
        }));
        let obj = header as FerryObjectHandle;
        // SAFETY: a live header with one reference, then two, then one, then none.
        unsafe {
            FerryObjectIncRefInline(obj);
            assert_eq!((*header).ref_counter, 2);
            FerryObjectDecRefInline(obj);
            assert_eq!(FREED.load(Ordering::SeqCst), 0);
            FerryObjectDecRefInline(obj);
        }
        assert_eq!(FREED.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn raw_str_length_takes_small_len_or_counts_to_the_nul() {
        let text = c"hello";
        let mut cell = FerryAny {
            type_index: kFerryRawStr,
            small_len: 0,
            value: FerryAnyValue {
                v_c_str: text.as_ptr(),
            },
        };
        // SAFETY: a NUL-terminated string behind v_c_str.
        assert_eq!(unsafe { FerryRawStrLength(&cell) }, 5);
        cell.small_len = 3; // the producer's length wins (a prefix, say)
                            // SAFETY: as above.
        assert_eq!(unsafe { FerryRawStrLength(&cell) }, 3);
    }
}
