//! `ObjectRef`: a counted reference to any Ferry object, and `ObjectType` for typed references.
//! Both are defined in the unsafe core (`raw/object.rs`: the handle, `Clone`/`Drop`, casts,
//! `set_attr`); this module holds their safe methods.
use std::fmt;

use crate::any::{Any, AnyView};
use crate::error::{c_string, Error, Result};
use crate::raw;
use ferry_sys as sys;

pub(crate) use crate::raw::object::{is_instance_of_index, type_key_of_index};
pub use crate::raw::object::{ObjectRef, ObjectType};

impl ObjectRef {
    /// The type key, e.g. `"ferry.String"`, `"demo.IntImm"`.
    pub fn type_key(&self) -> &'static str {
        type_key_of_index(self.type_index())
    }

    /// Whether both refer to the very same object.
    pub fn same_as(&self, other: &ObjectRef) -> bool {
        self.handle() == other.handle()
    }

    /// Whether the object's type is `type_key` or derives from it; false for an unknown key.
    pub fn is_instance_of(&self, type_key: &str) -> bool {
        let Some(target) = type_index_of_key(type_key) else {
            return false;
        };
        is_instance_of_index(self.type_index(), target)
    }

    /// Reads the reflected field `name`; AttributeError when there is none.
    ///
    /// The field's getter is looked up by name once per (type, name) on each thread and kept
    /// (`FerryObjectGetFieldGetter`); later reads call it directly, as the derive's
    /// `from_object` does.
    pub fn get_attr(&self, name: &str) -> Result<Any> {
        let index = self.type_index();
        let maker = self.maker();
        let (offset, getter) = match cached_getter(index, maker, name) {
            Some(found) => found,
            None => match self.find_getter(index, maker, name) {
                Some(found) => found,
                None => return self.get_attr_by_name(name),
            },
        };
        // The getter was found for this object's type and the code that makes its objects.
        let (rc, out) = raw::call_field_getter(self, offset, getter);
        Error::check(rc)?;
        Ok(out)
    }

    /// The getter of field `name` of this object's type (index `index`), found by name and
    /// kept in this thread's cache; None when there is none (no such field: the by-name read
    /// then makes the AttributeError).
    #[cold]
    #[inline(never)]
    fn find_getter(
        &self,
        index: i32,
        maker: usize,
        name: &str,
    ) -> Option<(i64, sys::FerryFieldGetter)> {
        let found = crate::types::field_getter(self, name).ok()?;
        keep_getter(index, maker, name, found);
        Some(found)
    }

    /// The field `name` read by name (`FerryObjectGetAttr`).
    #[cold]
    #[inline(never)]
    fn get_attr_by_name(&self, name: &str) -> Result<Any> {
        let (rc, out) = raw::object::get_attr_by_name(self, name);
        Error::check(rc)?;
        Ok(out)
    }

    /// A borrowed view of this reference as a value cell.
    pub fn view(&self) -> AnyView<'_> {
        AnyView::from(self)
    }
}

/// One entry of [`ObjectRef::get_attr`]'s per-thread cache: the getter of field `name` of the
/// type `index` whose objects `maker` makes ([`ObjectRef::maker`]), at `offset` from the
/// object's handle.
struct AttrGetter {
    index: i32,
    maker: usize,
    name: Box<str>,
    offset: i64,
    getter: sys::FerryFieldGetter,
}

/// How many (type, name) pairs a thread keeps; past that the oldest entry is replaced.
const ATTR_GETTERS: usize = 32;

thread_local! {
    /// The getters `get_attr` found on this thread, newest last. A type key that one library
    /// unloads and another registers again keeps its index but may change its layout (and the
    /// old getter's code is unmapped once the last object of it dies): entries are keyed by
    /// the code that makes the objects too, so such an entry is never used again.
    static GETTERS: std::cell::RefCell<Vec<AttrGetter>> = const {
        std::cell::RefCell::new(Vec::new())
    };
}

/// The kept getter of field `name` of type `index` made by `maker`, if this thread has found it.
#[inline]
fn cached_getter(index: i32, maker: usize, name: &str) -> Option<(i64, sys::FerryFieldGetter)> {
    GETTERS
        .try_with(|getters| {
            let getters = getters.try_borrow().ok()?;
            getters
                .iter()
                .rev()
                .find(|g| g.index == index && g.maker == maker && *g.name == *name)
                .map(|g| (g.offset, g.getter))
        })
        .ok()
        .flatten()
}

/// Keeps a getter found by name (nothing when the thread's cache is being torn down).
fn keep_getter(
    index: i32,
    maker: usize,
    name: &str,
    (offset, getter): (i64, sys::FerryFieldGetter),
) {
    let _ = GETTERS.try_with(|getters| {
        if let Ok(mut getters) = getters.try_borrow_mut() {
            if getters.len() == ATTR_GETTERS {
                getters.remove(0);
            }
            getters.push(AttrGetter {
                index,
                maker,
                name: name.into(),
                offset,
                getter,
            });
        }
    });
}

/// The index of a registered type key.
pub(crate) fn type_index_of_key(key: &str) -> Option<i32> {
    raw::object::type_index_of_key(&c_string(key))
}

impl fmt::Debug for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ObjectRef({} at {:p})", self.type_key(), self.handle())
    }
}
