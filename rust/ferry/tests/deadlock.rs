//! Lock order between the global registry and the dynamic loader: a thread removing a global
//! while another thread is inside dlopen (running a library's registrations) must not
//! deadlock. The scenario runs in a child process with a time limit, so a deadlock fails the
//! test instead of hanging it.
mod common;

use ferry::Function;
use std::process::Command;
use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

const CHILD: &str = "FERRY_TEST_DEADLOCK_CHILD";

/// The scenario: the loader thread sits in libslowinit.so's initializer (holding the loader's
/// lock) while another thread, whose first ferry.String is freed by the removal, removes a
/// global; then the initializer registers a global. Freeing a thread's first String registers
/// a thread-exit destructor, which takes the loader's lock: done under the registry's lock, the
/// two threads wait for each other.
fn scenario() {
    let (inside_tx, inside_rx) = channel();
    let inside_tx = std::sync::Mutex::new(inside_tx);
    let linger = Function::from_fn(move || {
        inside_tx.lock().unwrap().send(()).unwrap();
        std::thread::sleep(Duration::from_millis(500)); // let the remover take the registry lock
        Ok(())
    });
    Function::register_global("rs.test.in_initializer", linger, false).unwrap();
    let name = "rs.test.rm"; // short: its String takes a block of the per-thread cache
    Function::register_global(name, Function::from_fn(|| Ok(())), false).unwrap();
    // The remover thread exists before the load starts (a thread created during dlopen only
    // runs once the loader is done) and has freed no ferry.String yet.
    let (go_tx, go_rx) = channel::<()>();
    let remover = std::thread::spawn(move || {
        go_rx.recv().unwrap();
        Function::remove_global(name).unwrap()
    });
    let library = common::slow_init_library();
    let loader = std::thread::spawn(move || ferry::load_library(library));
    inside_rx.recv().unwrap();
    go_tx.send(()).unwrap();
    assert!(remover.join().unwrap());
    loader.join().unwrap().unwrap();
    let loaded: bool = Function::get_global_required("slow_init.loaded")
        .unwrap()
        .call(())
        .unwrap()
        .try_into()
        .unwrap();
    assert!(loaded);
}

#[test]
fn removing_a_global_while_a_library_loads() {
    if std::env::var_os(CHILD).is_some() {
        scenario();
        return;
    }
    common::slow_init_library(); // built here, not inside the timed child
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "removing_a_global_while_a_library_loads",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(30) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("deadlock: the registry and the loader wait for each other (killed after 30 s)");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "the scenario failed: {status}");
}
