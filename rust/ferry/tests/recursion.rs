//! A Rust closure that calls itself through C++ without end (closure -> C++'s `demo.call_n` ->
//! the closure -> ...) ends in a `ferry::Error`, not in the process dying of a stack overflow:
//! on the main thread, and on a spawned thread with a small stack. Each case runs in a child
//! process (this binary run again with `FERRY_RECURSION_CHILD` set, so that a crash is seen as
//! one, with a timeout); `harness = false`, so that the main-thread case runs on the main thread.
#[path = "common/mod.rs"]
mod common;

use ferry::Function;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

const CHILD: &str = "FERRY_RECURSION_CHILD";

/// How many times the closure was entered.
static DEPTH: AtomicUsize = AtomicUsize::new(0);

/// The child: the endless recursion, then an ordinary call on the same thread; prints
/// `kind|message|depth|after` for the parent. With `panic`, each closure panics on the error of
/// the call it made, the deepest one with the least stack left.
fn recurse_endlessly(panic: bool) -> String {
    common::load_demo();
    let call_n = Function::get_global_required("demo.call_n").unwrap();
    let rec = Function::from_fn(move |f: Function| {
        DEPTH.fetch_add(1, Ordering::Relaxed);
        let result = call_n.call((&f, 1i64, &f));
        if panic {
            // (Not `unwrap`: the Debug text of an error holding the one below, quotes escaped at
            // each level, doubles in size per level.)
            return Ok(result.unwrap_or_else(|e| panic!("the call failed: {}", e.kind())));
        }
        result
    });
    let err = rec
        .call((&rec,))
        .expect_err("an endless recursion returned");
    let depth = DEPTH.load(Ordering::Relaxed);
    // The thread is usable afterwards: its stack unwound, the closure callable again.
    let inc = Function::from_fn(|x: i64| Ok(x + 1));
    let call_n = Function::get_global_required("demo.call_n").unwrap();
    let after: i64 = call_n
        .call((&inc, 3i64, 41i64))
        .unwrap()
        .try_into()
        .unwrap();
    format!("{}|{}|{depth}|{after}", err.kind(), err.message())
}

/// The child `rust-only`: a closure calling itself through `Function::call` (C's
/// FerryFunctionCall, no C++ frame between) without end; prints `kind|message|depth|-`.
fn recurse_through_rust_calls() -> String {
    let rec = Function::from_fn(|f: Function| {
        DEPTH.fetch_add(1, Ordering::Relaxed);
        f.call((&f,))
    });
    let err = rec
        .call((&rec,))
        .expect_err("an endless recursion returned");
    let depth = DEPTH.load(Ordering::Relaxed);
    format!("{}|{}|{depth}|42", err.kind(), err.message())
}

/// The child `tiny-thread`: one call of a closure from C++ on a thread whose whole stack is
/// smaller than the reserve; prints `kind|message`.
fn call_on_a_tiny_thread() -> String {
    common::load_demo(); // (dlopen on the main thread)
    let call_n = Function::get_global_required("demo.call_n").unwrap();
    let inc = Function::from_fn(|x: i64| Ok(x + 1));
    std::thread::Builder::new()
        .stack_size(48 << 10)
        .spawn(move || {
            let err = call_n
                .call((&inc, 1i64, 1i64))
                .expect_err("a call on 48 KiB");
            format!("{}|{}", err.kind(), err.message())
        })
        .unwrap()
        .join()
        .unwrap()
}

fn child(mode: &'static str) {
    let line = match mode {
        "tiny-thread" => call_on_a_tiny_thread(),
        "rust-only" => recurse_through_rust_calls(),
        "main" => recurse_endlessly(false),
        "small-thread" | "small-thread-panic" => std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(move || recurse_endlessly(mode.ends_with("panic")))
            .unwrap()
            .join()
            .unwrap(),
        _ => panic!("unknown {CHILD}={mode}"),
    };
    println!("{line}");
}

/// Runs this binary as the child `mode`, killed after 120 s; (exit status, stdout, stderr).
fn run_child(mode: &str) -> (std::process::ExitStatus, String, String) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .env(CHILD, mode)
        // A panic's backtrace of ~1000 frames, printed at each of the 50 levels, takes minutes.
        .env("RUST_BACKTRACE", "0");
    common::run_with_timeout(command, mode)
}

fn endless_recursion_is_an_error(mode: &str) {
    let (status, out, err) = run_child(mode);
    assert!(
        status.success(),
        "the child `{mode}` died ({status}) instead of returning an error:\n{out}\n{err}"
    );
    let line = out.lines().last().unwrap_or("");
    let parts: Vec<&str> = line.split('|').collect();
    assert_eq!(parts.len(), 4, "child `{mode}` printed {out:?}");
    assert_eq!(parts[0], "RuntimeError", "{line}");
    if mode.ends_with("panic") {
        assert_eq!(
            parts[1], "a Rust function panicked: the call failed: RuntimeError",
            "{line}"
        );
    } else {
        assert!(
            parts[1].contains("maximum recursion depth exceeded") && parts[1].contains("stack"),
            "{line}"
        );
    }
    let depth: usize = parts[2].parse().unwrap();
    assert!(depth > 10, "refused after only {depth} calls: {line}");
    assert_eq!(parts[3], "42", "the thread after the error: {line}");
    println!("endless recursion on `{mode}`: {parts:?}");
}

/// On a thread with less stack than the reserve at all, every call of a Rust closure from C++ is
/// the same RuntimeError (never a crash).
fn a_closure_on_a_tiny_stack_is_an_error() {
    let (status, out, err) = run_child("tiny-thread");
    assert!(status.success(), "the child died ({status}):\n{out}\n{err}");
    let line = out.lines().last().unwrap_or("");
    assert!(
        line.starts_with(
            "RuntimeError|maximum recursion depth exceeded: a callback of another \
                          language needs 64 KiB of stack"
        ),
        "{line}"
    );
    println!("a closure on a 48 KiB thread: {line}");
}

fn main() {
    if let Ok(mode) = std::env::var(CHILD) {
        child(mode.leak());
        return;
    }
    endless_recursion_is_an_error("main");
    endless_recursion_is_an_error("small-thread");
    // The panics, and their messages printed, with what stack is left.
    endless_recursion_is_an_error("small-thread-panic");
    endless_recursion_is_an_error("rust-only");
    a_closure_on_a_tiny_stack_is_an_error();
    println!("recursion: 5 cases passed");
}
