//! The core of `Tensor`: `Element` (what a slice of tensor data may hold), the tensor's layout
//! as libferry lays it out, its creation from a Rust `Vec`, and the slices of its data. Every
//! check that makes a slice sound (dtype, device, contiguity, bounds, alignment, exclusivity)
//! is made here, from the layout itself.
use std::ffi::{c_void, CStr};

use crate::any::{Any, AnyView};
use crate::error::{Error, Result};
use crate::tensor::{DataType, Tensor};
use ferry_sys as sys;

use super::object::{ObjectRef, ObjectType};

/// A Rust number type a tensor's elements may have, with its DLPack data type.
///
/// # Safety
/// `DTYPE` describes exactly the layout of `Self` (size, signedness, representation), and every
/// bit pattern of that size is a valid `Self`.
pub unsafe trait Element: Copy + 'static {
    /// The data type of the elements.
    const DTYPE: DataType;
}

macro_rules! elements {
    ($($t:ty => $code:expr, $bits:expr);* $(;)?) => {$(
        // SAFETY: the code and bits are this primitive's; every bit pattern is valid.
        unsafe impl Element for $t {
            const DTYPE: DataType = DataType { code: $code, bits: $bits, lanes: 1 };
        }
    )*};
}
elements! {
    i8 => sys::kFerryDTypeInt, 8; i16 => sys::kFerryDTypeInt, 16;
    i32 => sys::kFerryDTypeInt, 32; i64 => sys::kFerryDTypeInt, 64;
    u8 => sys::kFerryDTypeUInt, 8; u16 => sys::kFerryDTypeUInt, 16;
    u32 => sys::kFerryDTypeUInt, 32; u64 => sys::kFerryDTypeUInt, 64;
    f32 => sys::kFerryDTypeFloat, 32; f64 => sys::kFerryDTypeFloat, 64;
}

// SAFETY: repr(transparent) over ObjectRef; accepts only ferry.Tensor objects, which have the
// layout `layout` reads.
unsafe impl ObjectType for Tensor {
    const TYPE_KEY: &'static str = "ferry.Tensor";
    fn accepts(obj: &ObjectRef) -> bool {
        obj.type_index() == sys::kFerryTensor
    }
}

// ---- data types -----------------------------------------------------------------------------

/// FerryDataTypeFromString: the data type `text` names; ValueError otherwise.
pub(crate) fn dtype_parse(text: &CStr) -> Result<sys::FerryDataType> {
    let mut raw = sys::FerryDataType {
        code: 0,
        bits: 0,
        lanes: 0,
    };
    // SAFETY: a valid C string and out pointer.
    Error::check(unsafe { sys::FerryDataTypeFromString(text.as_ptr(), &mut raw) })?;
    Ok(raw)
}

/// FerryDataTypeToString: the text form of `dtype` as a ferry.String, None when libferry
/// refuses it (the error is dropped).
pub(crate) fn dtype_to_string(dtype: sys::FerryDataType) -> Option<ObjectRef> {
    let mut handle: sys::FerryObjectHandle = std::ptr::null_mut();
    // SAFETY: an out pointer: a new String reference on success.
    if unsafe { sys::FerryDataTypeToString(dtype, &mut handle) } != 0 || handle.is_null() {
        drop(Error::take_raised());
        return None;
    }
    // SAFETY: a new reference (the call succeeded).
    Some(unsafe { ObjectRef::from_owned_handle(handle) })
}

/// The value cell of a data type (`kFerryDataType`).
pub(crate) fn dtype_cell(dtype: sys::FerryDataType) -> Any {
    let cell = sys::FerryAny {
        type_index: sys::kFerryDataType,
        small_len: 0,
        value: sys::FerryAnyValue { v_dtype: dtype },
    };
    // SAFETY: a POD cell, which owns no reference.
    unsafe { Any::from_raw(cell) }
}

/// The data type a `kFerryDataType` cell holds; None for any other value.
pub(crate) fn dtype_of_view(view: &AnyView<'_>) -> Option<sys::FerryDataType> {
    // SAFETY: a DataType cell (checked) holds v_dtype.
    (view.type_index() == sys::kFerryDataType).then(|| unsafe { view.raw().value.v_dtype })
}

// ---- making tensors -------------------------------------------------------------------------

/// A new compact tensor of `shape`. On the CPU, for elements of whole bytes, its data is a
/// zeroed buffer that Rust allocates and the tensor owns alone ([`RustOwner`], so that
/// `as_mut_slice` may write it), or a MemoryError when there is no such buffer to have;
/// otherwise FerryTensorEmpty allocates it (uninitialized) or raises its error (a bad shape,
/// dtype or device).
pub(crate) fn empty(shape: &[i64], dtype: DataType, device: sys::DLDevice) -> Result<ObjectRef> {
    if device.device_type == sys::kDLCPU {
        if let Some(made) = empty_cpu(shape, dtype) {
            return made;
        }
    }
    let ndim = ndim_of(shape)?;
    let mut handle: sys::FerryObjectHandle = std::ptr::null_mut();
    let dtype = sys::FerryDataType {
        code: dtype.code,
        bits: dtype.bits,
        lanes: dtype.lanes,
    };
    // SAFETY: `ndim` readable dims; a new reference on success.
    Error::check(unsafe {
        sys::FerryTensorEmpty(shape.as_ptr(), ndim, dtype, device, &mut handle)
    })?;
    // SAFETY: a new reference (the call succeeded).
    Ok(unsafe { ObjectRef::from_owned_handle(handle) })
}

/// [`empty`] on the CPU with a zeroed buffer of Rust's, or a MemoryError naming the size when
/// the allocator has none (never an abort); None, for FerryTensorEmpty to handle, when the
/// dtype is not of whole bytes, the shape is negative or overflows, or libferry refuses it.
fn empty_cpu(shape: &[i64], dtype: DataType) -> Option<Result<ObjectRef>> {
    if dtype.bits == 0 || dtype.bits % 8 != 0 || dtype.lanes == 0 {
        return None;
    }
    let numel = shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?))?;
    let bytes = numel.checked_mul(usize::from(dtype.bits / 8) * usize::from(dtype.lanes))?;
    let Some(buffer) = ZeroedBuffer::new(bytes) else {
        return Some(Err(Error::new(
            "MemoryError",
            &format!("Tensor::empty: cannot allocate {bytes} bytes"),
        )));
    };
    let data = buffer.ptr.as_ptr();
    adopt(shape, dtype, data.cast(), buffer, 0).ok().map(Ok)
}

/// A zeroed CPU buffer of 64-byte alignment (as libferry aligns its own), freed on drop.
struct ZeroedBuffer {
    ptr: std::ptr::NonNull<u8>,
    layout: std::alloc::Layout,
}

impl ZeroedBuffer {
    /// `bytes` zeroed bytes, None when the allocator has none to give (never an abort).
    fn new(bytes: usize) -> Option<ZeroedBuffer> {
        let layout = std::alloc::Layout::from_size_align(bytes.max(1), 64).ok()?;
        // SAFETY: a layout of nonzero size.
        let ptr = std::ptr::NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })?;
        Some(ZeroedBuffer { ptr, layout })
    }
}

impl Drop for ZeroedBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout, freed once.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

fn ndim_of(shape: &[i64]) -> Result<i32> {
    i32::try_from(shape.len()).map_err(|_| Error::new("ValueError", "too many dimensions"))
}

/// What a tensor whose data Rust allocated owns: the buffer (a `Vec` of [`from_vec`], a
/// [`ZeroedBuffer`] of [`empty`]), behind a header whose first field is the buffer's drop
/// function, so that one non-generic deleter ([`drop_rust_owner`]) frees any of them and tells
/// these tensors apart from every other (`FerryTensorGetOwner`).
#[repr(C)]
struct RustOwner<D> {
    drop: unsafe fn(*mut c_void),
    data: D,
}

/// Frees a `Box<RustOwner<D>>`.
///
/// # Safety
/// `owner` came from `Box::into_raw` of a `Box<RustOwner<D>>` and is freed once.
unsafe fn drop_owner<D>(owner: *mut c_void) {
    // SAFETY: the caller's contract; the buffers' drops free memory and cannot panic.
    drop(unsafe { Box::from_raw(owner.cast::<RustOwner<D>>()) });
}

/// The owner deleter of every tensor whose data Rust allocated.
unsafe extern "C" fn drop_rust_owner(owner: *mut c_void) {
    // SAFETY: `owner` is a Box<RustOwner<D>> for some D (only `adopt` passes this deleter),
    // repr(C), so its first field is the drop function of that D, which frees it once (libferry
    // calls an owner deleter exactly once).
    unsafe {
        let drop = (*owner.cast::<RustOwner<()>>()).drop;
        drop(owner);
    }
}

/// A compact CPU tensor of `shape` and `dtype` over `data`, which `buffer` holds and the tensor
/// takes over (freed with it, or at once on failure).
///
/// The caller has checked that `data` is the start of `buffer`'s memory, which holds at least
/// the bytes of `shape`'s elements of `dtype` (what keeps every slice of the tensor in bounds).
fn adopt<D>(
    shape: &[i64],
    dtype: DataType,
    data: *mut c_void,
    buffer: D,
    flags: u64,
) -> Result<ObjectRef> {
    let ndim = ndim_of(shape)?;
    let view = sys::DLTensor {
        data,
        device: sys::DLDevice {
            device_type: sys::kDLCPU,
            device_id: 0,
        },
        ndim,
        dtype: sys::DLDataType {
            code: dtype.code,
            bits: dtype.bits,
            lanes: dtype.lanes,
        },
        shape: shape.as_ptr() as *mut i64,
        strides: std::ptr::null_mut(),
        byte_offset: 0,
    };
    let owner = Box::into_raw(Box::new(RustOwner {
        drop: drop_owner::<D>,
        data: buffer,
    }))
    .cast::<c_void>();
    let mut handle: sys::FerryObjectHandle = std::ptr::null_mut();
    // SAFETY: the view describes the buffer (the caller's check; shape and strides are copied);
    // the tensor owns `owner` on success and frees it with drop_rust_owner; on failure we do.
    let rc = unsafe {
        sys::FerryTensorFromDLTensor(&view, flags, owner, Some(drop_rust_owner), &mut handle)
    };
    if rc != 0 {
        // SAFETY: not taken by the failed call.
        unsafe { drop_rust_owner(owner) };
        return Err(Error::take_raised());
    }
    // SAFETY: a new reference (the call succeeded).
    Ok(unsafe { ObjectRef::from_owned_handle(handle) })
}

/// A CPU tensor of `shape` over `data` (moved in, freed with the tensor); ValueError when the
/// shape does not hold `data.len()` elements (the check that keeps every later slice of it in
/// bounds).
pub(crate) fn from_vec<T: Element>(
    shape: &[i64],
    mut data: Vec<T>,
    flags: u64,
) -> Result<ObjectRef> {
    let numel = shape
        .iter()
        .try_fold(1i64, |n, &d| if d < 0 { None } else { n.checked_mul(d) });
    if numel != i64::try_from(data.len()).ok() {
        return Err(Error::new(
            "ValueError",
            &format!(
                "a tensor of shape {shape:?} does not hold {} elements",
                data.len()
            ),
        ));
    }
    // The Vec's buffer does not move when the Vec does.
    let first = data.as_mut_ptr().cast();
    adopt(shape, T::DTYPE, first, data, flags)
}

// ---- reading a tensor -----------------------------------------------------------------------

/// The layout of a ferry.Tensor, borrowed from it. Panics for any other object (a `Tensor`
/// only ever holds a tensor: `ObjectType::accepts` and `FromAny` check the type index).
#[inline]
pub(crate) fn layout(obj: &ObjectRef) -> &sys::FerryTensorObject {
    assert_eq!(obj.type_index(), sys::kFerryTensor, "ferry: not a Tensor");
    // SAFETY: a live ferry.Tensor (checked) has this layout; its fields never change while it
    // lives, i.e. for the borrow of `obj`.
    unsafe { &*(obj.handle() as *const sys::FerryTensorObject) }
}

/// The shape of a tensor (empty for 0 dimensions).
pub(crate) fn shape(obj: &ObjectRef) -> &[i64] {
    let dl = &layout(obj).dl_tensor;
    if dl.ndim <= 0 || dl.shape.is_null() {
        return &[];
    }
    // SAFETY: shape is always set, ndim entries that live as long as the tensor.
    unsafe { std::slice::from_raw_parts(dl.shape, dl.ndim as usize) }
}

/// The strides of a tensor, in elements (always set; empty for 0 dimensions).
pub(crate) fn strides(obj: &ObjectRef) -> &[i64] {
    let dl = &layout(obj).dl_tensor;
    if dl.ndim <= 0 || dl.strides.is_null() {
        return &[];
    }
    // SAFETY: strides are always set (computed when the producer gave none), ndim entries.
    unsafe { std::slice::from_raw_parts(dl.strides, dl.ndim as usize) }
}

/// The number of elements of a tensor.
pub(crate) fn numel(obj: &ObjectRef) -> usize {
    shape(obj).iter().map(|&d| d.max(0) as usize).product()
}

/// Whether a tensor's elements are compact, in row-major order (a tensor of no elements is).
pub(crate) fn is_contiguous(obj: &ObjectRef) -> bool {
    // No element to be out of place, whatever the strides (as C++'s IsContiguous).
    if shape(obj).contains(&0) {
        return true;
    }
    let mut expected = 1i64;
    for (&dim, &stride) in shape(obj).iter().zip(strides(obj)).rev() {
        if dim != 1 && stride != expected {
            return false;
        }
        expected = expected.saturating_mul(dim);
    }
    true
}

/// Whether the producer marked the data read-only.
pub(crate) fn is_read_only(obj: &ObjectRef) -> bool {
    layout(obj).flags & sys::DLPACK_FLAG_BITMASK_READ_ONLY != 0
}

/// The data type of a tensor.
pub(crate) fn dtype(obj: &ObjectRef) -> DataType {
    let t = layout(obj).dl_tensor.dtype;
    DataType {
        code: t.code,
        bits: t.bits,
        lanes: t.lanes,
    }
}

/// The first element of a tensor's data and their number, after the checks that make them a
/// slice of `T`: the dtype is `T`'s (so are the size and bit validity), the data is on the CPU,
/// compact (so `numel` elements follow the first), and aligned for `T`.
fn data<T: Element>(obj: &ObjectRef) -> Result<(*mut T, usize)> {
    let dl = &layout(obj).dl_tensor;
    if dtype(obj) != T::DTYPE {
        return Err(Error::new(
            "TypeError",
            &format!(
                "a tensor of {} viewed as a slice of {}",
                dtype(obj),
                T::DTYPE
            ),
        ));
    }
    if dl.device.device_type != sys::kDLCPU {
        return Err(Error::new(
            "ValueError",
            &format!(
                "the tensor's data is on device type {}, not the CPU",
                dl.device.device_type
            ),
        ));
    }
    if !is_contiguous(obj) {
        return Err(Error::new(
            "ValueError",
            "the tensor is not contiguous: a slice needs compact row-major data",
        ));
    }
    let len = numel(obj);
    if len == 0 {
        return Ok((std::ptr::NonNull::dangling().as_ptr(), 0));
    }
    // Address arithmetic only (wrapping_add): nothing is read until the checks below pass.
    let first = (dl.data as *mut u8).wrapping_add(dl.byte_offset as usize) as *mut T;
    if first.is_null() || first.align_offset(std::mem::align_of::<T>()) != 0 {
        return Err(Error::new(
            "ValueError",
            "the tensor's data is not aligned for its type",
        ));
    }
    Ok((first, len))
}

/// The elements, borrowed; see [`data`] for the checks.
pub(crate) fn as_slice<T: Element>(obj: &ObjectRef) -> Result<&[T]> {
    let (first, len) = data::<T>(obj)?;
    // SAFETY: checked by `data`: CPU memory of `len` compact, aligned, valid T (or a dangling
    // pointer and 0) that lives as long as the tensor. Writers through other holders are
    // excluded by as_mut_slice_unchecked's contract (and as_mut_slice's uniqueness check).
    Ok(unsafe { std::slice::from_raw_parts(first, len) })
}

/// The error for a write view of a read-only tensor.
fn read_only_error() -> Error {
    Error::new(
        "ValueError",
        "the tensor is read-only: its producer did not allow writes",
    )
}

/// Whether this tensor is the only way to its data: its only reference is `obj` (so no other
/// holder, in any language, can read or write it) and the data is a Vec that `from_vec` moved
/// into it or `empty` allocated for it (so no other tensor, array or pointer covers the memory).
/// Tensors from C++, NumPy or DLPack may view memory that others hold, which this cannot see:
/// they are not.
fn owns_its_data_alone(obj: &ObjectRef) -> bool {
    if !obj.is_unique() {
        return false;
    }
    let mut owner: *mut c_void = std::ptr::null_mut();
    let mut deleter: Option<unsafe extern "C" fn(*mut c_void)> = None;
    // SAFETY: a live tensor and out pointers.
    if unsafe { sys::FerryTensorGetOwner(obj.handle(), &mut owner, &mut deleter) } != 0 {
        drop(Error::take_raised());
        return false;
    }
    // Compared as addresses. One function may have two addresses (codegen units), which only
    // refuses a tensor that owns its data; two functions share one only when merged for having
    // the same code, which is then a deleter that calls its owner's first field, as this does.
    let ours = drop_rust_owner as unsafe extern "C" fn(*mut c_void) as usize;
    deleter.map(|d| d as usize) == Some(ours) && !owner.is_null()
}

impl Tensor {
    /// The elements, writable: as [`as_slice`](Tensor::as_slice), and a ValueError for a
    /// read-only tensor or one whose data others may reach: another reference to the tensor
    /// (a clone, a C++ or Python holder), or data this tensor does not own alone (a tensor made
    /// in C++, from NumPy or DLPack: only [`Tensor::from_vec`] and [`Tensor::empty`] on the CPU
    /// make data the tensor owns alone). `&mut self` keeps this reference
    /// from being cloned while the slice lives. For shared data, see
    /// [`as_mut_slice_unchecked`](Tensor::as_mut_slice_unchecked).
    ///
    /// ```
    /// let mut t = ferry::Tensor::from_vec(&[3], vec![1i64, 2, 3])?;
    /// t.as_mut_slice::<i64>()?[0] = 7;
    /// assert_eq!(t.as_slice::<i64>()?, [7, 2, 3]);
    /// let other = t.clone();                                  // a second holder
    /// assert_eq!(t.as_mut_slice::<i64>().unwrap_err().kind(), "ValueError");
    /// drop(other);
    /// assert!(t.as_mut_slice::<i64>().is_ok());
    /// # Ok::<(), ferry::Error>(())
    /// ```
    ///
    /// The slice borrows the tensor mutably, so no clone can be made while it lives:
    ///
    /// ```compile_fail,E0502
    /// let mut t = ferry::Tensor::from_vec(&[1], vec![1i64]).unwrap();
    /// let data = t.as_mut_slice::<i64>().unwrap();
    /// let other = t.clone(); // error: `t` is borrowed mutably by `data`
    /// data[0] = 2;
    /// drop(other);
    /// ```
    pub fn as_mut_slice<T: Element>(&mut self) -> Result<&mut [T]> {
        let obj = self.as_object();
        if is_read_only(obj) {
            return Err(read_only_error());
        }
        let (first, len) = data::<T>(obj)?;
        if !owns_its_data_alone(obj) {
            return Err(Error::new(
                "ValueError",
                &format!(
                    "the tensor's data may be shared ({} references to the tensor; it owns its \
                     data alone only when made by Tensor::from_vec or Tensor::empty on the \
                     CPU): use as_mut_slice_unchecked and exclude other readers and writers \
                     yourself",
                    obj.use_count()
                ),
            ));
        }
        // SAFETY: checked by `data` (see as_slice); no one else can reach the data while the
        // slice lives (owns_its_data_alone, and `&mut self` borrowed for the slice's lifetime).
        Ok(unsafe { std::slice::from_raw_parts_mut(first, len) })
    }

    /// The elements, writable, whoever else holds the tensor or its memory: as
    /// [`as_mut_slice`](Tensor::as_mut_slice) without the check that no one else can reach
    /// the data (the checks of read-only, dtype, device and layout stay).
    ///
    /// # Safety
    /// The data may be shared (other holders of the tensor, other tensors or NumPy arrays over
    /// the same memory): the caller ensures nothing else reads or writes it while the slice
    /// lives, and that no other slice of it made by this function is alive.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn as_mut_slice_unchecked<T: Element>(&self) -> Result<&mut [T]> {
        let obj = self.as_object();
        if is_read_only(obj) {
            return Err(read_only_error());
        }
        let (first, len) = data::<T>(obj)?;
        // SAFETY: checked by `data` (see as_slice); exclusivity is the caller's contract.
        Ok(unsafe { std::slice::from_raw_parts_mut(first, len) })
    }
}
