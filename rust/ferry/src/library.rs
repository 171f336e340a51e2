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

    /// Registers one global, reporting a failure (a taken name) on standard error.
    pub fn register(name: &str, f: Function) {
        if let Err(err) = Function::register_global(name, f, false) {
            eprintln!("ferry::register_global!: cannot register '{name}': {err}");
        }
    }
}
