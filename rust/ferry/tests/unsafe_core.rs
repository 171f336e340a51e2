//! The quality bar of issue 33: no `unsafe` outside `ferry-sys` and a small core of `ferry`.
//! The crate denies `unsafe_code` and allows it per module in lib.rs; this test pins that list
//! (so that growing it is a visible change) and checks that no other source file of the crate
//! (subdirectories included: a module's submodules count as the module)
//! holds an `unsafe` block, fn, impl or trait, nor allows the lint itself.
use std::path::Path;

/// The one module allowed `unsafe` code: the core, `raw` (src/raw.rs and its submodules in src/raw/).
const ALLOWED: &[&str] = &["raw"];

fn src() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn only_the_listed_modules_allow_unsafe_code() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let mut allowed = Vec::new();
    let mut lines = lib.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "#[allow(unsafe_code)]" {
            let next = lines.next().unwrap_or("").trim();
            let module = next
                .strip_prefix("mod ")
                .and_then(|m| m.strip_suffix(';'))
                .unwrap_or_else(|| panic!("lib.rs allows unsafe_code on `{next}`, not a module"));
            allowed.push(module.to_string());
        }
    }
    assert_eq!(allowed, ALLOWED, "the modules lib.rs allows unsafe_code in");
    assert!(
        lib.contains("#![deny(unsafe_code"),
        "lib.rs no longer denies unsafe_code"
    );
}

/// Every .rs file under `dir`, in its subdirectories too (a module's submodules: `raw/cell.rs`).
fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_unsafe_outside_the_allowed_modules() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    assert!(
        files.iter().any(|f| f.ends_with("raw/call.rs")),
        "the scan misses the core's submodules"
    );
    for path in files {
        // The top-level module a file belongs to: `raw` for src/raw.rs and src/raw/cell.rs.
        let relative = path.strip_prefix(src()).unwrap();
        let first = relative.components().next().unwrap().as_os_str();
        let stem = Path::new(first)
            .file_stem()
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        if ALLOWED.contains(&stem.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for word in [
                "unsafe {",
                "unsafe fn",
                "unsafe impl",
                "unsafe trait",
                "allow(unsafe_code",
            ] {
                // lib.rs holds the allow-list itself, checked above.
                if stem == "lib" && word == "allow(unsafe_code" {
                    continue;
                }
                assert!(
                    !code.contains(word),
                    "{}:{}: `{word}` outside the unsafe core: {line}",
                    path.display(),
                    n + 1
                );
            }
        }
    }
}
