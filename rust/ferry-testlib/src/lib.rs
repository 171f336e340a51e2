//! A Ferry library written in Rust: built as a `cdylib`, `ferry.load_library` loads it from
//! Python and its globals are called like C++ ones (tests/test_from_python.py).
use ferry::{Error, Function, Object, ObjectRef};

/// A type defined in Rust, registered when Python loads the library.
#[derive(ferry::Object, Clone)]
#[ferry(type_key = "rs_lib.Point")]
struct Point {
    x: i64,
    y: f64,
}

/// A type defined in Rust whose fields have defaults, which Python's `ferry.make_node` takes
/// for the fields it leaves out.
#[derive(ferry::Object, Clone)]
#[ferry(type_key = "rs_lib.Labeled")]
struct Labeled {
    name: String,
    #[ferry(default = 1.5)]
    weight: f64,
    #[ferry(default = "none")]
    label: String,
    #[ferry(default_factory = || ferry::Array::from_iter([0i64]))]
    marks: ferry::Array<i64>,
}

ferry::on_load! {
    ferry::register_type::<Point>()?;
    ferry::register_type::<Labeled>()?;
}

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
    "rs_lib.make_point" => |x: i64, y: f64| Point { x, y }.to_object(),
    "rs_lib.norm1" => |p: Point| Ok(p.x as f64 + p.y.abs()),
    // What Rust reads of a Labeled made elsewhere (Python, with defaults).
    "rs_lib.describe" => |l: Labeled| Ok(format!("{} {} {} {:?}", l.name, l.weight, l.label,
        l.marks.iter().collect::<Vec<_>>())),
    "rs_lib.add" => |a: i64| Ok(a),
}

/// A Rust function registered as the global `rs_lib.scaled_sum` (`#[ferry::export]`).
#[ferry::export(name = "rs_lib.scaled_sum")]
fn scaled_sum(factor: f64, values: ferry::Array<f64>) -> f64 {
    factor * values.iter().sum::<f64>()
}
