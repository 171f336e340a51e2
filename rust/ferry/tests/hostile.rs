//! The safe API used as a hostile or careless user would (issue 33): every case here is safe
//! Rust code, and each must end in a value or a clear `ferry::Error`, never in undefined
//! behaviour, a crash, a hang, a leak or lost data. Cases that could crash the process run in a
//! child (this binary again, with `FERRY_HOSTILE_CHILD` naming the test), killed after a timeout.
#[path = "common/mod.rs"]
mod common;

use ferry::{Any, AnyView, Array, DataType, Device, Dict, Error, Function, List, Map, Object};
use ferry::{ObjectRef, Tensor};
use std::process::Command;

const CHILD: &str = "FERRY_HOSTILE_CHILD";

/// What a child run of a test left: its exit status and output.
struct Child {
    status: std::process::ExitStatus,
    stdout: String,
    stderr: String,
}

/// Runs `body` in a child process (this test binary running only the test `name`), with the
/// extra environment `env`, killed after 120 s; in the child itself, runs `body` and returns
/// None.
fn in_child(name: &str, env: &[(&str, &str)], body: impl FnOnce()) -> Option<Child> {
    if std::env::var(CHILD).as_deref() == Ok(name) {
        body();
        return None;
    }
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([name, "--exact", "--nocapture", "--test-threads=1", "-q"])
        .env(CHILD, name)
        .env("RUST_BACKTRACE", "0")
        .envs(env.iter().copied());
    let (status, stdout, stderr) = common::run_with_timeout(command, name);
    Some(Child {
        status,
        stdout,
        stderr,
    })
}

/// The child ran to its end and exited 0 (no crash, no abort).
fn assert_survived(name: &str, child: &Child) {
    assert!(
        child.status.success() && child.stdout.contains("test result: ok"),
        "the child `{name}` died ({}):\n{}\n{}",
        child.status,
        child.stdout,
        child.stderr
    );
}

fn demo(name: &str) -> Function {
    common::load_demo();
    Function::get_global_required(name).unwrap()
}

// ---- tensors --------------------------------------------------------------------------------

/// A tensor with a zero dimension beside huge ones: C++ refuses the shape with an error naming
/// it, or makes a tensor of 0 elements whose count and slice say so (never an overflow).
#[test]
fn tensor_with_a_zero_dimension_beside_huge_ones() {
    let f64_ = DataType::parse("float64").unwrap();
    for shape in [
        vec![0i64, i64::MAX, 2],
        vec![i64::MAX, 0],
        vec![0, 1 << 62, 1 << 62],
    ] {
        match Tensor::empty(&shape, f64_, Device::CPU) {
            Ok(t) => {
                assert_eq!(t.shape(), shape);
                assert_eq!(t.numel(), 0, "{shape:?}");
                assert!(t.as_slice::<f64>().unwrap().is_empty(), "{shape:?}");
            }
            Err(err) => {
                assert_eq!(err.kind(), "ValueError", "{shape:?}: {err}");
                assert!(err.message().contains("too big"), "{shape:?}: {err}");
            }
        }
    }
    let t = Tensor::from_vec(&[3, 0, 5], Vec::<i32>::new()).unwrap();
    assert_eq!((t.numel(), t.to_vec::<i32>().unwrap().len()), (0, 0));
}

/// A shape no memory holds is an error naming it, not an abort of the allocator.
#[test]
fn tensor_of_a_huge_shape_is_an_error() {
    // In a child: the allocator is asked for more than any memory holds, which valgrind
    // (scripts/rust_memcheck.sh) cannot report as C++ expects and aborts on.
    let name = "tensor_of_a_huge_shape_is_an_error";
    let Some(child) = in_child(name, &[], || {
        let f64_ = DataType::parse("float64").unwrap();
        for shape in [vec![1i64 << 40, 1 << 40], vec![i64::MAX], vec![-1, 2]] {
            let err = Tensor::empty(&shape, f64_, Device::CPU).expect_err("a huge tensor");
            assert!(
                ["MemoryError", "ValueError"].contains(&err.kind()),
                "{shape:?}: {err}"
            );
        }
        let err = Tensor::from_vec(&[i64::MAX, 2], vec![1.0f64]).unwrap_err();
        assert_eq!(err.kind(), "ValueError", "{err}");
    }) else {
        return;
    };
    assert_survived(name, &child);
}

/// A tensor on a device without an allocator is an error naming the device; a slice of a
/// tensor of another dtype is a TypeError naming both.
#[test]
fn tensor_on_another_device_and_of_another_dtype() {
    let f64_ = DataType::parse("float64").unwrap();
    let cuda = Device {
        device_type: ferry::sys::kDLCUDA,
        device_id: 0,
    };
    let err = Tensor::empty(&[2], f64_, cuda).expect_err("a CUDA tensor without an allocator");
    assert!(!err.message().is_empty(), "{err}");
    let t = demo("demo.arange")
        .call((4i64,))
        .unwrap()
        .cast::<Tensor>()
        .unwrap();
    let err = t.as_slice::<i64>().unwrap_err();
    assert_eq!(err.kind(), "TypeError");
    assert!(
        err.message().contains("float64") && err.message().contains("int64"),
        "{err}"
    );
    let err = t.as_slice::<f32>().unwrap_err();
    assert_eq!(err.kind(), "TypeError", "{err}");
}

// ---- values of the wrong type from C++ -------------------------------------------------------

/// An Array C++ made of strings is not an `Array<i64>`: the conversion is a TypeError naming
/// both types, and an element of a mixed array that is not a `T` is never skipped silently.
#[test]
fn array_of_the_wrong_element_type() {
    let make = Function::get_global_required("ferry.Array").unwrap();
    let strings = make.call(("a", "bb", "a longer string")).unwrap();
    let err = strings.cast::<Array<i64>>().unwrap_err();
    assert_eq!(err.kind(), "TypeError");
    assert!(err.message().contains("ferry.Array[int]"), "{err}");
    let mixed = make.call((1i64, "two", 3i64)).unwrap();
    assert!(mixed.cast::<Array<i64>>().is_err());
    let obj: ObjectRef = mixed.cast().unwrap();
    assert!(obj.clone().downcast::<Array<i64>>().is_err());
    assert!(obj.as_ref::<Array<i64>>().is_none());
    let any: Array<Any> = obj.downcast().unwrap();
    assert_eq!(any.iter().count(), 3);
    let map = Function::get_global_required("ferry.Map")
        .unwrap()
        .call(("k", 1i64, "j", "not an int"))
        .unwrap();
    let err = map.cast::<Map<String, i64>>().unwrap_err();
    assert_eq!(err.kind(), "TypeError", "{err}");
}

/// A List or Dict holding what its `T` is not: reads are TypeErrors naming the types.
#[test]
fn list_and_dict_of_the_wrong_element_type() {
    let list: List<Any> = vec![Any::from(1i64), Any::from("x")].into();
    let as_ints: List<i64> = Any::from(list.clone()).cast().unwrap();
    assert_eq!(as_ints.get(0).unwrap(), 1);
    let err = as_ints.get(1).unwrap_err();
    assert_eq!(err.kind(), "TypeError", "{err}");
    assert_eq!(as_ints.to_vec().unwrap_err().kind(), "TypeError");
    let dict: Dict<Any, Any> = [(Any::from("a"), Any::from("b"))].into_iter().collect();
    let typed: Dict<String, i64> = Any::from(dict).cast().unwrap();
    assert_eq!(typed.get("a").unwrap_err().kind(), "TypeError");
    assert_eq!(typed.to_vec().unwrap_err().kind(), "TypeError");
}

/// A loop over a List's elements whose body appends to the list through C++ (a safe path: a
/// global function) reads the snapshot it started with, whole.
#[test]
fn list_written_by_cxx_during_a_loop() {
    let list: List<i64> = (0..100).collect();
    let append = Function::get_global_required("ferry.ListExtend").unwrap();
    let clear = Function::get_global_required("ferry.ListClear").unwrap();
    let snapshot = list.to_array();
    let mut seen = Vec::new();
    for (i, x) in snapshot.iter().enumerate() {
        seen.push(x.cast::<i64>().unwrap());
        append.call((list.as_object(), i as i64)).unwrap();
        if i == 50 {
            clear.call((list.as_object(),)).unwrap();
        }
    }
    assert_eq!(seen, (0..100).collect::<Vec<_>>());
    assert_eq!(list.len(), 49);
}

// ---- errors ---------------------------------------------------------------------------------

/// An error whose message has a NUL byte (from Rust) or invalid UTF-8 (from C++) keeps the
/// whole message: the NUL shown as `\0`, the invalid bytes as U+FFFD.
#[test]
fn error_messages_with_nul_bytes_and_invalid_utf8() {
    let catch = demo("demo.catch");
    let f = Function::from_packed(|_| Err(Error::new("ValueError", "before\0after")));
    let text: String = catch.call((&f, 0i64)).unwrap().cast().unwrap();
    assert_eq!(text, "ValueError: before\\0after");

    let raise = demo("demo.raise");
    let message = ferry::String::from_bytes(b"bad \xff byte, and the rest");
    let err = raise.call(("ValueError", message)).unwrap_err();
    assert_eq!(err.kind(), "ValueError");
    assert_eq!(err.message(), "bad \u{fffd} byte, and the rest");
    let kind = ferry::String::from_bytes(b"Odd\xfeError");
    let err = raise.call((kind, "m")).unwrap_err();
    assert_eq!(err.kind(), "Odd\u{fffd}Error");
    assert_eq!(err.to_string(), "Odd\u{fffd}Error: m");
}

// ---- closures -------------------------------------------------------------------------------

/// A panic whose payload is neither `&str` nor `String` (a number, a struct; one whose own
/// Drop panics) is a RuntimeError, from C++ and from Rust.
#[test]
fn panics_with_odd_payloads() {
    struct Bomb;
    impl Drop for Bomb {
        fn drop(&mut self) {
            panic!("the payload's drop");
        }
    }
    let name = "panics_with_odd_payloads";
    let Some(child) = in_child(name, &[], || {
        let catch = demo("demo.catch");
        let number = Function::from_packed(|_| std::panic::panic_any(42i32));
        let text: String = catch.call((&number, 0i64)).unwrap().cast().unwrap();
        assert!(
            text.starts_with("RuntimeError: a Rust function panicked"),
            "{text}"
        );
        let err = number.call((0i64,)).unwrap_err();
        assert_eq!(err.kind(), "RuntimeError");
        let bomb = Function::from_packed(|_| std::panic::panic_any(Bomb));
        for _ in 0..3 {
            let err = bomb.call(()).unwrap_err();
            assert_eq!(err.kind(), "RuntimeError");
        }
    }) else {
        return;
    };
    assert_survived(name, &child);
}

/// A closure whose captured value panics in its Drop, dropped on another thread or through C++
/// (the last reference released there): no abort, no unwinding into C.
#[test]
fn closure_whose_capture_panics_on_drop() {
    struct Bomb(i64);
    impl Bomb {
        fn value(&self) -> i64 {
            self.0
        }
    }
    impl Drop for Bomb {
        fn drop(&mut self) {
            panic!("a captured value's drop");
        }
    }
    let name = "closure_whose_capture_panics_on_drop";
    let Some(child) = in_child(name, &[], || {
        let bomb = Bomb(1);
        // (A method, not `bomb.0`: the closure captures the whole value, Drop and all.)
        let f = Function::from_packed(move |_| Ok(Any::from(bomb.value())));
        std::thread::spawn(move || drop(f)).join().unwrap();
        let bomb = Bomb(2);
        let g = Function::from_fn(move |x: i64| Ok(x + bomb.value()));
        // C++ holds the last reference and releases it.
        let call_n = demo("demo.call_n");
        let r: i64 = call_n.call((g, 1i64, 40i64)).unwrap().cast().unwrap();
        assert_eq!(r, 42);
        println!("survived");
    }) else {
        return;
    };
    assert_survived(name, &child);
    assert!(child.stdout.contains("survived"), "{}", child.stdout);
}

// ---- derive ---------------------------------------------------------------------------------

#[derive(Object, Clone, Debug, PartialEq)]
#[ferry(type_key = "hostile.Empty")]
struct Empty {}

#[derive(Object, Clone, Debug, PartialEq)]
#[ferry(type_key = "hostile.Keywords")]
struct Keywords {
    r#type: i64,
    r#fn: String,
    r#match: Option<f64>,
}

#[derive(Object, Clone, Debug, PartialEq)]
#[ferry(type_key = "hostile.Dup")]
struct DupA {
    x: i64,
}

#[derive(Object, Clone, Debug, PartialEq)]
#[ferry(type_key = "hostile.Dup")]
struct DupB {
    y: String,
}

/// A struct of no fields, and fields named like keywords, round trip through Ferry (C++
/// reflection sees the field `type`, not `r#type`).
#[test]
fn derive_of_odd_structs() {
    let e = Empty {}.to_object().unwrap();
    assert_eq!(Empty::from_object(&e).unwrap(), Empty {});
    let k = Keywords {
        r#type: 3,
        r#fn: "f".into(),
        r#match: None,
    };
    let obj = k.to_object().unwrap();
    assert_eq!(obj.get_attr("type").unwrap().cast::<i64>().unwrap(), 3);
    assert_eq!(obj.get_attr("fn").unwrap().cast::<String>().unwrap(), "f");
    assert_eq!(Keywords::from_object(&obj).unwrap(), k);
    let made = ferry::make_node(
        "hostile.Keywords",
        &[
            ("type", 1i64.into()),
            ("fn", "g".into()),
            ("match", 0.5.into()),
        ],
    )
    .unwrap();
    assert_eq!(Keywords::from_object(&made).unwrap().r#match, Some(0.5));
    assert_eq!(Keywords::from_object(&e).unwrap_err().kind(), "TypeError");
}

/// Two structs declaring one type key: the second is an error naming the key, both when
/// registered and when converted (never an object of the other's layout).
#[test]
fn one_type_key_declared_by_two_structs() {
    ferry::register_type::<DupA>().unwrap();
    let err = ferry::register_type::<DupB>().unwrap_err();
    assert!(err.message().contains("hostile.Dup"), "{err}");
    let err = DupB { y: "s".into() }.to_object().unwrap_err();
    assert!(err.message().contains("hostile.Dup"), "{err}");
    let a = DupA { x: 1 }.to_object().unwrap();
    let err = DupB::from_object(&a).unwrap_err();
    assert!(err.message().contains("y"), "{err}");
}

#[derive(Object, Clone, Debug, PartialEq)]
#[ferry(type_key = "hostile.Raced")]
struct Raced {
    a: i64,
    b: String,
}

/// register_type from many threads at once: one index for all, the type usable after.
#[test]
fn register_type_from_many_threads() {
    let barrier = std::sync::Barrier::new(8);
    let indices: Vec<i32> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    ferry::register_type::<Raced>().unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(indices.iter().all(|&i| i == indices[0]), "{indices:?}");
    let r = Raced {
        a: 1,
        b: "x".into(),
    };
    assert_eq!(Raced::from_object(&r.to_object().unwrap()).unwrap(), r);
}

/// A FieldCache used with two lists of names (the derive's is per struct, with one list; a
/// hand-written one may not be): each list reads its own fields, and a read past the list is an
/// IndexError naming it, not a panic.
#[test]
fn field_cache_misuse() {
    let cache = ferry::FieldCache::new();
    let obj = Raced {
        a: 5,
        b: "x".into(),
    }
    .to_object()
    .unwrap();
    let fields = cache.getters::<Raced>(&obj, &["a"]).unwrap();
    assert_eq!(fields.read::<i64>(0, "a").unwrap(), 5);
    let err = fields.read::<String>(1, "b").unwrap_err();
    assert_eq!(err.kind(), "IndexError", "{err}");
    assert!(err.message().contains("'b'"), "{err}");
    let fields = cache.getters::<Raced>(&obj, &["b", "a"]).unwrap();
    assert_eq!(fields.read::<String>(0, "b").unwrap(), "x");
    assert_eq!(fields.read::<i64>(1, "a").unwrap(), 5);
    let other = Empty {}.to_object().unwrap();
    assert_eq!(
        cache.getters::<Raced>(&other, &["a"]).err().unwrap().kind(),
        "TypeError"
    );
}

// ---- views and borrowed values ---------------------------------------------------------------

/// A view argument kept by a closure past its call is an owned copy, not the view.
#[test]
fn a_closure_keeps_an_owned_copy_of_its_argument() {
    let kept = std::sync::Mutex::new(Vec::<Any>::new());
    let kept = std::sync::Arc::new(kept);
    let sink = kept.clone();
    let f = Function::from_packed(move |args: &[AnyView<'_>]| {
        sink.lock().unwrap().push(args[0].to_owned());
        Ok(Any::none())
    });
    {
        let s = ferry::String::from("a string long enough to be an object");
        let obj: ObjectRef = s.clone().into();
        f.call((&obj,)).unwrap();
        f.call(("a borrowed string from C++ longer than 8",))
            .unwrap();
    }
    let kept = kept.lock().unwrap();
    assert_eq!(
        kept[0].cast::<String>().unwrap(),
        "a string long enough to be an object"
    );
    assert_eq!(
        kept[1].cast::<String>().unwrap(),
        "a borrowed string from C++ longer than 8"
    );
}

// ---- leaks ----------------------------------------------------------------------------------

#[derive(Object, Clone, Debug)]
#[ferry(type_key = "hostile.Leaky")]
struct Leaky {
    n: i64,
    s: String,
    xs: Array<i64>,
}

/// One round of every path the leak check counts: calls both ways, their error paths (an
/// `Err`, a panic, a mismatched argument, a C++ throw), objects, containers, derived types,
/// tensors, JSON and reflection, with their failures.
fn one_round_of_every_path(i: i64) {
    let add = demo("demo.add");
    let call_n = demo("demo.call_n");
    let catch = demo("demo.catch");
    let raise = demo("demo.raise");
    assert_eq!(add.call((i, 1i64)).unwrap().cast::<i64>().unwrap(), i + 1);
    let inc = Function::from_fn(|x: i64| Ok(x + 1));
    assert_eq!(
        call_n.call((&inc, 2i64, i)).unwrap().cast::<i64>().unwrap(),
        i + 1
    );
    assert!(inc.call(("not an int",)).is_err());
    let fails = Function::from_fn(|s: String| -> ferry::Result<i64> {
        Err(Error::new("ValueError", &format!("no {s}")))
    });
    let text: String = catch.call((&fails, "way")).unwrap().cast().unwrap();
    assert_eq!(text, "ValueError: no way");
    let panics = Function::from_packed(|_| panic!("a panic, round after round"));
    let text: String = catch.call((&panics, 0i64)).unwrap().cast().unwrap();
    assert!(text.starts_with("RuntimeError"), "{text}");
    assert!(raise.call(("KeyError", "k")).is_err());
    let long = ferry::String::from("a string of more than eight bytes");
    let array = Array::from(vec![i, i + 1]);
    let map: Map<ferry::String, Array<i64>> = [(long.clone(), array.clone())].into_iter().collect();
    assert_eq!(map.iter().count(), 1);
    assert!(Any::from(map.clone()).cast::<Map<String, i64>>().is_err());
    let list: List<Any> = vec![Any::from(long.clone()), Any::from(array.clone())].into();
    assert_eq!(list.to_vec().unwrap().len(), 2);
    assert!(Any::from(list)
        .cast::<List<i64>>()
        .unwrap()
        .to_vec()
        .is_err());
    let dict: Dict<ferry::String, i64> = [(long.clone(), i)].into_iter().collect();
    assert_eq!(dict.get(long.clone()).unwrap(), Some(i));
    let leaky = Leaky {
        n: i,
        s: "s".into(),
        xs: array,
    };
    let obj = leaky.to_object().unwrap();
    let back = Leaky::from_object(&obj).unwrap();
    assert_eq!(
        (back.n, back.s, back.xs.iter().collect::<Vec<i64>>()),
        (i, leaky.s, vec![i, i + 1])
    );
    assert_eq!(obj.get_attr("nope").unwrap_err().kind(), "AttributeError");
    assert!(obj.clone().downcast::<Tensor>().is_err());
    assert!(ferry::make_node("hostile.Leaky", &[("n", "x".into())]).is_err());
    let json = ferry::save_json(&obj).unwrap();
    assert!(ferry::structural_equal(
        &ferry::load_json(&json).unwrap(),
        &obj
    ));
    assert!(ferry::load_json("{not json").is_err());
    let t = Tensor::from_vec(&[2], vec![1.0f64, 2.0]).unwrap();
    assert_eq!(t.as_slice::<f64>().unwrap(), [1.0, 2.0]);
    assert!(t.as_slice::<i64>().is_err());
    assert!(Tensor::from_vec(&[3], vec![1i64]).is_err());
    let c = demo("demo.arange")
        .call((3i64,))
        .unwrap()
        .cast::<Tensor>()
        .unwrap();
    assert_eq!(c.numel(), 3);
}

/// The objects alive at exit, by type key, as FERRY_LEAK_CHECK=1 reports them.
fn alive_at_exit(stderr: &str) -> std::collections::BTreeMap<String, i64> {
    stderr
        .lines()
        .filter_map(|line| {
            let mut words = line.strip_prefix("ferry:")?.split_whitespace();
            let count = words.next()?.parse().ok()?;
            Some((words.next()?.to_string(), count))
        })
        .collect()
}

/// Every path of `one_round_of_every_path`, 10 times and many times (2000, or
/// FERRY_HOSTILE_LEAK_ROUNDS: 100000 takes a minute), under the leak check: the objects left
/// at exit (the crate's process-lifetime ones: the builtin functions it keeps) are the same, so
/// no path leaks per use. The counts are exact: one object per use left behind shows.
#[test]
fn no_path_leaks_per_use() {
    let name = "no_path_leaks_per_use";
    let rounds = std::env::var("FERRY_HOSTILE_ROUNDS").unwrap_or_default();
    let many_rounds =
        std::env::var("FERRY_HOSTILE_LEAK_ROUNDS").unwrap_or_else(|_| "2000".to_string());
    let Some(few) = in_child(
        name,
        &[("FERRY_LEAK_CHECK", "1"), ("FERRY_HOSTILE_ROUNDS", "10")],
        || {
            // The panic of each round is caught; its message would fill stderr.
            std::panic::set_hook(Box::new(|_| {}));
            for i in 0..rounds.parse::<i64>().unwrap() {
                one_round_of_every_path(i);
            }
        },
    ) else {
        return;
    };
    let many = in_child(
        name,
        &[
            ("FERRY_LEAK_CHECK", "1"),
            ("FERRY_HOSTILE_ROUNDS", &many_rounds),
        ],
        || unreachable!(),
    )
    .unwrap();
    assert!(
        few.stdout.contains("test result: ok"),
        "{}\n{}",
        few.stdout,
        few.stderr
    );
    assert!(
        many.stdout.contains("test result: ok"),
        "{}\n{}",
        many.stdout,
        many.stderr
    );
    let (few, many) = (alive_at_exit(&few.stderr), alive_at_exit(&many.stderr));
    assert_eq!(
        few, many,
        "objects alive at exit after 10 and after {many_rounds} rounds"
    );
    println!("alive at exit after 10 and {many_rounds} rounds alike: {few:?}");
}

// ---- libraries ------------------------------------------------------------------------------

/// Functions taken from a library before it is unloaded (FerryLibraryUnload: the one step
/// here that is not safe Rust, the crate offering no unload) still run, C++ calling a Rust
/// closure included; the library's globals are gone at once, and the library is closed after
/// its last Function dies, without a crash.
#[test]
fn functions_of_an_unloaded_library() {
    let name = "functions_of_an_unloaded_library";
    let Some(child) = in_child(name, &[], || {
        // A copy under another path: this process has not loaded it.
        let copy = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("libdemo-unload-{}.so", std::process::id()));
        std::fs::copy(common::demo_dir().join("libdemo.so"), &copy).unwrap();
        ferry::load_library(&copy).unwrap();
        let add = Function::get_global_required("demo.add").unwrap();
        let call_n = Function::get_global_required("demo.call_n").unwrap();
        let path = std::ffi::CString::new(copy.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { ferry::sys::FerryLibraryUnload(path.as_ptr()) }, 0);
        assert!(Function::get_global("demo.add").is_none());
        assert_eq!(add.call((1i64, 2i64)).unwrap().cast::<i64>().unwrap(), 3);
        let inc = Function::from_fn(|x: i64| Ok(x + 1));
        let r: i64 = call_n.call((&inc, 3i64, 1i64)).unwrap().cast().unwrap();
        assert_eq!(r, 2);
        drop((add, call_n));
        std::fs::remove_file(&copy).unwrap();
        println!("survived");
    }) else {
        return;
    };
    assert_survived(name, &child);
    assert!(child.stdout.contains("survived"), "{}", child.stdout);
}

// ---- deep nesting ---------------------------------------------------------------------------

/// Arrays nested 100 000 deep, made in Rust: dropping them, hashing, comparing, printing them
/// (Debug) and saving them to JSON end in a value or an error, not a stack overflow.
#[test]
fn deeply_nested_arrays() {
    let name = "deeply_nested_arrays";
    let Some(child) = in_child(name, &[], || {
        let mut nested: Array<Any> = Array::from(vec![Any::from(0i64)]);
        for _ in 0..100_000 {
            nested = Array::from(vec![Any::from(nested)]);
        }
        println!("built");
        let _ = ferry::structural_hash(nested.as_object());
        println!("hashed");
        let _ = ferry::structural_equal(nested.as_object(), nested.as_object());
        println!("compared");
        let _ = ferry::save_json(nested.as_object());
        println!("saved");
        let _ = format!("{nested:?}");
        println!("printed");
        drop(nested);
        println!("dropped");
    }) else {
        return;
    };
    assert_survived(name, &child);
    assert!(child.stdout.contains("dropped"), "{}", child.stdout);
}

/// JSON nested 100 000 deep: an error or a value, not a stack overflow.
#[test]
fn deeply_nested_json() {
    let name = "deeply_nested_json";
    let Some(child) = in_child(name, &[], || {
        let text = "[".repeat(100_000) + &"]".repeat(100_000);
        let _ = ferry::load_json(&text);
        println!("loaded");
    }) else {
        return;
    };
    assert_survived(name, &child);
    assert!(child.stdout.contains("loaded"), "{}", child.stdout);
}

/// A struct that macro_rules! writes, its field types passed as `ty` fragments (which reach
/// the derive wrapped in invisible groups), with a hundred fields.
macro_rules! wide_struct {
    ($name:ident, $key:literal, $t:ty, $($field:ident)*) => {
        #[derive(Object, Clone, Debug, PartialEq, Default)]
        #[ferry(type_key = $key)]
        struct $name {
            $($field: $t,)*
        }
    };
}
wide_struct!(Wide, "hostile.Wide", i64,
    f00 f01 f02 f03 f04 f05 f06 f07 f08 f09 f10 f11 f12 f13 f14 f15 f16 f17 f18 f19
    f20 f21 f22 f23 f24 f25 f26 f27 f28 f29 f30 f31 f32 f33 f34 f35 f36 f37 f38 f39
    f40 f41 f42 f43 f44 f45 f46 f47 f48 f49 f50 f51 f52 f53 f54 f55 f56 f57 f58 f59
    f60 f61 f62 f63 f64 f65 f66 f67 f68 f69 f70 f71 f72 f73 f74 f75 f76 f77 f78 f79
    f80 f81 f82 f83 f84 f85 f86 f87 f88 f89 f90 f91 f92 f93 f94 f95 f96 f97 f98 f99);

macro_rules! defaulted_struct {
    ($key:literal, $t:ty, $default:expr) => {
        #[derive(Object, Clone)]
        #[ferry(type_key = $key)]
        struct Defaulted {
            #[ferry(default = $default)]
            n: $t,
        }
    };
}
defaulted_struct!("hostile.Defaulted", i64, 7);

/// A hundred fields round trip, each in its place; a default passed as an `expr` fragment is
/// the default.
#[test]
fn derive_of_a_wide_struct_from_a_macro() {
    let w = Wide {
        f00: 1,
        f57: 57,
        f99: 99,
        ..Wide::default()
    };
    let obj = w.to_object().unwrap();
    assert_eq!(obj.get_attr("f57").unwrap().cast::<i64>().unwrap(), 57);
    assert_eq!(obj.get_attr("f99").unwrap().cast::<i64>().unwrap(), 99);
    assert_eq!(Wide::from_object(&obj).unwrap(), w);
    let json = ferry::save_json(&obj).unwrap();
    let back = ferry::load_json(&json)
        .unwrap()
        .cast::<ObjectRef>()
        .unwrap();
    assert_eq!(Wide::from_object(&back).unwrap(), w);
    ferry::register_type::<Defaulted>().unwrap();
    let made = ferry::make_node("hostile.Defaulted", &[]).unwrap();
    assert_eq!(Defaulted::from_object(&made).unwrap().n, 7);
}

// ---- names ----------------------------------------------------------------------------------

/// A hand-written `Object` whose key has a NUL byte (the derive refuses escapes in its key).
struct NulKey;
impl Object for NulKey {
    const TYPE_KEY: &'static str = "hostile.Nul\0Key";
    fn fields() -> Vec<ferry::FieldDef> {
        Vec::new()
    }
    fn field_values(&self) -> Vec<Any> {
        Vec::new()
    }
    fn from_object(_: &ObjectRef) -> ferry::Result<NulKey> {
        Ok(NulKey)
    }
}

/// Names with a NUL byte, which C would cut short: a ValueError naming them, never a global or
/// a type registered under another name (`a\0b` was registered as the 4 characters `a\0b`).
#[test]
fn names_with_nul_bytes() {
    let f = Function::from_fn(|| Ok(1i64));
    let err = Function::register_global("hostile.nul\0name", f.clone(), false).unwrap_err();
    assert_eq!(err.kind(), "ValueError", "{err}");
    assert!(err.message().contains("NUL"), "{err}");
    assert!(Function::get_global("hostile.nul\\0name").is_none());
    assert!(Function::get_global("hostile.nul\0name").is_none());
    assert_eq!(
        Function::remove_global("hostile.nul\0name")
            .unwrap_err()
            .kind(),
        "ValueError"
    );
    let err = ferry::register_type::<NulKey>().unwrap_err();
    assert_eq!(err.kind(), "ValueError", "{err}");
    assert!(err.message().contains("hostile.Nul\\0Key"), "{err}");
    assert!(ferry::make_node("hostile.Nul\\0Key", &[]).is_err());
}

/// A library unloaded and loaded again from another file (its type key registered anew, under
/// the same type index, with the getters of the new code): `get_attr` and a derived
/// `from_object` of an object of the new registration never call a getter of the old, closed
/// library that a cache kept.
#[test]
fn get_attr_across_an_unload_and_a_reload() {
    #[derive(Object, Clone, Debug)]
    #[ferry(type_key = "demo.IntImm")]
    struct IntImm {
        value: i64,
    }
    let name = "get_attr_across_an_unload_and_a_reload";
    let Some(child) = in_child(name, &[], || {
        let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        for round in 0..3 {
            let copy = dir.join(format!("libdemo-reload-{}-{round}.so", std::process::id()));
            std::fs::copy(common::demo_dir().join("libdemo.so"), &copy).unwrap();
            ferry::load_library(&copy).unwrap();
            let x = ferry::make_node("demo.IntImm", &[("value", Any::from(round))]).unwrap();
            for _ in 0..2 {
                assert_eq!(x.get_attr("value").unwrap().cast::<i64>().unwrap(), round);
            }
            // (Not `IntImm::from_object` past round 0: libferry forgets the key at the unload,
            // and the objects of the reloaded library keep the old index, which the key no
            // longer names, so they are not `demo.IntImm` instances: a TypeError.)
            if round == 0 {
                assert_eq!(IntImm::from_object(&x).unwrap().value, round);
            }
            let index = x.type_index();
            drop(x);
            let path = std::ffi::CString::new(copy.to_str().unwrap()).unwrap();
            // SAFETY: a valid C string.
            assert_eq!(unsafe { ferry::sys::FerryLibraryUnload(path.as_ptr()) }, 0);
            println!("round {round}: type index {index}");
            std::fs::remove_file(&copy).unwrap();
        }
        println!("survived");
    }) else {
        return;
    };
    assert_survived(name, &child);
    assert!(child.stdout.contains("survived"), "{}", child.stdout);
}

/// A type key unloaded and registered again by another library with another layout (the same
/// type index, a field of another type at the same name): `get_attr` and a derived
/// `from_object` read the field of the new layout with the new getter, never with the getter and
/// offset a cache kept from the old one (which would read an int as a String pointer).
#[test]
fn get_attr_after_a_reload_with_another_layout() {
    #[derive(Object, Clone, Debug)]
    #[ferry(type_key = "demo.IntImm")]
    struct StringImm {
        value: String,
    }
    let name = "get_attr_after_a_reload_with_another_layout";
    let Some(child) = in_child(name, &[], || {
        let other = common::other_layout_library();
        let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        let copy = dir.join(format!("libintimm-other-{}.so", std::process::id()));
        std::fs::copy(&other, &copy).unwrap();
        ferry::load_library(&copy).unwrap();
        let s = ferry::make_node("demo.IntImm", &[("value", Any::from("text"))]).unwrap();
        assert_eq!(
            s.get_attr("value").unwrap().cast::<String>().unwrap(),
            "text"
        );
        assert_eq!(StringImm::from_object(&s).unwrap().value, "text");
        let old_index = s.type_index();
        drop(s);
        let path = std::ffi::CString::new(copy.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { ferry::sys::FerryLibraryUnload(path.as_ptr()) }, 0);
        common::load_demo();
        let x = ferry::make_node("demo.IntImm", &[("value", Any::from(1i64 << 40))]).unwrap();
        println!("index {old_index} then {}", x.type_index());
        assert_eq!(x.get_attr("value").unwrap().cast::<i64>().unwrap(), 1 << 40);
        let err = StringImm::from_object(&x).unwrap_err();
        assert_eq!(err.kind(), "TypeError", "{err}");
        std::fs::remove_file(&copy).unwrap();
        println!("survived");
    }) else {
        return;
    };
    assert_survived(name, &child);
    assert!(child.stdout.contains("survived"), "{}", child.stdout);
}

/// A tensor over memory a C producer lays out as it likes (FerryTensorViewOf, as C++ would
/// make one; the one step here that is not safe Rust): negative strides, a negative dimension,
/// misaligned data. Its slices are refused with an error naming the problem (or empty, for no
/// elements), never a slice over memory it does not cover.
#[test]
fn tensors_laid_out_by_a_c_producer() {
    use ferry::sys;
    let mut data = vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0];
    let first = data.as_mut_ptr();
    let view =
        |shape: &mut [i64], strides: &mut [i64], byte_offset: u64| -> ferry::Result<Tensor> {
            let dl = sys::DLTensor {
                data: first.cast(),
                device: sys::DLDevice {
                    device_type: sys::kDLCPU,
                    device_id: 0,
                },
                ndim: shape.len() as i32,
                dtype: sys::DLDataType {
                    code: sys::kFerryDTypeFloat,
                    bits: 64,
                    lanes: 1,
                },
                shape: shape.as_mut_ptr(),
                strides: strides.as_mut_ptr(),
                byte_offset,
            };
            let mut handle: sys::FerryObjectHandle = std::ptr::null_mut();
            // SAFETY: a DLTensor over `data`, which outlives every tensor made here (each is
            // dropped before the end of the test).
            if unsafe { sys::FerryTensorViewOf(&dl, &mut handle) } != 0 {
                return Err(Error::new("ValueError", "refused by FerryTensorViewOf"));
            }
            // SAFETY: a new reference.
            Any::from(unsafe { ObjectRef::from_owned_handle(handle) }).cast()
        };
    // Reversed: the last element first.
    let t = view(&mut [3], &mut [-1], 16).unwrap();
    assert!(!t.is_contiguous());
    assert_eq!(t.as_slice::<f64>().unwrap_err().kind(), "ValueError");
    // Rows reversed.
    let t = view(&mut [2, 3], &mut [-3, 1], 24).unwrap();
    assert!(!t.is_contiguous());
    assert!(t.as_slice::<f64>().is_err());
    // A negative dimension: refused, or a tensor of no elements.
    if let Ok(t) = view(&mut [-2, 3], &mut [3, 1], 0) {
        assert_eq!(t.numel(), 0);
        assert!(t.as_slice::<f64>().map_or(true, |s| s.is_empty()));
    }
    // Misaligned for f64.
    if let Ok(t) = view(&mut [2], &mut [1], 3) {
        assert_eq!(t.as_slice::<f64>().unwrap_err().kind(), "ValueError");
    }
    let t = view(&mut [2, 3], &mut [3, 1], 0).unwrap();
    assert_eq!(t.as_slice::<f64>().unwrap(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
}

/// Data types no Rust element has (0 bits, 7 bits, 0 lanes, 255 bits x 65535 lanes): a tensor
/// of them is an error naming the problem or a tensor whose slices are refused as the wrong
/// type, never a slice over the wrong number of bytes.
#[test]
fn tensors_of_odd_data_types() {
    // In a child: the allocator is asked for more than any memory holds, which valgrind
    // (scripts/rust_memcheck.sh) cannot report as C++ expects and aborts on.
    let name = "tensors_of_odd_data_types";
    let Some(child) = in_child(name, &[], || {
        let odd = [
            DataType {
                code: 0,
                bits: 0,
                lanes: 1,
            },
            DataType {
                code: 0,
                bits: 7,
                lanes: 1,
            },
            DataType {
                code: 2,
                bits: 64,
                lanes: 0,
            },
            DataType {
                code: 1,
                bits: 255,
                lanes: 65535,
            },
            DataType {
                code: 200,
                bits: 8,
                lanes: 1,
            },
        ];
        for dtype in odd {
            match Tensor::empty(&[1 << 20, 1 << 20], dtype, Device::CPU) {
                Ok(t) => {
                    assert_eq!(t.dtype(), dtype);
                    assert_eq!(t.as_slice::<u8>().unwrap_err().kind(), "TypeError");
                    assert_eq!(t.as_slice::<i64>().unwrap_err().kind(), "TypeError");
                }
                Err(err) => assert!(
                    ["ValueError", "MemoryError"].contains(&err.kind()),
                    "{dtype:?}: {err}"
                ),
            }
            if let Ok(t) = Tensor::empty(&[3], dtype, Device::CPU) {
                assert!(t.as_slice::<u8>().is_err() || dtype.bits == 8 && dtype.lanes == 1);
            }
        }
    }) else {
        return;
    };
    assert_survived(name, &child);
}
