//! Field defaults of types defined in Rust (`#[ferry(default = ...)]`,
//! `#[ferry(default_factory = ...)]`, `Object::field_defaults`), recorded by
//! `ferry::register_type` through FerryTypeSetFieldDefault: taken by `make_node` and JSON for the
//! fields they leave out (the Python side: ferry-testlib/tests/test_from_python.py).
use ferry::{Any, Array, FieldDef, Object, ObjectRef};

fn fresh_list() -> Array<i64> {
    [1i64, 2].into_iter().collect()
}

/// Fields with defaults: `make_node` (and Python, and JSON) may leave them out.
#[derive(ferry::Object, Clone, Debug)]
#[ferry(type_key = "rs.test.Defaults")]
struct Defaults {
    id: i64,
    #[ferry(default = 7)]
    count: i64,
    /// A doc comment beside the default is fine.
    #[ferry(default = "none")]
    label: String,
    #[ferry(default = None)]
    parent: Option<ObjectRef>,
    #[ferry(default_factory = fresh_list)]
    items: Array<i64>,
}

#[test]
fn fields_left_out_take_their_defaults() -> ferry::Result<()> {
    ferry::register_type::<Defaults>()?;
    let made = ferry::make_node("rs.test.Defaults", &[("id", 1i64.into())])?;
    let d = Defaults::from_object(&made)?;
    assert_eq!((d.id, d.count, d.label.as_str()), (1, 7, "none"));
    assert!(d.parent.is_none());
    assert_eq!(d.items.iter().collect::<Vec<_>>(), [1, 2]);
    // The factory runs for each object: two objects, two arrays.
    let other = ferry::make_node("rs.test.Defaults", &[("id", 2i64.into())])?;
    assert!(!made
        .get_attr("items")?
        .cast::<ObjectRef>()?
        .same_as(&other.get_attr("items")?.cast::<ObjectRef>()?));
    // Given fields win over defaults.
    let given = ferry::make_node(
        "rs.test.Defaults",
        &[("id", 3i64.into()), ("count", 9i64.into())],
    )?;
    assert_eq!(Defaults::from_object(&given)?.count, 9);
    // A JSON document without the defaulted fields loads.
    let text = ferry::save_json(&made)?;
    let trimmed = text.replace("\"count\": 7, ", "");
    assert_ne!(trimmed, text, "the document holds count: {text}");
    let back: ObjectRef = ferry::load_json(&trimmed)?.cast()?;
    assert_eq!(back.get_attr("count")?.cast::<i64>()?, 7);
    Ok(())
}

#[test]
fn a_field_without_a_default_stays_required() {
    ferry::register_type::<Defaults>().unwrap();
    let err = ferry::make_node("rs.test.Defaults", &[("count", 1i64.into())]).unwrap_err();
    assert!(err.message().contains("id"), "{err:?}");
}

/// A default naming no field, or one the field's type refuses, is an error of register_type
/// naming the field and the type (the derive cannot spell either: a hand-written impl can).
struct HandMade;

impl Object for HandMade {
    const TYPE_KEY: &'static str = "rs.test.HandMade";
    fn fields() -> Vec<FieldDef> {
        vec![FieldDef {
            name: "n",
            type_text: "int".into(),
        }]
    }
    fn field_values(&self) -> Vec<Any> {
        vec![0i64.into()]
    }
    fn from_object(_: &ObjectRef) -> ferry::Result<Self> {
        Ok(HandMade)
    }
    fn field_defaults() -> Vec<(&'static str, ferry::FieldDefault)> {
        vec![("n", ferry::FieldDefault::Value("seven".into()))]
    }
}

#[test]
fn a_default_of_the_wrong_type_is_refused_naming_the_field() {
    let err = ferry::register_type::<HandMade>().unwrap_err();
    let text = err.message();
    assert!(
        text.contains("'n'") && text.contains("rs.test.HandMade") && text.contains("expected int"),
        "{err:?}"
    );
}
