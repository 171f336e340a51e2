//! `tschema generate --rust`: the checked-in output for tests/tschema/shapes_schema.py
//! compiles against this crate, makes objects of the C++ types tschema generates from the same
//! schema (tests/tschema/shapes.h and shapes.cc, built into libshapes.so) and reads them with
//! typed getters. tests/python/tschema/test_rust.py regenerates all three files and fails on a
//! difference, so this test needs no Python.
mod common;

use ferry::{ObjectRef, ObjectType};

#[rustfmt::skip]
#[allow(dead_code)]
#[path = "tschema/shapes_generated.rs"]
mod shapes;
use shapes::{Circle, Color, Group, Shape};

fn setup() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        ferry::load_library(common::shapes_library()).expect("libshapes.so loads");
    });
}

#[test]
fn constructors_take_the_schema_defaults_and_getters_read_typed_fields() -> ferry::Result<()> {
    setup();
    let c = Circle::new("wheel", 2.5)?;
    assert_eq!(c.radius()?, 2.5);
    assert_eq!(c.sides()?, 0);
    assert!(!c.filled()?);
    assert_eq!(c.color()?, Color::Blue);
    assert_eq!(c.name()?, "wheel"); // the parent's getter, through Deref
    assert_eq!(c.type_key(), "rs_shapes.Circle"); // ObjectRef's, through Deref twice

    let full = Circle::new_full("gear", 1.0, 12, true, Color::Green)?;
    assert_eq!(
        (full.sides()?, full.filled()?, full.color()?),
        (12, true, Color::Green)
    );

    let items: ferry::Array<Shape> = [c.clone().downcast::<Shape>()?, Shape::new("dot")?]
        .into_iter()
        .collect();
    let g = Group::new("both", items)?;
    assert_eq!(g.items()?.len(), 2);
    assert_eq!(g.items()?.get(1).unwrap().name()?, "dot");
    assert_eq!((g.tags()?.len(), g.r#type()?.is_none()), (0, true));
    assert_eq!(g.dtype()?, ferry::DataType::parse("float32")?);
    assert_eq!(
        (g.scale()?, g.label()?.is_none(), g.extra()?.is_none()),
        (None, true, true)
    );
    let g = Group::new_full(
        "x",
        [].into_iter().collect(),
        Some(0.5),
        Some("l"),
        Some(c.clone().into()),
        [(ferry::String::from("k"), 1i64)].into_iter().collect(),
        Some("t"),
        ferry::DataType::parse("int8")?,
        [5i64].into_iter().collect(),
        [(ferry::String::from("a"), ferry::String::from("b"))]
            .into_iter()
            .collect(),
    )?;
    assert_eq!(g.scale()?, Some(0.5));
    assert_eq!(g.label()?.unwrap(), "l");
    assert_eq!((g.tags()?.len(), g.r#type()?.unwrap()), (1, "t".into()));
    assert_eq!(g.dtype()?.to_string(), "int8");
    assert!(g.extra()?.unwrap().same_as(c.as_object()));
    assert_eq!(g.history()?.to_vec()?, [5]);
    assert_eq!(g.notes()?.get("a")?.unwrap(), "b");
    Ok(())
}

#[test]
fn downcasts_are_checked_and_bad_values_are_errors() -> ferry::Result<()> {
    setup();
    let obj: ObjectRef = Circle::new("c", 1.0)?.into();
    let shape: Shape = obj.clone().downcast()?;
    let back: Circle = shape.clone().downcast()?;
    assert!(back.as_object().same_as(&obj));
    let err = shape.downcast::<Group>().unwrap_err();
    assert_eq!(err.kind(), "TypeError");
    assert!(
        err.message().contains("rs_shapes.Group"),
        "{}",
        err.message()
    );
    // C++ refuses an enum value that is no member, naming the enum.
    let err = ferry::make_node(
        "rs_shapes.Circle",
        &[
            ("name", "o".into()),
            ("radius", 1.0.into()),
            ("color", 3i64.into()),
        ],
    )
    .unwrap_err();
    assert!(
        err.message().contains("rs_shapes.Color"),
        "{}",
        err.message()
    );
    assert_eq!(Color::from_value(3), None);
    assert_eq!(
        (Color::from_name("Blue"), Color::Blue.name()),
        (Some(Color::Blue), "Blue")
    );
    Ok(())
}

#[test]
fn setters_of_a_mutable_node_write_in_place_and_check_types() -> ferry::Result<()> {
    setup();
    let g = Group::new("g", [].into_iter().collect())?;
    let alias = g.clone();
    // SAFETY: no other thread uses `g`.
    unsafe {
        g.set_name("renamed")?; // an inherited field (Shape is not mutable)
        g.set_scale(Some(2.0))?;
        g.set_label(None)?;
        g.set_tags([(ferry::String::from("k"), 3i64)].into_iter().collect())?;
        g.set_dtype(ferry::DataType::parse("int16")?)?;
    }
    assert_eq!(alias.name()?, "renamed"); // in place: every holder sees it
    assert_eq!(
        (alias.scale()?, alias.label()?.is_none()),
        (Some(2.0), true)
    );
    assert_eq!(alias.tags()?.get("k")?, Some(3));
    assert_eq!(alias.dtype()?.to_string(), "int16");
    // List and Dict fields: made empty per object by C++ (each its own), shared by reference,
    // written in place.
    let other = Group::new("h", [].into_iter().collect())?;
    assert_eq!((g.history()?.len(), g.notes()?.len()), (0, 0));
    assert!(!g
        .history()?
        .as_object()
        .same_as(other.history()?.as_object()));
    // SAFETY: as above.
    unsafe {
        g.history()?.push(7i64)?;
        g.notes()?.insert("k", "v")?;
    }
    assert_eq!(alias.history()?.to_vec()?, [7]);
    assert_eq!(alias.notes()?.get("k")?.unwrap(), "v");
    let fresh: ferry::List<i64> = [1i64, 2].into_iter().collect();
    // SAFETY: as above.
    unsafe { g.set_history(fresh.clone())? };
    assert!(alias.history()?.as_object().same_as(fresh.as_object()));
    assert_eq!(other.history()?.len(), 0);
    // A value the field refuses: C++ reflection's TypeError naming the field.
    let items: ferry::Array<Shape> = [Shape::new("s")?].into_iter().collect();
    // SAFETY: as above.
    unsafe { g.set_items(items)? };
    assert_eq!(g.items()?.len(), 1);
    // SAFETY: as above.
    let err = unsafe { g.as_object().set_attr("scale", "wide") }.unwrap_err();
    assert_eq!(err.kind(), "TypeError");
    assert!(err.message().contains("scale"), "{}", err.message());
    Ok(())
}
