//! Containers: `String`, `Array<T>`, `Map<K, V>` (immutable, shared with C++ and Python).
use std::fmt;
use std::marker::PhantomData;
use std::sync::OnceLock;

use crate::any::{Any, AnyView, FromAny, IntoAny};
use crate::error::{Error, Result};
use crate::function::Function;
use crate::object::{ObjectRef, ObjectType};
use crate::raw;
use ferry_sys as sys;

/// A global function of libferry itself, looked up once.
pub(crate) fn builtin_fn(cache: &'static OnceLock<Function>, name: &str) -> &'static Function {
    cache.get_or_init(|| {
        Function::get_global(name)
            .unwrap_or_else(|| panic!("ferry: libferry does not register '{name}'"))
    })
}

macro_rules! builtin {
    ($name:expr) => {{
        static CACHE: std::sync::OnceLock<$crate::function::Function> = std::sync::OnceLock::new();
        $crate::container::builtin_fn(&CACHE, $name)
    }};
}
pub(crate) use builtin;

// ------------------------------------------------------------------------------------------

/// A ferry.String: immutable bytes (normally UTF-8), compared by value.
///
/// ```
/// let s = ferry::String::from("hello, world");
/// assert_eq!(s.as_bytes(), b"hello, world");
/// assert_eq!(s, "hello, world");
/// assert_eq!(s.len(), 12);
/// ```
#[repr(transparent)]
#[derive(Clone)]
pub struct String {
    obj: ObjectRef,
}

impl String {
    /// A new String holding a copy of `bytes`.
    pub fn from_bytes(bytes: &[u8]) -> String {
        let obj = raw::string_create(bytes)
            .unwrap_or_else(|| panic!("ferry: FerryStringCreate failed: {}", Error::take_raised()));
        String { obj }
    }

    /// The bytes, borrowed from the object.
    pub fn as_bytes(&self) -> &[u8] {
        raw::string_bytes(&self.obj)
    }

    /// The text, or the UTF-8 error when the bytes are not valid UTF-8.
    pub fn to_str(&self) -> std::result::Result<&str, std::str::Utf8Error> {
        std::str::from_utf8(self.as_bytes())
    }

    /// The length in bytes.
    pub fn len(&self) -> usize {
        self.as_bytes().len()
    }

    /// Whether it has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The untyped reference.
    pub fn as_object(&self) -> &ObjectRef {
        &self.obj
    }
}

impl From<&str> for String {
    fn from(text: &str) -> String {
        String::from_bytes(text.as_bytes())
    }
}
impl From<std::string::String> for String {
    fn from(text: std::string::String) -> String {
        String::from_bytes(text.as_bytes())
    }
}
impl From<String> for ObjectRef {
    fn from(s: String) -> ObjectRef {
        s.obj
    }
}
impl PartialEq for String {
    fn eq(&self, other: &String) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}
impl Eq for String {}
impl std::hash::Hash for String {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state)
    }
}
impl PartialEq<str> for String {
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}
impl PartialEq<&str> for String {
    fn eq(&self, other: &&str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}
impl fmt::Display for String {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&std::string::String::from_utf8_lossy(self.as_bytes()))
    }
}
impl fmt::Debug for String {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?}",
            std::string::String::from_utf8_lossy(self.as_bytes())
        )
    }
}
impl IntoAny for String {
    fn into_any(self) -> Any {
        self.obj.into_any()
    }
}
impl FromAny for String {
    fn type_str() -> std::string::String {
        "ferry.String".into()
    }
    /// A String object as is; an inline or borrowed string copied into a new one.
    fn from_view(view: &AnyView<'_>) -> Option<String> {
        if view.type_index() == sys::kFerryString {
            return view.object().map(|obj| String { obj });
        }
        match view.type_index() {
            sys::kFerrySmallStr | sys::kFerryRawStr => {
                view.string_bytes().map(|bytes| String::from_bytes(&bytes))
            }
            _ => None,
        }
    }
}
crate::any::std_conversions!(into: String);
crate::any::std_conversions!(from: String);

// ------------------------------------------------------------------------------------------

/// A ferry.Array of `T`: immutable, shared by reference with C++ (`Array<T>`) and Python.
/// `T` is any [`FromAny`] type (`Any` for mixed arrays); an array read from a value has had
/// every element checked.
///
/// ```
/// use ferry::Array;
/// let a = Array::from(vec![1i64, 2, 3]);
/// assert_eq!(a.len(), 3);
/// assert_eq!(a.get(1), Some(2));
/// assert_eq!(a.iter().sum::<i64>(), 6);
/// let names: Array<ferry::String> = ["x", "y"].into_iter().map(ferry::String::from).collect();
/// assert_eq!(names.get(1).unwrap(), "y");
/// ```
#[repr(transparent)]
pub struct Array<T> {
    obj: ObjectRef,
    _elements: PhantomData<fn() -> T>,
}

impl<T> Clone for Array<T> {
    fn clone(&self) -> Array<T> {
        Array {
            obj: self.obj.clone(),
            _elements: PhantomData,
        }
    }
}

/// Whether every entry of the Map `obj` is a (K, V): the check of `Map<K, V>`'s downcast.
pub(crate) fn map_entries_are<K: FromAny, V: FromAny>(obj: &ObjectRef) -> bool {
    let Some(items) = map_items(obj) else {
        return false;
    };
    (0..items.len()).all(|i| {
        let view = items.get_view(i).expect("in range");
        if i % 2 == 0 {
            K::from_view(&view).is_some()
        } else {
            V::from_view(&view).is_some()
        }
    })
}

impl<T> Array<T> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        raw::array_cells(&self.obj).len()
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The untyped reference.
    pub fn as_object(&self) -> &ObjectRef {
        &self.obj
    }

    /// Element `index`, borrowed.
    pub fn get_view(&self, index: usize) -> Option<AnyView<'_>> {
        raw::array_cells(&self.obj).get(index)
    }
}

impl<T: FromAny> Array<T> {
    /// Element `index` (None past the end).
    pub fn get(&self, index: usize) -> Option<T> {
        self.get_view(index).and_then(|view| T::from_view(&view))
    }

    /// The elements, in order.
    pub fn iter(&self) -> ArrayIter<'_, T> {
        ArrayIter {
            cells: raw::array_cells(&self.obj).iter(),
            _elements: PhantomData,
        }
    }
}

/// The elements of an [`Array`].
pub struct ArrayIter<'a, T> {
    cells: raw::CellIter<'a>,
    _elements: PhantomData<fn() -> T>,
}

impl<T: FromAny> Iterator for ArrayIter<'_, T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        self.cells.next().and_then(|view| T::from_view(&view))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.cells.size_hint()
    }
}

impl<'a, T: FromAny> IntoIterator for &'a Array<T> {
    type Item = T;
    type IntoIter = ArrayIter<'a, T>;
    fn into_iter(self) -> ArrayIter<'a, T> {
        self.iter()
    }
}

impl<T: IntoAny> FromIterator<T> for Array<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Array<T> {
        let values: Vec<Any> = items.into_iter().map(IntoAny::into_any).collect();
        let views: Vec<AnyView<'_>> = values.iter().map(Any::view).collect();
        let array = builtin!("ferry.Array")
            .call_packed(&views)
            .and_then(|any| {
                any.view()
                    .object()
                    .ok_or_else(|| Error::new("TypeError", ""))
            })
            .unwrap_or_else(|e| panic!("ferry: ferry.Array failed: {e}"));
        Array {
            obj: array,
            _elements: PhantomData,
        }
    }
}

impl<T: IntoAny> From<Vec<T>> for Array<T> {
    fn from(items: Vec<T>) -> Array<T> {
        items.into_iter().collect()
    }
}

impl<T: IntoAny + Clone> From<&[T]> for Array<T> {
    fn from(items: &[T]) -> Array<T> {
        items.iter().cloned().collect()
    }
}

impl<T: FromAny + fmt::Debug> fmt::Debug for Array<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T> From<Array<T>> for ObjectRef {
    fn from(a: Array<T>) -> ObjectRef {
        a.obj
    }
}
impl<T> IntoAny for Array<T> {
    fn into_any(self) -> Any {
        self.obj.into_any()
    }
}
impl<T> From<Array<T>> for Any {
    fn from(a: Array<T>) -> Any {
        a.obj.into_any()
    }
}
impl<T: FromAny> FromAny for Array<T> {
    fn type_str() -> std::string::String {
        <Array<T> as ObjectType>::type_str()
    }
    fn from_view(view: &AnyView<'_>) -> Option<Array<T>> {
        let obj = view.object()?;
        <Array<T> as ObjectType>::accepts(&obj).then_some(Array {
            obj,
            _elements: PhantomData,
        })
    }
}
impl<T: FromAny> TryFrom<Any> for Array<T> {
    type Error = Error;
    fn try_from(value: Any) -> Result<Array<T>> {
        value.cast()
    }
}
impl<'a, T: FromAny> TryFrom<AnyView<'a>> for Array<T> {
    type Error = Error;
    fn try_from(value: AnyView<'a>) -> Result<Array<T>> {
        value.cast()
    }
}

// ------------------------------------------------------------------------------------------

/// A ferry.Map from `K` to `V`: immutable, insertion-ordered, shared with C++ (`Map<K, V>`)
/// and Python; keys compare as C++ compares them (strings and bytes by value, other objects by
/// identity).
///
/// ```
/// use ferry::Map;
/// let m: Map<ferry::String, i64> = [("a".into(), 1), ("b".into(), 2)].into_iter().collect();
/// assert_eq!(m.len(), 2);
/// assert_eq!(m.get("b")?, Some(2));
/// assert_eq!(m.get("z")?, None);
/// let keys: Vec<String> = m.iter().map(|(k, _)| k.to_string()).collect();
/// assert_eq!(keys, ["a", "b"]);
/// # Ok::<(), ferry::Error>(())
/// ```
#[repr(transparent)]
pub struct Map<K, V> {
    obj: ObjectRef,
    _entries: PhantomData<fn() -> (K, V)>,
}

impl<K, V> Clone for Map<K, V> {
    fn clone(&self) -> Map<K, V> {
        Map {
            obj: self.obj.clone(),
            _entries: PhantomData,
        }
    }
}

/// The keys and values of a Map, alternating, as an array of cells.
fn map_items(obj: &ObjectRef) -> Option<Array<Any>> {
    builtin!("ferry.MapItems").call((obj,)).ok()?.cast().ok()
}

impl<K, V> Map<K, V> {
    /// The number of entries.
    pub fn len(&self) -> usize {
        builtin!("ferry.MapSize")
            .call((&self.obj,))
            .and_then(|n| n.cast::<usize>())
            .unwrap_or(0)
    }

    /// Whether it has no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The untyped reference.
    pub fn as_object(&self) -> &ObjectRef {
        &self.obj
    }
}

impl<K: FromAny, V: FromAny> Map<K, V> {
    /// The value of `key`, None when absent; an error only when the key cannot be compared
    /// (a TypeError of C++).
    pub fn get<'a>(&self, key: impl crate::any::IntoArg<'a>) -> Result<Option<V>> {
        let key = key.into_arg();
        let key = key.as_view();
        let count: i64 = builtin!("ferry.MapCount").call((&self.obj, key))?.cast()?;
        if count == 0 {
            return Ok(None);
        }
        builtin!("ferry.MapGetItem")
            .call((&self.obj, key))?
            .cast()
            .map(Some)
    }

    /// The entries, in insertion order.
    pub fn iter(&self) -> MapIter<K, V> {
        MapIter {
            items: map_items(&self.obj),
            next: 0,
            _entries: PhantomData,
        }
    }
}

/// The entries of a [`Map`], in order.
pub struct MapIter<K, V> {
    items: Option<Array<Any>>,
    next: usize,
    _entries: PhantomData<fn() -> (K, V)>,
}

impl<K: FromAny, V: FromAny> Iterator for MapIter<K, V> {
    type Item = (K, V);
    fn next(&mut self) -> Option<(K, V)> {
        let items = self.items.as_ref()?;
        let key = K::from_view(&items.get_view(self.next)?)?;
        let value = V::from_view(&items.get_view(self.next + 1)?)?;
        self.next += 2;
        Some((key, value))
    }
}

impl<K: IntoAny, V: IntoAny> FromIterator<(K, V)> for Map<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(entries: I) -> Map<K, V> {
        let mut values: Vec<Any> = Vec::new();
        for (k, v) in entries {
            values.push(k.into_any());
            values.push(v.into_any());
        }
        let views: Vec<AnyView<'_>> = values.iter().map(Any::view).collect();
        let map = builtin!("ferry.Map")
            .call_packed(&views)
            .and_then(|any| {
                any.view()
                    .object()
                    .ok_or_else(|| Error::new("TypeError", ""))
            })
            .unwrap_or_else(|e| panic!("ferry: ferry.Map failed: {e}"));
        Map {
            obj: map,
            _entries: PhantomData,
        }
    }
}

impl<K: FromAny + fmt::Debug, V: FromAny + fmt::Debug> fmt::Debug for Map<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K, V> From<Map<K, V>> for ObjectRef {
    fn from(m: Map<K, V>) -> ObjectRef {
        m.obj
    }
}
impl<K, V> IntoAny for Map<K, V> {
    fn into_any(self) -> Any {
        self.obj.into_any()
    }
}
impl<K, V> From<Map<K, V>> for Any {
    fn from(m: Map<K, V>) -> Any {
        m.obj.into_any()
    }
}
impl<K: FromAny, V: FromAny> FromAny for Map<K, V> {
    fn type_str() -> std::string::String {
        <Map<K, V> as ObjectType>::type_str()
    }
    fn from_view(view: &AnyView<'_>) -> Option<Map<K, V>> {
        let obj = view.object()?;
        <Map<K, V> as ObjectType>::accepts(&obj).then_some(Map {
            obj,
            _entries: PhantomData,
        })
    }
}
impl<K: FromAny, V: FromAny> TryFrom<Any> for Map<K, V> {
    type Error = Error;
    fn try_from(value: Any) -> Result<Map<K, V>> {
        value.cast()
    }
}
