//! Types defined in Rust: #[derive(ferry::Object)] + ferry::register_type, seen by C++
//! reflection, MakeNode, JSON and structural equality like any other type.
use ferry::{Any, Array, Error, FieldDef, Function, Map, Object, ObjectRef};

#[derive(ferry::Object, Clone, Debug, PartialEq)]
#[ferry(type_key = "rs.test.Point")]
struct Point {
    x: i64,
    y: f64,
}

/// Every kind of field the derive supports.
#[derive(ferry::Object, Clone, Debug)]
#[ferry(type_key = "rs.test.Record")]
pub struct Record {
    pub name: String,
    label: ferry::String,
    tags: Array<i64>,
    scores: Map<ferry::String, f64>,
    parent: Option<ObjectRef>,
    callback: Option<Function>,
    extra: Any,
    flag: bool,
}

fn point(x: i64, y: f64) -> ObjectRef {
    ferry::register_type::<Point>().unwrap();
    Point { x, y }.to_object().unwrap()
}

#[test]
fn the_field_table() {
    assert_eq!(
        Point::fields(),
        [
            FieldDef {
                name: "x",
                type_text: "int".into()
            },
            FieldDef {
                name: "y",
                type_text: "float".into()
            }
        ]
    );
    let texts: Vec<String> = Record::fields().into_iter().map(|f| f.type_text).collect();
    assert_eq!(
        texts,
        [
            "str",
            "str",
            "Array[int]",
            "Map[str, float]",
            "Optional[Object]",
            "Optional[Function]",
            "Any",
            "bool"
        ]
    );
}

#[test]
fn registered_objects_are_seen_by_reflection() {
    let p = point(1, 2.5);
    assert_eq!(p.type_key(), "rs.test.Point");
    assert!(p.is_instance_of("rs.test.Point"));
    assert_eq!(p.get_attr("x").unwrap().cast::<i64>().unwrap(), 1);
    assert_eq!(p.get_attr("y").unwrap().cast::<f64>().unwrap(), 2.5);
    assert_eq!(Point::from_object(&p).unwrap(), Point { x: 1, y: 2.5 });
    // C++'s MakeNode builds one by field name.
    let made = ferry::make_node(
        "rs.test.Point",
        &[("x", Any::from(3i64)), ("y", Any::from(0.5))],
    )
    .unwrap();
    assert_eq!(Point::from_object(&made).unwrap(), Point { x: 3, y: 0.5 });
    let err = ferry::make_node(
        "rs.test.Point",
        &[("x", Any::from("three")), ("y", Any::from(0.5))],
    )
    .unwrap_err();
    assert_eq!(err.kind(), "TypeError", "{err}");
    assert!(err.message().contains('x'), "{}", err.message());
    let err = ferry::make_node("rs.test.Point", &[("x", Any::from(1i64))]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "ValueError: MakeNode(rs.test.Point): missing fields: y"
    );
}

#[test]
fn registering_again_is_harmless_and_a_conflict_is_an_error() {
    let first = ferry::register_type::<Point>().unwrap();
    assert_eq!(ferry::register_type::<Point>().unwrap(), first);
    #[derive(ferry::Object, Clone)]
    #[ferry(type_key = "rs.test.Point")]
    struct OtherPoint {
        x: String,
    }
    let err = ferry::register_type::<OtherPoint>().unwrap_err();
    assert!(err.message().contains("rs.test.Point"), "{err}");
    // to_object registers a type not registered yet, and refuses a key taken by another
    // declaration with the registration's error.
    #[derive(ferry::Object, Clone)]
    #[ferry(type_key = "rs.test.RegisteredOnUse")]
    struct RegisteredOnUse {
        x: i64,
    }
    let obj = RegisteredOnUse { x: 1 }.to_object().unwrap();
    assert_eq!(obj.type_key(), "rs.test.RegisteredOnUse");
    let err = OtherPoint { x: "a".into() }.to_object().unwrap_err();
    assert!(err.message().contains("rs.test.Point"), "{err}");
}

#[test]
fn json_structural_equality_and_hash() {
    let (a, b, c) = (point(1, 2.0), point(1, 2.0), point(1, 3.0));
    assert!(!a.same_as(&b));
    assert!(ferry::structural_equal(&a, &b));
    assert!(!ferry::structural_equal(&a, &c));
    assert_eq!(
        ferry::structural_hash(&a).unwrap(),
        ferry::structural_hash(&b).unwrap()
    );
    let text = ferry::save_json(&a).unwrap();
    assert!(text.contains("rs.test.Point"), "{text}");
    let loaded: ObjectRef = ferry::load_json(&text).unwrap().try_into().unwrap();
    assert_eq!(Point::from_object(&loaded).unwrap(), Point { x: 1, y: 2.0 });
}

#[test]
fn fields_are_writable_through_reflection() {
    let p = point(1, 2.0);
    // SAFETY: `p` is not shared with another thread.
    unsafe { p.set_attr("x", 10i64) }.unwrap();
    assert_eq!(Point::from_object(&p).unwrap(), Point { x: 10, y: 2.0 });
    // SAFETY: as above.
    let err = unsafe { p.set_attr("x", "ten") }.unwrap_err();
    assert_eq!(err.kind(), "TypeError");
    assert!(err.message().contains('x'), "{}", err.message());
    assert_eq!(
        p.get_attr("x").unwrap().cast::<i64>().unwrap(),
        10,
        "unchanged on failure"
    );
}

#[test]
fn every_field_kind_round_trips() {
    ferry::register_type::<Record>().unwrap();
    let parent = point(5, 6.0);
    let record = Record {
        name: "a record with a long name".into(),
        label: "label".into(),
        tags: vec![1i64, 2].into(),
        scores: Map::from_iter([("s".into(), 0.5)]),
        parent: Some(parent.clone()),
        callback: Some(Function::from_fn(|x: i64| Ok(x * 3))),
        extra: Any::from("anything"),
        flag: true,
    };
    let obj = record.to_object().unwrap();
    let back = Record::from_object(&obj).unwrap();
    assert_eq!(back.name, record.name);
    assert_eq!(back.label, "label");
    assert_eq!(back.tags.iter().collect::<Vec<_>>(), [1, 2]);
    assert_eq!(back.scores.get("s").unwrap(), Some(0.5));
    assert!(back.parent.as_ref().unwrap().same_as(&parent));
    let f = back.callback.unwrap();
    assert_eq!(f.call((4i64,)).unwrap().cast::<i64>().unwrap(), 12);
    assert_eq!(back.extra.cast::<String>().unwrap(), "anything");
    assert!(back.flag);
    // A field holding a wrong type is refused at construction, naming it.
    let mut fields: Vec<(&str, Any)> = Record::fields()
        .iter()
        .map(|f| f.name)
        .zip(record.field_values())
        .collect();
    fields[2].1 = Any::from(vec!["not", "ints"].into_iter().collect::<Array<&str>>());
    let err = ferry::make_node("rs.test.Record", &fields).unwrap_err();
    assert_eq!(err.kind(), "TypeError", "{err}");
    assert!(err.message().contains("tags"), "{}", err.message());
}

#[test]
fn derived_types_as_closure_arguments() {
    let norm = Function::from_fn(|p: Point| Ok(p.x as f64 + p.y));
    assert_eq!(
        norm.call((point(1, 0.5),)).unwrap().cast::<f64>().unwrap(),
        1.5
    );
    let err = norm
        .call((ferry::String::from("not a point at all"),))
        .unwrap_err();
    assert_eq!(err.kind(), "TypeError");
    assert_eq!(
        err.message(),
        "Mismatched type on argument 0 when calling `<rust closure>(0: rs.test.Point)`: \
         expected rs.test.Point but got ferry.String"
    );
    let err: Error =
        Point::from_object(&ferry::String::from("a string object").into()).unwrap_err();
    assert_eq!(err.message(), "expected rs.test.Point but got ferry.String");
}

#[test]
fn a_struct_without_fields_round_trips() {
    #[derive(ferry::Object, Clone, Debug, PartialEq)]
    #[ferry(type_key = "rs.test.Unit")]
    struct Unit {}
    let obj = Unit {}.to_object().unwrap();
    assert_eq!(obj.type_key(), "rs.test.Unit");
    assert_eq!(Unit::from_object(&obj).unwrap(), Unit {});
    // The index kept from the first call serves the next ones: the same type each time.
    let again = Unit {}.to_object().unwrap();
    assert_eq!(again.type_index(), obj.type_index());
    assert!(!again.same_as(&obj));
}

#[test]
fn the_first_to_object_from_many_threads_registers_the_type_once() {
    // No thread has registered the type: each one's first to_object looks it up or registers
    // it (a race the type index cache must survive), and all agree on one type.
    #[derive(ferry::Object, Clone, Debug, PartialEq)]
    #[ferry(type_key = "rs.test.RacedRegistration")]
    struct Raced {
        k: i64,
    }
    let barrier = std::sync::Barrier::new(8);
    let indices: Vec<i32> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|k| {
                let barrier = &barrier;
                s.spawn(move || {
                    barrier.wait();
                    let obj = Raced { k }.to_object().unwrap();
                    assert_eq!(Raced::from_object(&obj).unwrap(), Raced { k });
                    obj.type_index()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(indices.iter().all(|&i| i == indices[0]), "{indices:?}");
    assert_eq!(ferry::register_type::<Raced>().unwrap(), indices[0]);
}

/// Types whose fields share names at different offsets and of different kinds, for
/// get_attr's per-thread cache of getters by (type, name).
macro_rules! attr_types {
    ($($name:ident $key:tt),*) => {$(
        #[derive(ferry::Object, Clone, Debug, PartialEq)]
        #[ferry(type_key = $key)]
        struct $name {
            f0: i64,
            f1: String,
            f2: i64,
            f3: f64,
            f4: i64,
            f5: bool,
            f6: i64,
            f7: i64,
        }
    )*};
}
attr_types!(A0 "rs.attr.A0", A1 "rs.attr.A1", A2 "rs.attr.A2", A3 "rs.attr.A3", A4 "rs.attr.A4");

#[test]
fn get_attr_reads_the_right_field_of_each_type_past_its_cache() {
    // 5 types x 8 fields = 40 (type, name) pairs, more than a thread keeps (32): read in turn
    // three times over, every read must give the field of its own object's type.
    let objects: Vec<(i64, ObjectRef)> = (0..5i64)
        .map(|t| {
            let v = |f: i64| 100 * t + f;
            let obj = match t {
                0 => A0 {
                    f0: v(0),
                    f1: format!("s{t}"),
                    f2: v(2),
                    f3: 0.5 + t as f64,
                    f4: v(4),
                    f5: t % 2 == 0,
                    f6: v(6),
                    f7: v(7),
                }
                .to_object(),
                1 => A1 {
                    f0: v(0),
                    f1: format!("s{t}"),
                    f2: v(2),
                    f3: 0.5 + t as f64,
                    f4: v(4),
                    f5: t % 2 == 0,
                    f6: v(6),
                    f7: v(7),
                }
                .to_object(),
                2 => A2 {
                    f0: v(0),
                    f1: format!("s{t}"),
                    f2: v(2),
                    f3: 0.5 + t as f64,
                    f4: v(4),
                    f5: t % 2 == 0,
                    f6: v(6),
                    f7: v(7),
                }
                .to_object(),
                3 => A3 {
                    f0: v(0),
                    f1: format!("s{t}"),
                    f2: v(2),
                    f3: 0.5 + t as f64,
                    f4: v(4),
                    f5: t % 2 == 0,
                    f6: v(6),
                    f7: v(7),
                }
                .to_object(),
                _ => A4 {
                    f0: v(0),
                    f1: format!("s{t}"),
                    f2: v(2),
                    f3: 0.5 + t as f64,
                    f4: v(4),
                    f5: t % 2 == 0,
                    f6: v(6),
                    f7: v(7),
                }
                .to_object(),
            };
            (t, obj.unwrap())
        })
        .collect();
    let check = || {
        for _ in 0..3 {
            for (t, obj) in &objects {
                for f in [0i64, 2, 4, 6, 7] {
                    let got: i64 = obj.get_attr(&format!("f{f}")).unwrap().try_into().unwrap();
                    assert_eq!(got, 100 * t + f, "{} f{f}", obj.type_key());
                }
                let s: String = obj.get_attr("f1").unwrap().try_into().unwrap();
                assert_eq!(s, format!("s{t}"));
                let x: f64 = obj.get_attr("f3").unwrap().try_into().unwrap();
                assert_eq!(x, 0.5 + *t as f64);
                let b: bool = obj.get_attr("f5").unwrap().try_into().unwrap();
                assert_eq!(b, t % 2 == 0);
                // A name the type lacks stays an AttributeError however often it is asked.
                for _ in 0..2 {
                    let err = obj.get_attr("f8").unwrap_err();
                    assert_eq!(err.kind(), "AttributeError");
                    assert!(err.message().contains("f8"), "{}", err.message());
                    assert!(err.message().contains(obj.type_key()), "{}", err.message());
                }
            }
        }
    };
    check();
    // Each thread keeps its own getters; reads from several at once agree.
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(check);
        }
    });
    // A field written after reads goes through the same getter: the new value is read.
    let (_, obj) = &objects[2];
    // SAFETY: no other thread reads `obj` now.
    unsafe { obj.set_attr("f4", 7i64) }.unwrap();
    assert_eq!(obj.get_attr("f4").unwrap().cast::<i64>().unwrap(), 7);
}
