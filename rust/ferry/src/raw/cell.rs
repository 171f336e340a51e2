//! The value cells of the core: [`Any`] and [`AnyView`] are defined here, with every read of a
//! member of their `FerryAny` and every reference count they change. A cell's `type_index`
//! says which member of its value is set (`v_int64` for ints and bools, `v_float64` for floats,
//! `v_bytes` for small strings, `v_ptr` for objects); the constructors here are the only ones
//! outside `unsafe fn`s, so an `Any` always owns what it holds and an `AnyView<'a>` always
//! points at what lives for `'a`. any.rs builds the conversions on these safe accessors.
use std::marker::PhantomData;

use crate::object::ObjectRef;
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
///
/// So a view cannot outlive its value, nor an element view or an iterator its Array:
///
/// ```compile_fail,E0597
/// let view = {
///     let any = ferry::Any::from("a string long enough to be an object");
///     any.view()
/// };
/// let _ = view.type_key();
/// ```
///
/// ```compile_fail,E0597
/// let view = {
///     let a = ferry::Array::from(vec![1i64, 2]);
///     a.get_view(0).unwrap()
/// };
/// let _ = view.is_none();
/// ```
///
/// ```compile_fail,E0597
/// let iter = {
///     let a = ferry::Array::from(vec![1i64, 2]);
///     a.iter()
/// };
/// let _ = iter.count();
/// ```
///
/// a closure cannot keep the views it is called with past the call (it keeps
/// [`to_owned`](AnyView::to_owned) copies),
///
/// ```compile_fail,E0521
/// use ferry::{Any, AnyView, Function};
/// thread_local! {
///     static KEPT: std::cell::RefCell<Vec<AnyView<'static>>> = Default::default();
/// }
/// let _f = Function::from_packed(|args| {
///     KEPT.with(|kept| kept.borrow_mut().push(args[0]));
///     Ok(Any::none())
/// });
/// ```
///
/// and a view does not go to another thread (what it borrows may be a C string or `DLTensor`
/// of this thread's call):
///
/// ```compile_fail,E0277
/// let any = ferry::Any::from(1i64);
/// let view = any.view();
/// std::thread::spawn(move || view.is_none()).join().unwrap();
/// ```
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct AnyView<'a> {
    cell: sys::FerryAny,
    _borrow: PhantomData<&'a ()>,
}

// SAFETY: a cell is plain data or a counted reference to an object, and objects are thread-safe
// (their counts atomic; the unsafe-by-contract writes say so at their `unsafe fn`).
unsafe impl Send for Any {}
// SAFETY: as above; `&Any` only reads the cell.
unsafe impl Sync for Any {}

/// Whether a type index is an object's (the cell's `v_ptr` is then an object).
#[inline]
pub(crate) fn is_object_index(index: i32) -> bool {
    index >= sys::kFerryStaticObjectBegin
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
    // SAFETY: three reads of valid, aligned fields of a live cell (a reference).
    unsafe {
        sys::FerryAny {
            type_index: std::ptr::read_volatile(&cell.type_index),
            small_len: std::ptr::read_volatile(&cell.small_len),
            value: std::ptr::read_volatile(&cell.value),
        }
    }
}

/// A cell of plain data: `type_index` with an 8-byte value.
#[inline(always)]
fn plain(type_index: i32, value: sys::FerryAnyValue) -> sys::FerryAny {
    sys::FerryAny {
        type_index,
        small_len: 0,
        value,
    }
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
    #[inline]
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
    #[inline]
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

    /// An int.
    #[inline]
    pub(crate) fn from_int(value: i64) -> Any {
        Any {
            cell: plain(sys::kFerryInt, sys::FerryAnyValue { v_int64: value }),
        }
    }

    /// A bool.
    #[inline]
    pub(crate) fn from_bool(value: bool) -> Any {
        Any {
            cell: plain(
                sys::kFerryBool,
                sys::FerryAnyValue {
                    v_int64: value as i64,
                },
            ),
        }
    }

    /// A float.
    #[inline]
    pub(crate) fn from_float(value: f64) -> Any {
        Any {
            cell: plain(sys::kFerryFloat, sys::FerryAnyValue { v_float64: value }),
        }
    }

    /// A string of fewer than 8 bytes, held in the cell itself; None for a longer one.
    pub(crate) fn from_small_str(bytes: &[u8]) -> Option<Any> {
        if bytes.len() >= 8 {
            return None;
        }
        let mut v_bytes = [0 as std::ffi::c_char; 8];
        for (dst, src) in v_bytes.iter_mut().zip(bytes) {
            *dst = *src as std::ffi::c_char;
        }
        Some(Any {
            cell: sys::FerryAny {
                type_index: sys::kFerrySmallStr,
                small_len: bytes.len() as u32,
                value: sys::FerryAnyValue { v_bytes },
            },
        })
    }

    /// Holds `obj` (taking its reference).
    #[inline]
    pub(crate) fn from_object(obj: ObjectRef) -> Any {
        let index = obj.type_index();
        Any {
            cell: plain(
                index,
                sys::FerryAnyValue {
                    v_ptr: obj.into_handle(),
                },
            ),
        }
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

impl<'a> AnyView<'a> {
    /// Views a cell borrowed for `'a`.
    ///
    /// # Safety
    /// The cell (and what it points at) stays valid for `'a`.
    #[inline]
    pub unsafe fn from_raw(cell: sys::FerryAny) -> AnyView<'a> {
        AnyView {
            cell,
            _borrow: PhantomData,
        }
    }

    /// The raw cell.
    #[inline]
    pub fn raw(&self) -> &sys::FerryAny {
        &self.cell
    }

    /// A view of `obj`, borrowed from it.
    #[inline]
    pub(crate) fn of_object(obj: &'a ObjectRef) -> AnyView<'a> {
        AnyView {
            cell: plain(
                obj.type_index(),
                sys::FerryAnyValue {
                    v_ptr: obj.handle(),
                },
            ),
            _borrow: PhantomData,
        }
    }

    /// The value of an int or a bool cell (a bool as 0 or 1); None for any other.
    #[inline]
    pub(crate) fn int(&self) -> Option<i64> {
        match self.cell.type_index {
            // SAFETY: int and bool cells hold v_int64.
            sys::kFerryInt | sys::kFerryBool => Some(unsafe { self.cell.value.v_int64 }),
            _ => None,
        }
    }

    /// The value of a float cell; None for any other.
    #[inline]
    pub(crate) fn float(&self) -> Option<f64> {
        match self.cell.type_index {
            // SAFETY: a float cell holds v_float64.
            sys::kFerryFloat => Some(unsafe { self.cell.value.v_float64 }),
            _ => None,
        }
    }

    /// The object of an object cell, borrowed (its handle); None for any other.
    #[inline]
    pub(crate) fn object_handle(&self) -> Option<sys::FerryObjectHandle> {
        if is_object_index(self.cell.type_index) {
            // SAFETY: an object cell holds v_ptr.
            Some(unsafe { self.cell.value.v_ptr })
        } else {
            None
        }
    }

    /// The bytes of a string value that lives for `'a` (a borrowed C string or a ferry.String
    /// object); None for a small string (its bytes live in the view's own copy of the cell:
    /// see [`string_bytes`](Self::string_bytes)) and anything else.
    pub(crate) fn str_bytes(&self) -> Option<&'a [u8]> {
        let cell = &self.cell;
        // SAFETY: each branch reads the member its type index says is set; borrowed strings
        // and objects live for 'a, a ferry.String's bytes as long as it does.
        unsafe {
            match cell.type_index {
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

    /// The string value, copied: for any string cell, small ones included.
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
    #[inline]
    pub(crate) fn object(&self) -> Option<ObjectRef> {
        // SAFETY: an object cell's v_ptr is a live object for 'a.
        self.object_handle()
            .map(|handle| unsafe { ObjectRef::from_borrowed_handle(handle) })
    }
}
