//! `#[ferry::export]`: Rust functions registered as globals when the program is loaded.
use ferry::{Array, Error, Function};

/// Registered as the global `export_test.add`.
#[ferry::export(name = "export_test.add")]
fn add(a: i64, b: i64) -> ferry::Result<i64> {
    Ok(a + b)
}

/// A plain return type: registered under its own name, `scale`.
#[ferry::export]
pub fn scale(factor: f64, values: Array<f64>) -> Array<f64> {
    values.iter().map(|v| v * factor).collect()
}

#[ferry::export(name = "export_test.greet")]
fn greet(mut name: String) {
    name.push('!');
    assert!(name.ends_with('!'));
}

#[ferry::export(name = "export_test.fail")]
fn fail(kind: String, message: String) -> Result<(), Error> {
    Err(Error::new(&kind, &message))
}

#[ferry::export(name = "export_test.panic")]
fn panics() -> ferry::Result<i64> {
    panic!("exported and panicking")
}

#[ferry::export(name = "export_test.optional")]
fn optional(x: Option<i64>) -> i64 {
    x.unwrap_or(-1)
}

#[test]
fn an_exported_fn_is_a_global_and_still_a_fn() -> ferry::Result<()> {
    let f = Function::get_global_required("export_test.add")?;
    assert_eq!(f.call((1i64, 2i64))?.cast::<i64>()?, 3);
    assert_eq!(add(2, 3)?, 5); // still callable from Rust
    let s = Function::get_global_required("scale")?;
    let out: Array<f64> = s.call((2.0f64, Array::from(vec![1.0f64, 2.5])))?.cast()?;
    assert_eq!(out.iter().collect::<Vec<_>>(), vec![2.0, 5.0]);
    let g = Function::get_global_required("export_test.greet")?;
    assert!(g.call(("x",))?.is_none());
    let o = Function::get_global_required("export_test.optional")?;
    assert_eq!(o.call((None::<i64>,))?.cast::<i64>()?, -1);
    assert_eq!(o.call((4i64,))?.cast::<i64>()?, 4);
    Ok(())
}

#[test]
fn argument_errors_name_the_position_the_parameter_and_the_type() {
    let f = Function::get_global_required("export_test.add").unwrap();
    let err = f.call((1i64, "two")).unwrap_err();
    assert_eq!(err.kind(), "TypeError");
    assert!(err.message().starts_with(
        "Mismatched type on argument 1 when calling `export_test.add(a: int, b: int)`: expected int"
    ));
    let err = f.call((1i64,)).unwrap_err();
    assert_eq!(err.kind(), "TypeError");
    assert!(
        err.message()
            .contains("export_test.add() takes 2 arguments but 1 were given"),
        "{}",
        err.message()
    );
    let s = Function::get_global_required("scale").unwrap();
    let err = s.call((2.0f64, 3i64)).unwrap_err();
    assert!(
        err.message().contains("argument 1")
            && err
                .message()
                .contains("scale(factor: float, values: ferry.Array")
            && err.message().contains("expected ferry.Array"),
        "{}",
        err.message()
    );
    let err = f.call((1i64 << 40, 1.5f64)).unwrap_err();
    assert!(err.message().contains("argument 1"), "{}", err.message());
}

#[test]
fn errors_and_panics_of_an_exported_fn() {
    let f = Function::get_global_required("export_test.fail").unwrap();
    let err = f.call(("ValueError", "bad")).unwrap_err();
    assert_eq!((err.kind(), err.message()), ("ValueError", "bad"));
    let p = Function::get_global_required("export_test.panic").unwrap();
    let err = p.call(()).unwrap_err();
    assert_eq!(err.kind(), "RuntimeError");
    assert!(
        err.message().contains("exported and panicking"),
        "{}",
        err.message()
    );
}
