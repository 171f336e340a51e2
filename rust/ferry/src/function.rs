//! `Function`: Ferry's callable, from C++, Python or a Rust closure.
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::any::{describe_cast_failure, Any, AnyView, FromAny, IntoAny, IntoArgs};
use crate::error::{c_name, Error, Result};
use crate::object::ObjectRef;
use crate::raw::call as raw;
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
// repr(transparent): the core's `unsafe impl ObjectType` (raw/call.rs) relies on it.
#[repr(transparent)]
#[derive(Clone, Debug)]
pub struct Function {
    obj: ObjectRef,
}

/// The stack a Rust closure needs left on entry (FerryFunctionSetStackReserve): with less, C++
/// refuses the call with a RuntimeError ("maximum recursion depth exceeded"), so that a closure
/// calling itself through C++ without end becomes an error its callers see, not a stack overflow,
/// which Rust ends by aborting the process. 64 KiB covers the error's way back (C++'s throw and
/// backtrace, a panic caught in the closure and its message printed: tests/recursion.rs).
pub(crate) const CALLBACK_STACK_RESERVE: usize = 64 << 10;

/// The text of a panic payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// Drops a panic payload, whose own Drop may panic too: never unwind out of here.
pub(crate) fn drop_payload(payload: Box<dyn std::any::Any + Send>) {
    if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(again);
    }
}

impl Function {
    /// A Function over a Rust closure taking the packed arguments: called from C++, Python or
    /// Rust, it receives borrowed views. An `Err` reaches the caller as an error of its kind; a
    /// panic as a RuntimeError (it never unwinds through C). A call that would enter it with
    /// less than 64 KiB of the thread's stack left (a closure calling itself without end) is
    /// refused with a RuntimeError, "maximum recursion depth exceeded".
    pub fn from_packed<F>(f: F) -> Function
    where
        F: Fn(&[AnyView<'_>]) -> Result<Any> + Send + Sync + 'static,
    {
        Function {
            obj: raw::function_from_packed(f),
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

    /// The global function `name`, or None when no function is registered under it (none
    /// ever is under a name with a NUL byte).
    pub fn get_global(name: &str) -> Option<Function> {
        let name = c_name("the global name", name).ok()?;
        raw::function_get_global(&name).map(|obj| Function { obj })
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

    /// Registers `f` as the global `name`; a taken name is an error unless `override_`, and
    /// so is a name with a NUL byte (ValueError).
    pub fn register_global(name: &str, f: Function, override_: bool) -> Result<()> {
        raw::function_set_global(&c_name("the global name", name)?, &f, override_)
    }

    /// Removes the global `name`; whether it existed (ValueError for a name with a NUL byte).
    pub fn remove_global(name: &str) -> Result<bool> {
        raw::function_remove_global(&c_name("the global name", name)?)
    }

    /// Every global function name, sorted.
    pub fn list_global_names() -> Result<Vec<String>> {
        raw::function_list_global_names()
    }

    /// Calls with a tuple of arguments: `f.call((1i64, "a", &obj))`.
    #[inline]
    pub fn call<'a>(&self, args: impl IntoArgs<'a>) -> Result<Any> {
        args.with_cells(|args| raw::function_call(self, args))
    }

    /// Calls with packed, borrowed arguments.
    #[inline]
    pub fn call_packed(&self, args: &[AnyView<'_>]) -> Result<Any> {
        raw::function_call(self, args)
    }

    /// The untyped reference.
    pub fn as_object(&self) -> &ObjectRef {
        &self.obj
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
    let (detail, overflow) = describe_cast_failure(view, &T::type_str());
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
