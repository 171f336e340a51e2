//! A planted use-after-free through the unsafe layer, for scripts/rust_memcheck.sh: it runs
//! this under valgrind first and requires memcheck to report it, so a memcheck that stopped
//! checking (a wrong flag, a suppression too wide, a binary it does not instrument) fails the
//! stage instead of passing it. Undefined behavior on purpose: never run it for anything else.
use ferry::ObjectRef;

fn main() {
    let text: ObjectRef = ferry::String::from("a string object, freed below").into();
    let handle = text.handle();
    drop(text); // the last reference: libferry frees the object
                // SAFETY: none, deliberately: `handle` is dangling. Taking a reference writes its count.
    let stale = unsafe { ObjectRef::from_borrowed_handle(handle) };
    println!("read after free: {}", stale.type_key());
    std::mem::forget(stale); // no second free: one report is the point
}
