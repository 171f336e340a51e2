//! `ferry::Error`: a Ferry Error object (kind, message, backtrace) as a Rust error.
use std::ffi::{c_char, CString};
use std::fmt;

use crate::object::ObjectRef;
use crate::raw;
use ferry_sys as sys;

/// A Ferry error: what C++ throws and Python raises, with its kind (`"TypeError"`,
/// `"ValueError"`, ... or any name a library invents), message and backtrace.
///
/// It holds the Error object itself, so an error that comes from C++ through Rust code and goes
/// back into C++ (a closure returning the `Err` of a call it made) arrives as the very same
/// object, with its C++ frames.
///
/// ```
/// let err = ferry::Error::new("ValueError", "no such axis: 3");
/// assert_eq!(err.kind(), "ValueError");
/// assert_eq!(err.message(), "no such axis: 3");
/// assert_eq!(err.to_string(), "ValueError: no such axis: 3");
/// ```
#[derive(Clone)]
pub struct Error {
    obj: ObjectRef,
    /// The kind, message and backtrace with each byte sequence that is not UTF-8 shown as
    /// U+FFFD, for an error made in C++ whose text is not UTF-8 (C++ text is bytes); None when
    /// the object's text is UTF-8 (always, for errors made in Rust), which is read in place.
    lossy: Option<Box<[std::string::String; 3]>>,
}

/// `std::result::Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A C string of `text`, with NUL bytes (which C cannot carry) shown as `\0`.
pub(crate) fn c_string(text: &str) -> CString {
    CString::new(text).unwrap_or_else(|_| CString::new(text.replace('\0', "\\0")).unwrap())
}

/// A name (of a global, a type, a field) as a C string; a ValueError naming it when it has a NUL
/// byte, which C would cut it at: a name is never changed on its way, as [`c_string`] changes
/// a message.
pub(crate) fn c_name(what: &str, name: &str) -> Result<CString> {
    CString::new(name).map_err(|_| {
        Error::new(
            "ValueError",
            &format!("{what} {name:?} contains a NUL byte, which a Ferry name cannot hold"),
        )
    })
}

/// Calls `f` with `text` as a C string: from a stack buffer when it is short and has no NUL
/// byte (a field or global name: no allocation), else from [`c_string`].
#[inline]
pub(crate) fn with_c_str<R>(text: &str, f: impl FnOnce(*const c_char) -> R) -> R {
    const CAP: usize = 64;
    let bytes = text.as_bytes();
    if bytes.len() < CAP && !bytes.contains(&0) {
        let mut buffer = [0u8; CAP];
        buffer[..bytes.len()].copy_from_slice(bytes);
        f(buffer.as_ptr().cast())
    } else {
        f(c_string(text).as_ptr())
    }
}

impl Error {
    /// A new error of `kind` with `message`; its backtrace is the C++ stack of this call.
    pub fn new(kind: &str, message: &str) -> Error {
        match raw::error_create(&c_string(kind), &c_string(message)) {
            Some(obj) => Error::of_object(obj),
            None => Error::take_raised(),
        }
    }

    /// An Error object (its type checked) as an error, its text read as UTF-8 when it is.
    fn of_object(obj: ObjectRef) -> Error {
        let (kind, message, backtrace) = raw::error_info(&obj);
        let utf8 = |bytes: &[u8]| std::str::from_utf8(bytes).is_ok();
        let lossy = (!(utf8(kind) && utf8(message) && utf8(backtrace))).then(|| {
            let text = |bytes: &[u8]| std::string::String::from_utf8_lossy(bytes).into_owned();
            Box::new([text(kind), text(message), text(backtrace)])
        });
        Error { obj, lossy }
    }

    /// Takes this thread's raised error (after a C function returned -1).
    #[cold]
    #[inline(never)]
    pub(crate) fn take_raised() -> Error {
        match raw::error_move_from_raised() {
            Some(obj) => Error::of_object(obj),
            None => Error::new(
                "InternalError",
                "a Ferry call failed without raising an error",
            ),
        }
    }

    /// Turns a C return code into a Result, taking the raised error on failure.
    #[inline]
    pub(crate) fn check(rc: std::ffi::c_int) -> Result<()> {
        if rc == 0 {
            Ok(())
        } else {
            Err(Error::take_raised())
        }
    }

    /// Makes this error the raised error of the thread (a callback then returns -1).
    pub(crate) fn raise(&self) {
        raw::error_set_raised(&self.obj);
    }

    /// An Error object (ferry.Error) as an error.
    pub fn from_object(obj: ObjectRef) -> std::result::Result<Error, ObjectRef> {
        if obj.type_index() == sys::kFerryError {
            Ok(Error::of_object(obj))
        } else {
            Err(obj)
        }
    }

    /// The Error object: what C++ and Python see.
    pub fn as_object(&self) -> &ObjectRef {
        &self.obj
    }

    fn info(&self) -> (&str, &str, &str) {
        if let Some(lossy) = &self.lossy {
            return (&lossy[0], &lossy[1], &lossy[2]);
        }
        let (kind, message, backtrace) = raw::error_info(&self.obj);
        // UTF-8 (checked when the error was made: else `lossy` is set).
        let text = |bytes| std::str::from_utf8(bytes).unwrap_or("");
        (text(kind), text(message), text(backtrace))
    }

    /// The kind: `"TypeError"`, `"ValueError"`, `"KeyError"`, `"RuntimeError"`, ...
    ///
    /// The text is borrowed from the error, which it cannot outlive:
    ///
    /// ```compile_fail,E0597
    /// let kind = {
    ///     let err = ferry::Error::new("ValueError", "m");
    ///     err.kind()
    /// };
    /// let _ = kind.len();
    /// ```
    pub fn kind(&self) -> &str {
        self.info().0
    }

    /// The message, without the kind.
    pub fn message(&self) -> &str {
        self.info().1
    }

    /// The backtrace text: the C++ frames where the error was made (and those of other
    /// languages it crossed); empty when there is none.
    pub fn backtrace(&self) -> &str {
        self.info().2
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind(), self.message())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.kind())
            .field("message", &self.message())
            .finish()
    }
}

impl std::error::Error for Error {}
