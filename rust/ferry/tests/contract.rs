//! The contract program of DESIGN.md "Wave 3 / Rust", compiled and run as written: the program
//! below is copied verbatim (its `main` is called by the test, from the directory that holds
//! libdemo.so, so that its relative "libdemo.so" resolves).
#![allow(unused_variables)]

mod common;

// ---- the program, as DESIGN.md gives it ----
use ferry::{Any, Array, Function, Map, ObjectRef};

#[rustfmt::skip]
fn main() -> ferry::Result<()> {
    ferry::load_library("libdemo.so")?;                       // runs its FERRY_REGISTER_* lines
    let add = Function::get_global("demo.add").expect("registered");
    let three: i64 = add.call((1i64, 2i64))?.try_into()?;     // tuples of IntoAny values
    let cb = Function::from_fn(|x: i64| -> ferry::Result<i64> { Ok(x + 1) });
    let r: i64 = Function::get_global_required("demo.call")?.call((cb,))?.try_into()?;
    Function::register_global("rs.twice", Function::from_fn(|x: i64| Ok(2 * x)), false)?;
    let x: ObjectRef = ferry::make_node("demo.IntImm", &[("value", Any::from(7i64))])?;
    assert_eq!(x.type_key(), "demo.IntImm");
    let v: i64 = x.get_attr("value")?.try_into()?;
    let a: Array<i64> = Array::from(vec![1, 2, 3]);
    let m: Map<ferry::String, i64> = Map::from_iter([("k".into(), 1)]);
    let text = ferry::save_json(&x)?;
    assert!(ferry::structural_equal(&x, &ferry::load_json(&text)?));
    let err = add.call(("a", 2i64)).unwrap_err();             // ferry::Error
    assert_eq!(err.kind(), "TypeError");
    Ok(())
}
// ---- end of the program ----

#[test]
fn the_contract_program_runs() {
    std::env::set_current_dir(common::demo_dir()).unwrap();
    main().unwrap();
    // What the program computed, checked from outside it.
    let twice = Function::get_global_required("rs.twice").unwrap();
    let r: i64 = twice.call((21i64,)).unwrap().try_into().unwrap();
    assert_eq!(r, 42);
}
