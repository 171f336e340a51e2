//! Test support: builds tests/demo/demo.cc into libdemo.so (once, cached in the target
//! directory) against the libferry that ferry-sys links, and loads it.
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The directory holding libdemo.so, built when missing or older than its source.
pub fn demo_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| build_library("demo.cc", "libdemo.so"))
}

/// libslowinit.so (tests/demo/slow_init.cc), built like libdemo.so.
pub fn slow_init_library() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| build_library("slow_init.cc", "libslowinit.so"))
        .join("libslowinit.so")
}

/// libintimm_other_layout.so (tests/demo/intimm_other_layout.cc: demo.IntImm with a String
/// field `value`), built like libdemo.so.
pub fn other_layout_library() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| build_library("intimm_other_layout.cc", "libintimm_other_layout.so"))
        .join("libintimm_other_layout.so")
}

/// libdemo_abi_bumped.so: tests/demo/demo.cc built against a copy of Ferry's headers whose
/// FERRY_ABI_VERSION is one higher (the ABI guard refuses it).
pub fn abi_bumped_library() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        // Only api.rs builds it, once per run: a fixed place, made afresh.
        let copy = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ferry-abi-bumped-include");
        let _ = std::fs::remove_dir_all(&copy);
        copy_tree(Path::new(ferry::sys::INCLUDE_DIR), &copy);
        let version_h = copy.join("ferry/version.h");
        let text = std::fs::read_to_string(&version_h).unwrap();
        let line = text
            .lines()
            .find(|l| l.starts_with("#define FERRY_ABI_VERSION "))
            .expect("version.h defines FERRY_ABI_VERSION");
        let version: u32 = line["#define FERRY_ABI_VERSION ".len()..]
            .trim()
            .parse()
            .unwrap();
        let bumped = text.replace(line, &format!("#define FERRY_ABI_VERSION {}", version + 1));
        std::fs::write(&version_h, bumped).unwrap();
        build_library_with("demo.cc", "libdemo_abi_bumped.so", Some(&copy))
    })
    .join("libdemo_abi_bumped.so")
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// libshapes.so: tests/tschema/shapes.cc, the registration tschema generates from
/// tests/tschema/shapes_schema.py (with shapes.h), built like libdemo.so.
pub fn shapes_library() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| build_library("../tschema/shapes.cc", "libshapes.so"))
        .join("libshapes.so")
}

/// Builds tests/demo/`source` into `name` in the test directory when missing or stale.
fn build_library(source: &str, name: &str) -> PathBuf {
    build_library_with(source, name, None)
}

/// build_library, with `include` (a copy of Ferry's headers) searched first when given.
fn build_library_with(source: &str, name: &str, include: Option<&Path>) -> PathBuf {
    {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ferry-demo");
        std::fs::create_dir_all(&dir).unwrap();
        let source = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/demo")
            .join(source);
        let library = dir.join(name);
        let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        let libferry = Path::new(ferry::sys::LIB_DIR).join("libferry.so");
        let fresh = include.is_none()
            && match modified(&library) {
                Some(built) => {
                    modified(&source).is_some_and(|s| s <= built)
                        // The header beside a generated source (tests/tschema/shapes.h), if any.
                        && modified(&source.with_extension("h")).map_or(true, |h| h <= built)
                        && modified(&libferry).is_some_and(|l| l <= built)
                }
                None => false,
            };
        if !fresh {
            let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
            // Another test binary may build it at the same time: build aside, then rename.
            let partial = dir.join(format!("{name}.{}", std::process::id()));
            let status = Command::new(&cxx)
                .args(["-std=c++17", "-shared", "-fPIC", "-O1", "-pthread"])
                .args(include.map(|dir| format!("-I{}", dir.display())))
                .arg(format!("-I{}", ferry::sys::INCLUDE_DIR))
                .arg(&source)
                .arg(format!("-L{}", ferry::sys::LIB_DIR))
                .arg(format!("-Wl,-rpath,{}", ferry::sys::LIB_DIR))
                .arg("-lferry")
                .arg("-o")
                .arg(&partial)
                .status()
                .unwrap_or_else(|e| panic!("cannot run {cxx}: {e}"));
            assert!(
                status.success(),
                "{cxx} failed to build {}",
                source.display()
            );
            std::fs::rename(&partial, &library).unwrap();
        }
        dir
    }
}

/// Loads libdemo.so (by absolute path: tests of one binary run in parallel, and only the
/// contract test changes the working directory).
pub fn load_demo() {
    static LOADED: OnceLock<()> = OnceLock::new();
    LOADED.get_or_init(|| {
        ferry::load_library(demo_dir().join("libdemo.so")).expect("libdemo.so loads");
    });
}

/// Runs `command` with its output piped (read as it is written, so a full pipe never stops it)
/// and kills it after 120 s, naming `what` in the panic; (exit status, stdout, stderr).
pub fn run_with_timeout(
    mut command: Command,
    what: &str,
) -> (std::process::ExitStatus, String, String) {
    use std::io::Read;
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let mut process = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            pipe.read_to_string(&mut text).unwrap();
            text
        })
    };
    let out = drain(Box::new(process.stdout.take().unwrap()));
    let err = drain(Box::new(process.stderr.take().unwrap()));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = process.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(120) {
            process.kill().unwrap();
            panic!("the child `{what}` hung (killed after 120 s)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (status, out.join().unwrap(), err.join().unwrap())
}
