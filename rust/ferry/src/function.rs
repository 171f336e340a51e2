//! `Function`: Ferry's callable, from C++, Python or a Rust closure.
use std::ffi::{c_char, c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::any::{
    describe_cast_failure, reload_cell, write_cell_whole, Any, AnyView, FromAny, IntoAny, IntoArgs,
};
use crate::error::{c_string, str_of, Error, Result};
use crate::object::{ObjectRef, ObjectType};
use ferry_sys as sys;

/// A Ferry function: a global registered in C++ (`FERRY_REGISTER_GLOBAL`), a Python callable,
/// or a Rust closure ([`Function::from_fn`], [`Function::from_packed`]). Calling it from any
/// language runs it; errors come back as [`Error`].
///
/// ```
/// use ferry::Function;
/// let twice = Function::from_fn(|x: i64| Ok(2 * x));
/// let r: i64 = twice.call((21i64,))?.try_into()?;
/// assert_eq!(r, 42);
/// let err = twice.call(("a",)).unwrap_err();
/// assert_eq!(err.kind(), "TypeError");
/// assert!(err.message().contains("argument 0"), "{}", err.message());
/// # Ok::<(), ferry::Error>(())
/// ```
#[repr(transparent)]
#[derive(Clone, Debug)]
pub struct Function {
    obj: ObjectRef,
}

// SAFETY: repr(transparent) over ObjectRef; accepts only ferry.Function objects.
unsafe impl ObjectType for Function {
    const TYPE_KEY: &'static str = "ferry.Function";
    fn accepts(obj: &ObjectRef) -> bool {
        obj.type_index() == sys::kFerryFunction
    }
}

/// The stack a Rust closure needs left on entry (FerryFunctionSetStackReserve): with less, C++
/// refuses the call with a RuntimeError ("maximum recursion depth exceeded"), so that a closure
/// calling itself through C++ without end becomes an error its callers see, not a stack overflow,
/// which Rust ends by aborting the process. 64 KiB covers the error's way back (C++'s throw and
/// backtrace, a panic caught in the closure and its message printed: tests/recursion.rs).
const CALLBACK_STACK_RESERVE: usize = 64 << 10;

/// The text of a panic payload.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// Drops a panic payload, whose own Drop may panic too: never unwind out of here.
fn drop_payload(payload: Box<dyn std::any::Any + Send>) {
    if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(again);
    }
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
        // Function is; the arguments are borrowed for the call.
        let (f, args) = unsafe {
            let f = &*(resource as *const F);
            let cells: &[sys::FerryAny] = if num_args <= 0 || args.is_null() {
                &[]
            } else {
                std::slice::from_raw_parts(args, num_args as usize)
            };
            (f, AnyView::slice_from_raw(cells))
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
    // SAFETY: the Box<F> made by from_packed, released once.
    let boxed = unsafe { Box::from_raw(resource as *mut F) };
    if let Err(payload) = catch_unwind(AssertUnwindSafe(move || drop(boxed))) {
        drop_payload(payload);
    }
}

impl Function {
    /// A Function over a Rust closure taking the packed arguments: called from C++, Python or
    /// Rust, it receives borrowed views. An `Err` reaches the caller as an error of its kind; a
    /// panic as a RuntimeError (it never unwinds through C).
    pub fn from_packed<F>(f: F) -> Function
    where
        F: Fn(&[AnyView<'_>]) -> Result<Any> + Send + Sync + 'static,
    {
        // The closure's Box is the resource (dangling but not NULL for a closure of size 0).
        let resource = Box::into_raw(Box::new(f)) as *mut c_void;
        let mut handle: sys::FerryObjectHandle = std::ptr::null_mut();
        // SAFETY: the trampoline matches FerryFunctionCallback; the Function owns `resource`
        // and frees it with drop_packed::<F>.
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
            // SAFETY: still ours.
            unsafe { drop_packed::<F>(resource) };
            panic!(
                "ferry: FerryFunctionCreate failed: {}",
                Error::take_raised()
            );
        }
        // SAFETY: a Function made by FerryFunctionCreate, not yet shared.
        unsafe { sys::FerryFunctionSetStackReserve(handle, CALLBACK_STACK_RESERVE) };
        Function {
            // SAFETY: a new reference.
            obj: unsafe { ObjectRef::from_owned_handle(handle) },
        }
    }

    /// A Function over a typed Rust closure, `|a: i64, s: String| -> ferry::Result<R>`, with up
    /// to 8 arguments of [`FromAny`] types and a result of an [`IntoAny`] type. Each argument
    /// is converted with an error that names its position, as C++'s typed functions do
    /// (`Mismatched type on argument 1 when calling ...: expected int but got ferry.String`),
    /// and a wrong count is a TypeError.
    pub fn from_fn<Args, F: TypedFn<Args>>(f: F) -> Function {
        f.into_function()
    }

    /// The global function `name`, or None when no function is registered under it.
    pub fn get_global(name: &str) -> Option<Function> {
        let cname = c_string(name);
        let mut handle: sys::FerryObjectHandle = std::ptr::null_mut();
        // SAFETY: a valid name; a new reference or NULL.
        if unsafe { sys::FerryFunctionGetGlobal(cname.as_ptr(), &mut handle) } != 0 {
            drop(Error::take_raised());
            return None;
        }
        (!handle.is_null()).then(|| Function {
            // SAFETY: a new reference when not NULL.
            obj: unsafe { ObjectRef::from_owned_handle(handle) },
        })
    }

    /// The global function `name`, or a KeyError naming it.
    pub fn get_global_required(name: &str) -> Result<Function> {
        Function::get_global(name).ok_or_else(|| {
            Error::new(
                "KeyError",
                &format!("no global function is registered as '{name}'"),
            )
        })
    }

    /// Registers `f` as the global `name`; a taken name is an error unless `override_`.
    pub fn register_global(name: &str, f: Function, override_: bool) -> Result<()> {
        let cname = c_string(name);
        // SAFETY: a valid name and a live Function; the registry takes its own reference.
        Error::check(unsafe {
            sys::FerryFunctionSetGlobal(cname.as_ptr(), f.obj.handle(), override_ as i32)
        })
    }

    /// Removes the global `name`; whether it existed.
    pub fn remove_global(name: &str) -> Result<bool> {
        let cname = c_string(name);
        let mut removed = 0;
        // SAFETY: a valid name and out pointer.
        Error::check(unsafe { sys::FerryFunctionRemoveGlobal(cname.as_ptr(), &mut removed) })?;
        Ok(removed != 0)
    }

    /// Every global function name, sorted.
    pub fn list_global_names() -> Result<Vec<String>> {
        let mut count = 0;
        let mut names: *const *const c_char = std::ptr::null();
        // SAFETY: the array stays valid until the next call on this thread; copied at once.
        unsafe {
            Error::check(sys::FerryFunctionListGlobalNames(&mut count, &mut names))?;
            Ok((0..count.max(0) as usize)
                .map(|i| str_of(*names.add(i)).to_string())
                .collect())
        }
    }

    /// Calls with a tuple of arguments: `f.call((1i64, "a", &obj))`.
    #[inline]
    pub fn call<'a>(&self, args: impl IntoArgs<'a>) -> Result<Any> {
        args.with_cells(|cells| self.call_raw(cells))
    }

    /// Calls with packed, borrowed arguments.
    #[inline]
    pub fn call_packed(&self, args: &[AnyView<'_>]) -> Result<Any> {
        // SAFETY: AnyView is repr(transparent) over FerryAny.
        let cells = unsafe { std::slice::from_raw_parts(args.as_ptr().cast(), args.len()) };
        self.call_raw(cells)
    }

    /// The untyped reference.
    pub fn as_object(&self) -> &ObjectRef {
        &self.obj
    }

    #[inline(always)]
    fn call_raw(&self, cells: &[sys::FerryAny]) -> Result<Any> {
        let count = i32::try_from(cells.len())
            .map_err(|_| Error::new("ValueError", "too many arguments for one call"))?;
        let mut result = sys::FerryAny::NONE;
        // SAFETY: a live Function, `count` borrowed cells, a result cell overwritten with an
        // owned value (None on failure).
        let rc = unsafe {
            sys::FerryFunctionCall(self.obj.handle(), cells.as_ptr(), count, &mut result)
        };
        // SAFETY: the result cell is owned (None after a failure, which owns nothing).
        let result = unsafe { Any::from_raw(reload_cell(&result)) };
        Error::check(rc)?;
        Ok(result)
    }
}

impl From<Function> for ObjectRef {
    fn from(f: Function) -> ObjectRef {
        f.obj
    }
}
impl IntoAny for Function {
    fn into_any(self) -> Any {
        self.obj.into_any()
    }
}
impl FromAny for Function {
    fn type_str() -> String {
        "ferry.Function".into()
    }
    fn from_view(view: &AnyView<'_>) -> Option<Function> {
        (view.type_index() == sys::kFerryFunction)
            .then(|| view.object().map(|obj| Function { obj }))
            .flatten()
    }
}
crate::any::std_conversions!(into: Function);
crate::any::std_conversions!(from: Function);

/// Calls a [`Function`] with arguments listed as in Rust: `call!(f, 1i64, "a")` is
/// `f.call((1i64, "a"))`.
#[macro_export]
macro_rules! call {
    ($f:expr $(, $arg:expr)* $(,)?) => {
        $f.call(($($arg,)*))
    };
}

/// Converts argument `index` of a typed closure, with C++'s error for a mismatch. Inlined into
/// each closure's trampoline; the error is made out of line.
#[inline(always)]
fn arg<T: FromAny>(
    args: &[AnyView<'_>],
    index: usize,
    signature: &dyn Fn() -> String,
) -> Result<T> {
    let view = &args[index];
    match T::from_view(view) {
        Some(value) => Ok(value),
        None => Err(arg_error::<T>(view, index, signature)),
    }
}

/// The error of argument `index`, which is not a `T`: TypeError, or OverflowError for an int out
/// of `T`'s range.
#[cold]
#[inline(never)]
fn arg_error<T: FromAny>(
    view: &AnyView<'_>,
    index: usize,
    signature: &dyn Fn() -> String,
) -> Error {
    let (detail, overflow) = describe_cast_failure(view.raw(), &T::type_str());
    if overflow {
        Error::new(
            "OverflowError",
            &format!("argument {index} of `{}`: {detail}", signature()),
        )
    } else {
        Error::new(
            "TypeError",
            &format!(
                "Mismatched type on argument {index} when calling `{}`: {detail}",
                signature()
            ),
        )
    }
}

/// A typed closure [`Function::from_fn`] accepts: `Fn(A0, A1, ...) -> ferry::Result<R>`.
pub trait TypedFn<Args>: Send + Sync + 'static {
    /// The Function calling it.
    fn into_function(self) -> Function;

    /// The Function calling it, its errors naming it `name` and its parameters `params` (by
    /// position when `params` does not list one name per parameter): what `#[ferry::export]`
    /// makes.
    #[doc(hidden)]
    fn into_named_function(self, name: &'static str, params: &'static [&'static str]) -> Function;
}

macro_rules! typed_fn {
    ($n:expr; $($name:ident : $index:tt),*) => {
        impl<F, R $(, $name)*> TypedFn<($($name,)*)> for F
        where
            F: Fn($($name),*) -> Result<R> + Send + Sync + 'static,
            R: IntoAny,
            $($name: FromAny,)*
        {
            fn into_function(self) -> Function {
                self.into_named_function("<rust closure>", &[])
            }

            #[allow(unused_variables, clippy::redundant_closure_call)]
            fn into_named_function(
                self,
                name: &'static str,
                params: &'static [&'static str],
            ) -> Function {
                let sig = move || -> String {
                    let types: Vec<String> = vec![$($name::type_str()),*];
                    let parts: Vec<String> = types
                        .iter()
                        .enumerate()
                        .map(|(k, t)| match params.get(k) {
                            Some(p) if params.len() == types.len() => format!("{p}: {t}"),
                            _ => format!("{k}: {t}"),
                        })
                        .collect();
                    format!("{name}({})", parts.join(", "))
                };
                Function::from_packed(move |args: &[AnyView<'_>]| {
                    if args.len() != $n {
                        return Err(Error::new(
                            "TypeError",
                            &format!(
                                "{}() takes {} argument{} but {} were given; signature `{}`",
                                name,
                                $n,
                                if $n == 1 { "" } else { "s" },
                                args.len(),
                                sig()
                            ),
                        ));
                    }
                    Ok(self($(arg::<$name>(args, $index, &sig)?),*)?.into_any())
                })
            }
        }
    };
}
typed_fn!(0;);
typed_fn!(1; A0: 0);
typed_fn!(2; A0: 0, A1: 1);
typed_fn!(3; A0: 0, A1: 1, A2: 2);
typed_fn!(4; A0: 0, A1: 1, A2: 2, A3: 3);
typed_fn!(5; A0: 0, A1: 1, A2: 2, A3: 3, A4: 4);
typed_fn!(6; A0: 0, A1: 1, A2: 2, A3: 3, A4: 4, A5: 5);
typed_fn!(7; A0: 0, A1: 1, A2: 2, A3: 3, A4: 4, A5: 5, A6: 6);
typed_fn!(8; A0: 0, A1: 1, A2: 2, A3: 3, A4: 4, A5: 5, A6: 6, A7: 7);
