//! A Ferry library written in Rust: built as a `cdylib`, `ferry.load_library` loads it from
//! Python and its globals are called like C++ ones (tests/test_from_python.py).
use ferry::{Error, Function, ObjectRef};

ferry::register_global! {
    "rs_lib.add" => |a: i64, b: i64| Ok(a + b),
    // Calls a function it is given (a Python callable, say) and adds one to its result.
    "rs_lib.call" => |f: Function, x: i64| -> ferry::Result<i64> {
        let r: i64 = f.call((x,))?.try_into()?;
        Ok(r + 1)
    },
    "rs_lib.fail" => |message: String| -> ferry::Result<()> {
        Err(Error::new("ValueError", &message))
    },
    "rs_lib.panic" => |message: String| -> ferry::Result<()> { panic!("{message}") },
    "rs_lib.type_key" => |obj: ObjectRef| Ok(obj.type_key()),
    "rs_lib.add" => |a: i64| Ok(a),
}
