//! Calls through the core: a Rust call of a Function (its argument cells, released after it, and
//! its result cell), the C entry point of a Rust closure (the trampoline C++ calls with raw
//! cells) and the global function table. The two call paths are the ones docs/benchmarks.md
//! measures: everything here is inlined into them.
use std::ffi::{c_char, c_int, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::cell::reload_cell;
use crate::any::{Any, AnyView};
use crate::error::{c_string, Error, Result};
use crate::function::{drop_payload, panic_message, Function, CALLBACK_STACK_RESERVE};
use crate::object::{ObjectRef, ObjectType};
use ferry_sys as sys;

// SAFETY: Function is repr(transparent) over ObjectRef (checked in size below; see its
// definition in function.rs); accepts only ferry.Function objects.
unsafe impl ObjectType for Function {
    const TYPE_KEY: &'static str = "ferry.Function";
    fn accepts(obj: &ObjectRef) -> bool {
        obj.type_index() == sys::kFerryFunction
    }
}
const _: () = assert!(std::mem::size_of::<Function>() == std::mem::size_of::<ObjectRef>());

// ---- a Rust call of a Function ---------------------------------------------------------------

/// One argument of a call as [`IntoArg::into_cell`](crate::IntoArg::into_cell) makes it: a
/// value made for the call (owned: released after it) or one borrowed for `'a`. Only these two
/// constructors make one, so the release after the call is always of a reference the call owns.
///
/// Safe code cannot hand a call a cell of its own making, which FerryFunctionCall would trust
/// (an object pointer it made up, or a borrowed object marked owned and released after the
/// call), as the public traits once allowed:
///
/// ```compile_fail,E0053
/// use ferry::{sys, Arg, Function, IntoArg};
/// struct Forged;
/// impl<'a> IntoArg<'a> for Forged {
///     const OWNED: bool = true;
///     fn into_arg(self) -> Arg<'a> {
///         Arg::Owned(ferry::Any::none())
///     }
///     fn into_cell(self) -> sys::FerryAny {
///         sys::FerryAny {
///             type_index: sys::kFerryStaticObjectBegin,
///             small_len: 0,
///             value: sys::FerryAnyValue { v_int64: 16 },
///         }
///     }
/// }
/// let f = Function::from_fn(|_x: ferry::Any| Ok(()));
/// let _ = f.call((Forged,));
/// ```
///
/// ```compile_fail,E0053
/// use ferry::{sys, Function, IntoArgs};
/// struct Forged;
/// impl<'a> IntoArgs<'a> for Forged {
///     fn with_cells<R>(self, f: impl FnOnce(&[sys::FerryAny]) -> R) -> R {
///         let cell = sys::FerryAny {
///             type_index: sys::kFerryStaticObjectBegin,
///             small_len: 0,
///             value: sys::FerryAnyValue { v_int64: 16 },
///         };
///         f(&[cell])
///     }
/// }
/// let f = Function::from_fn(|_x: ferry::Any| Ok(()));
/// let _ = f.call(Forged);
/// ```
#[doc(hidden)]
pub struct ArgCell<'a> {
    view: AnyView<'a>,
    owned: bool,
}

impl<'a> ArgCell<'a> {
    /// A value made for the call; its object reference is released after it (or leaked, if
    /// the cell never reaches a call).
    #[inline(always)]
    pub fn owned(value: Any) -> ArgCell<'a> {
        ArgCell {
            // SAFETY: the reference `value` owned now belongs to this cell and is released only
            // after the call that the view is lent to (ReleaseAfterCall), or never: the object
            // outlives every use of the view.
            view: unsafe { AnyView::from_raw(value.into_raw()) },
            owned: true,
        }
    }

    /// A value borrowed for `'a`.
    #[inline(always)]
    pub fn borrowed(view: AnyView<'a>) -> ArgCell<'a> {
        ArgCell { view, owned: false }
    }
}

/// Releases the owned objects among a call's argument cells when dropped, after the call or on
/// a panic. Decided before the call from the values just made and kept apart from the cells
/// (whose address the callee gets): for ints, floats and views every slot is a constant None
/// and the release code vanishes.
struct ReleaseAfterCall<const N: usize>([Option<sys::FerryObjectHandle>; N]);

impl<const N: usize> Drop for ReleaseAfterCall<N> {
    #[inline(always)]
    fn drop(&mut self) {
        for obj in self.0.iter().flatten() {
            // SAFETY: an owned argument cell (ArgCell::owned) held one reference to it, not
            // released before.
            unsafe { sys::FerryObjectDecRefInline(*obj) }
        }
    }
}

/// Calls `f` with the views of `args` (their cells, in order, as C receives them), then
/// releases the values made for the call, also when `f` panics.
#[inline(always)]
pub(crate) fn with_arg_cells<const N: usize, R>(
    args: [ArgCell<'_>; N],
    f: impl FnOnce(&[AnyView<'_>]) -> R,
) -> R {
    let mut release = [None; N];
    for (slot, arg) in release.iter_mut().zip(&args) {
        if arg.owned {
            *slot = arg.view.object_handle();
        }
    }
    let _release = ReleaseAfterCall(release);
    let views = args.map(|arg| arg.view);
    f(&views)
}

/// FerryFunctionCall of `func` with `args` (borrowed for the call): the owned result, or the
/// error raised.
#[inline(always)]
pub(crate) fn function_call(func: &Function, args: &[AnyView<'_>]) -> Result<Any> {
    let count = i32::try_from(args.len())
        .map_err(|_| Error::new("ValueError", "too many arguments for one call"))?;
    let mut result = sys::FerryAny::NONE;
    // SAFETY: a live Function; `count` valid cells (AnyView is repr(transparent) over
    // FerryAny), borrowed for the call; a result cell overwritten with an owned value (None on
    // failure).
    let rc = unsafe {
        sys::FerryFunctionCall(
            func.as_object().handle(),
            args.as_ptr().cast(),
            count,
            &mut result,
        )
    };
    // Field by field: the callee has just written the cell (see reload_cell).
    // SAFETY: the result cell is owned (None after a failure, which owns nothing).
    let result = unsafe { Any::from_raw(reload_cell(&result)) };
    Error::check(rc)?;
    Ok(result)
}

// ---- a Rust closure called from C ------------------------------------------------------------

/// Writes `cell` to `dst` as one 16-byte store, for a reader that will load it whole. C++ copies
/// a Rust closure's result cell with one 16-byte load (libferry's callback entry); a load takes
/// its data from the store buffer only if one earlier store covers it, so a cell written as two
/// 8-byte stores (what the compiler makes of a cell in registers) would stall it until those
/// stores reach the cache. x86-64 always has SSE2; elsewhere it is a plain write.
///
/// # Safety
/// `dst` is valid for a write of a cell (any alignment).
#[inline(always)]
unsafe fn write_cell_whole(dst: *mut sys::FerryAny, cell: sys::FerryAny) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_set_epi64x, _mm_storeu_si128};
        let head = (cell.type_index as u32 as u64 | (cell.small_len as u64) << 32) as i64;
        // SAFETY: every member of the value union is 8 bytes of plain data.
        let value = unsafe { cell.value.v_int64 };
        // SAFETY: SSE2 is part of x86-64; `dst` is valid for 16 bytes (the caller's contract).
        unsafe { _mm_storeu_si128(dst.cast(), _mm_set_epi64x(value, head)) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: the caller's contract.
    unsafe {
        dst.write_unaligned(cell)
    };
}

/// The C entry point of a Rust closure of type `F` (one per closure type, so that the closure
/// is called directly and inlined here, its result never moved through memory): runs it, turns
/// an `Err` into the raised error and a panic into a RuntimeError. Nothing unwinds into C.
unsafe extern "C" fn call_packed_trampoline<F>(
    resource: *mut c_void,
    args: *const sys::FerryAny,
    num_args: i32,
    result: *mut sys::FerryAny,
) -> c_int
where
    F: Fn(&[AnyView<'_>]) -> Result<Any> + Send + Sync + 'static,
{
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `resource` is the Box<F> this Function was made with, alive while the
        // Function is; the arguments are valid cells borrowed for the call, and AnyView is
        // repr(transparent) over FerryAny.
        let (f, args) = unsafe {
            let f = &*(resource as *const F);
            let args: &[AnyView<'_>] = if num_args <= 0 || args.is_null() {
                &[]
            } else {
                std::slice::from_raw_parts(args.cast(), num_args as usize)
            };
            (f, args)
        };
        match f(args) {
            Ok(value) => {
                // SAFETY: the result cell arrives holding None; it now owns the value.
                unsafe { write_cell_whole(result, value.into_raw()) };
                0
            }
            Err(err) => {
                err.raise();
                -1
            }
        }
    }));
    match outcome {
        Ok(rc) => rc,
        Err(payload) => {
            let message = c_string(&format!(
                "a Rust function panicked: {}",
                panic_message(payload.as_ref())
            ));
            drop_payload(payload);
            // SAFETY: valid C strings; the error is copied.
            unsafe { sys::FerryErrorSetRaisedFromCStr(c"RuntimeError".as_ptr(), message.as_ptr()) };
            -1
        }
    }
}

/// Frees the closure of type `F` when its Function dies (a panic in its Drop is swallowed: it
/// must not unwind into C).
unsafe extern "C" fn drop_packed<F>(resource: *mut c_void) {
    // SAFETY: the Box<F> made by function_from_packed, released once.
    let boxed = unsafe { Box::from_raw(resource as *mut F) };
    if let Err(payload) = catch_unwind(AssertUnwindSafe(move || drop(boxed))) {
        drop_payload(payload);
    }
}

/// FerryFunctionCreate over the closure `f` (its trampoline, its drop), with
/// [`CALLBACK_STACK_RESERVE`]: the new Function object. Panics only when allocation fails.
pub(crate) fn function_from_packed<F>(f: F) -> ObjectRef
where
    F: Fn(&[AnyView<'_>]) -> Result<Any> + Send + Sync + 'static,
{
    // The closure's Box is the resource (dangling but not NULL for a closure of size 0).
    let resource = Box::into_raw(Box::new(f)) as *mut c_void;
    let mut handle: sys::FerryObjectHandle = std::ptr::null_mut();
    // SAFETY: the trampoline matches FerryFunctionCallback; the Function owns `resource` and
    // frees it with drop_packed::<F>.
    let rc = unsafe {
        sys::FerryFunctionCreate(
            resource,
            call_packed_trampoline::<F>,
            Some(drop_packed::<F>),
            &mut handle,
        )
    };
    if rc != 0 {
        // Only allocation can fail here; the resource was not taken.
        // SAFETY: still ours, freed once.
        unsafe { drop_packed::<F>(resource) };
        panic!(
            "ferry: FerryFunctionCreate failed: {}",
            Error::take_raised()
        );
    }
    // SAFETY: a Function made by FerryFunctionCreate, not yet shared; it cannot fail then.
    unsafe { sys::FerryFunctionSetStackReserve(handle, CALLBACK_STACK_RESERVE) };
    // SAFETY: a new reference.
    unsafe { ObjectRef::from_owned_handle(handle) }
}

// ---- global functions ------------------------------------------------------------------------

/// FerryFunctionGetGlobal: the global `name` (a new reference), or None when no function is
/// registered under it (or the lookup failed; its error is dropped).
pub(crate) fn function_get_global(name: &CStr) -> Option<ObjectRef> {
    let mut handle: sys::FerryObjectHandle = std::ptr::null_mut();
    // SAFETY: a valid name; a new reference or NULL.
    if unsafe { sys::FerryFunctionGetGlobal(name.as_ptr(), &mut handle) } != 0 {
        drop(Error::take_raised());
        return None;
    }
    // SAFETY: a new reference when not NULL.
    (!handle.is_null()).then(|| unsafe { ObjectRef::from_owned_handle(handle) })
}

/// FerryFunctionSetGlobal: registers `func` as `name`.
pub(crate) fn function_set_global(name: &CStr, func: &Function, override_: bool) -> Result<()> {
    // SAFETY: a valid name and a live Function; the registry takes its own reference.
    Error::check(unsafe {
        sys::FerryFunctionSetGlobal(name.as_ptr(), func.as_object().handle(), override_ as i32)
    })
}

/// FerryFunctionRemoveGlobal: whether `name` was registered.
pub(crate) fn function_remove_global(name: &CStr) -> Result<bool> {
    let mut removed = 0;
    // SAFETY: a valid name and out pointer.
    Error::check(unsafe { sys::FerryFunctionRemoveGlobal(name.as_ptr(), &mut removed) })?;
    Ok(removed != 0)
}

/// FerryFunctionListGlobalNames: every global name, copied (bytes that are not UTF-8 as
/// U+FFFD: a name is never cut short).
pub(crate) fn function_list_global_names() -> Result<Vec<String>> {
    let mut count = 0;
    let mut names: *const *const c_char = std::ptr::null();
    // SAFETY: out pointers.
    Error::check(unsafe { sys::FerryFunctionListGlobalNames(&mut count, &mut names) })?;
    // SAFETY: `count` C strings at `names`, valid until the next call on this thread; copied at
    // once.
    Ok((0..count.max(0) as usize)
        .map(|i| String::from_utf8_lossy(unsafe { super::bytes_of(*names.add(i)) }).into_owned())
        .collect())
}
