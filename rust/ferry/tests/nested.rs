//! Types defined in Rust as fields of types defined in Rust (directly, `Option` of one,
//! `Array` of them), and the derive's field reads through cached getters.
use ferry::{Array, Object, ObjectRef};

#[derive(ferry::Object, Clone, Debug, PartialEq)]
#[ferry(type_key = "rs.nested.Point")]
struct Point {
    x: i64,
    y: f64,
}

#[derive(ferry::Object, Clone, Debug)]
#[ferry(type_key = "rs.nested.Segment")]
struct Segment {
    from: Point,
    to: Option<Point>,
    via: Array<Point>,
    name: String,
}

fn segment() -> Segment {
    Segment {
        from: Point { x: 1, y: 0.5 },
        to: Some(Point { x: 2, y: -1.0 }),
        via: vec![Point { x: 3, y: 3.5 }, Point { x: 4, y: 4.5 }]
            .into_iter()
            .collect(),
        name: "s".into(),
    }
}

#[test]
fn a_nested_type_round_trips_through_an_object() -> ferry::Result<()> {
    // No register_type call: to_object registers what it needs.
    let obj = segment().to_object()?;
    assert_eq!(obj.type_key(), "rs.nested.Segment");
    let from: ObjectRef = obj.get_attr("from")?.cast()?;
    assert_eq!(from.type_key(), "rs.nested.Point"); // a real object, reflected by C++
    assert_eq!(from.get_attr("y")?.cast::<f64>()?, 0.5);
    let back = Segment::from_object(&obj)?;
    assert_eq!(back.from, Point { x: 1, y: 0.5 });
    assert_eq!(back.to, Some(Point { x: 2, y: -1.0 }));
    let via: Vec<Point> = back.via.iter().collect();
    assert_eq!(via, [Point { x: 3, y: 3.5 }, Point { x: 4, y: 4.5 }]);
    // None in the Option field, an empty Array.
    let bare = Segment {
        to: None,
        via: Array::from(Vec::<Point>::new()),
        ..segment()
    };
    let back = Segment::from_object(&bare.to_object()?)?;
    assert_eq!((back.to, back.via.len()), (None, 0));
    Ok(())
}

#[test]
fn json_and_structural_equality_see_the_nesting() -> ferry::Result<()> {
    let obj = segment().to_object()?;
    let text = ferry::save_json(&obj)?;
    assert!(text.contains("rs.nested.Point"), "{text}");
    let loaded: ObjectRef = ferry::load_json(&text)?.cast()?;
    assert!(ferry::structural_equal(&obj, &loaded));
    let moved = Segment {
        from: Point { x: 9, y: 0.5 },
        ..segment()
    };
    assert!(!ferry::structural_equal(&obj, &moved.to_object()?));
    assert_eq!(Segment::from_object(&loaded)?.from.x, 1);
    Ok(())
}

#[test]
fn a_field_of_the_wrong_type_is_refused_naming_it() -> ferry::Result<()> {
    ferry::register_type::<Segment>()?;
    let p = Point { x: 1, y: 1.0 }.to_object()?;
    let err = ferry::make_node(
        "rs.nested.Segment",
        &[
            ("from", ferry::Array::from(vec![1i64]).into()),
            ("to", p.clone().into()),
            ("via", Array::from(Vec::<Point>::new()).into()),
            ("name", "n".into()),
        ],
    )
    .unwrap_err();
    assert_eq!(err.kind(), "TypeError");
    assert!(err.message().contains("from"), "{}", err.message());
    // A Point where a Segment is expected, read as one: TypeError naming both.
    let err = Segment::from_object(&p).unwrap_err();
    assert_eq!(err.kind(), "TypeError");
    assert!(
        err.message().contains("rs.nested.Segment"),
        "{}",
        err.message()
    );
    Ok(())
}

#[test]
fn cached_reads_from_many_threads() -> ferry::Result<()> {
    let obj = segment().to_object()?;
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..200 {
                    let s = Segment::from_object(&obj).unwrap();
                    assert_eq!(
                        (s.from, s.to, s.via.len()),
                        (segment().from, segment().to, 2)
                    );
                }
            });
        }
    });
    // A Point where a Segment is expected after the cache was filled: refused, not read at
    // Segment's offsets.
    let p = Point { x: 1, y: 1.0 }.to_object()?;
    assert_eq!(Segment::from_object(&p).unwrap_err().kind(), "TypeError");
    Ok(())
}
