//! List and Dict: mutable, shared by every holder (C++ and Python included); reads convert
//! each element, writes are unsafe (Ferry does not synchronize them).
mod common;

use ferry::{Any, Dict, Function, List, ObjectRef};

#[test]
fn lists_are_shared_and_checked_on_read() {
    let xs: List<i64> = vec![1i64, 2, 3].into();
    let alias = xs.clone();
    assert!(alias.as_object().same_as(xs.as_object()));
    // SAFETY: this test's lists are used by this thread only.
    unsafe {
        xs.push(4i64).unwrap();
        xs.set(0, 10i64).unwrap();
        xs.insert(1, 11i64).unwrap();
        xs.remove(2).unwrap();
    }
    assert_eq!(
        alias.to_vec().unwrap(),
        [10, 11, 3, 4],
        "every holder sees the writes"
    );
    assert_eq!(xs.len(), 4);
    assert_eq!(xs.get(1).unwrap(), 11);
    let err = xs.get(9).unwrap_err();
    assert_eq!(
        err.to_string(),
        "IndexError: list index 9 is out of range for a list of 4"
    );
    // SAFETY: as above.
    let err = unsafe { xs.set(9, 0i64) }.unwrap_err();
    assert_eq!(err.kind(), "IndexError");
    // SAFETY: as above.
    let err = unsafe { xs.remove(4) }.unwrap_err();
    assert_eq!(err.kind(), "IndexError");
    // Another holder writes a string into the list of ints: reading it says so.
    let as_any: List<Any> = Any::from(xs.clone()).try_into().unwrap();
    // SAFETY: as above.
    unsafe { as_any.push("not an int").unwrap() };
    let err = xs.get(4).unwrap_err();
    assert_eq!(
        err.to_string(),
        "TypeError: expected int but got ferry.String"
    );
    assert!(xs.to_vec().is_err());
    // A snapshot does not change with later writes.
    let snapshot = xs.to_array();
    // SAFETY: as above.
    unsafe { xs.clear().unwrap() };
    assert!(xs.is_empty());
    assert_eq!(snapshot.len(), 5);
}

#[test]
fn lists_through_cpp() {
    let xs: List<ferry::String> = ["a", "longer string"]
        .into_iter()
        .map(ferry::String::from)
        .collect();
    let to_array = Function::get_global_required("ferry.ListToArray").unwrap();
    let arr: ferry::Array<ferry::String> = to_array.call((&xs,)).unwrap().try_into().unwrap();
    assert_eq!(arr.get(1).unwrap(), "longer string");
    let echo = Function::from_fn(|l: List<i64>| Ok(l.len() as i64));
    assert_eq!(
        echo.call((List::<i64>::new(),))
            .unwrap()
            .cast::<i64>()
            .unwrap(),
        0
    );
    let err = echo.call((ferry::Array::from(vec![1i64]),)).unwrap_err();
    assert!(
        err.message()
            .contains("expected ferry.List[int] but got ferry.Array"),
        "{err}"
    );
}

#[test]
fn dicts() {
    let d: Dict<ferry::String, i64> = [("a".into(), 1), ("b".into(), 2)].into_iter().collect();
    let alias = d.clone();
    assert_eq!(d.len(), 2);
    assert_eq!(d.get("a").unwrap(), Some(1));
    assert_eq!(d.get("zz").unwrap(), None);
    assert!(d.contains_key("b").unwrap());
    // SAFETY: this test's dicts are used by this thread only.
    unsafe {
        d.insert("c", 3i64).unwrap();
        d.insert("a", 100i64).unwrap();
        assert!(d.remove("b").unwrap());
        assert!(!d.remove("b").unwrap());
    }
    let entries: Vec<(String, i64)> = alias
        .to_vec()
        .unwrap()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    assert_eq!(entries, [("a".to_string(), 100), ("c".to_string(), 3)]);
    // A value of another type written by another holder.
    let any_view: Dict<Any, Any> = Any::from(d.clone()).try_into().unwrap();
    // SAFETY: as above.
    unsafe { any_view.insert("x", 1.5).unwrap() };
    assert_eq!(
        d.get("x").unwrap_err().message(),
        "expected int but got float"
    );
    // An object as a key.
    let key: ObjectRef = ferry::String::from("an object used as a key").into();
    let by_obj: Dict<ObjectRef, bool> = Dict::new();
    // SAFETY: as above.
    unsafe { by_obj.insert(&key, true).unwrap() };
    assert_eq!(by_obj.get(&key).unwrap(), Some(true));
    // SAFETY: as above.
    unsafe { d.clear().unwrap() };
    assert!(d.is_empty() && alias.is_empty());
}
