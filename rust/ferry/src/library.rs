//! Libraries written in Rust: `ferry::register_global!` registers globals when the library is
//! loaded (`ferry.load_library` from Python, `FerryLibraryLoad`, C++ `LoadLibrary`).

/// Registers global functions when the library (or program) holding this line is loaded, as
/// C++'s `FERRY_REGISTER_GLOBAL` does: a Rust `cdylib` with these lines is a library that
/// `ferry.load_library` loads from Python.
///
/// ```
/// ferry::register_global! {
///     "doc.add" => |a: i64, b: i64| Ok(a + b),
///     "doc.greet" => |name: String| Ok(format!("hello, {name}")),
/// }
///
/// fn main() -> ferry::Result<()> {
///     // Registered before main, like a loaded library's globals.
///     let add = ferry::Function::get_global_required("doc.add")?;
///     assert_eq!(add.call((1i64, 2i64))?.cast::<i64>()?, 3);
///     Ok(())
/// }
/// ```
///
/// Each entry is a name and a typed closure, as for [`Function::from_fn`](crate::Function).
/// The registrations run from the library's initializer (ELF `.init_array`), before `dlopen`
/// returns. A name already taken is not replaced: the registration is skipped and reported on
/// standard error with the error (an initializer has no caller to return it to), and so is a
/// panic while registering; neither unwinds into the loader.
#[macro_export]
macro_rules! register_global {
    ($($name:literal => $f:expr),* $(,)?) => {
        const _: () = {
            extern "C" fn __ferry_register_globals() {
                $crate::__private::run_initializer(|| {
                    $( $crate::__private::register($name, $crate::Function::from_fn($f)); )*
                });
            }
            #[used]
            #[link_section = ".init_array"]
            static __FERRY_REGISTER_GLOBALS: extern "C" fn() = __ferry_register_globals;
        };
    };
}

/// Runs `body` (a `ferry::Result<()>` block) when the library (or program) holding this line
/// is loaded, before `dlopen` returns: where a Rust library registers its types
/// (`ferry::register_type::<T>()?`) so that Python sees them as soon as it loads the library.
/// An `Err` or a panic is reported on standard error, never unwound into the loader.
///
/// ```
/// #[derive(ferry::Object, Clone)]
/// #[ferry(type_key = "doc.Loaded")]
/// struct Loaded {
///     n: i64,
/// }
///
/// ferry::on_load! {
///     ferry::register_type::<Loaded>()?;
/// }
///
/// fn main() -> ferry::Result<()> {
///     let made = ferry::make_node("doc.Loaded", &[("n", 1i64.into())])?;
///     assert_eq!(made.type_key(), "doc.Loaded");
///     Ok(())
/// }
/// ```
#[macro_export]
macro_rules! on_load {
    ($($body:tt)*) => {
        const _: () = {
            extern "C" fn __ferry_on_load() {
                $crate::__private::run_initializer(|| {
                    let result: $crate::Result<()> = (|| {
                        $($body)*
                        ::core::result::Result::Ok(())
                    })();
                    if let ::core::result::Result::Err(err) = result {
                        $crate::__private::report_load_error(&err);
                    }
                });
            }
            #[used]
            #[link_section = ".init_array"]
            static __FERRY_ON_LOAD: extern "C" fn() = __ferry_on_load;
        };
    };
}

#[doc(hidden)]
pub mod __private {
    use crate::Function;

    /// Runs a library initializer's body; a panic is reported, never unwound into the loader.
    pub fn run_initializer(body: impl FnOnce()) {
        if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            eprintln!("ferry::register_global!: a registration panicked: {message}");
            std::mem::forget(payload);
        }
    }

    /// Reports the `Err` of an `on_load!` block.
    pub fn report_load_error(err: &crate::Error) {
        eprintln!("ferry::on_load!: {err}");
    }

    /// The Function of an exported fn (`#[ferry::export]`): its errors name `name` and the
    /// parameters.
    ///
    /// What `#[ferry::export]` refuses at compile time, each with a message naming it: a
    /// generic function,
    ///
    /// ```compile_fail
    /// #[ferry::export]
    /// fn generic<T: ferry::FromAny>(x: T) -> i64 { 0 }
    /// ```
    ///
    /// an `async` or `unsafe` one,
    ///
    /// ```compile_fail
    /// #[ferry::export]
    /// unsafe fn raw(x: i64) -> i64 { x }
    /// ```
    ///
    /// a name that is not a plain string, or another option,
    ///
    /// ```compile_fail
    /// #[ferry::export(name = 7)]
    /// fn seven(x: i64) -> i64 { x }
    /// ```
    ///
    /// ```compile_fail
    /// #[ferry::export(alias = "x")]
    /// fn aliased(x: i64) -> i64 { x }
    /// ```
    ///
    /// a parameter of a type with no conversion from a Ferry value, or more than 8 of them:
    ///
    /// ```compile_fail
    /// #[ferry::export]
    /// fn borrowed(x: &str) -> i64 { 0 }
    /// ```
    ///
    /// ```compile_fail
    /// #[ferry::export]
    /// fn nine(a: i64, b: i64, c: i64, d: i64, e: i64, f: i64, g: i64, h: i64, i: i64) {}
    /// ```
    ///
    /// while the same function with the attribute's plain form compiles:
    ///
    /// ```
    /// #[ferry::export]
    /// fn fine(x: i64) -> i64 { x }
    /// # fn main() {}
    /// ```
    pub fn named_function<Args, F: crate::TypedFn<Args>>(
        f: F,
        name: &'static str,
        params: &'static [&'static str],
    ) -> Function {
        f.into_named_function(name, params)
    }

    /// Registers one global, reporting a failure (a taken name) on standard error.
    pub fn register(name: &str, f: Function) {
        if let Err(err) = Function::register_global(name, f, false) {
            eprintln!("ferry::register_global!: cannot register '{name}': {err}");
        }
    }
}

/// `ferry::load_library`: FerryLibraryLoad of `path`.
pub(crate) fn load(path: &std::path::Path) -> crate::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| crate::Error::new("ValueError", "a library path with a NUL byte"))?;
    crate::Error::check(crate::raw::library_load(&path))
}
