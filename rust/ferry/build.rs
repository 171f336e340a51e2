//! Puts the libferry that ferry-sys found in the rpath of this crate's tests, examples and
//! doc tests, so they run without LD_LIBRARY_PATH. (A binary crate that depends on `ferry` does
//! the same in its own build script with `DEP_FERRY_LIB_DIR`, or sets LD_LIBRARY_PATH; see
//! rust/README.md.)
fn main() {
    if let Ok(dir) = std::env::var("DEP_FERRY_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
