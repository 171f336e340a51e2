//! Compiles the C++ side of the benchmark: csrc/ferry_side.cc against the libferry that ferry-sys
//! found (DEP_FERRY_INCLUDE), csrc/tvm_side.cc against the headers of the apache-tvm-ffi whose
//! `tvm-ffi-config` is on PATH (the one tvm-ffi-sys links). Both at -O2, into this binary.
use std::process::Command;

fn tvm_ffi_config(flag: &str) -> String {
    let out = Command::new("tvm-ffi-config")
        .arg(flag)
        .output()
        .unwrap_or_else(|e| panic!("cannot run tvm-ffi-config (pip install apache-tvm-ffi): {e}"));
    assert!(out.status.success(), "tvm-ffi-config {flag} failed");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn main() {
    println!("cargo:rerun-if-changed=csrc/ferry_side.cc");
    println!("cargo:rerun-if-changed=csrc/tvm_side.cc");
    println!("cargo:rerun-if-env-changed=PATH");
    let ferry_include = std::env::var("DEP_FERRY_INCLUDE").expect("ferry-sys gives its headers");
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .opt_level(2)
        .include(&ferry_include)
        .file("csrc/ferry_side.cc")
        .compile("ferry_side");
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .opt_level(2)
        .include(tvm_ffi_config("--includedir"))
        .include(tvm_ffi_config("--dlpack-includedir"))
        .file("csrc/tvm_side.cc")
        .compile("tvm_side");
    // The binary runs without LD_LIBRARY_PATH.
    println!(
        "cargo:rustc-link-arg=-Wl,-rpath,{}",
        tvm_ffi_config("--libdir")
    );
    if let Ok(dir) = std::env::var("DEP_FERRY_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
