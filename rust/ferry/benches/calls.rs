//! Rust's hot paths through Ferry beside their floors: `cargo bench -p ferry` (not part of
//! `cargo test` or CI; results in docs/benchmarks.md, "Rust"). Plain timing with `Instant`:
//! each row is the median of 7 repetitions of N operations, ns per operation.
#[path = "../tests/common/mod.rs"]
mod common;

use ferry::{Any, Function, Object, ObjectRef};
use std::hint::black_box;
use std::time::Instant;

#[derive(ferry::Object, Clone)]
#[ferry(type_key = "bench.Point")]
struct Point {
    x: i64,
    y: f64,
}

/// Median ns per operation of `f` run `n` times, over 7 repetitions.
fn measure(n: u64, mut f: impl FnMut()) -> f64 {
    for _ in 0..n / 10 {
        f(); // warm up
    }
    let mut times: Vec<f64> = (0..7)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..n {
                f();
            }
            start.elapsed().as_nanos() as f64 / n as f64
        })
        .collect();
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    times[3]
}

fn row(what: &str, ferry: f64, floor: f64, floor_what: &str) {
    println!(
        "| {what} | {ferry:.1} ns | {floor:.1} ns ({floor_what}) | {:.2}x |",
        ferry / floor
    );
}

/// `calls --count PATH N`: runs one call path N times and nothing else, for instruction counts
/// under callgrind (the difference of two counts over the difference of their N is the
/// per-call count, stable on a loaded machine where the times above are not). PATH is `tuple`
/// (`add.call((1, 2))` with the result converted to i64), `packed` (`call_packed`), `raw`
/// (`ferry_sys::FerryFunctionCall`), `from_object` (a derived two-field struct read back) or
/// `get_attr` (the same two fields read by name).
fn count(path: &str, n: u64) {
    let add = Function::get_global_required("demo.add").unwrap();
    match path {
        "tuple" => {
            for _ in 0..n {
                let r: i64 = add
                    .call((black_box(1i64), black_box(2i64)))
                    .unwrap()
                    .try_into()
                    .unwrap();
                black_box(r);
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
        _ => panic!("unknown path {path}: tuple, packed, raw, from_object or get_attr"),
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
    const N: u64 = 2_000_000;
    println!("| operation | Ferry (Rust) | floor | ratio |");
    println!("|---|---|---|---|");

    // A Rust call of a C++ global (int, int) -> int, result converted back.
    let add = Function::get_global_required("demo.add").unwrap();
    let ferry = measure(N, || {
        let r: i64 = add
            .call((black_box(1i64), black_box(2i64)))
            .unwrap()
            .try_into()
            .unwrap();
        black_box(r);
    });
    // The same call through the raw C ABI: two cells, FerryFunctionCall, read the result.
    let raw = measure(N, || {
        black_box(raw_add(&add, black_box(1), black_box(2)));
    });
    let call_only = measure(N, || {
        black_box(add.call((black_box(1i64), black_box(2i64))).is_ok());
    });
    let args = [ferry::Any::from(1i64), ferry::Any::from(2i64)];
    let packed_views: Vec<ferry::AnyView<'_>> = args.iter().map(ferry::Any::view).collect();
    let packed = measure(N, || {
        black_box(add.call_packed(black_box(&packed_views)).is_ok());
    });
    let plain: &dyn Fn(i64, i64) -> i64 = &|a, b| a + b;
    let floor = measure(N, || {
        black_box(black_box(plain)(black_box(1), black_box(2)));
    });
    row(
        "Rust calls the C++ global `demo.add(1, 2)`",
        ferry,
        floor,
        "a `&dyn Fn(i64, i64)` call",
    );
    row(
        "the same, result not converted",
        call_only,
        floor,
        "as above",
    );
    row(
        "the same through `call_packed(&[AnyView])`",
        packed,
        floor,
        "as above",
    );
    row(
        "the same call through `ferry_sys::FerryFunctionCall`",
        raw,
        floor,
        "as above",
    );

    // A Rust closure called from C++: demo.call_n(f, n, 1) calls f(1) n times in a C++ loop;
    // the floor is the same loop over a C++ typed function.
    let call_n = Function::get_global_required("demo.call_n").unwrap();
    let rust_inc = Function::from_fn(|x: i64| Ok(x + 1));
    let cpp_inc = Function::get_global_required("demo.inc").unwrap();
    let per_call = |f: &Function| {
        measure(5, || {
            black_box(call_n.call((f, N as i64, 1i64)).unwrap());
        }) / N as f64
    };
    row(
        "C++ calls a typed Rust closure (`x + 1`)",
        per_call(&rust_inc),
        per_call(&cpp_inc),
        "the same C++ loop calling a C++ typed function",
    );

    // Make + drop of an object of a type defined in Rust (FerryObjectCreate, two fields).
    ferry::register_type::<Point>().unwrap();
    let p = Point { x: 1, y: 2.0 };
    let ferry = measure(N / 4, || {
        black_box(p.to_object().unwrap());
    });
    let floor = measure(N / 4, || {
        black_box(Box::new(black_box((1i64, 2.0f64))));
    });
    row(
        "`Point { x, y }.to_object()` + drop",
        ferry,
        floor,
        "`Box::new((i64, f64))` + drop",
    );

    // Field read by name (FerryObjectGetAttr) of a C++ node.
    let x: ObjectRef = ferry::make_node("demo.IntImm", &[("value", Any::from(7i64))]).unwrap();
    let ferry = measure(N, || {
        let v: i64 = x.get_attr(black_box("value")).unwrap().try_into().unwrap();
        black_box(v);
    });
    let boxed = Box::new((7i64, 0i64));
    let floor = measure(N, || {
        black_box(black_box(&boxed).0);
    });
    row(
        "`x.get_attr(\"value\")` of a C++ node",
        ferry,
        floor,
        "a field load through a `Box`",
    );

    // Clone + drop of a reference (an atomic increment and decrement).
    let ferry = measure(N, || {
        black_box(black_box(&x).clone());
    });
    let arc = std::sync::Arc::new(7i64);
    let floor = measure(N, || {
        black_box(black_box(&arc).clone());
    });
    row(
        "`ObjectRef` clone + drop",
        ferry,
        floor,
        "`Arc` clone + drop",
    );
}
