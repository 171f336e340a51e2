#![doc = include_str!("../../README.md")]
//!
//! ## The pieces
//!
//! - [`ObjectRef`] holds any object; `Clone`/`Drop` add and release references.
//!   [`ObjectType`] typed references ([`String`], [`Array`], [`Map`], [`Function`]) come from
//!   [`ObjectRef::downcast`] and [`ObjectRef::as_ref`].
//! - [`Any`] is an owned value, [`AnyView`] a borrowed one. Rust values go in through
//!   [`IntoAny`] (and `From<T> for Any`) and come out through [`FromAny`] (and
//!   `TryFrom<Any>`), with C++'s errors: TypeError, OverflowError.
//! - [`Function`] calls any Ferry function and makes Rust closures into ones; a closure's
//!   `Err` reaches C++ and Python as an exception of its kind, a panic as a RuntimeError.
//! - [`Error`] is a Ferry error (kind, message, backtrace); [`Result`] carries it.
//!
//! Only `ferry-sys` declares the C ABI. The `unsafe` of this crate is its calls of it and its
//! reads of the memory libferry hands out, all of it in the core, `raw` (src/raw.rs and its
//! submodules), whose safe wrappers the other modules call: the crate denies `unsafe_code` and
//! allows it there alone, so unsafe code anywhere else fails to compile (tests/unsafe_core.rs
//! pins that). Every block says what makes it sound in a `SAFETY:`
//! comment (`clippy::undocumented_unsafe_blocks` is denied).
#![warn(missing_docs)]
#![deny(unsafe_code, clippy::undocumented_unsafe_blocks)]

mod any;
mod container;
mod error;
mod function;
mod library;
mod mutable;
mod object;
#[allow(unsafe_code)]
mod raw;
mod tensor;
mod types;

pub use any::{Any, AnyView, Arg, FromAny, IntoAny, IntoArg, IntoArgs};
pub use container::{Array, ArrayIter, Map, MapIter, String};
pub use error::{Error, Result};
/// `#[ferry::export]`: a Rust `fn` registered as a global Function at load.
pub use ferry_macros::export;
/// `#[derive(ferry::Object)]`: see [`Object`](trait@Object).
pub use ferry_macros::Object;
pub use function::{Function, TypedFn};
#[doc(hidden)]
pub use library::__private;
pub use mutable::{Dict, List};
pub use object::{ObjectRef, ObjectType};
pub use tensor::{DataType, Device, Element, Tensor};
#[doc(hidden)]
pub use types::{check_object_type, create_object, FieldCache, Fields, TypeIndexCache};
pub use types::{register_type, FieldDef, FieldDefault, FieldType, Object};

/// The raw C ABI, for what this crate does not wrap.
pub use ferry_sys as sys;

/// The guide's page on Rust (docs/rust.md), included so that its examples run as doc tests.
#[doc = include_str!("../../../docs/rust.md")]
pub mod guide {}

use container::builtin;
use std::path::Path;

/// Loads a shared library and runs its registrations (`FERRY_REGISTER_GLOBAL`,
/// `FERRY_REGISTER_NODE_TYPE`). A relative path is relative to the working directory, as in
/// `./path`. RuntimeError naming the path when it is missing or fails to load.
pub fn load_library(path: impl AsRef<Path>) -> Result<()> {
    library::load(path.as_ref())
}

/// Makes an object of the reflected node type `type_key` from field values by name (the other
/// fields take their defaults): `ferry.MakeNode`. KeyError for an unknown type, TypeError
/// naming a field whose value does not convert.
pub fn make_node(type_key: &str, fields: &[(&str, Any)]) -> Result<ObjectRef> {
    let mut owned: Vec<Any> = Vec::with_capacity(1 + fields.len());
    owned.push(type_key.into_any());
    for (name, _) in fields {
        owned.push(name.into_any());
    }
    let mut args: Vec<AnyView<'_>> = Vec::with_capacity(owned.len() + fields.len());
    args.push(owned[0].view());
    for (i, (_, value)) in fields.iter().enumerate() {
        args.push(owned[i + 1].view());
        args.push(value.view());
    }
    builtin!("ferry.MakeNode").call_packed(&args)?.cast()
}

/// Whether two values are structurally equal (`ferry.StructuralEqual`, free variables not
/// mapped): same types, equal fields, recursively.
pub fn structural_equal<'a, 'b>(lhs: impl Into<AnyView<'a>>, rhs: impl Into<AnyView<'b>>) -> bool {
    builtin!("ferry.StructuralEqual")
        .call((lhs.into(), rhs.into(), false))
        .and_then(|r| r.cast::<bool>())
        .unwrap_or(false)
}

/// The structural hash of a value (`ferry.StructuralHash`): equal for structurally equal ones.
pub fn structural_hash<'a>(value: impl Into<AnyView<'a>>) -> Result<u64> {
    let hash: i64 = builtin!("ferry.StructuralHash")
        .call((value.into(), false))?
        .cast()?;
    Ok(hash as u64)
}

/// The JSON text of a value and everything it reaches (`ferry.SaveJSON`).
pub fn save_json<'a>(value: impl Into<AnyView<'a>>) -> Result<std::string::String> {
    builtin!("ferry.SaveJSON").call((value.into(),))?.cast()
}

/// The value a JSON text of [`save_json`] describes (`ferry.LoadJSON`); ValueError naming the
/// place of a malformed text.
pub fn load_json(text: &str) -> Result<Any> {
    builtin!("ferry.LoadJSON").call((text,))
}

impl From<&String> for std::string::String {
    fn from(s: &String) -> std::string::String {
        s.to_string()
    }
}

/// Borrowed typed references pass as arguments without reference counting, as `&ObjectRef`,
/// and view as values (`AnyView::from(&array)`).
macro_rules! borrowed_args {
    ($(impl[$($g:tt)*] $t:ty;)*) => {$(
        impl<'a, $($g)*> IntoArg<'a> for &'a $t {
            fn into_arg(self) -> Arg<'a> {
                Arg::View(AnyView::from(self.as_object()))
            }
            #[inline]
            fn into_cell(self) -> any::ArgCell<'a> {
                any::ArgCell::borrowed(AnyView::from(self.as_object()))
            }
        }
        impl<'a, $($g)*> From<&'a $t> for AnyView<'a> {
            fn from(value: &'a $t) -> AnyView<'a> {
                AnyView::from(value.as_object())
            }
        }
    )*};
}
borrowed_args! {
    impl[] String;
    impl[] Function;
    impl[] Tensor;
    impl[T] Array<T>;
    impl[K, V] Map<K, V>;
    impl[T] List<T>;
    impl[K, V] Dict<K, V>;
}
