//! `ObjectRef`: a counted reference to any Ferry object, and `ObjectType` for typed references.
use std::ffi::c_char;
use std::fmt;
use std::ptr::NonNull;

use crate::any::{reload_cell, Any, AnyView, IntoArg};
use crate::error::{c_string, str_of, with_c_str, Error, Result};
use ferry_sys as sys;

/// A strong reference to a Ferry object, made in any language.
///
/// `Clone` adds a reference and `Drop` releases one (the header's atomic count, the same one
/// C++ and Python use), so ownership is Rust's own. Objects are `Send + Sync`: the count is
/// atomic and Ferry objects are immutable unless their type says otherwise.
///
/// ```
/// let s = ferry::String::from("hello");
/// let obj: ferry::ObjectRef = s.clone().into();
/// assert_eq!(obj.type_key(), "ferry.String");
/// assert_eq!(obj.use_count(), 2);
/// assert!(obj.same_as(s.as_object()));
/// drop(s);
/// assert_eq!(obj.use_count(), 1);
/// ```
#[repr(transparent)]
pub struct ObjectRef {
    ptr: NonNull<sys::FerryObject>,
}

// SAFETY: the reference count is atomic (c_api.h) and any thread may release the last reference
// (deleters are thread-agnostic). Reads of an object are safe from many threads; the one write
// this crate offers, `set_attr`, is an `unsafe fn` whose caller excludes concurrent access.
unsafe impl Send for ObjectRef {}
// SAFETY: as above: through `&ObjectRef` safe code only reads.
unsafe impl Sync for ObjectRef {}

impl ObjectRef {
    /// Takes over one reference that the caller owns (a "new reference" of the C ABI).
    ///
    /// # Safety
    /// `handle` is a non-NULL pointer to a live object and the caller owns one reference.
    pub unsafe fn from_owned_handle(handle: sys::FerryObjectHandle) -> ObjectRef {
        ObjectRef {
            ptr: NonNull::new(handle.cast()).expect("a NULL object handle"),
        }
    }

    /// Adds a reference to a borrowed handle.
    ///
    /// # Safety
    /// `handle` is a non-NULL pointer to a live object.
    pub unsafe fn from_borrowed_handle(handle: sys::FerryObjectHandle) -> ObjectRef {
        // SAFETY: the caller guarantees a live object.
        unsafe { sys::FerryObjectIncRefInline(handle) };
        // SAFETY: we now own the reference just added.
        unsafe { ObjectRef::from_owned_handle(handle) }
    }

    /// The raw handle, still owned by `self`.
    pub fn handle(&self) -> sys::FerryObjectHandle {
        self.ptr.as_ptr().cast()
    }

    /// Gives up ownership: the caller must release the returned reference.
    pub fn into_handle(self) -> sys::FerryObjectHandle {
        let handle = self.handle();
        std::mem::forget(self);
        handle
    }

    /// The runtime type index.
    pub fn type_index(&self) -> i32 {
        // SAFETY: `self` keeps the object alive; type_index never changes.
        unsafe { (*self.ptr.as_ptr()).type_index }
    }

    /// The type key, e.g. `"ferry.String"`, `"demo.IntImm"`.
    pub fn type_key(&self) -> &'static str {
        type_key_of_index(self.type_index())
    }

    /// Whether both refer to the very same object.
    pub fn same_as(&self, other: &ObjectRef) -> bool {
        self.ptr == other.ptr
    }

    /// The number of strong references (in every language) right now.
    pub fn use_count(&self) -> u32 {
        // SAFETY: the count is an aligned u32 only ever updated atomically.
        let count = unsafe {
            std::sync::atomic::AtomicU32::from_ptr(std::ptr::addr_of_mut!(
                (*self.ptr.as_ptr()).ref_counter
            ))
        };
        count.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether the object's type is `type_key` or derives from it; false for an unknown key.
    pub fn is_instance_of(&self, type_key: &str) -> bool {
        let Some(target) = type_index_of_key(type_key) else {
            return false;
        };
        is_instance_of_index(self.type_index(), target)
    }

    /// This reference as the typed reference `T`, or a TypeError naming both type keys.
    pub fn downcast<T: ObjectType>(self) -> Result<T> {
        if T::accepts(&self) {
            // SAFETY: T is repr(transparent) over ObjectRef (ObjectType's contract).
            Ok(unsafe { std::mem::transmute_copy(&std::mem::ManuallyDrop::new(self)) })
        } else {
            Err(Error::new(
                "TypeError",
                &format!("cannot downcast {} to {}", self.type_key(), T::type_str()),
            ))
        }
    }

    /// A borrowed view of this reference as `T`, or None when it is not one.
    pub fn as_ref<T: ObjectType>(&self) -> Option<&T> {
        // SAFETY: T is repr(transparent) over ObjectRef (ObjectType's contract).
        T::accepts(self).then(|| unsafe { &*(self as *const ObjectRef as *const T) })
    }

    /// Reads the reflected field `name`; AttributeError when there is none.
    ///
    /// The field's getter is looked up by name once per (type, name) on each thread and kept
    /// (`FerryObjectGetFieldGetter`); later reads call it directly, as the derive's
    /// `from_object` does.
    pub fn get_attr(&self, name: &str) -> Result<Any> {
        let index = self.type_index();
        let (offset, getter) = match cached_getter(index, name) {
            Some(found) => found,
            None => match self.find_getter(index, name) {
                Some(found) => found,
                None => return self.get_attr_by_name(name),
            },
        };
        let mut cell = sys::FerryAny::NONE;
        // SAFETY: `offset` and `getter` were found for this object's type (type indices are
        // never reused); the field lives at handle + offset while `self` does; `cell` receives
        // an owned value (None on failure).
        let rc = unsafe {
            getter(
                (self.handle() as *const u8).offset(offset as isize).cast(),
                &mut cell,
            )
        };
        // Field by field: the getter has just written the cell (see reload_cell).
        // SAFETY: an owned cell.
        let out = unsafe { Any::from_raw(reload_cell(&cell)) };
        Error::check(rc)?;
        Ok(out)
    }

    /// The getter of field `name` of this object's type (index `index`), found by name and
    /// kept in this thread's cache; None when there is none (no such field: the by-name read
    /// then makes the AttributeError).
    #[cold]
    #[inline(never)]
    fn find_getter(&self, index: i32, name: &str) -> Option<(i64, sys::FerryFieldGetter)> {
        let found = crate::types::field_getter(self, name).ok()?;
        keep_getter(index, name, found);
        Some(found)
    }

    /// The field `name` read by name (`FerryObjectGetAttr`).
    #[cold]
    #[inline(never)]
    fn get_attr_by_name(&self, name: &str) -> Result<Any> {
        let mut cell = sys::FerryAny::NONE;
        // SAFETY: a live object and a valid name; `cell` receives an owned value (None on
        // failure).
        let rc = with_c_str(name, |name| unsafe {
            sys::FerryObjectGetAttr(self.handle(), name, &mut cell)
        });
        // SAFETY: an owned cell.
        let out = unsafe { Any::from_raw(reload_cell(&cell)) };
        Error::check(rc)?;
        Ok(out)
    }

    /// Writes the field `name` of an object whose type is mutable, converting `value` as a
    /// constructor does: AttributeError for an unknown field or a read-only type, TypeError
    /// naming the field for a value that does not convert.
    ///
    /// # Safety
    /// No other thread reads or writes the fields of this object during the call. Ferry's
    /// mutable objects (`_type_mutable` nodes, as List and Dict) do not synchronize writes in
    /// any language: a write racing a read may free the old value under the reader. Every
    /// other method of this crate only reads, which is safe from any number of threads.
    pub unsafe fn set_attr<'a>(&self, name: &str, value: impl IntoArg<'a>) -> Result<()> {
        let name = c_string(name);
        let value = value.into_arg();
        // SAFETY: a live object, a valid name and a cell borrowed for the call; the caller
        // excludes concurrent access to the fields.
        Error::check(unsafe { sys::FerryObjectSetAttr(self.handle(), name.as_ptr(), value.cell()) })
    }

    /// A borrowed view of this reference as a value cell.
    pub fn view(&self) -> AnyView<'_> {
        AnyView::from(self)
    }
}

/// One entry of [`ObjectRef::get_attr`]'s per-thread cache: the getter of field `name` of the
/// type `index`, at `offset` from the object's handle.
struct AttrGetter {
    index: i32,
    name: Box<str>,
    offset: i64,
    getter: sys::FerryFieldGetter,
}

/// How many (type, name) pairs a thread keeps; past that the oldest entry is replaced.
const ATTR_GETTERS: usize = 32;

thread_local! {
    /// The getters `get_attr` found on this thread, newest last. Type indices are never reused
    /// (an unloaded library's types keep theirs, and no object of them is left), so an entry
    /// never goes stale.
    static GETTERS: std::cell::RefCell<Vec<AttrGetter>> = const {
        std::cell::RefCell::new(Vec::new())
    };
}

/// The kept getter of field `name` of type `index`, if this thread has found it.
#[inline]
fn cached_getter(index: i32, name: &str) -> Option<(i64, sys::FerryFieldGetter)> {
    GETTERS
        .try_with(|getters| {
            let getters = getters.try_borrow().ok()?;
            getters
                .iter()
                .rev()
                .find(|g| g.index == index && *g.name == *name)
                .map(|g| (g.offset, g.getter))
        })
        .ok()
        .flatten()
}

/// Keeps a getter found by name (nothing when the thread's cache is being torn down).
fn keep_getter(index: i32, name: &str, (offset, getter): (i64, sys::FerryFieldGetter)) {
    let _ = GETTERS.try_with(|getters| {
        if let Ok(mut getters) = getters.try_borrow_mut() {
            if getters.len() == ATTR_GETTERS {
                getters.remove(0);
            }
            getters.push(AttrGetter {
                index,
                name: name.into(),
                offset,
                getter,
            });
        }
    });
}

/// The key of a type index ("<unknown>" when it has none).
pub(crate) fn type_key_of_index(index: i32) -> &'static str {
    let mut key: *const c_char = std::ptr::null();
    // SAFETY: the key, when found, lives as long as the process.
    unsafe {
        if sys::FerryTypeIndexToKey(index, &mut key) != 0 {
            drop(Error::take_raised());
            return "<unknown>";
        }
        str_of(key)
    }
}

/// The index of a registered type key.
pub(crate) fn type_index_of_key(key: &str) -> Option<i32> {
    let key = c_string(key);
    let mut index = -1;
    // SAFETY: a valid C string and out pointer.
    if unsafe { sys::FerryTypeKeyToIndex(key.as_ptr(), &mut index) } != 0 {
        drop(Error::take_raised());
        return None;
    }
    Some(index)
}

/// Whether the type `index` is `target` or derives from it.
pub(crate) fn is_instance_of_index(index: i32, target: i32) -> bool {
    if index == target || target == sys::kFerryObject {
        return true;
    }
    let mut info: *const sys::FerryTypeInfo = std::ptr::null();
    let mut target_info: *const sys::FerryTypeInfo = std::ptr::null();
    // SAFETY: type records live as long as the process; type_ancestors has type_depth entries.
    unsafe {
        if sys::FerryTypeGetInfo(index, &mut info) != 0
            || sys::FerryTypeGetInfo(target, &mut target_info) != 0
        {
            drop(Error::take_raised());
            return false;
        }
        let depth = (*target_info).type_depth;
        depth < (*info).type_depth && *(*info).type_ancestors.add(depth as usize) == target
    }
}

impl Clone for ObjectRef {
    fn clone(&self) -> ObjectRef {
        // SAFETY: `self` keeps the object alive.
        unsafe { ObjectRef::from_borrowed_handle(self.handle()) }
    }
}

impl Drop for ObjectRef {
    fn drop(&mut self) {
        // SAFETY: `self` owns one reference, released once here.
        unsafe { sys::FerryObjectDecRefInline(self.handle()) }
    }
}

impl fmt::Debug for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ObjectRef({} at {:p})", self.type_key(), self.ptr)
    }
}

/// A typed reference to objects of one Ferry type (`ferry::String`, `ferry::Array<T>`,
/// `ferry::Function`, generated node references): what [`ObjectRef::downcast`] and
/// [`ObjectRef::as_ref`] produce.
///
/// # Safety
/// The implementing type is `#[repr(transparent)]` over [`ObjectRef`] (plus zero-sized
/// markers), and `accepts` returns true only for objects every method of the type handles.
pub unsafe trait ObjectType: Sized {
    /// The type key of the objects, e.g. `"ferry.Array"`.
    const TYPE_KEY: &'static str;

    /// The name used in error messages (`"ferry.Array[int]"`).
    fn type_str() -> String {
        Self::TYPE_KEY.to_string()
    }

    /// Whether `obj` is one of these (of the type or a subtype, elements checked).
    fn accepts(obj: &ObjectRef) -> bool {
        obj.is_instance_of(Self::TYPE_KEY)
    }

    /// The untyped reference.
    fn as_object(&self) -> &ObjectRef {
        // SAFETY: repr(transparent) over ObjectRef (the trait's contract).
        unsafe { &*(self as *const Self as *const ObjectRef) }
    }
}

// SAFETY: ObjectRef is itself.
unsafe impl ObjectType for ObjectRef {
    const TYPE_KEY: &'static str = "ferry.Object";
    fn accepts(_: &ObjectRef) -> bool {
        true
    }
}

/// Declares a typed reference to a node type that C++ (or a run-time registration) defines:
/// what `tschema generate --rust` writes for each node of a schema.
///
/// `node_ref! { pub struct Add: BinaryOp = "arith.Add"; }` makes `Add`, a `#[repr(transparent)]`
/// [`ObjectType`] over [`ObjectRef`] that [`ObjectRef::downcast`] checks against the type key
/// (subtypes included), converts to and from [`Any`](crate::Any), and derefs to its parent's
/// reference (`ferry::ObjectRef` for a root), so the parent's getters apply to it.
///
/// ```
/// ferry::node_ref! {
///     /// Any object, seen as a `ferry.Object`.
///     pub struct Thing: ferry::ObjectRef = "ferry.Object";
/// }
/// let obj: ferry::ObjectRef = ferry::String::from("x").into();
/// let thing: Thing = obj.downcast()?;
/// assert_eq!(thing.type_key(), "ferry.String"); // through Deref
/// # Ok::<(), ferry::Error>(())
/// ```
#[macro_export]
macro_rules! node_ref {
    ($(#[$meta:meta])* $vis:vis struct $name:ident : $parent:ty = $key:expr;) => {
        $(#[$meta])*
        #[repr(transparent)]
        #[derive(Clone, Debug)]
        $vis struct $name($crate::ObjectRef);

        // SAFETY: repr(transparent) over ObjectRef, as ObjectType requires; `accepts` is the
        // default check of the type key, and the methods of the type read fields only through
        // checked reflection (`get_attr`), which handles any object.
        unsafe impl $crate::ObjectType for $name {
            const TYPE_KEY: &'static str = $key;
        }

        impl $name {
            /// This reference as the typed reference `T` (a subtype, usually), or a TypeError
            /// naming both type keys.
            pub fn downcast<T: $crate::ObjectType>(self) -> $crate::Result<T> {
                self.0.downcast()
            }
        }

        impl ::std::ops::Deref for $name {
            type Target = $parent;
            fn deref(&self) -> &$parent {
                self.0
                    .as_ref::<$parent>()
                    .expect("ferry::node_ref!: the parent type accepts its subtype")
            }
        }

        impl $crate::FromAny for $name {
            fn type_str() -> ::std::string::String {
                ::std::string::String::from($key)
            }
            fn from_view(view: &$crate::AnyView<'_>) -> ::std::option::Option<$name> {
                <$crate::ObjectRef as $crate::FromAny>::from_view(view)?
                    .downcast()
                    .ok()
            }
        }

        impl $crate::IntoAny for $name {
            fn into_any(self) -> $crate::Any {
                $crate::IntoAny::into_any(self.0)
            }
        }

        impl ::std::convert::From<$name> for $crate::ObjectRef {
            fn from(value: $name) -> $crate::ObjectRef {
                value.0
            }
        }

        impl ::std::convert::TryFrom<$crate::ObjectRef> for $name {
            type Error = $crate::Error;
            fn try_from(obj: $crate::ObjectRef) -> $crate::Result<$name> {
                obj.downcast()
            }
        }
    };
}
