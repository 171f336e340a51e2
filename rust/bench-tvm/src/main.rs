//! Ferry's Rust crate beside apache-tvm-ffi's `tvm-ffi` crate, in one process and one run:
//! a Rust call of a C++ global `add(int, int)`, a Rust closure called from a C++ loop, and a
//! clone + drop of a function reference, each beside its floor. Run by
//! `scripts/bench_rust.sh` (results in docs/benchmarks.md, "Rust"); the timing is
//! rust/ferry/benches/harness (interleaved rounds, the thread's CPU clock, per-round ratios).
#[path = "../../ferry/benches/harness/mod.rs"]
mod harness;

use harness::{ferry_add, ratio, run_rounds, time, Op};
use std::hint::black_box;

extern "C" {
    /// csrc/ferry_side.cc: registers bench.add, bench.inc, bench.call_n with Ferry.
    fn ferry_bench_register();
    /// csrc/tvm_side.cc: the same functions registered with tvm-ffi.
    fn tvm_bench_register();
}

fn main() {
    // SAFETY: plain registrations, once, before any lookup.
    unsafe {
        ferry_bench_register();
        tvm_bench_register();
    }
    const N: u64 = 200_000;
    const ROUNDS: usize = 21;

    let f_add = ferry::Function::get_global_required("bench.add").unwrap();
    let t_add = tvm_ffi::Function::get_global("bench.add").unwrap();
    let plain: &dyn Fn(i64, i64) -> i64 = &|a, b| a + b;
    let f_call_n = ferry::Function::get_global_required("bench.call_n").unwrap();
    let t_call_n = tvm_ffi::Function::get_global("bench.call_n").unwrap();
    let f_closure = ferry::Function::from_fn(|x: i64| Ok(x + 1));
    let t_closure = tvm_ffi::Function::from_typed(|x: i64| -> tvm_ffi::Result<i64> { Ok(x + 1) });
    let f_inc = ferry::Function::get_global_required("bench.inc").unwrap();
    let t_inc = tvm_ffi::Function::get_global("bench.inc").unwrap();
    let arc = std::sync::Arc::new(7i64);

    // Sanity: both sides compute the same thing.
    assert_eq!(ferry_add(&f_add), 3);
    let r = i64::try_from(t_add.call_tuple((1i64, 2i64)).unwrap()).unwrap();
    assert_eq!(r, 3);

    let ferry_loop = |f: &ferry::Function, n: u64| {
        black_box(f_call_n.call((f, n as i64, 1i64)).unwrap());
        n
    };
    let tvm_loop = |f: &tvm_ffi::Function, n: u64| {
        black_box(t_call_n.call_tuple((f, n as i64, 1i64)).unwrap());
        n
    };
    let mut ops = vec![
        // 0-2: add(1, 2) with the result read back as i64.
        Op::each(|| ferry_add(&f_add)),
        Op::each(|| {
            i64::try_from(
                t_add
                    .call_tuple((black_box(1i64), black_box(2i64)))
                    .unwrap(),
            )
            .unwrap()
        }),
        Op::each(|| black_box(plain)(black_box(1), black_box(2))),
        // 3-6: a C++ loop calling a Rust closure, and the same loop calling a C++ function.
        Op::new(|n| ferry_loop(&f_closure, n)),
        Op::new(|n| tvm_loop(&t_closure, n)),
        Op::new(|n| ferry_loop(&f_inc, n)),
        Op::new(|n| tvm_loop(&t_inc, n)),
        // 7-9: clone + drop of a function reference.
        Op::each(|| black_box(&f_add).clone()),
        Op::each(|| black_box(&t_add).clone()),
        Op::each(|| black_box(&arc).clone()),
    ];
    run_rounds(&mut ops, N, ROUNDS);

    println!(
        "| operation | Ferry | tvm-ffi | Ferry / tvm-ffi | floor | Ferry / floor | tvm-ffi / floor |"
    );
    println!("|---|---|---|---|---|---|---|");
    let line = |what: &str, f: usize, t: usize, f_floor: usize, t_floor: usize, floor: &str| {
        let floors = if f_floor == t_floor {
            time(&ops[f_floor])
        } else {
            format!("{} / {}", time(&ops[f_floor]), time(&ops[t_floor]))
        };
        println!(
            "| {what} | {} | {} | {} | {floors} ({floor}) | {} | {} |",
            time(&ops[f]),
            time(&ops[t]),
            ratio(&ops[f], &ops[t]),
            ratio(&ops[f], &ops[f_floor]),
            ratio(&ops[t], &ops[t_floor]),
        );
    };
    line(
        "Rust calls the C++ global `add(1, 2)`, result to i64",
        0,
        1,
        2,
        2,
        "a `&dyn Fn(i64, i64)` call",
    );
    line(
        "C++ calls a typed Rust closure (`x + 1`), per call",
        3,
        4,
        5,
        6,
        "the same C++ loop calling a C++ typed function, Ferry's / tvm-ffi's",
    );
    line(
        "a function reference: clone + drop",
        7,
        8,
        9,
        9,
        "`Arc` clone + drop",
    );
}
