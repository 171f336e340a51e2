//! The timing of the Rust benchmarks (benches/calls.rs and rust/bench-tvm): operations run in
//! interleaved rounds on the thread's CPU clock, each table row a ratio taken within a round;
//! and the operations both tables time.
use std::hint::black_box;

/// The calling thread's CPU time in ns (CLOCK_THREAD_CPUTIME_ID): on a loaded machine, time
/// spent preempted is not counted, as it is in wall time.
pub fn thread_cpu_ns() -> u64 {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, out: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: a valid clock id and out pointer (Linux; the bench is not built elsewhere).
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0);
    ts.sec as u64 * 1_000_000_000 + ts.nsec as u64
}

/// One operation of the table: `run(n)` does it n times and returns how many inner operations
/// that was (n, or n times the C++ loop's count for the callback rows).
pub struct Op<'a> {
    run: Box<dyn FnMut(u64) -> u64 + 'a>,
    times: Vec<f64>,
}

impl<'a> Op<'a> {
    pub fn new(run: impl FnMut(u64) -> u64 + 'a) -> Op<'a> {
        Op {
            run: Box::new(run),
            times: Vec::new(),
        }
    }

    /// The op that calls `once` per operation, its result kept from the optimizer.
    pub fn each<T>(mut once: impl FnMut() -> T + 'a) -> Op<'a> {
        Op::new(move |n| {
            for _ in 0..n {
                black_box(once());
            }
            n
        })
    }
}

/// Ferry's call of a C++ global `add(int, int)` with (1, 2), the result read back as i64: the
/// first row of both tables.
#[inline(always)]
pub fn ferry_add(add: &ferry::Function) -> i64 {
    add.call((black_box(1i64), black_box(2i64)))
        .unwrap()
        .try_into()
        .unwrap()
}

/// Runs every op `n` times per round, all ops in each round one after another (interleaved),
/// for `rounds` rounds after one warm-up round; records ns per inner operation (thread CPU
/// time). A ratio of two rows is then taken within each round, from measurements made seconds
/// apart, so that a change of machine load between rounds moves both sides.
pub fn run_rounds(ops: &mut [Op<'_>], n: u64, rounds: usize) {
    for round in 0..=rounds {
        for op in ops.iter_mut() {
            let start = thread_cpu_ns();
            let inner = (op.run)(n);
            let ns = (thread_cpu_ns() - start) as f64 / inner as f64;
            if round > 0 {
                op.times.push(ns);
            }
        }
    }
}

pub fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let k = xs.len() / 2;
    if xs.len() % 2 == 1 {
        xs[k]
    } else {
        (xs[k - 1] + xs[k]) / 2.0
    }
}

/// The median of the per-round ratios of `a` to `b`, with their range: "1.12x (1.05–1.20x)".
pub fn ratio(a: &Op<'_>, b: &Op<'_>) -> String {
    let ratios: Vec<f64> = a.times.iter().zip(&b.times).map(|(x, y)| x / y).collect();
    let lo = ratios.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = ratios.iter().cloned().fold(0.0, f64::max);
    format!("{:.2}x ({lo:.2}–{hi:.2}x)", median(ratios))
}

/// The median time of an op: "6.7 ns".
pub fn time(op: &Op<'_>) -> String {
    format!("{:.1} ns", median(op.times.clone()))
}

/// A table row: the median times of `ferry` and `floor`, and the median of their per-round
/// ratios with its range.
#[allow(dead_code)] // rust/bench-tvm prints its own rows
pub fn row(what: &str, ferry: &Op<'_>, floor: &Op<'_>, floor_what: &str) {
    println!(
        "| {what} | {} | {} ({floor_what}) | {} |",
        time(ferry),
        time(floor),
        ratio(ferry, floor)
    );
}
