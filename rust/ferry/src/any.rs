//! Values: `Any` (an owned cell), `AnyView<'a>` (a borrowed one) and the conversions between
//! them and Rust types (`IntoAny` in, `FromAny` out, with `From`/`TryFrom` on top).
use std::fmt;
use std::marker::PhantomData;

use crate::error::{Error, Result};
use crate::object::{type_key_of_index, ObjectRef};
use ferry_sys as sys;

/// An owned value cell: None, an int, a float, a bool, a short string, a data type, or a
/// reference to an object (which the cell owns: `Drop` releases it, `Clone` adds one).
///
/// ```
/// use ferry::Any;
/// let x = Any::from(7i64);
/// let n: i64 = x.clone().try_into()?;
/// assert_eq!(n, 7);
/// let s: String = Any::from("text").try_into()?;
/// assert_eq!(s, "text");
/// let err = i32::try_from(Any::from(1i64 << 40)).unwrap_err();
/// assert_eq!(err.kind(), "OverflowError");
/// # Ok::<(), ferry::Error>(())
/// ```
#[repr(transparent)]
pub struct Any {
    cell: sys::FerryAny,
}

/// A borrowed value cell: the arguments a Rust closure receives, a view of an [`Any`] or an
/// object. It owns nothing; its lifetime ties it to what it borrows.
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct AnyView<'a> {
    cell: sys::FerryAny,
    _borrow: PhantomData<&'a ()>,
}

// SAFETY: a cell is plain data or a counted reference to a thread-safe object.
unsafe impl Send for Any {}
// SAFETY: as above.
unsafe impl Sync for Any {}

#[inline]
pub(crate) fn is_object_index(index: i32) -> bool {
    index >= sys::kFerryStaticObjectBegin
}

/// The name of what a cell holds, as C++ names it in errors: int, float, bool, None,
/// ferry.String for every string, the type key of an object.
pub(crate) fn cell_type_key(cell: &sys::FerryAny) -> &'static str {
    match cell.type_index {
        sys::kFerryNone => "None",
        sys::kFerryInt => "int",
        sys::kFerryBool => "bool",
        sys::kFerryFloat => "float",
        sys::kFerryOpaquePtr => "void*",
        sys::kFerryDataType => "DataType",
        sys::kFerryRawStr | sys::kFerrySmallStr => "ferry.String",
        sys::kFerryDLTensorPtr => "DLTensor*",
        index if is_object_index(index) => type_key_of_index(index),
        _ => "<unknown value>",
    }
}

fn is_integer_type_str(name: &str) -> bool {
    let rest = name
        .strip_prefix("uint")
        .or_else(|| name.strip_prefix("int"));
    matches!(rest, Some("" | "8" | "16" | "32" | "64"))
}

/// "expected X but got Y", or "integer N is out of range for X"; and whether it is the latter.
pub(crate) fn describe_cast_failure(cell: &sys::FerryAny, expected: &str) -> (String, bool) {
    if cell.type_index == sys::kFerryInt && is_integer_type_str(expected) {
        // SAFETY: an int cell holds v_int64.
        let value = unsafe { cell.value.v_int64 };
        (
            format!("integer {value} is out of range for {expected}"),
            true,
        )
    } else {
        (
            format!("expected {expected} but got {}", cell_type_key(cell)),
            false,
        )
    }
}

/// The error of a failed conversion of `cell` to `T`: TypeError, or OverflowError for an int
/// out of range (the kinds and texts of C++'s `Any::cast`).
#[cold]
#[inline(never)]
pub(crate) fn cast_error<T: FromAny>(cell: &sys::FerryAny) -> Error {
    let (message, overflow) = describe_cast_failure(cell, &T::type_str());
    Error::new(
        if overflow {
            "OverflowError"
        } else {
            "TypeError"
        },
        &message,
    )
}

/// A copy of a cell that other code has just written through a pointer (a call's result),
/// read one field at a time. The writer stores the fields separately (C++ writes `type_index`
/// and `small_len` as two 4-byte stores or one 8-byte store, the value as 8 bytes); a wider
/// load spanning two of those stores cannot take its data from the store buffer and waits for
/// them to reach the cache (a store-forwarding stall, about as long as the whole call here).
/// The compiler merges a plain field-by-field copy into such a load (one 8-byte load of
/// `type_index` + `small_len`, or a 16-byte move), so the reads are volatile: each stays the
/// width of its field, which every store the writer may have made contains.
#[inline(always)]
pub(crate) fn reload_cell(cell: &sys::FerryAny) -> sys::FerryAny {
    // SAFETY: three reads of valid, aligned fields of a live cell.
    unsafe {
        sys::FerryAny {
            type_index: std::ptr::read_volatile(&cell.type_index),
            small_len: std::ptr::read_volatile(&cell.small_len),
            value: std::ptr::read_volatile(&cell.value),
        }
    }
}

/// Writes `cell` to `dst` as one 16-byte store, for a reader that will load it whole. C++ copies
/// a Rust closure's result cell with one 16-byte load (libferry's callback entry); a load takes
/// its data from the store buffer only if one earlier store covers it, so a cell written as two
/// 8-byte stores (what the compiler makes of a cell in registers) would stall it until those
/// stores reach the cache. x86-64 always has SSE2; elsewhere it is a plain write.
///
/// # Safety
/// `dst` is valid for a write of a cell (any alignment).
#[inline(always)]
pub(crate) unsafe fn write_cell_whole(dst: *mut sys::FerryAny, cell: sys::FerryAny) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_set_epi64x, _mm_storeu_si128};
        let head = (cell.type_index as u32 as u64 | (cell.small_len as u64) << 32) as i64;
        // SAFETY: every member of the value union is 8 bytes of plain data.
        let value = unsafe { cell.value.v_int64 };
        // SAFETY: SSE2 is part of x86-64; `dst` is valid for 16 bytes (the caller's contract).
        unsafe { _mm_storeu_si128(dst.cast(), _mm_set_epi64x(value, head)) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: the caller's contract.
    unsafe {
        dst.write_unaligned(cell)
    };
}

impl Any {
    /// The None value.
    #[inline]
    pub fn none() -> Any {
        Any {
            cell: sys::FerryAny::NONE,
        }
    }

    /// Takes over an owned cell (a call's result, a field read).
    ///
    /// # Safety
    /// The cell is owned by the caller (its object reference is handed over) and holds no
    /// borrowed string or tensor pointer.
    pub unsafe fn from_raw(cell: sys::FerryAny) -> Any {
        Any { cell }
    }

    /// Gives up ownership of the cell; the caller releases it (FerryAnyRelease).
    #[inline]
    pub fn into_raw(self) -> sys::FerryAny {
        let cell = self.cell;
        std::mem::forget(self);
        cell
    }

    /// The raw cell, still owned by `self`.
    pub fn raw(&self) -> &sys::FerryAny {
        &self.cell
    }

    /// A borrowed view.
    #[inline]
    pub fn view(&self) -> AnyView<'_> {
        AnyView {
            cell: self.cell,
            _borrow: PhantomData,
        }
    }

    /// The type index of what it holds (`ferry_sys::kFerryInt`, an object's index, ...).
    pub fn type_index(&self) -> i32 {
        self.cell.type_index
    }

    /// The name of what it holds: `"int"`, `"None"`, `"ferry.String"`, an object's type key.
    pub fn type_key(&self) -> &'static str {
        cell_type_key(&self.cell)
    }

    /// Whether it holds None.
    pub fn is_none(&self) -> bool {
        self.cell.type_index == sys::kFerryNone
    }

    /// Converts to `T` (as `T::try_from(any)` does, for any [`FromAny`] type).
    #[inline]
    pub fn cast<T: FromAny>(&self) -> Result<T> {
        self.view().cast()
    }

    #[inline]
    fn from_int(value: i64) -> Any {
        Any {
            cell: sys::FerryAny {
                type_index: sys::kFerryInt,
                small_len: 0,
                value: sys::FerryAnyValue { v_int64: value },
            },
        }
    }

    /// A string value: inline when shorter than 8 bytes, else a new ferry.String object.
    pub(crate) fn from_str_bytes(bytes: &[u8]) -> Any {
        if bytes.len() < 8 {
            let mut v_bytes = [0 as std::ffi::c_char; 8];
            for (dst, src) in v_bytes.iter_mut().zip(bytes) {
                *dst = *src as std::ffi::c_char;
            }
            return Any {
                cell: sys::FerryAny {
                    type_index: sys::kFerrySmallStr,
                    small_len: bytes.len() as u32,
                    value: sys::FerryAnyValue { v_bytes },
                },
            };
        }
        crate::container::String::from_bytes(bytes).into()
    }

    /// Holds `obj` (taking its reference).
    pub(crate) fn from_object(obj: ObjectRef) -> Any {
        let index = obj.type_index();
        Any {
            cell: sys::FerryAny {
                type_index: index,
                small_len: 0,
                value: sys::FerryAnyValue {
                    v_ptr: obj.into_handle(),
                },
            },
        }
    }
}

impl<'a> AnyView<'a> {
    /// Views a cell borrowed for `'a`.
    ///
    /// # Safety
    /// The cell (and what it points at) stays valid for `'a`.
    pub unsafe fn from_raw(cell: sys::FerryAny) -> AnyView<'a> {
        AnyView {
            cell,
            _borrow: PhantomData,
        }
    }

    /// Views a slice of cells borrowed for `'a` (the arguments of a call).
    ///
    /// # Safety
    /// The cells stay valid for `'a`.
    pub(crate) unsafe fn slice_from_raw(cells: &'a [sys::FerryAny]) -> &'a [AnyView<'a>] {
        // SAFETY: AnyView is repr(transparent) over FerryAny.
        unsafe { std::slice::from_raw_parts(cells.as_ptr().cast(), cells.len()) }
    }

    /// The raw cell.
    pub fn raw(&self) -> &sys::FerryAny {
        &self.cell
    }

    /// The type index of what it holds.
    pub fn type_index(&self) -> i32 {
        self.cell.type_index
    }

    /// The name of what it holds, as in [`Any::type_key`].
    pub fn type_key(&self) -> &'static str {
        cell_type_key(&self.cell)
    }

    /// Whether it holds None.
    pub fn is_none(&self) -> bool {
        self.cell.type_index == sys::kFerryNone
    }

    /// Converts to `T`: TypeError "expected T but got U", or OverflowError for an int out of
    /// range.
    #[inline]
    pub fn cast<T: FromAny>(&self) -> Result<T> {
        match T::from_view(self) {
            Some(value) => Ok(value),
            None => Err(cast_error::<T>(&self.cell)),
        }
    }

    /// The bytes of a string value (inline, borrowed C string or ferry.String object).
    pub(crate) fn str_bytes(&self) -> Option<&'a [u8]> {
        let cell = &self.cell;
        // SAFETY: each branch reads the member its type index says is set; borrowed strings
        // and objects live for 'a.
        unsafe {
            match cell.type_index {
                // Inline bytes live in the view's own copy of the cell: see string_bytes.
                sys::kFerrySmallStr => None,
                sys::kFerryRawStr => {
                    let len = sys::FerryRawStrLength(cell);
                    Some(std::slice::from_raw_parts(cell.value.v_c_str.cast(), len))
                }
                sys::kFerryString => {
                    let obj = cell.value.v_obj as *const sys::FerryStringObject;
                    Some(std::slice::from_raw_parts(
                        (*obj).data.cast(),
                        (*obj).size as usize,
                    ))
                }
                _ => None,
            }
        }
    }

    /// The string value, copied: for any string cell, inline ones included.
    pub(crate) fn string_bytes(&self) -> Option<Vec<u8>> {
        if self.cell.type_index == sys::kFerrySmallStr {
            let len = (self.cell.small_len as usize).min(7);
            // SAFETY: a small string cell holds its bytes in v_bytes.
            let bytes = unsafe { self.cell.value.v_bytes };
            return Some(bytes[..len].iter().map(|b| *b as u8).collect());
        }
        self.str_bytes().map(<[u8]>::to_vec)
    }

    /// An owned copy: adds a reference to an object, copies a borrowed string into a String.
    /// A borrowed `DLTensor*` (valid for one call, owned by nobody) becomes None.
    pub fn to_owned(&self) -> Any {
        let cell = self.cell;
        match cell.type_index {
            sys::kFerryRawStr => Any::from_str_bytes(self.str_bytes().unwrap_or_default()),
            // A borrowed DLTensor* is valid for the call only and nothing owns its data: an
            // owned value cannot keep it (C++ code that passes one expects it back nowhere).
            sys::kFerryDLTensorPtr => Any::none(),
            index if is_object_index(index) => {
                // SAFETY: the view keeps the object alive; the new Any owns the reference added.
                unsafe { sys::FerryObjectIncRefInline(cell.value.v_ptr) };
                Any { cell }
            }
            _ => Any { cell },
        }
    }

    /// The object it refers to (a new reference), if it holds one.
    pub(crate) fn object(&self) -> Option<ObjectRef> {
        if is_object_index(self.cell.type_index) {
            // SAFETY: an object cell's v_ptr is a live object for 'a.
            Some(unsafe { ObjectRef::from_borrowed_handle(self.cell.value.v_ptr) })
        } else {
            None
        }
    }
}

impl Default for Any {
    fn default() -> Any {
        Any::none()
    }
}

impl Clone for Any {
    fn clone(&self) -> Any {
        self.view().to_owned()
    }
}

impl Drop for Any {
    #[inline]
    fn drop(&mut self) {
        if is_object_index(self.cell.type_index) {
            // SAFETY: the cell owns one reference to its object.
            unsafe { sys::FerryObjectDecRefInline(self.cell.value.v_ptr) }
        }
    }
}

impl fmt::Debug for Any {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.view().fmt(f)
    }
}

impl fmt::Debug for AnyView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cell = &self.cell;
        // SAFETY: each arm reads the member its type index says is set.
        unsafe {
            match cell.type_index {
                sys::kFerryNone => write!(f, "None"),
                sys::kFerryInt => write!(f, "{}", cell.value.v_int64),
                sys::kFerryBool => write!(f, "{}", cell.value.v_int64 != 0),
                sys::kFerryFloat => write!(f, "{:?}", cell.value.v_float64),
                _ => match self.string_bytes() {
                    Some(bytes) => write!(f, "{:?}", std::string::String::from_utf8_lossy(&bytes)),
                    None => write!(f, "<{}>", self.type_key()),
                },
            }
        }
    }
}

impl<'a> From<&'a Any> for AnyView<'a> {
    fn from(value: &'a Any) -> AnyView<'a> {
        value.view()
    }
}

impl<'a> From<&'a ObjectRef> for AnyView<'a> {
    fn from(obj: &'a ObjectRef) -> AnyView<'a> {
        AnyView {
            cell: sys::FerryAny {
                type_index: obj.type_index(),
                small_len: 0,
                value: sys::FerryAnyValue {
                    v_ptr: obj.handle(),
                },
            },
            _borrow: PhantomData,
        }
    }
}

impl<'a> From<AnyView<'a>> for Any {
    fn from(view: AnyView<'a>) -> Any {
        view.to_owned()
    }
}

// ------------------------------------------------------------------------------------------
// The conversion traits.

/// A Rust value that becomes a Ferry value (an owned [`Any`]); `From<T> for Any` is the same
/// conversion.
pub trait IntoAny {
    /// The owned value.
    fn into_any(self) -> Any;
}

/// A Rust type that Ferry values convert to; `TryFrom<Any>` and `TryFrom<AnyView>` are the same
/// conversion, and [`Any::cast`] / [`AnyView::cast`] spell it for every such type.
pub trait FromAny: Sized {
    /// The name of the type in error messages, as C++ spells it (`int`, `float`,
    /// `ferry.String`, `Optional[int]`, `ferry.Array[int]`).
    fn type_str() -> std::string::String;
    /// The converted value, or None when `view` holds something else (the caller makes the
    /// error).
    fn from_view(view: &AnyView<'_>) -> Option<Self>;
}

impl IntoAny for Any {
    fn into_any(self) -> Any {
        self
    }
}
impl FromAny for Any {
    fn type_str() -> std::string::String {
        "Any".into()
    }
    fn from_view(view: &AnyView<'_>) -> Option<Any> {
        Some(view.to_owned())
    }
}

impl IntoAny for ObjectRef {
    fn into_any(self) -> Any {
        Any::from_object(self)
    }
}
impl FromAny for ObjectRef {
    fn type_str() -> std::string::String {
        "ferry.Object".into()
    }
    fn from_view(view: &AnyView<'_>) -> Option<ObjectRef> {
        match view.cell.type_index {
            sys::kFerryRawStr | sys::kFerrySmallStr => view
                .to_owned()
                .cast::<crate::container::String>()
                .ok()
                .map(Into::into),
            _ => view.object(),
        }
    }
}
impl From<ObjectRef> for Any {
    fn from(obj: ObjectRef) -> Any {
        Any::from_object(obj)
    }
}

impl IntoAny for () {
    fn into_any(self) -> Any {
        Any::none()
    }
}
impl FromAny for () {
    fn type_str() -> std::string::String {
        "None".into()
    }
    fn from_view(view: &AnyView<'_>) -> Option<()> {
        view.is_none().then_some(())
    }
}

impl IntoAny for bool {
    fn into_any(self) -> Any {
        Any {
            cell: sys::FerryAny {
                type_index: sys::kFerryBool,
                small_len: 0,
                value: sys::FerryAnyValue {
                    v_int64: self as i64,
                },
            },
        }
    }
}
impl FromAny for bool {
    fn type_str() -> std::string::String {
        "bool".into()
    }
    #[inline]
    fn from_view(view: &AnyView<'_>) -> Option<bool> {
        match view.cell.type_index {
            // SAFETY: bool and int cells hold v_int64.
            sys::kFerryBool | sys::kFerryInt => Some(unsafe { view.cell.value.v_int64 } != 0),
            _ => None,
        }
    }
}

macro_rules! int_conversions {
    ($($t:ty => $name:expr),*) => {$(
        impl FromAny for $t {
            fn type_str() -> std::string::String {
                $name.into()
            }
            #[inline]
            fn from_view(view: &AnyView<'_>) -> Option<$t> {
                match view.cell.type_index {
                    sys::kFerryInt | sys::kFerryBool => {
                        // SAFETY: bool and int cells hold v_int64.
                        <$t>::try_from(unsafe { view.cell.value.v_int64 }).ok()
                    }
                    _ => None,
                }
            }
        }
    )*};
}
int_conversions!(i64 => "int", i32 => "int32", i16 => "int16", i8 => "int8",
                 u64 => "uint64", u32 => "uint32", u16 => "uint16", u8 => "uint8",
                 isize => "int64", usize => "uint64");

macro_rules! lossless_int_into {
    ($($t:ty),*) => {$(
        impl IntoAny for $t {
            #[inline]
            fn into_any(self) -> Any {
                Any::from_int(i64::from(self))
            }
        }
    )*};
}
lossless_int_into!(i64, i32, i16, i8, u32, u16, u8);

macro_rules! checked_int_into {
    ($($t:ty),*) => {$(
        impl TryFrom<$t> for Any {
            type Error = Error;
            /// OverflowError when the value does not fit an int64.
            fn try_from(value: $t) -> Result<Any> {
                i64::try_from(value).map(Any::from_int).map_err(|_| {
                    Error::new(
                        "OverflowError",
                        &format!("integer {value} is out of range for int"),
                    )
                })
            }
        }
    )*};
}
checked_int_into!(u64, usize, isize);

impl IntoAny for f64 {
    fn into_any(self) -> Any {
        Any {
            cell: sys::FerryAny {
                type_index: sys::kFerryFloat,
                small_len: 0,
                value: sys::FerryAnyValue { v_float64: self },
            },
        }
    }
}
impl IntoAny for f32 {
    fn into_any(self) -> Any {
        f64::from(self).into_any()
    }
}
impl FromAny for f64 {
    fn type_str() -> std::string::String {
        "float".into()
    }
    fn from_view(view: &AnyView<'_>) -> Option<f64> {
        // SAFETY: each arm reads the member its type index says is set.
        unsafe {
            match view.cell.type_index {
                sys::kFerryFloat => Some(view.cell.value.v_float64),
                sys::kFerryInt | sys::kFerryBool => Some(view.cell.value.v_int64 as f64),
                _ => None,
            }
        }
    }
}
impl FromAny for f32 {
    fn type_str() -> std::string::String {
        "float32".into()
    }
    fn from_view(view: &AnyView<'_>) -> Option<f32> {
        f64::from_view(view).map(|x| x as f32)
    }
}

impl IntoAny for &str {
    fn into_any(self) -> Any {
        Any::from_str_bytes(self.as_bytes())
    }
}
impl IntoAny for std::string::String {
    fn into_any(self) -> Any {
        Any::from_str_bytes(self.as_bytes())
    }
}
impl IntoAny for &std::string::String {
    fn into_any(self) -> Any {
        Any::from_str_bytes(self.as_bytes())
    }
}
impl FromAny for std::string::String {
    fn type_str() -> std::string::String {
        "ferry.String".into()
    }
    /// Any string value that is valid UTF-8 (others are refused, not mangled).
    fn from_view(view: &AnyView<'_>) -> Option<std::string::String> {
        std::string::String::from_utf8(view.string_bytes()?).ok()
    }
}

impl<T: IntoAny> IntoAny for Option<T> {
    fn into_any(self) -> Any {
        match self {
            Some(value) => value.into_any(),
            None => Any::none(),
        }
    }
}
impl<T: FromAny> FromAny for Option<T> {
    fn type_str() -> std::string::String {
        format!("Optional[{}]", T::type_str())
    }
    fn from_view(view: &AnyView<'_>) -> Option<Option<T>> {
        if view.is_none() {
            Some(None)
        } else {
            T::from_view(view).map(Some)
        }
    }
}

/// `From<T> for Any` and `TryFrom<Any>`/`TryFrom<AnyView>` for concrete types, on top of
/// IntoAny/FromAny (std's blanket impls forbid doing it generically).
macro_rules! std_conversions {
    (into: $($t:ty),*) => {$(
        impl From<$t> for Any {
            #[inline]
            fn from(value: $t) -> Any {
                value.into_any()
            }
        }
        impl From<Option<$t>> for Any {
            fn from(value: Option<$t>) -> Any {
                value.into_any()
            }
        }
    )*};
    (from: $($t:ty),*) => {$(
        impl TryFrom<Any> for $t {
            type Error = Error;
            #[inline]
            fn try_from(value: Any) -> Result<$t> {
                value.cast()
            }
        }
        impl<'a> TryFrom<AnyView<'a>> for $t {
            type Error = Error;
            #[inline]
            fn try_from(value: AnyView<'a>) -> Result<$t> {
                value.cast()
            }
        }
        impl TryFrom<Any> for Option<$t> {
            type Error = Error;
            fn try_from(value: Any) -> Result<Option<$t>> {
                value.cast()
            }
        }
    )*};
}
pub(crate) use std_conversions;

std_conversions!(into: i64, i32, i16, i8, u32, u16, u8, f64, f32, bool, &str,
                 std::string::String, &std::string::String, ());
std_conversions!(from: i64, i32, i16, i8, u64, u32, u16, u8, isize, usize, f64, f32, bool,
                 std::string::String, ObjectRef);

impl TryFrom<Any> for () {
    type Error = Error;
    fn try_from(value: Any) -> Result<()> {
        value.cast()
    }
}

// ------------------------------------------------------------------------------------------
// Arguments.

/// An argument of a call: an owned value or a borrowed view.
pub enum Arg<'a> {
    /// A value made for the call, released after it.
    Owned(Any),
    /// A value borrowed for the call.
    View(AnyView<'a>),
}

impl<'a> Arg<'a> {
    /// A view of the argument, borrowed from `self`.
    pub fn as_view(&self) -> AnyView<'_> {
        match self {
            Arg::Owned(any) => any.view(),
            Arg::View(view) => *view,
        }
    }

    /// The raw cell, valid while `self` lives.
    #[inline]
    pub fn cell(&self) -> &sys::FerryAny {
        match self {
            Arg::Owned(any) => any.raw(),
            Arg::View(view) => view.raw(),
        }
    }
}

/// What can be passed as an argument: every [`IntoAny`] value (moved in), and borrowed
/// [`AnyView`]s, `&Any` and `&ObjectRef` (no reference counting).
pub trait IntoArg<'a>: Sized {
    /// Whether [`into_cell`](IntoArg::into_cell) makes an owned cell (released after the
    /// call) rather than a borrowed one.
    #[doc(hidden)]
    const OWNED: bool;

    /// The argument.
    fn into_arg(self) -> Arg<'a>;

    /// The argument's raw cell: owned (its object reference released after the call) when
    /// [`OWNED`](IntoArg::OWNED), else borrowed for `'a`. What `Function::call` passes, with
    /// no `Arg` in between.
    #[doc(hidden)]
    fn into_cell(self) -> sys::FerryAny;
}

impl<'a, T: IntoAny> IntoArg<'a> for T {
    const OWNED: bool = true;
    fn into_arg(self) -> Arg<'a> {
        Arg::Owned(self.into_any())
    }
    #[inline]
    fn into_cell(self) -> sys::FerryAny {
        self.into_any().into_raw()
    }
}
impl<'a> IntoArg<'a> for AnyView<'a> {
    const OWNED: bool = false;
    fn into_arg(self) -> Arg<'a> {
        Arg::View(self)
    }
    #[inline]
    fn into_cell(self) -> sys::FerryAny {
        self.cell
    }
}
impl<'a> IntoArg<'a> for &'a Any {
    const OWNED: bool = false;
    fn into_arg(self) -> Arg<'a> {
        Arg::View(self.view())
    }
    #[inline]
    fn into_cell(self) -> sys::FerryAny {
        self.cell
    }
}
impl<'a> IntoArg<'a> for &'a ObjectRef {
    const OWNED: bool = false;
    fn into_arg(self) -> Arg<'a> {
        Arg::View(AnyView::from(self))
    }
    #[inline]
    fn into_cell(self) -> sys::FerryAny {
        AnyView::from(self).cell
    }
}

/// Releases the owned objects among a call's argument cells when dropped, after the call or on
/// a panic. Decided before the call from the values just made and kept apart from the cells
/// (whose address the callee gets): for ints, floats and views every slot is a constant None
/// and the release code vanishes.
struct ReleaseAfterCall<const N: usize>([Option<sys::FerryObjectHandle>; N]);

impl<const N: usize> ReleaseAfterCall<N> {
    #[inline(always)]
    fn new(cells: &[sys::FerryAny; N], owned: [bool; N]) -> ReleaseAfterCall<N> {
        let mut release = [None; N];
        for ((slot, cell), owned) in release.iter_mut().zip(cells).zip(owned) {
            if owned && is_object_index(cell.type_index) {
                // SAFETY: an object cell holds v_ptr.
                *slot = Some(unsafe { cell.value.v_ptr });
            }
        }
        ReleaseAfterCall(release)
    }
}

impl<const N: usize> Drop for ReleaseAfterCall<N> {
    #[inline(always)]
    fn drop(&mut self) {
        for obj in self.0.iter().flatten() {
            // SAFETY: an owned object cell held one reference to it.
            unsafe { sys::FerryObjectDecRefInline(*obj) }
        }
    }
}

/// The arguments of [`Function::call`](crate::Function::call): a tuple of [`IntoArg`] values
/// (`()`, `(a,)`, `(a, b)`, ... up to 8).
pub trait IntoArgs<'a> {
    /// Calls `f` with the raw cells of the arguments, then releases what was made for them.
    fn with_cells<R>(self, f: impl FnOnce(&[sys::FerryAny]) -> R) -> R;
}

impl IntoArgs<'_> for () {
    fn with_cells<R>(self, f: impl FnOnce(&[sys::FerryAny]) -> R) -> R {
        f(&[])
    }
}

macro_rules! tuple_args {
    ($($name:ident),+) => {
        impl<'a, $($name: IntoArg<'a>),+> IntoArgs<'a> for ($($name,)+) {
            #[allow(non_snake_case)]
            #[inline(always)]
            fn with_cells<R>(self, f: impl FnOnce(&[sys::FerryAny]) -> R) -> R {
                let ($($name,)+) = self;
                // Each cell straight from its value (a panic converting a later one leaks the
                // earlier owned ones: a leak, never a double release).
                let cells = [$($name.into_cell()),+];
                let _release = ReleaseAfterCall::new(
                    &cells,
                    [$(<$name as IntoArg<'a>>::OWNED),+],
                );
                f(&cells)
            }
        }
    };
}
tuple_args!(A0);
tuple_args!(A0, A1);
tuple_args!(A0, A1, A2);
tuple_args!(A0, A1, A2, A3);
tuple_args!(A0, A1, A2, A3, A4);
tuple_args!(A0, A1, A2, A3, A4, A5);
tuple_args!(A0, A1, A2, A3, A4, A5, A6);
tuple_args!(A0, A1, A2, A3, A4, A5, A6, A7);
