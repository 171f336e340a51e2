//! `ferry::Error`: a Ferry Error object (kind, message, backtrace) as a Rust error.
use std::ffi::{c_char, CStr, CString};
use std::fmt;

use crate::object::ObjectRef;
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
}

/// `std::result::Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A C string of `text`, with NUL bytes (which C cannot carry) shown as `\0`.
pub(crate) fn c_string(text: &str) -> CString {
    CString::new(text).unwrap_or_else(|_| CString::new(text.replace('\0', "\\0")).unwrap())
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

/// The text of a C string that lives as long as `'a`, cut at the first invalid UTF-8 byte.
///
/// # Safety
/// `ptr` is NULL or a NUL-terminated string valid for `'a`.
pub(crate) unsafe fn str_of<'a>(ptr: *const c_char) -> &'a str {
    if ptr.is_null() {
        return "";
    }
    // SAFETY: the caller's contract.
    let bytes = unsafe { CStr::from_ptr(ptr) }.to_bytes();
    match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or(""),
    }
}

impl Error {
    /// A new error of `kind` with `message`; its backtrace is the C++ stack of this call.
    pub fn new(kind: &str, message: &str) -> Error {
        let kind = c_string(kind);
        let message = c_string(message);
        let mut handle: sys::FerryObjectHandle = std::ptr::null_mut();
        // SAFETY: valid C strings; a NULL backtrace captures the frames; `handle` receives a new
        // reference on success.
        let rc = unsafe {
            sys::FerryErrorCreate(
                kind.as_ptr(),
                message.as_ptr(),
                std::ptr::null(),
                &mut handle,
            )
        };
        if rc != 0 {
            return Error::take_raised();
        }
        Error {
            // SAFETY: a new reference to an Error object.
            obj: unsafe { ObjectRef::from_owned_handle(handle) },
        }
    }

    /// Takes this thread's raised error (after a C function returned -1).
    #[cold]
    #[inline(never)]
    pub(crate) fn take_raised() -> Error {
        let mut handle: sys::FerryObjectHandle = std::ptr::null_mut();
        // SAFETY: moves the thread's error (a new reference) or NULL into `handle`.
        unsafe { sys::FerryErrorMoveFromRaised(&mut handle) };
        if handle.is_null() {
            return Error::new(
                "InternalError",
                "a Ferry call failed without raising an error",
            );
        }
        Error {
            // SAFETY: a new reference to an Error object.
            obj: unsafe { ObjectRef::from_owned_handle(handle) },
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
        // SAFETY: a live Error object; the call adds its own reference.
        unsafe { sys::FerryErrorSetRaised(self.obj.handle()) };
    }

    /// An Error object (ferry.Error) as an error.
    pub fn from_object(obj: ObjectRef) -> std::result::Result<Error, ObjectRef> {
        if obj.type_index() == sys::kFerryError {
            Ok(Error { obj })
        } else {
            Err(obj)
        }
    }

    /// The Error object: what C++ and Python see.
    pub fn as_object(&self) -> &ObjectRef {
        &self.obj
    }

    fn info(&self) -> (&str, &str, &str) {
        let mut kind: *const c_char = std::ptr::null();
        let mut message: *const c_char = std::ptr::null();
        let mut backtrace: *const c_char = std::ptr::null();
        // SAFETY: a live Error object; the strings live as long as it does, i.e. as `self`.
        unsafe {
            sys::FerryErrorGetInfo(self.obj.handle(), &mut kind, &mut message, &mut backtrace);
            (str_of(kind), str_of(message), str_of(backtrace))
        }
    }

    /// The kind: `"TypeError"`, `"ValueError"`, `"KeyError"`, `"RuntimeError"`, ...
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
