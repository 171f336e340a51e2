//! The core of `List` and `Dict`: their `ObjectType` impls and their writes, which are `unsafe`.
//!
//! Why writes are not safe functions: libferry orders nothing between a write of a List or Dict
//! and a read of it. `FerryListAppend` may reallocate the element storage that a concurrent
//! `ferry.ListToArray` (every read of this crate goes through such a snapshot) is copying a
//! reference to; C++'s own `List` is unsynchronized, and Python's operations are atomic only
//! with respect to other Python threads (the GIL). A `&mut self` receiver would not help: a
//! container is shared by every holder, and any `ObjectRef` to it (it is `Send`) makes another
//! holder on another thread. So the caller promises that no other thread uses the container
//! during the write, which Rust cannot check.
use crate::any::{FromAny, IntoArg};
use crate::container::builtin;
use crate::error::{Error, Result};
use crate::mutable::{index_error, Dict, List};
use ferry_sys as sys;

use super::object::{ObjectRef, ObjectType};

// SAFETY: repr(transparent) over ObjectRef (and a zero-sized marker); accepts only ferry.List
// objects (elements are checked as they are read).
unsafe impl<T: FromAny> ObjectType for List<T> {
    const TYPE_KEY: &'static str = "ferry.List";
    fn type_str() -> std::string::String {
        format!("ferry.List[{}]", T::type_str())
    }
    fn accepts(obj: &ObjectRef) -> bool {
        obj.type_index() == sys::kFerryList
    }
}

// SAFETY: repr(transparent) over ObjectRef (and a zero-sized marker); accepts only ferry.Dict
// objects.
unsafe impl<K: FromAny, V: FromAny> ObjectType for Dict<K, V> {
    const TYPE_KEY: &'static str = "ferry.Dict";
    fn type_str() -> std::string::String {
        format!("ferry.Dict[{}, {}]", K::type_str(), V::type_str())
    }
    fn accepts(obj: &ObjectRef) -> bool {
        obj.type_index() == sys::kFerryDict
    }
}

impl<T> List<T> {
    /// Appends `value`.
    ///
    /// # Safety
    /// No other thread reads or writes the list during the call.
    pub unsafe fn push<'a>(&self, value: impl IntoArg<'a>) -> Result<()>
    where
        T: 'a,
    {
        let value = value.into_arg();
        // SAFETY: a live List and a cell borrowed for the call; exclusivity is the caller's.
        Error::check(unsafe { sys::FerryListAppend(self.as_object().handle(), value.cell()) })
    }

    /// Replaces element `index`; IndexError naming the index and the size.
    ///
    /// # Safety
    /// As [`push`](List::push).
    pub unsafe fn set<'a>(&self, index: usize, value: impl IntoArg<'a>) -> Result<()> {
        let value = value.into_arg();
        let index = i64::try_from(index).unwrap_or(i64::MAX);
        // SAFETY: as in push.
        Error::check(unsafe {
            sys::FerryListSetItem(self.as_object().handle(), index, value.cell())
        })
    }

    /// Inserts `value` before `index` (`index <= len`); IndexError otherwise.
    ///
    /// # Safety
    /// As [`push`](List::push).
    pub unsafe fn insert<'a>(&self, index: usize, value: impl IntoArg<'a>) -> Result<()> {
        let index = i64::try_from(index).unwrap_or(i64::MAX);
        builtin!("ferry.ListInsert")
            .call((self.as_object(), index, value.into_arg().as_view()))
            .map(drop)
    }

    /// Removes element `index`; IndexError when there is none.
    ///
    /// # Safety
    /// As [`push`](List::push).
    pub unsafe fn remove(&self, index: usize) -> Result<()> {
        let len = self.len();
        if index >= len {
            return Err(index_error(index, len));
        }
        builtin!("ferry.ListErase")
            .call((self.as_object(), index as i64, index as i64 + 1))
            .map(drop)
    }

    /// Removes every element.
    ///
    /// # Safety
    /// As [`push`](List::push).
    pub unsafe fn clear(&self) -> Result<()> {
        builtin!("ferry.ListClear")
            .call((self.as_object(),))
            .map(drop)
    }
}

impl<K, V> Dict<K, V> {
    /// Sets the value of `key`.
    ///
    /// # Safety
    /// No other thread reads or writes the dict during the call.
    pub unsafe fn insert<'a, 'b>(
        &self,
        key: impl IntoArg<'a>,
        value: impl IntoArg<'b>,
    ) -> Result<()> {
        let (key, value) = (key.into_arg(), value.into_arg());
        builtin!("ferry.DictSetItem")
            .call((self.as_object(), key.as_view(), value.as_view()))
            .map(drop)
    }

    /// Removes the entry of `key`; whether there was one.
    ///
    /// # Safety
    /// As [`insert`](Dict::insert).
    pub unsafe fn remove<'a>(&self, key: impl IntoArg<'a>) -> Result<bool> {
        let erased: i64 = builtin!("ferry.DictErase")
            .call((self.as_object(), key.into_arg().as_view()))?
            .cast()?;
        Ok(erased != 0)
    }

    /// Removes every entry.
    ///
    /// # Safety
    /// As [`insert`](Dict::insert).
    pub unsafe fn clear(&self) -> Result<()> {
        builtin!("ferry.DictClear")
            .call((self.as_object(),))
            .map(drop)
    }
}
