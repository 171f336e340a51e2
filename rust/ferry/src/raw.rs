//! The unsafe core of the crate: safe, narrowly typed wrappers around the C calls and pointer
//! reads that the modules outside the allow-list of lib.rs use. Each wrapper takes only what
//! makes its call sound (live objects as `&ObjectRef`, strings as `&CStr`, cells as `&Any`)
//! and says why in a `SAFETY:` comment; they are `#[inline]` so that moving a call here costs
//! nothing on the paths the benchmarks measure.
//!
//! Its submodules: `cell` defines the value cells [`Any`] and [`AnyView`] and reads their
//! members; `call` makes and receives calls (argument and result cells, the trampoline of Rust
//! closures, the global table); `object` holds `ObjectRef`'s handle and `ObjectType`, `mutable`
//! the writes of `List` and `Dict`, `tensor` `Element` and the views of a tensor's data. This
//! file holds errors, libraries, types and containers.
use std::ffi::{c_char, c_int, CStr};

pub(crate) mod call;
pub(crate) mod cell;

use crate::any::{reload_cell, Any, AnyView, FromAny};
use crate::error::{Error, Result};
use ferry_sys as sys;
use object::{ObjectRef, ObjectType};

pub(crate) mod mutable;
pub(crate) mod object;
pub(crate) mod tensor;

/// The text of a C string that lives as long as `'a`, cut at the first invalid UTF-8 byte.
///
/// # Safety
/// `ptr` is NULL or a NUL-terminated string valid for `'a`.
pub(crate) unsafe fn str_of<'a>(ptr: *const c_char) -> &'a str {
    if ptr.is_null() {
        return "";
    }
    // SAFETY: the caller's contract.
    let bytes = unsafe { CStr::from_ptr(ptr) }.to_bytes();
    match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or(""),
    }
}

/// The bytes of a C string that lives as long as `'a` (empty for NULL).
///
/// # Safety
/// `ptr` is NULL or a NUL-terminated string valid for `'a`.
pub(crate) unsafe fn bytes_of<'a>(ptr: *const c_char) -> &'a [u8] {
    if ptr.is_null() {
        return &[];
    }
    // SAFETY: the caller's contract.
    unsafe { CStr::from_ptr(ptr) }.to_bytes()
}

/// A new reference returned through an out pointer, or `None` when the handle is NULL.
#[inline]
fn owned(handle: sys::FerryObjectHandle) -> Option<ObjectRef> {
    if handle.is_null() {
        None
    } else {
        // SAFETY: every caller passes a handle a C function returned as a new reference.
        Some(unsafe { ObjectRef::from_owned_handle(handle) })
    }
}

// ---- errors ---------------------------------------------------------------------------------

/// FerryErrorCreate: a new Error object (its backtrace the C++ stack of this call), or `None`
/// when the call failed and raised.
pub(crate) fn error_create(kind: &CStr, message: &CStr) -> Option<ObjectRef> {
    let mut handle: sys::FerryObjectHandle = std::ptr::null_mut();
    // SAFETY: valid C strings; a NULL backtrace captures the frames; `handle` receives a new
    // reference on success and stays NULL otherwise.
    let rc = unsafe {
        sys::FerryErrorCreate(
            kind.as_ptr(),
            message.as_ptr(),
            std::ptr::null(),
            &mut handle,
        )
    };
    if rc != 0 {
        return None;
    }
    owned(handle)
}

/// FerryErrorMoveFromRaised: this thread's raised error (cleared), or `None` when there is none.
pub(crate) fn error_move_from_raised() -> Option<ObjectRef> {
    let mut handle: sys::FerryObjectHandle = std::ptr::null_mut();
    // SAFETY: moves the thread's error (a new reference) or NULL into `handle`.
    unsafe { sys::FerryErrorMoveFromRaised(&mut handle) };
    owned(handle)
}

/// FerryErrorSetRaised: makes `error` (an Error object; the caller checked) the raised error.
pub(crate) fn error_set_raised(error: &ObjectRef) {
    // SAFETY: a live object; the call adds its own reference.
    unsafe { sys::FerryErrorSetRaised(error.handle()) };
}

/// FerryErrorGetInfo: the bytes of (kind, message, backtrace) of `error` (C++ text: normally
/// UTF-8, but any bytes but NUL), living as long as it does; empty for an object that is not an
/// Error.
pub(crate) fn error_info(error: &ObjectRef) -> (&[u8], &[u8], &[u8]) {
    let mut kind: *const c_char = std::ptr::null();
    let mut message: *const c_char = std::ptr::null();
    let mut backtrace: *const c_char = std::ptr::null();
    if error.type_index() != sys::kFerryError {
        return (&[], &[], &[]);
    }
    // SAFETY: a live Error object; on success the strings live as long as it does, i.e. as the
    // borrow of `error`; on failure they stay NULL, which `bytes_of` reads as empty.
    unsafe {
        sys::FerryErrorGetInfo(error.handle(), &mut kind, &mut message, &mut backtrace);
        (bytes_of(kind), bytes_of(message), bytes_of(backtrace))
    }
}

// ---- libraries ------------------------------------------------------------------------------

/// FerryLibraryLoad of `path`: 0, or -1 with the error raised.
pub(crate) fn library_load(path: &CStr) -> c_int {
    // SAFETY: a valid C string for the call.
    unsafe { sys::FerryLibraryLoad(path.as_ptr()) }
}

// ---- types defined in Rust ------------------------------------------------------------------

/// FerryObjectCreate: a new object of the type `index` holding `values`, its fields in order
/// (borrowed: the object takes its own references).
#[inline]
pub(crate) fn object_create(index: i32, values: &[Any]) -> Result<ObjectRef> {
    let mut handle: sys::FerryObjectHandle = std::ptr::null_mut();
    // SAFETY: Any is repr(transparent) over FerryAny, so `values` are the cells, alive for the
    // call; a new reference on success.
    Error::check(unsafe {
        sys::FerryObjectCreate(
            index,
            values.as_ptr().cast(),
            values.len() as i32,
            &mut handle,
        )
    })?;
    // SAFETY: a new reference (the call succeeded).
    Ok(unsafe { ObjectRef::from_owned_handle(handle) })
}

/// FerryTypeRegisterWithFields: registers `key` under `ferry.Object` with the fields
/// (name, type text); returns the type index.
pub(crate) fn type_register_with_fields(key: &CStr, fields: &[(&CStr, &CStr)]) -> Result<i32> {
    let specs: Vec<sys::FerryFieldSpec> = fields
        .iter()
        .map(|(name, text)| sys::FerryFieldSpec {
            name: name.as_ptr(),
            type_: text.as_ptr(),
            flags: 0,
        })
        .collect();
    let mut index = -1;
    // SAFETY: the strings (borrowed by `fields`) and specs live through the call; the registry
    // copies them.
    Error::check(unsafe {
        sys::FerryTypeRegisterWithFields(
            key.as_ptr(),
            sys::kFerryObject,
            0,
            0,
            specs.as_ptr(),
            specs.len() as i32,
            &mut index,
        )
    })?;
    Ok(index)
}

/// FerryTypeSetFieldDefault: the default of field `name` of type `index` (a value, or a
/// Function called per object with `sys::kFerryDefaultFactory`). Its errors name the field and
/// the type.
pub(crate) fn type_set_field_default(
    index: i32,
    name: &CStr,
    value: &Any,
    flags: i32,
) -> Result<()> {
    // SAFETY: a valid name and a live cell for the call; libferry keeps its own reference.
    Error::check(unsafe { sys::FerryTypeSetFieldDefault(index, name.as_ptr(), value.raw(), flags) })
}

/// FerryObjectGetFieldGetter: the (offset, getter) of field `name` of `obj`'s type; the getter
/// is `None` when the field is not readable.
pub(crate) fn object_field_getter(
    obj: &ObjectRef,
    name: &CStr,
) -> Result<(i64, Option<sys::FerryFieldGetter>)> {
    let mut offset = 0i64;
    let mut getter: Option<sys::FerryFieldGetter> = None;
    // SAFETY: a live object, a valid name and out pointers.
    Error::check(unsafe {
        sys::FerryObjectGetFieldGetter(obj.handle(), name.as_ptr(), &mut offset, &mut getter)
    })?;
    Ok((offset, getter))
}

/// Calls the cached getter of one field of `obj`: the status and the owned value (None on
/// failure). `offset` and `getter` are those FerryObjectGetFieldGetter gave for `obj`'s type
/// (only through [`crate::types::Fields`], which binds them to an object of that type, and
/// `ObjectRef::get_attr`'s per-thread cache, keyed by the type index).
#[inline]
pub(crate) fn call_field_getter(
    obj: &ObjectRef,
    offset: i64,
    getter: sys::FerryFieldGetter,
) -> (c_int, Any) {
    let mut cell = sys::FerryAny::NONE;
    // SAFETY: `offset` and `getter` were found for this object's type; the field lives at
    // handle + offset while `obj` does; `cell` receives an owned value (None on failure).
    let rc = unsafe {
        getter(
            (obj.handle() as *const u8).offset(offset as isize).cast(),
            &mut cell,
        )
    };
    // Field by field: the getter has just written the cell (see reload_cell).
    // SAFETY: an owned cell.
    (rc, unsafe { Any::from_raw(reload_cell(&cell)) })
}

// ---- built-in containers --------------------------------------------------------------------

/// FerryStringCreate: a new ferry.String holding a copy of `bytes`, or `None` when the call
/// failed and raised.
pub(crate) fn string_create(bytes: &[u8]) -> Option<ObjectRef> {
    let mut handle: sys::FerryObjectHandle = std::ptr::null_mut();
    // SAFETY: `bytes.len()` readable bytes; a new reference on success, NULL otherwise.
    let rc = unsafe { sys::FerryStringCreate(bytes.as_ptr().cast(), bytes.len(), &mut handle) };
    if rc != 0 {
        return None;
    }
    owned(handle)
}

/// The bytes of a ferry.String, borrowed from it; empty for any other object.
#[inline]
pub(crate) fn string_bytes(obj: &ObjectRef) -> &[u8] {
    if obj.type_index() != sys::kFerryString {
        return &[];
    }
    let string = obj.handle() as *const sys::FerryStringObject;
    // SAFETY: a ferry.String (checked) has this layout; its bytes live and never change while
    // it does, i.e. for the borrow of `obj`.
    unsafe { std::slice::from_raw_parts((*string).data.cast(), (*string).size as usize) }
}

/// The cells of a ferry.Array, borrowed from it: empty for any other object.
pub(crate) fn array_cells(obj: &ObjectRef) -> Cells<'_> {
    let mut size = 0i64;
    let mut data: *const sys::FerryAny = std::ptr::null();
    // SAFETY: a live object and out pointers; the call fails for an object that is not an Array.
    if unsafe { sys::FerryArrayGetData(obj.handle(), &mut size, &mut data) } != 0 || data.is_null()
    {
        drop(Error::take_raised());
        return Cells(&[]);
    }
    // SAFETY: `size` cells at `data`, valid while the Array lives (arrays are immutable), i.e.
    // for the borrow of `obj`.
    Cells(unsafe { std::slice::from_raw_parts(data, size as usize) })
}

/// Cells that live for `'a` (an Array's), read as borrowed values. Only this module makes one,
/// so every cell in it is a valid value.
#[derive(Clone, Copy)]
pub(crate) struct Cells<'a>(&'a [sys::FerryAny]);

impl<'a> Cells<'a> {
    /// The number of cells.
    pub(crate) fn len(self) -> usize {
        self.0.len()
    }

    /// Cell `index` as a borrowed value, None past the end.
    pub(crate) fn get(self, index: usize) -> Option<AnyView<'a>> {
        // SAFETY: a valid cell alive for 'a (how `Cells` are made).
        self.0
            .get(index)
            .map(|cell| unsafe { AnyView::from_raw(*cell) })
    }

    /// The cells in order, as borrowed values.
    pub(crate) fn iter(self) -> CellIter<'a> {
        CellIter(self.0.iter())
    }
}

/// The cells of a [`Cells`], in order, as borrowed values.
pub(crate) struct CellIter<'a>(std::slice::Iter<'a, sys::FerryAny>);

impl<'a> Iterator for CellIter<'a> {
    type Item = AnyView<'a>;
    #[inline]
    fn next(&mut self) -> Option<AnyView<'a>> {
        // SAFETY: a valid cell alive for 'a (how `Cells` are made).
        self.0
            .next()
            .map(|cell| unsafe { AnyView::from_raw(*cell) })
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

// SAFETY: repr(transparent) over ObjectRef; accepts only ferry.String objects.
unsafe impl ObjectType for crate::container::String {
    const TYPE_KEY: &'static str = "ferry.String";
    fn accepts(obj: &ObjectRef) -> bool {
        obj.type_index() == sys::kFerryString
    }
}

// SAFETY: repr(transparent) over ObjectRef (and a zero-sized marker); accepts only arrays whose
// every element is a T.
unsafe impl<T: FromAny> ObjectType for crate::container::Array<T> {
    const TYPE_KEY: &'static str = "ferry.Array";
    fn type_str() -> std::string::String {
        format!("ferry.Array[{}]", T::type_str())
    }
    fn accepts(obj: &ObjectRef) -> bool {
        obj.type_index() == sys::kFerryArray
            && array_cells(obj)
                .iter()
                .all(|view| T::from_view(&view).is_some())
    }
}

// SAFETY: repr(transparent) over ObjectRef (and a zero-sized marker); accepts only maps whose
// entries are (K, V).
unsafe impl<K: FromAny, V: FromAny> ObjectType for crate::container::Map<K, V> {
    const TYPE_KEY: &'static str = "ferry.Map";
    fn type_str() -> std::string::String {
        format!("ferry.Map[{}, {}]", K::type_str(), V::type_str())
    }
    fn accepts(obj: &ObjectRef) -> bool {
        obj.type_index() == sys::kFerryMap && crate::container::map_entries_are::<K, V>(obj)
    }
}
