//! The core of `ObjectRef`: the handle it owns (its type, `Clone`/`Drop` as IncRef/DecRef,
//! `Send + Sync`), the casts to typed references that `ObjectType`'s contract makes sound, the
//! unsafe `set_attr`, and the C calls of type lookups and reads by name. The rest of
//! `ObjectRef` (keys, instance checks, cached field reads) is safe code in `object.rs`.
use std::ffi::{c_char, c_int, CStr};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::any::{reload_cell, Any, IntoArg};
use crate::error::{c_string, with_c_str, Error, Result};
use ferry_sys as sys;

use super::str_of;

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
    /// A live object of which this value owns one reference (the invariant every unsafe block
    /// of the crate that takes an `&ObjectRef` relies on).
    ptr: NonNull<sys::FerryObject>,
}

// SAFETY: the reference count is atomic (c_api.h) and any thread may release the last reference
// (deleters are thread-agnostic). Reads of an object are safe from many threads; the writes this
// crate offers on shared objects (`set_attr`, List and Dict writes, `as_mut_slice_unchecked`)
// are `unsafe fn`s whose callers exclude concurrent access.
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

    /// The address of the object's deleter: the code that made it (a C++ library's, or
    /// libferry's for the types registered at run time). With the type index it names the
    /// layout the object has: a type key that a library unloads and another registers again
    /// keeps its index, but the objects of the new registration come from the new code.
    #[inline]
    pub(crate) fn maker(&self) -> usize {
        // SAFETY: `self` keeps the object alive; the header's deleter never changes.
        unsafe { (*self.ptr.as_ptr()).deleter }.map_or(0, |d| d as usize)
    }

    /// The number of strong references (in every language) right now.
    pub fn use_count(&self) -> u32 {
        self.counter().load(Ordering::Relaxed)
    }

    /// Whether `self` is the only strong reference, in any language (the count is 1). Then no
    /// other thread can reach the object: every way to it (another reference, a field of
    /// another object, a borrowed view) holds or borrows a counted reference. The load
    /// acquires, so that what other holders did before releasing theirs happens before what
    /// the caller does next (as `Arc::get_mut`).
    pub(crate) fn is_unique(&self) -> bool {
        self.counter().load(Ordering::Acquire) == 1
    }

    /// The header's reference count.
    fn counter(&self) -> &AtomicU32 {
        // SAFETY: the count is an aligned u32 that lives as long as the object (at least the
        // borrow of `self`) and is only ever updated atomically.
        unsafe { AtomicU32::from_ptr(std::ptr::addr_of_mut!((*self.ptr.as_ptr()).ref_counter)) }
    }

    /// This reference as the typed reference `T`, or a TypeError naming both type keys.
    pub fn downcast<T: ObjectType>(self) -> Result<T> {
        if T::accepts(&self) {
            // SAFETY: T is repr(transparent) over ObjectRef (ObjectType's contract) and accepts
            // this object (checked); the reference moves into the result.
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
        // SAFETY: T is repr(transparent) over ObjectRef (ObjectType's contract) and accepts
        // this object (checked).
        T::accepts(self).then(|| unsafe { &*(self as *const ObjectRef as *const T) })
    }

    /// Writes the field `name` of an object whose type is mutable, converting `value` as a
    /// constructor does: AttributeError for an unknown field or a read-only type, TypeError
    /// naming the field for a value that does not convert.
    ///
    /// # Safety
    /// No other thread reads the fields of this object during the call. Ferry's mutable objects
    /// (`_type_mutable` nodes) order a write only against other writes of the field, in every
    /// language: a write racing a read may free the old value under the reader, and this
    /// crate's reads (`get_attr`, derived `from_object`) take no lock. Every other method of
    /// this crate only reads, which is safe from any number of threads.
    pub unsafe fn set_attr<'a>(&self, name: &str, value: impl IntoArg<'a>) -> Result<()> {
        let name = c_string(name);
        let value = value.into_arg();
        // SAFETY: a live object, a valid name and a cell borrowed for the call; the caller
        // excludes concurrent reads of the fields.
        Error::check(unsafe { sys::FerryObjectSetAttr(self.handle(), name.as_ptr(), value.cell()) })
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

/// FerryObjectGetAttr: the field `name` of `obj` read by name; the status and the owned value
/// (None on failure).
pub(crate) fn get_attr_by_name(obj: &ObjectRef, name: &str) -> (c_int, Any) {
    let mut cell = sys::FerryAny::NONE;
    // SAFETY: a live object and a C string that lives for the call; `cell` receives an owned
    // value (None on failure).
    let rc = with_c_str(name, |name| unsafe {
        sys::FerryObjectGetAttr(obj.handle(), name, &mut cell)
    });
    // Field by field: the call has just written the cell (see reload_cell).
    // SAFETY: an owned cell.
    (rc, unsafe { Any::from_raw(reload_cell(&cell)) })
}

/// The key of a type index (`"<unknown>"` when it has none).
pub(crate) fn type_key_of_index(index: i32) -> &'static str {
    let mut key: *const c_char = std::ptr::null();
    // SAFETY: an out pointer; the key, when found, lives as long as the process.
    if unsafe { sys::FerryTypeIndexToKey(index, &mut key) } != 0 {
        drop(Error::take_raised());
        return "<unknown>";
    }
    // SAFETY: found (above): a NUL-terminated key that lives as long as the process.
    unsafe { str_of(key) }
}

/// The index of a registered type key.
pub(crate) fn type_index_of_key(key: &CStr) -> Option<i32> {
    let mut index = -1;
    // SAFETY: a valid C string and out pointer.
    if unsafe { sys::FerryTypeKeyToIndex(key.as_ptr(), &mut index) } != 0 {
        drop(Error::take_raised());
        return None;
    }
    Some(index)
}

/// The type record of `index`, which lives as long as the process; None for an unknown index.
fn type_info(index: i32) -> Option<&'static sys::FerryTypeInfo> {
    let mut info: *const sys::FerryTypeInfo = std::ptr::null();
    // SAFETY: an out pointer; type records live as long as the process.
    if unsafe { sys::FerryTypeGetInfo(index, &mut info) } != 0 || info.is_null() {
        drop(Error::take_raised());
        return None;
    }
    // SAFETY: a record FerryTypeGetInfo returned: valid and never freed.
    Some(unsafe { &*info })
}

/// Whether the type `index` is `target` or derives from it.
pub(crate) fn is_instance_of_index(index: i32, target: i32) -> bool {
    if index == target || target == sys::kFerryObject {
        return true;
    }
    let (Some(info), Some(target_info)) = (type_info(index), type_info(target)) else {
        return false;
    };
    let depth = target_info.type_depth;
    // SAFETY: type_ancestors has type_depth entries (c_api.h), and depth < type_depth.
    depth >= 0
        && depth < info.type_depth
        && unsafe { *info.type_ancestors.add(depth as usize) } == target
}

/// Declares a typed reference to a node type that C++ (or a run-time registration) defines:
/// what `tschema generate --rust` writes for each node of a schema.
///
/// `node_ref! { pub struct Add: BinaryOp = "arith.Add"; }` makes `Add`, a `#[repr(transparent)]`
/// [`ObjectType`] over [`ObjectRef`] that [`ObjectRef::downcast`] checks against the type key
/// (subtypes included), converts to and from [`Any`], and derefs to its parent's
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
