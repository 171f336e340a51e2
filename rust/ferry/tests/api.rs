//! Unit tests of every API of the `ferry` crate, against libferry and the demo library
//! (tests/demo/demo.cc), including hostile ones: wrong types, panics and errors crossing C++,
//! many threads, reference counts over many calls.
mod common;

use ferry::{call, Any, AnyView, Array, Error, Function, Map, ObjectRef};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn global(name: &str) -> Function {
    common::load_demo();
    Function::get_global_required(name).unwrap()
}

fn long_string(text: &str) -> ObjectRef {
    assert!(
        text.len() >= 8,
        "short strings travel inline, not as objects"
    );
    ferry::String::from(text).into()
}

// ---------------------------------------------------------------------------------------------
// Objects.

#[test]
fn clone_and_drop_count_references() {
    let obj = long_string("a string object");
    assert_eq!(obj.use_count(), 1);
    let copies: Vec<ObjectRef> = (0..10).map(|_| obj.clone()).collect();
    assert_eq!(obj.use_count(), 11);
    assert!(copies.iter().all(|c| c.same_as(&obj)));
    drop(copies);
    assert_eq!(obj.use_count(), 1);
    assert!(!obj.same_as(&long_string("a string object")));
}

#[test]
fn type_key_and_is_instance_of() {
    let obj = long_string("a string object");
    assert_eq!(obj.type_key(), "ferry.String");
    assert_eq!(obj.type_index(), ferry::sys::kFerryString);
    assert!(obj.is_instance_of("ferry.String"));
    assert!(obj.is_instance_of("ferry.Object"));
    assert!(!obj.is_instance_of("ferry.Array"));
    assert!(!obj.is_instance_of("no.such.Type"));
}

#[test]
fn downcast_and_as_ref() {
    let obj = long_string("a string object");
    let s: &ferry::String = obj.as_ref().expect("a String");
    assert_eq!(s, "a string object");
    assert!(obj.as_ref::<Function>().is_none());
    let err = obj.clone().downcast::<Function>().unwrap_err();
    assert_eq!(err.kind(), "TypeError");
    assert_eq!(
        err.message(),
        "cannot downcast ferry.String to ferry.Function"
    );
    let s: ferry::String = obj.clone().downcast().unwrap();
    assert_eq!(obj.use_count(), 2);
    drop(s);
    assert_eq!(obj.use_count(), 1);
    // Typed containers check their elements.
    let ints: ObjectRef = Array::from(vec![1i64, 2]).into();
    assert!(ints.as_ref::<Array<i64>>().is_some());
    assert!(ints.as_ref::<Array<ferry::String>>().is_none());
    let err = ints.downcast::<Array<ferry::String>>().unwrap_err();
    assert_eq!(
        err.message(),
        "cannot downcast ferry.Array to ferry.Array[ferry.String]"
    );
}

#[test]
fn objects_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<ObjectRef>();
    check::<Any>();
    check::<Function>();
    check::<ferry::String>();
    check::<Array<i64>>();
    check::<Map<ferry::String, i64>>();
    check::<Error>();
}

// ---------------------------------------------------------------------------------------------
// Values.

#[test]
fn integers_convert_with_range_checks() {
    assert_eq!(i64::try_from(Any::from(-5i64)).unwrap(), -5);
    assert_eq!(i8::try_from(Any::from(127i64)).unwrap(), 127);
    assert_eq!(u8::try_from(Any::from(255u8)).unwrap(), 255);
    assert_eq!(
        i64::try_from(Any::from(true)).unwrap(),
        1,
        "bool reads as int, as in C++"
    );
    let err = i32::try_from(Any::from(1i64 << 40)).unwrap_err();
    assert_eq!(err.kind(), "OverflowError");
    assert_eq!(
        err.message(),
        "integer 1099511627776 is out of range for int32"
    );
    let err = u32::try_from(Any::from(-1i64)).unwrap_err();
    assert_eq!(err.message(), "integer -1 is out of range for uint32");
    let err = Any::try_from(u64::MAX).unwrap_err();
    assert_eq!(err.kind(), "OverflowError");
    assert_eq!(
        u64::try_from(Any::try_from(1u64 << 62).unwrap()).unwrap(),
        1 << 62
    );
    let err = i64::try_from(Any::from("seven")).unwrap_err();
    assert_eq!(err.kind(), "TypeError");
    assert_eq!(err.message(), "expected int but got ferry.String");
    let err = i64::try_from(Any::from(1.5)).unwrap_err();
    assert_eq!(err.message(), "expected int but got float");
}

#[test]
fn floats_bools_none_and_options() {
    assert_eq!(f64::try_from(Any::from(2.5f64)).unwrap(), 2.5);
    assert_eq!(f64::try_from(Any::from(2i64)).unwrap(), 2.0);
    assert_eq!(f32::try_from(Any::from(0.5f32)).unwrap(), 0.5);
    assert!(bool::try_from(Any::from(true)).unwrap());
    assert!(!bool::try_from(Any::from(0i64)).unwrap());
    assert_eq!(
        bool::try_from(Any::from(1.0)).unwrap_err().message(),
        "expected bool but got float"
    );
    assert!(Any::none().is_none());
    assert_eq!(Any::none().type_key(), "None");
    <()>::try_from(Any::none()).unwrap();
    assert_eq!(Option::<i64>::try_from(Any::none()).unwrap(), None);
    assert_eq!(Option::<i64>::try_from(Any::from(3i64)).unwrap(), Some(3));
    let err = Option::<i64>::try_from(Any::from("x")).unwrap_err();
    assert_eq!(err.message(), "expected Optional[int] but got ferry.String");
    assert!(Any::from(None::<i64>).is_none());
    assert_eq!(Any::from(Some(4i64)).cast::<i64>().unwrap(), 4);
}

#[test]
fn strings_short_and_long() {
    for text in [
        "",
        "short",
        "exactly8",
        "a string long enough to be an object",
        "nul\0inside",
    ] {
        let any = Any::from(text);
        let expected_index = if text.len() < 8 {
            ferry::sys::kFerrySmallStr
        } else {
            ferry::sys::kFerryString
        };
        assert_eq!(any.type_index(), expected_index, "{text:?}");
        assert_eq!(String::try_from(any.clone()).unwrap(), text);
        let s = ferry::String::try_from(any).unwrap();
        assert_eq!(s.as_bytes(), text.as_bytes());
        assert_eq!(s.len(), text.len());
    }
    let s = ferry::String::from_bytes(b"\xff\xfe not utf-8");
    assert!(s.to_str().is_err());
    let err = String::try_from(Any::from(s)).unwrap_err();
    assert_eq!(err.kind(), "TypeError");
}

#[test]
fn any_clone_and_views_count_references() {
    let obj = long_string("a string object");
    let any = Any::from(obj.clone());
    assert_eq!(obj.use_count(), 2);
    let copy = any.clone();
    assert_eq!(obj.use_count(), 3);
    let view: AnyView<'_> = any.view();
    assert_eq!(obj.use_count(), 3, "a view owns nothing");
    let owned = view.to_owned();
    assert_eq!(obj.use_count(), 4);
    drop((any, copy, owned));
    assert_eq!(obj.use_count(), 1);
    let back: ObjectRef = Any::from(obj.clone()).try_into().unwrap();
    assert!(back.same_as(&obj));
}

// ---------------------------------------------------------------------------------------------
// Errors.

#[test]
fn error_parts_display_and_std_error() {
    let err = Error::new("ValueError", "bad value");
    assert_eq!(err.kind(), "ValueError");
    assert_eq!(err.message(), "bad value");
    assert_eq!(err.to_string(), "ValueError: bad value");
    assert!(format!("{err:?}").contains("ValueError"));
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(err.clone());
    assert_eq!(boxed.to_string(), "ValueError: bad value");
    assert_eq!(err.as_object().type_key(), "ferry.Error");
    assert!(Error::from_object(long_string("not an error")).is_err());
}

#[test]
fn cpp_errors_arrive_as_err_with_kind_message_and_backtrace() {
    let raise = global("demo.raise");
    let err = raise.call(("ValueError", "from C++")).unwrap_err();
    assert_eq!(err.kind(), "ValueError");
    assert_eq!(err.message(), "from C++");
    assert!(!err.backtrace().is_empty(), "C++ frames are captured");
    let err = raise.call(("MyOwnError", "any kind travels")).unwrap_err();
    assert_eq!(err.kind(), "MyOwnError");
}

// ---------------------------------------------------------------------------------------------
// Functions.

#[test]
fn globals_register_look_up_list_and_remove() {
    assert!(Function::get_global("rs.test.no_such_function").is_none());
    let err = Function::get_global_required("rs.test.no_such_function").unwrap_err();
    assert_eq!(err.kind(), "KeyError");
    assert!(
        err.message().contains("'rs.test.no_such_function'"),
        "{}",
        err.message()
    );

    let one = Function::from_fn(|| Ok(1i64));
    Function::register_global("rs.test.registered", one.clone(), false).unwrap();
    let err = Function::register_global("rs.test.registered", one, false).unwrap_err();
    assert_eq!(err.kind(), "RuntimeError");
    Function::register_global("rs.test.registered", Function::from_fn(|| Ok(2i64)), true).unwrap();
    let f = Function::get_global_required("rs.test.registered").unwrap();
    assert_eq!(f.call(()).unwrap().cast::<i64>().unwrap(), 2);

    let names = Function::list_global_names().unwrap();
    assert!(names.iter().any(|n| n == "rs.test.registered"));
    assert!(names.iter().any(|n| n == "ferry.Array"));
    assert!(names.windows(2).all(|w| w[0] <= w[1]), "sorted");

    assert!(Function::remove_global("rs.test.registered").unwrap());
    assert!(!Function::remove_global("rs.test.registered").unwrap());
    assert!(Function::get_global("rs.test.registered").is_none());
}

#[test]
fn call_forms_tuple_macro_and_packed() {
    let add = global("demo.add");
    assert_eq!(add.call((1i64, 2i64)).unwrap().cast::<i64>().unwrap(), 3);
    assert_eq!(call!(add, 40i64, 2i32).unwrap().cast::<i64>().unwrap(), 42);
    let args = [Any::from(5i64), Any::from(6i64)];
    let views: Vec<AnyView<'_>> = args.iter().map(Any::view).collect();
    assert_eq!(add.call_packed(&views).unwrap().cast::<i64>().unwrap(), 11);
    let err = add.call((1i64,)).unwrap_err();
    assert_eq!(err.kind(), "TypeError");
    let err = add.call(("a", 2i64)).unwrap_err();
    assert_eq!(err.kind(), "TypeError");
    assert!(err.message().contains("argument 0"), "{}", err.message());
}

#[test]
fn typed_closures_name_the_argument_position_in_errors() {
    let f = Function::from_fn(|a: i64, b: String, c: Option<f64>| {
        Ok(format!("{a}:{b}:{}", c.unwrap_or(-1.0)))
    });
    let r: String = f.call((1i64, "x", 2.5)).unwrap().try_into().unwrap();
    assert_eq!(r, "1:x:2.5");
    let r: String = f.call((1i64, "x", ())).unwrap().try_into().unwrap();
    assert_eq!(r, "1:x:-1");

    let err = f.call((1i64, 2i64, 3.0)).unwrap_err();
    assert_eq!(err.kind(), "TypeError");
    assert_eq!(
        err.message(),
        "Mismatched type on argument 1 when calling \
         `<rust closure>(0: int, 1: ferry.String, 2: Optional[float])`: \
         expected ferry.String but got int"
    );
    let err = f.call((1i64, "x", "y")).unwrap_err();
    assert!(
        err.message().starts_with("Mismatched type on argument 2 "),
        "{}",
        err.message()
    );

    let err = f.call((1i64,)).unwrap_err();
    assert_eq!(err.kind(), "TypeError");
    assert!(
        err.message().contains("takes 3 arguments but 1 were given"),
        "{}",
        err.message()
    );

    let small = Function::from_fn(|x: i32| Ok(x));
    let err = small.call((1i64 << 40,)).unwrap_err();
    assert_eq!(err.kind(), "OverflowError");
    assert_eq!(
        err.message(),
        "argument 0 of `<rust closure>(0: int32)`: integer 1099511627776 is out of range for int32"
    );
}

#[test]
fn typed_closure_errors_reach_cpp_with_their_kind() {
    let catch = global("demo.catch");
    let caught =
        |f: Function, arg: Any| -> String { catch.call((f, arg)).unwrap().try_into().unwrap() };
    let wants_string = Function::from_fn(|s: String| Ok(s.len() as i64));
    assert_eq!(
        caught(wants_string, Any::from(41i64)),
        "TypeError: Mismatched type on argument 0 when calling `<rust closure>(0: ferry.String)`: \
         expected ferry.String but got int"
    );
    let fails = Function::from_fn(|x: i64| -> ferry::Result<i64> {
        Err(Error::new("ValueError", &format!("no good: {x}")))
    });
    assert_eq!(
        caught(fails.clone(), Any::from(3i64)),
        "ValueError: no good: 3"
    );
    // ... and the same Err straight from Rust.
    let err = fails.call((3i64,)).unwrap_err();
    assert_eq!((err.kind(), err.message()), ("ValueError", "no good: 3"));
    let ok = Function::from_fn(|x: i64| Ok(x));
    assert_eq!(caught(ok, Any::from(1i64)), "no error");
}

#[test]
fn errors_cross_cpp_and_rust_both_ways_as_the_same_object() {
    // Rust -> C++ (demo.raise) -> Rust closure's Err -> C++ (demo.call) -> Rust.
    let inner = Arc::new(std::sync::Mutex::new(None::<Error>));
    let seen = inner.clone();
    let f = Function::from_fn(move |x: i64| -> ferry::Result<i64> {
        let raise = Function::get_global_required("demo.raise")?;
        let err = raise.call(("KeyError", format!("key {x}"))).unwrap_err();
        *seen.lock().unwrap() = Some(err.clone());
        Err(err)
    });
    let err = global("demo.call").call((f,)).unwrap_err();
    assert_eq!(err.kind(), "KeyError");
    assert_eq!(err.message(), "key 41");
    let inner = inner.lock().unwrap().take().unwrap();
    assert!(
        err.as_object().same_as(inner.as_object()),
        "the very same Error object"
    );
}

#[test]
fn panics_become_runtime_errors_and_never_abort() {
    let boom = Function::from_fn(|x: i64| -> ferry::Result<i64> {
        if x > 0 {
            panic!("boom at {x}");
        }
        Ok(x)
    });
    // Called from Rust.
    let err = boom.call((1i64,)).unwrap_err();
    assert_eq!(err.kind(), "RuntimeError");
    assert_eq!(err.message(), "a Rust function panicked: boom at 1");
    // Called from C++ (demo.call passes 41), caught there as a ferry::Error.
    let caught: String = global("demo.catch")
        .call((boom.clone(), 7i64))
        .unwrap()
        .try_into()
        .unwrap();
    assert_eq!(caught, "RuntimeError: a Rust function panicked: boom at 7");
    let err = global("demo.call").call((boom.clone(),)).unwrap_err();
    assert_eq!(err.kind(), "RuntimeError");
    // A payload that is not a string.
    let odd = Function::from_packed(|_| std::panic::panic_any(42u8));
    let err = odd.call(()).unwrap_err();
    assert_eq!(
        err.message(),
        "a Rust function panicked: a panic without a message"
    );
    // The function still works afterwards.
    assert_eq!(boom.call((0i64,)).unwrap().cast::<i64>().unwrap(), 0);
}

#[test]
fn a_closure_called_from_many_cpp_threads() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let f = Function::from_fn(move |i: i64| {
        counter.fetch_add(1, Ordering::Relaxed);
        Ok(i)
    });
    let threads = 8i64;
    let per_thread = 2000i64;
    let sum: i64 = global("demo.call_threads")
        .call((f, threads, per_thread))
        .unwrap()
        .try_into()
        .unwrap();
    assert_eq!(sum, threads * (per_thread * (per_thread - 1) / 2));
    assert_eq!(
        calls.load(Ordering::Relaxed),
        (threads * per_thread) as usize
    );
    // Errors and panics on those threads come back too.
    let f = Function::from_fn(|i: i64| -> ferry::Result<i64> {
        if i == 500 {
            panic!("thread panic");
        }
        Ok(i)
    });
    let err = global("demo.call_threads")
        .call((f, 4i64, 1000i64))
        .unwrap_err();
    assert_eq!(
        (err.kind(), err.message()),
        ("RuntimeError", "a Rust function panicked: thread panic")
    );
}

#[test]
fn functions_and_objects_shared_by_many_rust_threads() {
    let obj = long_string("shared by threads");
    let echo = Function::from_fn(|o: ObjectRef| Ok(o));
    let add = global("demo.add");
    std::thread::scope(|scope| {
        for t in 0..8i64 {
            let (obj, echo, add) = (&obj, &echo, &add);
            scope.spawn(move || {
                for i in 0..2000i64 {
                    let back: ObjectRef = echo.call((obj,)).unwrap().try_into().unwrap();
                    assert!(back.same_as(obj));
                    assert_eq!(add.call((t, i)).unwrap().cast::<i64>().unwrap(), t + i);
                }
            });
        }
    });
    assert_eq!(
        obj.use_count(),
        1,
        "every thread's references were released"
    );
}

#[test]
fn no_leak_over_many_calls() {
    const N: i64 = 100_000;
    let obj = long_string("counted across calls");
    // A Rust closure called 1e5 times from C++, receiving and returning the object.
    let echo = Function::from_fn(|o: ObjectRef| Ok(o));
    let last: ObjectRef = global("demo.call_n")
        .call((echo.clone(), N, &obj))
        .unwrap()
        .try_into()
        .unwrap();
    assert!(last.same_as(&obj));
    drop(last);
    assert_eq!(obj.use_count(), 1);
    // Called 1e5 times from Rust, half of them failing.
    let picky = Function::from_fn(|o: ObjectRef, fail: bool| -> ferry::Result<ObjectRef> {
        if fail {
            Err(Error::new("ValueError", "asked to fail"))
        } else {
            Ok(o)
        }
    });
    for i in 0..N {
        let r = picky.call((&obj, i % 2 == 0));
        assert_eq!(r.is_err(), i % 2 == 0);
    }
    assert_eq!(obj.use_count(), 1);
    // Wrong arguments: the conversion error path releases what it took.
    for _ in 0..1000 {
        assert!(echo.call((&obj, 1i64)).is_err());
    }
    assert_eq!(obj.use_count(), 1);
}

#[test]
fn a_function_owns_its_closure_until_the_last_reference() {
    struct Guard(Arc<AtomicUsize>);
    impl Drop for Guard {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let guard = Guard(drops.clone());
    let captured = long_string("captured by a closure");
    let held = captured.clone();
    let f = Function::from_fn(move || {
        let _ = &guard;
        Ok(held.clone())
    });
    assert_eq!(captured.use_count(), 2);
    Function::register_global("rs.test.owned", f.clone(), false).unwrap();
    drop(f);
    assert_eq!(
        drops.load(Ordering::SeqCst),
        0,
        "the registry still holds it"
    );
    assert_eq!(
        Function::get_global_required("rs.test.owned")
            .unwrap()
            .call(())
            .unwrap()
            .type_key(),
        "ferry.String"
    );
    assert!(Function::remove_global("rs.test.owned").unwrap());
    assert_eq!(
        drops.load(Ordering::SeqCst),
        1,
        "dropped with the last reference"
    );
    assert_eq!(captured.use_count(), 1);
}

#[test]
fn a_panicking_drop_of_a_closure_does_not_unwind_into_cpp() {
    struct Bomb;
    impl Drop for Bomb {
        fn drop(&mut self) {
            panic!("drop panics");
        }
    }
    let bomb = Bomb;
    let f = Function::from_fn(move || {
        let _ = &bomb;
        Ok(())
    });
    drop(f); // runs the resource deleter from C++; the panic is swallowed there
}

// ---------------------------------------------------------------------------------------------
// Containers.

#[test]
fn arrays() {
    let a = Array::from(vec![1i64, 2, 3]);
    assert_eq!(a.len(), 3);
    assert!(!a.is_empty());
    assert_eq!(a.get(0), Some(1));
    assert_eq!(a.get(3), None);
    assert_eq!(a.iter().collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!((&a).into_iter().map(|x| x * 10).sum::<i64>(), 60);
    let b: Array<i64> = (0..5).collect();
    assert_eq!(b.len(), 5);
    let empty: Array<i64> = Array::from(Vec::new());
    assert!(empty.is_empty());
    // Through C++ and back, and read with C++'s own global.
    let any = Any::from(a.clone());
    let back: Array<i64> = any.clone().try_into().unwrap();
    assert!(back.as_object().same_as(a.as_object()));
    let size: i64 = Function::get_global_required("ferry.ArraySize")
        .unwrap()
        .call((&any,))
        .unwrap()
        .try_into()
        .unwrap();
    assert_eq!(size, 3);
    // Mixed arrays.
    let mixed: Array<Any> = vec![Any::from(1i64), Any::from("two"), Any::none()].into();
    assert_eq!(mixed.get(1).unwrap().cast::<String>().unwrap(), "two");
    let err = Array::<i64>::try_from(Any::from(mixed)).unwrap_err();
    assert_eq!(err.kind(), "TypeError");
    assert_eq!(
        err.message(),
        "expected ferry.Array[int] but got ferry.Array"
    );
    let nested: Array<Array<i64>> =
        vec![Array::from(vec![1i64]), Array::from(vec![2i64, 3])].into();
    assert_eq!(nested.get(1).unwrap().get(1), Some(3));
    assert_eq!(format!("{nested:?}"), "[[1], [2, 3]]");
}

#[test]
fn maps() {
    let m: Map<ferry::String, i64> = Map::from_iter([("k".into(), 1), ("a longer key".into(), 2)]);
    assert_eq!(m.len(), 2);
    assert_eq!(m.get("k").unwrap(), Some(1));
    assert_eq!(m.get("a longer key").unwrap(), Some(2));
    assert_eq!(m.get("missing").unwrap(), None);
    let entries: Vec<(String, i64)> = m.iter().map(|(k, v)| (k.to_string(), v)).collect();
    assert_eq!(
        entries,
        [("k".to_string(), 1), ("a longer key".to_string(), 2)]
    );
    let back: Map<ferry::String, i64> = Any::from(m.clone()).try_into().unwrap();
    assert!(back.as_object().same_as(m.as_object()));
    let err = Map::<ferry::String, String>::try_from(Any::from(m)).unwrap_err();
    assert_eq!(
        err.message(),
        "expected ferry.Map[ferry.String, ferry.String] but got ferry.Map"
    );
    let by_int: Map<i64, Array<i64>> = [(1i64, Array::from(vec![1i64]))].into_iter().collect();
    assert_eq!(by_int.get(1i64).unwrap().unwrap().get(0), Some(1));
}

// ---------------------------------------------------------------------------------------------
// Reflection, JSON, libraries.

#[test]
fn make_node_get_and_set_attr() {
    common::load_demo();
    let x = ferry::make_node("demo.IntImm", &[("value", Any::from(7i64))]).unwrap();
    assert_eq!(x.type_key(), "demo.IntImm");
    assert_eq!(x.get_attr("value").unwrap().cast::<i64>().unwrap(), 7);
    let err = x.get_attr("nope").unwrap_err();
    assert_eq!(err.kind(), "AttributeError");
    assert!(err.message().contains("nope"), "{}", err.message());
    // Names short enough for the stack buffer, at its edge and past it, and one with a NUL:
    // each an AttributeError naming it, never a read of another field.
    for name in [
        "valu",
        "value\0",
        &"v".repeat(63),
        &"v".repeat(64),
        &"w".repeat(500),
    ] {
        let err = x.get_attr(name).unwrap_err();
        assert_eq!(err.kind(), "AttributeError", "{name:?}");
        let shown = name.replace('\0', "\\0");
        assert!(err.message().contains(&shown), "{}", err.message());
    }
    // SAFETY: no other thread sees `x`.
    let err = unsafe { x.set_attr("value", 8i64) }.unwrap_err();
    assert_eq!(
        err.kind(),
        "AttributeError",
        "demo.IntImm is not mutable: {}",
        err.message()
    );
    let err = ferry::make_node("demo.IntImm", &[("value", Any::from("seven"))]).unwrap_err();
    assert_eq!(err.kind(), "TypeError");
    assert!(err.message().contains("value"), "{}", err.message());
    let err = ferry::make_node("no.such.Node", &[]).unwrap_err();
    assert!(err.message().contains("no.such.Node"), "{}", err.message());
}

#[test]
fn structural_equality_hash_and_json() {
    common::load_demo();
    let node = |v: i64| ferry::make_node("demo.IntImm", &[("value", Any::from(v))]).unwrap();
    let (a, b, c) = (node(1), node(1), node(2));
    assert!(!a.same_as(&b));
    assert!(ferry::structural_equal(&a, &b));
    assert!(!ferry::structural_equal(&a, &c));
    assert_eq!(
        ferry::structural_hash(&a).unwrap(),
        ferry::structural_hash(&b).unwrap()
    );
    assert_ne!(
        ferry::structural_hash(&a).unwrap(),
        ferry::structural_hash(&c).unwrap()
    );
    let text = ferry::save_json(&a).unwrap();
    assert!(text.contains("demo.IntImm"), "{text}");
    let loaded: ObjectRef = ferry::load_json(&text).unwrap().try_into().unwrap();
    assert!(ferry::structural_equal(&a, &loaded));
    let arr = Array::from(vec![a.clone(), c.clone()]);
    let round = ferry::load_json(&ferry::save_json(&arr).unwrap()).unwrap();
    assert!(ferry::structural_equal(&arr, &round));
    let err = ferry::load_json("{not json").unwrap_err();
    assert_eq!(err.kind(), "ValueError");
}

#[test]
fn load_library_refuses_a_library_built_for_another_abi() {
    let library = common::abi_bumped_library();
    for _ in 0..2 {
        let err = ferry::load_library(&library).unwrap_err();
        assert_eq!(err.kind(), "RuntimeError");
        let message = err.message();
        assert!(message.contains("libdemo_abi_bumped.so"), "{message}");
        assert!(
            message.contains("running libferry is ABI version"),
            "{message}"
        );
        assert!(message.contains("rebuild it"), "{message}");
    }
}

#[test]
fn load_library_errors_name_the_path() {
    let err = ferry::load_library("/no/such/libthing.so").unwrap_err();
    assert_eq!(err.kind(), "RuntimeError");
    assert!(
        err.message().contains("/no/such/libthing.so"),
        "{}",
        err.message()
    );
    common::load_demo();
    common::load_demo(); // loading twice is harmless
    ferry::load_library(common::demo_dir().join("libdemo.so")).unwrap();
}

/// `Function::call` releases what it made for owned arguments and nothing it borrowed, for
/// every mix of owned and borrowed cells, on success and on error.
#[test]
fn call_releases_owned_arguments_and_only_those() {
    // Returns the two objects' reference counts as seen inside the call (n is only checked).
    let keep = Function::from_fn(|a: ObjectRef, b: ObjectRef, _n: i64| {
        Ok((a.use_count() + b.use_count()) as i64)
    });
    let obj = long_string("an argument object");
    let arr = Array::from(vec![1i64, 2]);
    for _ in 0..100 {
        // Moved-in clones (owned cells), a borrowed &ObjectRef, a borrowed typed reference.
        keep.call((obj.clone(), &obj, 1i64)).unwrap();
        keep.call((&obj, arr.clone(), 2i64)).unwrap();
        keep.call((Any::from(obj.clone()), &arr, 3i64)).unwrap();
        keep.call((AnyView::from(&obj), arr.clone(), 4i64)).unwrap();
        // A wrong third argument: the call fails, the owned cells are released all the same.
        keep.call((obj.clone(), arr.clone(), "x")).unwrap_err();
    }
    assert_eq!(
        obj.use_count(),
        1,
        "every owned argument released, no borrowed one"
    );
    assert_eq!(arr.as_object().use_count(), 1);
    // While the call runs, a moved-in clone is one more reference and a borrowed one is not
    // (each of the closure's two ObjectRef parameters holds one more: 1 + 2 when borrowed).
    let counted = keep
        .call((obj.clone(), &obj, 0i64))
        .unwrap()
        .cast::<i64>()
        .unwrap();
    assert_eq!(counted, 4 + 4);
    let counted = keep
        .call((&obj, &obj, 0i64))
        .unwrap()
        .cast::<i64>()
        .unwrap();
    assert_eq!(counted, 3 + 3);
}
