//! Rust's hot paths through Ferry beside their floors: `cargo bench -p ferry` (not part of
//! `cargo test` or CI; results in docs/benchmarks.md, "Rust"). Every operation runs in each of
//! 21 rounds, one after another (harness/mod.rs), timed on the thread's CPU clock; a row gives
//! the median times and the median (and range) of the per-round ratio to its floor.
#[path = "../tests/common/mod.rs"]
mod common;
mod harness;

use ferry::{Any, Function, Object, ObjectRef};
use harness::{ferry_add, row, run_rounds, Op};
use std::hint::black_box;

#[derive(ferry::Object, Clone)]
#[ferry(type_key = "bench.Point")]
struct Point {
    x: i64,
    y: f64,
}

/// `calls --count PATH N`: runs one call path N times and nothing else, for instruction counts
/// under callgrind (the difference of two counts over the difference of their N is the
/// per-call count, stable on a loaded machine where times are not). PATH is `tuple`
/// (`add.call((1, 2))` with the result converted to i64), `call` (the same, not converted),
/// `packed` (`call_packed`), `raw`
/// (`ferry_sys::FerryFunctionCall`), `from_object` (a derived two-field struct read back) or
/// `get_attr` (the same two fields read by name), `callback` (C++'s demo.call_n calling a Rust
/// closure N times), `callback_cpp` (the same loop calling the C++ demo.inc) or `to_object`
/// (make + drop of a derived two-field struct's object).
fn count(path: &str, n: u64) {
    let add = Function::get_global_required("demo.add").unwrap();
    match path {
        "tuple" => {
            for _ in 0..n {
                black_box(ferry_add(&add));
            }
        }
        "call" => {
            for _ in 0..n {
                black_box(add.call((black_box(1i64), black_box(2i64))).is_ok());
            }
        }
        "packed" => {
            let args = [Any::from(1i64), Any::from(2i64)];
            let views: Vec<ferry::AnyView<'_>> = args.iter().map(Any::view).collect();
            for _ in 0..n {
                let r: i64 = add
                    .call_packed(black_box(&views))
                    .unwrap()
                    .try_into()
                    .unwrap();
                black_box(r);
            }
        }
        "raw" => {
            for _ in 0..n {
                black_box(raw_add(&add, black_box(1), black_box(2)));
            }
        }
        "from_object" | "get_attr" => {
            ferry::register_type::<Point>().unwrap();
            let obj = Point { x: 1, y: 2.0 }.to_object().unwrap();
            for _ in 0..n {
                let p = if path == "from_object" {
                    Point::from_object(black_box(&obj)).unwrap()
                } else {
                    Point {
                        x: obj.get_attr("x").unwrap().try_into().unwrap(),
                        y: obj.get_attr("y").unwrap().try_into().unwrap(),
                    }
                };
                black_box(p);
            }
        }
        "callback" | "callback_cpp" => {
            let call_n = Function::get_global_required("demo.call_n").unwrap();
            let f = if path == "callback" {
                Function::from_fn(|x: i64| Ok(x + 1))
            } else {
                Function::get_global_required("demo.inc").unwrap()
            };
            black_box(call_n.call((&f, n as i64, 1i64)).unwrap());
        }
        "to_object" => {
            ferry::register_type::<Point>().unwrap();
            let p = Point { x: 1, y: 2.0 };
            for _ in 0..n {
                black_box(black_box(&p).to_object().unwrap());
            }
        }
        _ => panic!(
            "unknown path {path}: tuple, packed, raw, from_object, get_attr, callback, \
             callback_cpp or to_object"
        ),
    }
}

/// `add(a, b)` through the raw C ABI: two cells, FerryFunctionCall, the result read.
#[inline(always)]
fn raw_add(add: &Function, a: i64, b: i64) -> i64 {
    let cell = |v: i64| ferry::sys::FerryAny {
        type_index: ferry::sys::kFerryInt,
        small_len: 0,
        value: ferry::sys::FerryAnyValue { v_int64: v },
    };
    let args = [cell(a), cell(b)];
    let mut result = ferry::sys::FerryAny::NONE;
    // SAFETY: a live function, two int cells, a None result cell (an int comes back).
    let rc = unsafe {
        ferry::sys::FerryFunctionCall(add.as_object().handle(), args.as_ptr(), 2, &mut result)
    };
    assert_eq!(rc, 0);
    assert_eq!(result.type_index, ferry::sys::kFerryInt);
    // SAFETY: an int result.
    unsafe { result.value.v_int64 }
}

fn main() {
    common::load_demo();
    let argv: Vec<std::string::String> = std::env::args().collect();
    if let Some(at) = argv.iter().position(|a| a == "--count") {
        let n = argv[at + 2].parse().expect("--count PATH N");
        count(&argv[at + 1], n);
        return;
    }
    // Operations per round and rounds: a round takes about 0.2 s of CPU here.
    const N: u64 = 200_000;
    const ROUNDS: usize = 21;

    let add = Function::get_global_required("demo.add").unwrap();
    let args = [Any::from(1i64), Any::from(2i64)];
    let packed_views: Vec<ferry::AnyView<'_>> = args.iter().map(Any::view).collect();
    let plain: &dyn Fn(i64, i64) -> i64 = &|a, b| a + b;
    // A Rust closure called from C++: demo.call_n(f, n, 1) calls f(1) n times in a C++ loop;
    // the floor is the same loop over a C++ typed function.
    let call_n = Function::get_global_required("demo.call_n").unwrap();
    let rust_inc = Function::from_fn(|x: i64| Ok(x + 1));
    let cpp_inc = Function::get_global_required("demo.inc").unwrap();
    let in_cpp_loop = |f: &Function, n: u64| {
        black_box(call_n.call((f, n as i64, 1i64)).unwrap());
        n
    };
    ferry::register_type::<Point>().unwrap();
    let p = Point { x: 1, y: 2.0 };
    let point = p.to_object().unwrap();
    let x: ObjectRef = ferry::make_node("demo.IntImm", &[("value", Any::from(7i64))]).unwrap();
    let boxed = Box::new((7i64, 0i64));
    let boxed_point = Box::new(p.clone());
    let arc = std::sync::Arc::new(7i64);

    let mut ops = vec![
        // 0: a Rust call of a C++ global (int, int) -> int, result converted back.
        Op::each(|| ferry_add(&add)),
        // 1: the same, result not converted.
        Op::each(|| add.call((black_box(1i64), black_box(2i64))).is_ok()),
        // 2: through call_packed, result converted.
        Op::each(|| -> i64 {
            add.call_packed(black_box(&packed_views))
                .unwrap()
                .try_into()
                .unwrap()
        }),
        // 3: the raw C ABI: two cells, FerryFunctionCall, read the result.
        Op::each(|| raw_add(&add, black_box(1), black_box(2))),
        // 4: a plain Rust dynamic call.
        Op::each(|| black_box(plain)(black_box(1), black_box(2))),
        // 5, 6: C++ calls a Rust closure / a C++ typed function.
        Op::new(|n| in_cpp_loop(&rust_inc, n)),
        Op::new(|n| in_cpp_loop(&cpp_inc, n)),
        // 7, 8: make + drop of an object of a type defined in Rust / of a Box.
        Op::new(|n| {
            for _ in 0..n / 4 {
                black_box(black_box(&p).to_object().unwrap());
            }
            n / 4
        }),
        Op::new(|n| {
            for _ in 0..n / 4 {
                black_box(Box::new(black_box((1i64, 2.0f64))));
            }
            n / 4
        }),
        // 9, 10: a derived struct read back from its object / a struct copied out of a Box.
        Op::each(|| Point::from_object(black_box(&point)).unwrap()),
        Op::each(|| black_box(&boxed_point).as_ref().clone()),
        // 11, 12: a field read by name (FerryObjectGetAttr) of a C++ node / a field load.
        Op::each(|| -> i64 { x.get_attr(black_box("value")).unwrap().try_into().unwrap() }),
        Op::each(|| black_box(&boxed).0),
        // 13, 14: clone + drop of a reference / of an Arc.
        Op::each(|| black_box(&x).clone()),
        Op::each(|| black_box(&arc).clone()),
    ];
    run_rounds(&mut ops, N, ROUNDS);

    println!("| operation | Ferry (Rust) | floor | ratio, median of rounds (range) |");
    println!("|---|---|---|---|");
    let raw_floor = "`FerryFunctionCall` by hand";
    row(
        "Rust calls the C++ global `demo.add(1, 2)`",
        &ops[0],
        &ops[3],
        raw_floor,
    );
    row(
        "the same, result not converted",
        &ops[1],
        &ops[3],
        raw_floor,
    );
    row(
        "the same through `call_packed(&[AnyView])`",
        &ops[2],
        &ops[3],
        raw_floor,
    );
    row(
        "the same call through `ferry_sys::FerryFunctionCall`",
        &ops[3],
        &ops[4],
        "a `&dyn Fn(i64, i64)` call",
    );
    row(
        "C++ calls a typed Rust closure (`x + 1`)",
        &ops[5],
        &ops[6],
        "the same C++ loop calling a C++ typed function",
    );
    row(
        "`Point { x, y }.to_object()` + drop",
        &ops[7],
        &ops[8],
        "`Box::new((i64, f64))` + drop",
    );
    row(
        "`Point::from_object(&obj)`",
        &ops[9],
        &ops[10],
        "a `Point` cloned out of a `Box`",
    );
    row(
        "`x.get_attr(\"value\")` of a C++ node",
        &ops[11],
        &ops[12],
        "a field load through a `Box`",
    );
    row(
        "`ObjectRef` clone + drop",
        &ops[13],
        &ops[14],
        "`Arc` clone + drop",
    );
}
