//! Finds libferry and its headers, links against it and compiles the layout probe.
//!
//! The search, first hit wins:
//! 1. `FERRY_DIR`: an install prefix (`include/ferry/c_api.h`, `lib/libferry.so`) or a CMake
//!    build tree of this repository (`libferry.so` beside `CMakeCache.txt`, headers found
//!    through the cache's source directory).
//! 2. `python3 -m ferry --lib-dir` / `--include-dir` (a pip-installed `ferry` package; the
//!    interpreter is `FERRY_PYTHON`, default `python3`).
//! 3. libferry built from this repository's sources (`../..`) with the `cmake` crate, into
//!    `OUT_DIR` (tests, examples and the Python extension off).
//!
//! The library directory is passed on to dependents as `DEP_FERRY_LIB_DIR` (and the headers as
//! `DEP_FERRY_INCLUDE`), and put in the rpath of this crate's own tests.
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

struct Found {
    lib_dir: PathBuf,
    include_dir: PathBuf,
    how: String,
}

fn has_lib(dir: &Path) -> bool {
    dir.join("libferry.so").exists() || dir.join("libferry.dylib").exists()
}

fn has_headers(dir: &Path) -> bool {
    dir.join("ferry").join("c_api.h").exists()
}

/// The source directory a CMake build tree was configured from (its CMakeCache.txt).
fn source_dir_of_build_tree(build: &Path) -> Option<PathBuf> {
    let cache = std::fs::read_to_string(build.join("CMakeCache.txt")).ok()?;
    cache.lines().find_map(|line| {
        line.strip_prefix("ferry_SOURCE_DIR:STATIC=")
            .or_else(|| line.strip_prefix("CMAKE_HOME_DIRECTORY:INTERNAL="))
            .map(PathBuf::from)
    })
}

fn from_ferry_dir(dir: &Path) -> Result<Found, String> {
    for lib in ["lib", "lib64"] {
        if has_lib(&dir.join(lib)) && has_headers(&dir.join("include")) {
            return Ok(Found {
                lib_dir: dir.join(lib),
                include_dir: dir.join("include"),
                how: format!("FERRY_DIR={} (an install prefix)", dir.display()),
            });
        }
    }
    if has_lib(dir) {
        let include = source_dir_of_build_tree(dir)
            .map(|src| src.join("include"))
            .filter(|inc| has_headers(inc))
            .ok_or_else(|| {
                format!(
                    "FERRY_DIR={} holds libferry but its CMakeCache.txt names no source \
                     directory with include/ferry/c_api.h",
                    dir.display()
                )
            })?;
        return Ok(Found {
            lib_dir: dir.to_path_buf(),
            include_dir: include,
            how: format!("FERRY_DIR={} (a build tree)", dir.display()),
        });
    }
    Err(format!(
        "FERRY_DIR={} is neither an install prefix (include/ferry/c_api.h and lib/libferry.so) \
         nor a CMake build tree (libferry.so and CMakeCache.txt)",
        dir.display()
    ))
}

fn python_query(python: &str, flag: &str) -> Option<PathBuf> {
    let out = Command::new(python)
        .args(["-m", "ferry", flag])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    Some(PathBuf::from(text.trim()))
}

fn from_python() -> Option<Found> {
    let python = env::var("FERRY_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let lib_dir = python_query(&python, "--lib-dir")?;
    let include_dir = python_query(&python, "--include-dir")?;
    (has_lib(&lib_dir) && has_headers(&include_dir)).then(|| Found {
        lib_dir,
        include_dir,
        how: format!("`{python} -m ferry`"),
    })
}

fn from_sources(manifest: &Path) -> Result<Found, String> {
    let root = manifest.join("..").join("..");
    if !root.join("CMakeLists.txt").exists() || !has_headers(&root.join("include")) {
        return Err(format!(
            "no installed Ferry found (set FERRY_DIR, or pip install ferry) and {} is not a \
             Ferry source tree to build it from",
            root.display()
        ));
    }
    let prefix = cmake::Config::new(&root)
        .define("FERRY_BUILD_TESTS", "OFF")
        .define("FERRY_BUILD_EXAMPLES", "OFF")
        .define("FERRY_BUILD_PYTHON", "OFF")
        .define("FERRY_BUILD_BENCH", "OFF")
        .define("FERRY_INSTALL", "ON")
        .define("CMAKE_INSTALL_LIBDIR", "lib")
        .profile("RelWithDebInfo")
        .build();
    let mut found = from_ferry_dir(&prefix)?;
    found.how = format!("built from {} with cmake", root.display());
    Ok(found)
}

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    println!("cargo:rerun-if-env-changed=FERRY_DIR");
    println!("cargo:rerun-if-env-changed=FERRY_PYTHON");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=csrc/layout.c");

    let found = match env::var_os("FERRY_DIR") {
        Some(dir) => from_ferry_dir(Path::new(&dir)),
        None => match from_python() {
            Some(found) => Ok(found),
            None => from_sources(&manifest),
        },
    };
    let found = match found {
        Ok(found) => found,
        Err(message) => panic!("ferry-sys: {message}"),
    };
    let lib_dir = found.lib_dir.canonicalize().unwrap_or(found.lib_dir);
    let include_dir = found
        .include_dir
        .canonicalize()
        .unwrap_or(found.include_dir);
    println!("cargo:rustc-env=FERRY_SYS_FOUND_BY={}", found.how);
    println!(
        "cargo:rerun-if-changed={}",
        lib_dir.join("libferry.so").display()
    );
    println!(
        "cargo:rerun-if-changed={}",
        include_dir.join("ferry").join("c_api.h").display()
    );
    println!("cargo:rustc-link-search=native={}", lib_dir.display());
    println!("cargo:rustc-link-lib=dylib=ferry");
    // Tests of this crate run without LD_LIBRARY_PATH; dependents read DEP_FERRY_LIB_DIR.
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib_dir.display());
    println!("cargo:lib_dir={}", lib_dir.display());
    println!("cargo:include={}", include_dir.display());
    println!("cargo:rustc-env=FERRY_SYS_LIB_DIR={}", lib_dir.display());
    println!(
        "cargo:rustc-env=FERRY_SYS_INCLUDE_DIR={}",
        include_dir.display()
    );

    // The layout probe: C's own sizeof/offsetof of the ABI structs, for the layout tests.
    cc::Build::new()
        .file(manifest.join("csrc").join("layout.c"))
        .include(&include_dir)
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .compile("ferry_sys_layout");
}
