//! Values: `Any` (an owned cell), `AnyView<'a>` (a borrowed one) and the conversions between
//! them and Rust types (`IntoAny` in, `FromAny` out, with `From`/`TryFrom` on top).
use std::fmt;

use crate::error::{Error, Result};
use crate::object::{type_key_of_index, ObjectRef};
use crate::raw::call::with_arg_cells;
#[doc(hidden)]
pub use crate::raw::call::ArgCell;
pub(crate) use crate::raw::cell::{is_object_index, reload_cell};
pub use crate::raw::cell::{Any, AnyView};
use ferry_sys as sys;

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
pub(crate) fn describe_cast_failure(view: &AnyView<'_>, expected: &str) -> (String, bool) {
    match view.int() {
        Some(value) if view.type_index() == sys::kFerryInt && is_integer_type_str(expected) => (
            format!("integer {value} is out of range for {expected}"),
            true,
        ),
        _ => (
            format!("expected {expected} but got {}", view.type_key()),
            false,
        ),
    }
}

/// The error of a failed conversion of `view` to `T`: TypeError, or OverflowError for an int
/// out of range (the kinds and texts of C++'s `Any::cast`).
#[cold]
#[inline(never)]
pub(crate) fn cast_error<T: FromAny>(view: &AnyView<'_>) -> Error {
    let (message, overflow) = describe_cast_failure(view, &T::type_str());
    Error::new(
        if overflow {
            "OverflowError"
        } else {
            "TypeError"
        },
        &message,
    )
}

impl Any {
    /// The type index of what it holds (`ferry_sys::kFerryInt`, an object's index, ...).
    #[inline]
    pub fn type_index(&self) -> i32 {
        self.raw().type_index
    }

    /// The name of what it holds: `"int"`, `"None"`, `"ferry.String"`, an object's type key.
    pub fn type_key(&self) -> &'static str {
        cell_type_key(self.raw())
    }

    /// Whether it holds None.
    #[inline]
    pub fn is_none(&self) -> bool {
        self.type_index() == sys::kFerryNone
    }

    /// Converts to `T` (as `T::try_from(any)` does, for any [`FromAny`] type).
    #[inline]
    pub fn cast<T: FromAny>(&self) -> Result<T> {
        self.view().cast()
    }

    /// A string value: inline when shorter than 8 bytes, else a new ferry.String object.
    pub(crate) fn from_str_bytes(bytes: &[u8]) -> Any {
        Any::from_small_str(bytes)
            .unwrap_or_else(|| crate::container::String::from_bytes(bytes).into())
    }
}

impl<'a> AnyView<'a> {
    /// The type index of what it holds.
    #[inline]
    pub fn type_index(&self) -> i32 {
        self.raw().type_index
    }

    /// The name of what it holds, as in [`Any::type_key`].
    pub fn type_key(&self) -> &'static str {
        cell_type_key(self.raw())
    }

    /// Whether it holds None.
    #[inline]
    pub fn is_none(&self) -> bool {
        self.type_index() == sys::kFerryNone
    }

    /// Converts to `T`: TypeError "expected T but got U", or OverflowError for an int out of
    /// range.
    #[inline]
    pub fn cast<T: FromAny>(&self) -> Result<T> {
        match T::from_view(self) {
            Some(value) => Ok(value),
            None => Err(cast_error::<T>(self)),
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

impl fmt::Debug for Any {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.view().fmt(f)
    }
}

impl fmt::Debug for AnyView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.type_index(), self.int(), self.float()) {
            (sys::kFerryNone, _, _) => write!(f, "None"),
            (sys::kFerryBool, Some(value), _) => write!(f, "{}", value != 0),
            (_, Some(value), _) => write!(f, "{value}"),
            (_, _, Some(value)) => write!(f, "{value:?}"),
            _ => match self.string_bytes() {
                Some(bytes) => write!(f, "{:?}", std::string::String::from_utf8_lossy(&bytes)),
                None => write!(f, "<{}>", self.type_key()),
            },
        }
    }
}

impl<'a> From<&'a Any> for AnyView<'a> {
    fn from(value: &'a Any) -> AnyView<'a> {
        value.view()
    }
}

impl<'a> From<&'a ObjectRef> for AnyView<'a> {
    #[inline]
    fn from(obj: &'a ObjectRef) -> AnyView<'a> {
        AnyView::of_object(obj)
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
        match view.type_index() {
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

impl FromAny for () {
    fn type_str() -> std::string::String {
        "None".into()
    }
    #[inline]
    fn from_view(view: &AnyView<'_>) -> Option<()> {
        view.is_none().then_some(())
    }
}
impl FromAny for bool {
    fn type_str() -> std::string::String {
        "bool".into()
    }
    #[inline]
    fn from_view(view: &AnyView<'_>) -> Option<bool> {
        view.int().map(|value| value != 0)
    }
}
impl FromAny for f64 {
    fn type_str() -> std::string::String {
        "float".into()
    }
    #[inline]
    fn from_view(view: &AnyView<'_>) -> Option<f64> {
        match view.type_index() {
            sys::kFerryFloat => view.float(),
            _ => view.int().map(|value| value as f64),
        }
    }
}
impl FromAny for f32 {
    fn type_str() -> std::string::String {
        "float32".into()
    }
    #[inline]
    fn from_view(view: &AnyView<'_>) -> Option<f32> {
        f64::from_view(view).map(|x| x as f32)
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

/// FromAny for the integer types: ints and bools whose value fits, each type named as C++ names
/// it.
macro_rules! int_from_any {
    ($($t:ty => $name:expr),*) => {$(
        impl FromAny for $t {
            fn type_str() -> std::string::String {
                $name.into()
            }
            #[inline]
            fn from_view(view: &AnyView<'_>) -> Option<$t> {
                view.int().and_then(|value| <$t>::try_from(value).ok())
            }
        }
    )*};
}
int_from_any!(i64 => "int", i32 => "int32", i16 => "int16", i8 => "int8",
              u64 => "uint64", u32 => "uint32", u16 => "uint16", u8 => "uint8",
              isize => "int64", usize => "uint64");

/// IntoAny for the types that always convert, `|value| expression` giving the Any, with
/// `From<T>` and `From<Option<T>>` for Any (std_conversions).
macro_rules! into_any {
    ($($t:ty => |$value:ident| $make:expr;)*) => {
        $(impl IntoAny for $t {
            #[inline]
            fn into_any(self) -> Any {
                let $value = self;
                $make
            }
        })*
        std_conversions!(into: $($t),*);
    };
}
into_any! {
    () => |_unit| Any::none();
    bool => |value| Any::from_bool(value);
    i64 => |value| Any::from_int(value);
    i32 => |value| Any::from_int(value.into());
    i16 => |value| Any::from_int(value.into());
    i8 => |value| Any::from_int(value.into());
    u32 => |value| Any::from_int(value.into());
    u16 => |value| Any::from_int(value.into());
    u8 => |value| Any::from_int(value.into());
    f64 => |value| Any::from_float(value);
    f32 => |value| Any::from_float(value.into());
    &str => |text| Any::from_str_bytes(text.as_bytes());
    std::string::String => |text| Any::from_str_bytes(text.as_bytes());
    &std::string::String => |text| Any::from_str_bytes(text.as_bytes());
}

/// `TryFrom<T> for Any` for the integer types whose values may not fit an int64: OverflowError.
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
    /// The argument.
    fn into_arg(self) -> Arg<'a>;

    /// The argument's cell: a value made for the call (released after it) or one borrowed for
    /// `'a`. What `Function::call` passes, with no `Arg` in between.
    #[doc(hidden)]
    fn into_cell(self) -> ArgCell<'a>;
}

impl<'a, T: IntoAny> IntoArg<'a> for T {
    fn into_arg(self) -> Arg<'a> {
        Arg::Owned(self.into_any())
    }
    #[inline]
    fn into_cell(self) -> ArgCell<'a> {
        ArgCell::owned(self.into_any())
    }
}
impl<'a> IntoArg<'a> for AnyView<'a> {
    fn into_arg(self) -> Arg<'a> {
        Arg::View(self)
    }
    #[inline]
    fn into_cell(self) -> ArgCell<'a> {
        ArgCell::borrowed(self)
    }
}
impl<'a> IntoArg<'a> for &'a Any {
    fn into_arg(self) -> Arg<'a> {
        Arg::View(self.view())
    }
    #[inline]
    fn into_cell(self) -> ArgCell<'a> {
        ArgCell::borrowed(self.view())
    }
}
impl<'a> IntoArg<'a> for &'a ObjectRef {
    fn into_arg(self) -> Arg<'a> {
        Arg::View(AnyView::from(self))
    }
    #[inline]
    fn into_cell(self) -> ArgCell<'a> {
        ArgCell::borrowed(AnyView::from(self))
    }
}

/// The arguments of [`Function::call`](crate::Function::call): a tuple of [`IntoArg`] values
/// (`()`, `(a,)`, `(a, b)`, ... up to 8).
pub trait IntoArgs<'a> {
    /// Calls `f` with the arguments' cells, borrowed for the call, then releases what was made
    /// for them.
    fn with_cells<R>(self, f: impl FnOnce(&[AnyView<'_>]) -> R) -> R;
}

impl IntoArgs<'_> for () {
    fn with_cells<R>(self, f: impl FnOnce(&[AnyView<'_>]) -> R) -> R {
        f(&[])
    }
}

macro_rules! tuple_args {
    ($($name:ident),+) => {
        impl<'a, $($name: IntoArg<'a>),+> IntoArgs<'a> for ($($name,)+) {
            #[allow(non_snake_case)]
            #[inline(always)]
            fn with_cells<R>(self, f: impl FnOnce(&[AnyView<'_>]) -> R) -> R {
                let ($($name,)+) = self;
                // Each cell straight from its value (a panic converting a later one leaks the
                // earlier owned ones: a leak, never a double release).
                with_arg_cells([$($name.into_cell()),+], f)
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
