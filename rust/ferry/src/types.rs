//! Types defined in Rust: `#[derive(ferry::Object)]` and [`register_type`].
use crate::any::{Any, IntoAny};
use crate::container::{Array, Map};
use crate::error::{c_name, Error, Result};
use crate::function::Function;
use crate::object::{type_index_of_key, ObjectRef};
use crate::raw;
use ferry_sys as sys;

/// One field of a type defined in Rust: its name and its type as the C ABI spells it
/// (`FerryFieldSpec`: `int`, `float`, `str`, `Optional[int]`, `Array[str]`, a type key, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDef {
    /// The field's name, as C++ reflection, JSON and Python see it.
    pub name: &'static str,
    /// The field's type text.
    pub type_text: std::string::String,
}

/// A Rust struct mirrored by a Ferry type registered at run time. Derive it:
///
/// ```
/// use ferry::Object;
///
/// #[derive(ferry::Object, Clone, Debug, PartialEq)]
/// #[ferry(type_key = "doc.Point")]
/// struct Point {
///     x: i64,
///     y: f64,
/// }
///
/// ferry::register_type::<Point>()?;
/// let obj = Point { x: 1, y: 2.5 }.to_object()?;          // a Ferry object C++ can read
/// assert_eq!(obj.type_key(), "doc.Point");
/// assert_eq!(obj.get_attr("y")?.cast::<f64>()?, 2.5);
/// let made = ferry::make_node("doc.Point", &[("x", 3i64.into()), ("y", 0.5.into())])?;
/// assert_eq!(Point::from_object(&made)?, Point { x: 3, y: 0.5 });
/// # Ok::<(), ferry::Error>(())
/// ```
///
/// A field may have a default, which an object made without that field takes (`make_node`,
/// Python's `ferry.make_node`, a JSON document written before the field was added):
/// `#[ferry(default = EXPR)]` (EXPR converted with `Into` to the field's type) or
/// `#[ferry(default_factory = EXPR)]` (a `fn() -> FieldType` called for each such object):
///
/// ```
/// use ferry::Object;
///
/// #[derive(ferry::Object, Clone)]
/// #[ferry(type_key = "doc.Account")]
/// struct Account {
///     owner: String,
///     #[ferry(default = 0)]
///     balance: i64,
///     #[ferry(default_factory = || ferry::Array::from_iter([1i64]))]
///     history: ferry::Array<i64>,
/// }
///
/// ferry::register_type::<Account>()?;
/// let made = ferry::make_node("doc.Account", &[("owner", "ann".into())])?;
/// let account = Account::from_object(&made)?;
/// assert_eq!((account.balance, account.history.len()), (0, 1));
/// # Ok::<(), ferry::Error>(())
/// ```
///
/// What the derive refuses, at compile time with a message naming the problem: a struct
/// without `#[ferry(type_key = "...")]`,
///
/// ```compile_fail,E0616
/// #[derive(ferry::Object, Clone)]
/// struct NoKey {
///     x: i64,
/// }
/// ```
///
/// generic parameters, which a Ferry type cannot have,
///
/// ```compile_fail,E0616
/// #[derive(ferry::Object, Clone)]
/// #[ferry(type_key = "doc.Generic")]
/// struct Generic<T> {
///     x: T,
/// }
/// ```
///
/// fields without names, and field types that have no Ferry field type:
///
/// ```compile_fail,E0616
/// #[derive(ferry::Object, Clone)]
/// #[ferry(type_key = "doc.Tuple")]
/// struct Tuple(i64);
/// ```
///
/// a field option other than `default`/`default_factory`, or two defaults,
///
/// ```compile_fail,E0616
/// #[derive(ferry::Object, Clone)]
/// #[ferry(type_key = "doc.BadOption")]
/// struct BadOption {
///     #[ferry(fallback = 1)]
///     x: i64,
/// }
/// ```
///
/// ```compile_fail,E0616
/// #[derive(ferry::Object, Clone)]
/// #[ferry(type_key = "doc.TwoDefaults")]
/// struct TwoDefaults {
///     #[ferry(default = 1)]
///     #[ferry(default = 2)]
///     x: i64,
/// }
/// ```
///
/// a default of another type than the field's,
///
/// ```compile_fail,E0616
/// #[derive(ferry::Object, Clone)]
/// #[ferry(type_key = "doc.WrongDefault")]
/// struct WrongDefault {
///     #[ferry(default = "seven")]
///     x: i64,
/// }
/// ```
///
/// ```compile_fail,E0616
/// #[derive(ferry::Object, Clone)]
/// #[ferry(type_key = "doc.Unsupported")]
/// struct Unsupported {
///     x: std::collections::HashMap<i64, i64>,
/// }
/// ```
pub trait Object: Sized {
    /// The type key, e.g. `"demo.Point"`.
    const TYPE_KEY: &'static str;
    /// The fields, in order.
    fn fields() -> Vec<FieldDef>;
    /// The values of the fields, in order.
    fn field_values(&self) -> Vec<Any>;
    /// Reads a Ferry object of this type (or a subtype) back into the struct: TypeError for
    /// an object of another type, or when a field does not convert.
    fn from_object(obj: &ObjectRef) -> Result<Self>;

    /// The defaults of the fields that have one (`#[ferry(default = ...)]`,
    /// `#[ferry(default_factory = ...)]`): what [`register_type`] records, so that a field
    /// `make_node`, Python or a JSON document leaves out takes it. None by default.
    fn field_defaults() -> Vec<(&'static str, FieldDefault)> {
        Vec::new()
    }

    /// A new Ferry object holding this struct's field values. The type is registered first
    /// when it is not yet ([`register_type`]), so a struct nested in another needs no
    /// registration of its own.
    fn to_object(&self) -> Result<ObjectRef> {
        // The derive overrides this with a cached index and the values in an array.
        create_object(index_or_register::<Self>()?, &self.field_values())
    }
}

/// The default of a field of a type defined in Rust (`FerryTypeSetFieldDefault`): taken by an
/// object made without that field (`make_node`, Python, `load_json`); a field without one is
/// required there. A struct literal in Rust names every field as usual.
pub enum FieldDefault {
    /// One value, shared by every object that takes it (fine for immutable values).
    Value(Any),
    /// A Function of no arguments called for each object that takes the default, as Python's
    /// `default_factory`: a fresh mutable value (a List, an object) per object.
    Factory(Function),
}

impl FieldDefault {
    /// The default `value`, converted to the field's type `T` first (so `default = 3` of an
    /// `i64` field, `default = "x"` of a `String` one).
    pub fn value<T: crate::any::IntoAny>(value: impl Into<T>) -> FieldDefault {
        FieldDefault::Value(value.into().into_any())
    }

    /// The default made by `make` for each object.
    pub fn factory<T: crate::any::IntoAny + 'static>(make: fn() -> T) -> FieldDefault {
        FieldDefault::Factory(Function::from_fn(move || Ok(make())))
    }
}

/// The index of `T`'s type, registered first when it is not yet.
fn index_or_register<T: Object>() -> Result<i32> {
    match type_index_of_key(T::TYPE_KEY) {
        Some(index) => Ok(index),
        None => register_type::<T>(),
    }
}

/// The type index of a derived type, looked up (or registered) on first use and kept: a
/// `static` of the derive's `to_object`, which would otherwise spend half its time on a lookup
/// by key (a `CString` and a hash). Type indices are never reused, so a kept one stays valid.
#[doc(hidden)]
pub struct TypeIndexCache(std::sync::atomic::AtomicI32);

impl Default for TypeIndexCache {
    fn default() -> Self {
        Self::new()
    }
}

impl TypeIndexCache {
    /// An empty cache.
    pub const fn new() -> TypeIndexCache {
        TypeIndexCache(std::sync::atomic::AtomicI32::new(-1))
    }

    /// `T`'s type index.
    #[inline]
    pub fn get<T: Object>(&self) -> Result<i32> {
        let index = self.0.load(std::sync::atomic::Ordering::Relaxed);
        if index >= 0 {
            return Ok(index);
        }
        self.fill::<T>()
    }

    #[cold]
    fn fill<T: Object>(&self) -> Result<i32> {
        let index = index_or_register::<T>()?;
        self.0.store(index, std::sync::atomic::Ordering::Relaxed);
        Ok(index)
    }
}

/// A new object of the type `index` holding `values`, its fields in order (borrowed: the object
/// takes its own references).
#[doc(hidden)]
#[inline]
pub fn create_object(index: i32, values: &[Any]) -> Result<ObjectRef> {
    raw::object_create(index, values)
}

/// The TypeError of `T::from_object` for an object of another type.
#[doc(hidden)]
pub fn check_object_type<T: Object>(obj: &ObjectRef) -> Result<()> {
    if obj.is_instance_of(T::TYPE_KEY) {
        Ok(())
    } else {
        Err(Error::new(
            "TypeError",
            &format!("expected {} but got {}", T::TYPE_KEY, obj.type_key()),
        ))
    }
}

/// Registers the Ferry type of `T` (a `#[derive(ferry::Object)]` struct) under
/// `ferry.Object`, with its fields, writable through reflection. The same declaration again is
/// harmless and returns the same index; a key taken by another declaration is an error naming
/// it, and a key or field name with a NUL byte a ValueError. Returns the type index.
pub fn register_type<T: Object>() -> Result<i32> {
    let fields = T::fields();
    let key = c_name("the type key", T::TYPE_KEY)?;
    let names =
        (fields.iter().map(|f| c_name("the field name", f.name))).collect::<Result<Vec<_>>>()?;
    let texts = (fields
        .iter()
        .map(|f| c_name("the field type", &f.type_text)))
    .collect::<Result<Vec<_>>>()?;
    let specs: Vec<_> = names
        .iter()
        .zip(&texts)
        .map(|(name, text)| (name.as_c_str(), text.as_c_str()))
        .collect();
    let index = raw::type_register_with_fields(&key, &specs)?;
    for (name, default) in T::field_defaults() {
        let (value, flags) = match default {
            FieldDefault::Value(value) => (value, 0),
            FieldDefault::Factory(make) => (make.into_any(), sys::kFerryDefaultFactory),
        };
        raw::type_set_field_default(index, &c_name("the field name", name)?, &value, flags)?;
    }
    Ok(index)
}

/// A Rust type a field of a [`Object`] may have: its type text in a field table.
pub trait FieldType {
    /// `int`, `float`, `bool`, `str`, `Any`, `Function`, `Object`, `Optional[T]`, `Array[T]`,
    /// `Map[K, V]` or a type key.
    fn type_text() -> std::string::String;
}

macro_rules! field_types {
    ($($t:ty => $text:expr),* $(,)?) => {$(
        impl FieldType for $t {
            fn type_text() -> std::string::String {
                $text.into()
            }
        }
    )*};
}
field_types!(
    i64 => "int", i32 => "int", i16 => "int", i8 => "int", u32 => "int", u16 => "int",
    u8 => "int", f64 => "float", f32 => "float", bool => "bool",
    std::string::String => "str", crate::container::String => "str",
    Any => "Any", Function => "Function", ObjectRef => "Object",
);

impl<T: FieldType> FieldType for Option<T> {
    fn type_text() -> std::string::String {
        format!("Optional[{}]", T::type_text())
    }
}
impl<T: FieldType> FieldType for Array<T> {
    fn type_text() -> std::string::String {
        format!("Array[{}]", T::type_text())
    }
}
impl<K: FieldType, V: FieldType> FieldType for Map<K, V> {
    fn type_text() -> std::string::String {
        format!("Map[{}, {}]", K::type_text(), V::type_text())
    }
}

/// How `#[derive(ferry::Object)]` reads the fields of an object: the (offset, getter) pairs of
/// `FerryObjectGetFieldGetter`, found once per type and kept, so a read is one indirect call
/// per field instead of a lookup by name.
#[doc(hidden)]
pub struct FieldCache {
    /// The type index and field names the getters were found for, and the getters.
    slot: std::sync::OnceLock<CachedGetters>,
}

/// What a [`FieldCache`] keeps: the getters of `names` for the type `index`, whose objects
/// `maker` makes ([`ObjectRef::maker`]: a type key registered again by another library keeps
/// its index, not its layout).
struct CachedGetters {
    index: i32,
    maker: usize,
    names: &'static [&'static str],
    getters: Vec<(i64, sys::FerryFieldGetter)>,
}

impl Default for FieldCache {
    fn default() -> Self {
        Self::new()
    }
}

impl FieldCache {
    /// An empty cache (a `static` of the derive's `from_object`).
    pub const fn new() -> FieldCache {
        FieldCache {
            slot: std::sync::OnceLock::new(),
        }
    }

    /// The getters of `names` (the fields of `T`) for `obj`'s type: the cached ones when `obj`
    /// is of the type they were found for (the first one read, whose type was checked then),
    /// made by the same code, and `names` are the names they were found for, else, `obj` being checked to be a `T`
    /// (TypeError), found now (a subtype, or a cache shared by two lists of names: each time).
    /// They come bound to `obj` ([`Fields`]), so a getter is only ever called on an object of
    /// the type it was found for, and read by the name it was found for.
    #[inline]
    pub fn getters<'a, T: Object>(
        &'a self,
        obj: &'a ObjectRef,
        names: &'static [&'static str],
    ) -> Result<Fields<'a>> {
        let index = obj.type_index();
        if let Some(cached) = self.slot.get() {
            // (The derive passes one static list: the address compares equal.)
            if cached.index == index
                && cached.maker == obj.maker()
                && (std::ptr::eq(cached.names, names) || cached.names == names)
            {
                return Ok(Fields {
                    obj,
                    names,
                    getters: std::borrow::Cow::Borrowed(&cached.getters),
                });
            }
        }
        Ok(Fields {
            obj,
            names,
            getters: self.find::<T>(obj, names)?,
        })
    }

    #[cold]
    fn find<T: Object>(
        &self,
        obj: &ObjectRef,
        names: &'static [&'static str],
    ) -> Result<std::borrow::Cow<'_, [(i64, sys::FerryFieldGetter)]>> {
        check_object_type::<T>(obj)?;
        let index = obj.type_index();
        let found = names
            .iter()
            .map(|name| field_getter(obj, name))
            .collect::<Result<Vec<_>>>()?;
        let kept = CachedGetters {
            index,
            maker: obj.maker(),
            names,
            getters: found.clone(),
        };
        if self.slot.set(kept).is_ok() {
            if let Some(cached) = self.slot.get() {
                return Ok(std::borrow::Cow::Borrowed(&cached.getters));
            }
        }
        Ok(std::borrow::Cow::Owned(found))
    }
}

/// The (offset, getter) of field `name` of `obj`'s type; AttributeError naming it when absent.
pub(crate) fn field_getter(obj: &ObjectRef, name: &str) -> Result<(i64, sys::FerryFieldGetter)> {
    let (offset, getter) = raw::object_field_getter(obj, &c_name("the field name", name)?)?;
    getter.map(|g| (offset, g)).ok_or_else(|| {
        Error::new(
            "AttributeError",
            &format!("'{}' has no readable field '{name}'", obj.type_key()),
        )
    })
}

/// The field getters of one object, found for its type by [`FieldCache::getters`]: the only
/// way to call a cached getter, so it cannot be applied to an object of another type (which
/// would read past the object). Neither can be taken out nor put in by hand:
///
/// ```compile_fail,E0616
/// fn take(fields: &ferry::Fields<'_>) {
///     let _ = &fields.getters; // private: a getter never leaves the object it was found for
/// }
/// ```
#[doc(hidden)]
pub struct Fields<'a> {
    obj: &'a ObjectRef,
    names: &'static [&'static str],
    getters: std::borrow::Cow<'a, [(i64, sys::FerryFieldGetter)]>,
}

impl Fields<'_> {
    /// Reads field `k` (in the order of the names given to `getters`) and converts it, a
    /// failure naming the field and the type: what the derive's `from_object` does per field.
    /// A `k` past the names given to `getters` is an IndexError naming them.
    #[inline]
    pub fn read<T: crate::any::FromAny>(&self, k: usize, name: &str) -> Result<T> {
        let Some(&(offset, getter)) = self.getters.get(k) else {
            return Err(self.misread(k, name));
        };
        let (rc, out) = raw::call_field_getter(self.obj, offset, getter);
        Error::check(rc)?;
        out.cast::<T>().map_err(|err| {
            Error::new(
                err.kind(),
                &format!(
                    "field '{name}' of {}: {}",
                    self.obj.type_key(),
                    err.message()
                ),
            )
        })
    }
}

impl Fields<'_> {
    /// The error of a read of field `k` (`name`), past the names `getters` was given.
    #[cold]
    #[inline(never)]
    fn misread(&self, k: usize, name: &str) -> Error {
        Error::new(
            "IndexError",
            &format!(
                "field {k} '{name}' of {} was not looked up: the fields looked up are {:?}",
                self.obj.type_key(),
                self.names
            ),
        )
    }
}
