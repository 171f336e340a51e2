//! Mutable containers: `List<T>` and `Dict<K, V>` (C++ `ferry::List`/`Dict`, Python's
//! `ferry.List`/`ferry.Dict`), shared by every holder, so every write is seen by all of them.
//!
//! Ferry does not synchronize writes in any language: a write racing a read on another thread
//! may free what the reader holds. Reading is therefore safe and writing is `unsafe`, with the
//! caller promising that no other thread uses the container meanwhile; the writes are declared
//! in the unsafe core (`raw/mutable.rs`, which says why no safe signature would be sound).
//! Since any holder (C++,
//! Python) may write elements of any type, reads convert each element when read and say so
//! with a TypeError.
use std::marker::PhantomData;

use crate::any::{Any, AnyView, FromAny, IntoAny, IntoArg};
use crate::container::{builtin, Array, Map};
use crate::error::{Error, Result};
use crate::object::{ObjectRef, ObjectType};
use ferry_sys as sys;

/// A ferry.List of `T`: mutable, shared by reference with C++ and Python.
///
/// ```
/// use ferry::List;
/// let xs: List<i64> = (1..=3).collect();
/// let same = xs.clone();                                   // the same list, not a copy
/// // SAFETY: no other thread uses the list.
/// unsafe { xs.push(4i64)? };
/// assert_eq!(same.to_vec()?, [1, 2, 3, 4]);
/// assert_eq!(xs.get(10).unwrap_err().kind(), "IndexError");
/// # Ok::<(), ferry::Error>(())
/// ```
#[repr(transparent)]
pub struct List<T> {
    obj: ObjectRef,
    _elements: PhantomData<fn() -> T>,
}

impl<T> Clone for List<T> {
    /// Another reference to the same list.
    fn clone(&self) -> List<T> {
        List {
            obj: self.obj.clone(),
            _elements: PhantomData,
        }
    }
}

impl<T> List<T> {
    /// A new, empty list.
    pub fn new() -> List<T> {
        Self::from_cells(&[])
    }

    fn from_cells(views: &[AnyView<'_>]) -> List<T> {
        let obj = builtin!("ferry.List")
            .call_packed(views)
            .and_then(|any| any.cast::<ObjectRef>())
            .unwrap_or_else(|e| panic!("ferry: ferry.List failed: {e}"));
        List {
            obj,
            _elements: PhantomData,
        }
    }

    /// The untyped reference.
    pub fn as_object(&self) -> &ObjectRef {
        &self.obj
    }

    /// A snapshot of the elements as they are now (O(1): later writes copy).
    pub fn to_array(&self) -> Array<Any> {
        builtin!("ferry.ListToArray")
            .call((&self.obj,))
            .and_then(|a| a.cast())
            .unwrap_or_else(|e| panic!("ferry: ferry.ListToArray failed: {e}"))
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.to_array().len()
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

pub(crate) fn index_error(index: usize, len: usize) -> Error {
    Error::new(
        "IndexError",
        &format!("list index {index} is out of range for a list of {len}"),
    )
}

impl<T: FromAny> List<T> {
    /// Element `index`: IndexError past the end, TypeError when it is not a `T`.
    pub fn get(&self, index: usize) -> Result<T> {
        let items = self.to_array();
        let view = items
            .get_view(index)
            .ok_or_else(|| index_error(index, items.len()))?;
        view.cast()
    }

    /// The elements as they are now, each converted (the first that is not a `T` is a
    /// TypeError).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let items = self.to_array();
        (0..items.len())
            .map(|i| items.get_view(i).expect("in range").cast())
            .collect()
    }
}

impl<T> Default for List<T> {
    fn default() -> List<T> {
        List::new()
    }
}

impl<T: IntoAny> FromIterator<T> for List<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> List<T> {
        let values: Vec<Any> = items.into_iter().map(IntoAny::into_any).collect();
        let views: Vec<AnyView<'_>> = values.iter().map(Any::view).collect();
        List::from_cells(&views)
    }
}

impl<T: IntoAny> From<Vec<T>> for List<T> {
    fn from(items: Vec<T>) -> List<T> {
        items.into_iter().collect()
    }
}

impl<T> From<List<T>> for ObjectRef {
    fn from(l: List<T>) -> ObjectRef {
        l.obj
    }
}
impl<T> IntoAny for List<T> {
    fn into_any(self) -> Any {
        self.obj.into_any()
    }
}
impl<T> From<List<T>> for Any {
    fn from(l: List<T>) -> Any {
        l.obj.into_any()
    }
}
impl<T: FromAny> FromAny for List<T> {
    fn type_str() -> std::string::String {
        <List<T> as ObjectType>::type_str()
    }
    fn from_view(view: &AnyView<'_>) -> Option<List<T>> {
        (view.type_index() == sys::kFerryList)
            .then(|| {
                view.object().map(|obj| List {
                    obj,
                    _elements: PhantomData,
                })
            })
            .flatten()
    }
}
impl<T: FromAny> TryFrom<Any> for List<T> {
    type Error = Error;
    fn try_from(value: Any) -> Result<List<T>> {
        value.cast()
    }
}

// ------------------------------------------------------------------------------------------

/// A ferry.Dict from `K` to `V`: mutable, shared by reference with C++ and Python; keys
/// compare as C++ compares them (strings and bytes by value, other objects by identity).
///
/// ```
/// use ferry::Dict;
/// let d: Dict<ferry::String, i64> = [("a".into(), 1)].into_iter().collect();
/// // SAFETY: no other thread uses the dict.
/// unsafe { d.insert("b", 2i64)? };
/// assert_eq!(d.len(), 2);
/// assert_eq!(d.get("b")?, Some(2));
/// assert!(unsafe { d.remove("a")? });
/// assert_eq!(d.get("a")?, None);
/// # Ok::<(), ferry::Error>(())
/// ```
#[repr(transparent)]
pub struct Dict<K, V> {
    obj: ObjectRef,
    _entries: PhantomData<fn() -> (K, V)>,
}

impl<K, V> Clone for Dict<K, V> {
    /// Another reference to the same dict.
    fn clone(&self) -> Dict<K, V> {
        Dict {
            obj: self.obj.clone(),
            _entries: PhantomData,
        }
    }
}

impl<K, V> Dict<K, V> {
    /// A new, empty dict.
    pub fn new() -> Dict<K, V> {
        Self::from_cells(&[])
    }

    fn from_cells(views: &[AnyView<'_>]) -> Dict<K, V> {
        let obj = builtin!("ferry.Dict")
            .call_packed(views)
            .and_then(|any| any.cast::<ObjectRef>())
            .unwrap_or_else(|e| panic!("ferry: ferry.Dict failed: {e}"));
        Dict {
            obj,
            _entries: PhantomData,
        }
    }

    /// The untyped reference.
    pub fn as_object(&self) -> &ObjectRef {
        &self.obj
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        builtin!("ferry.DictSize")
            .call((&self.obj,))
            .and_then(|n| n.cast())
            .unwrap_or(0)
    }

    /// Whether it has no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `key` has an entry.
    pub fn contains_key<'a>(&self, key: impl IntoArg<'a>) -> Result<bool> {
        let count: i64 = builtin!("ferry.DictCount")
            .call((&self.obj, key.into_arg().as_view()))?
            .cast()?;
        Ok(count != 0)
    }

    /// A snapshot of the entries as they are now, in insertion order (O(1)).
    pub fn to_map(&self) -> Map<Any, Any> {
        builtin!("ferry.DictToMap")
            .call((&self.obj,))
            .and_then(|m| m.cast())
            .unwrap_or_else(|e| panic!("ferry: ferry.DictToMap failed: {e}"))
    }
}

impl<K, V: FromAny> Dict<K, V> {
    /// The value of `key` (None when absent), TypeError when it is not a `V`.
    pub fn get<'a>(&self, key: impl IntoArg<'a>) -> Result<Option<V>> {
        let key = key.into_arg();
        let key = key.as_view();
        if !self.contains_key(key)? {
            return Ok(None);
        }
        builtin!("ferry.DictGetItem")
            .call((&self.obj, key))?
            .cast()
            .map(Some)
    }
}

impl<K: FromAny, V: FromAny> Dict<K, V> {
    /// The entries as they are now, in insertion order, each converted.
    pub fn to_vec(&self) -> Result<Vec<(K, V)>> {
        self.to_map()
            .iter()
            .map(|(k, v)| Ok((k.cast()?, v.cast()?)))
            .collect()
    }
}

impl<K, V> Default for Dict<K, V> {
    fn default() -> Dict<K, V> {
        Dict::new()
    }
}

impl<K: IntoAny, V: IntoAny> FromIterator<(K, V)> for Dict<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(entries: I) -> Dict<K, V> {
        let mut values: Vec<Any> = Vec::new();
        for (k, v) in entries {
            values.push(k.into_any());
            values.push(v.into_any());
        }
        let views: Vec<AnyView<'_>> = values.iter().map(Any::view).collect();
        Dict::from_cells(&views)
    }
}

impl<K, V> From<Dict<K, V>> for ObjectRef {
    fn from(d: Dict<K, V>) -> ObjectRef {
        d.obj
    }
}
impl<K, V> IntoAny for Dict<K, V> {
    fn into_any(self) -> Any {
        self.obj.into_any()
    }
}
impl<K, V> From<Dict<K, V>> for Any {
    fn from(d: Dict<K, V>) -> Any {
        d.obj.into_any()
    }
}
impl<K: FromAny, V: FromAny> FromAny for Dict<K, V> {
    fn type_str() -> std::string::String {
        <Dict<K, V> as ObjectType>::type_str()
    }
    fn from_view(view: &AnyView<'_>) -> Option<Dict<K, V>> {
        (view.type_index() == sys::kFerryDict)
            .then(|| {
                view.object().map(|obj| Dict {
                    obj,
                    _entries: PhantomData,
                })
            })
            .flatten()
    }
}
impl<K: FromAny, V: FromAny> TryFrom<Any> for Dict<K, V> {
    type Error = Error;
    fn try_from(value: Any) -> Result<Dict<K, V>> {
        value.cast()
    }
}
