//! Every function and enum constant of `ferry/c_api.h` is declared by ferry-sys, and nothing
//! it declares under a `Ferry`/`kFerry` name is missing from the header: a function added to
//! the C ABI without its Rust declaration (as FerryTypeSetFieldDefault once was) fails here.
//! The header read is the one of the libferry this crate links (`ferry_sys::INCLUDE_DIR`);
//! the declarations are this crate's source. layout.rs checks what they mean (sizes, offsets,
//! values); this checks that none is forgotten.

use std::collections::BTreeSet;

/// The identifiers that follow `prefix` in `text` (up to a character that cannot be in one),
/// when the text before `prefix` on its line satisfies `line_ok` and the identifier is
/// followed, after spaces, by `next`.
fn names_after(
    text: &str,
    prefix: &str,
    next: char,
    line_ok: impl Fn(&str) -> bool,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let mut rest = line;
        while let Some(at) = rest.find(prefix) {
            let before = &line[..line.len() - rest.len() + at];
            let word_start = before
                .chars()
                .last()
                .map_or(true, |c| !(c.is_alphanumeric() || c == '_'));
            let tail = &rest[at..];
            let len = tail
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(tail.len());
            let (name, after) = tail.split_at(len);
            if word_start && line_ok(before) && after.trim_start().starts_with(next) {
                out.insert(name.to_string());
            }
            rest = &tail[len..];
        }
    }
    out
}

fn header() -> String {
    let path = std::path::Path::new(ferry_sys::INCLUDE_DIR).join("ferry/c_api.h");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn source() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/lib.rs");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The functions of the header: `FERRY_DLL <type> Name(` and `static inline <type> Name(`.
fn header_functions(text: &str) -> BTreeSet<String> {
    names_after(text, "Ferry", '(', |before| {
        let t = before.trim_start();
        (t.starts_with("FERRY_DLL ") || t.starts_with("static inline ")) && !before.contains('(')
    })
}

/// The functions of ferry-sys: `pub fn Name(` and `pub unsafe fn Name(`.
fn rust_functions(text: &str) -> BTreeSet<String> {
    names_after(text, "Ferry", '(', |before| {
        let t = before.trim();
        t == "pub fn" || t == "pub unsafe fn"
    })
}

fn missing(what: &str, want: &BTreeSet<String>, have: &BTreeSet<String>, place: &str) -> String {
    let gone: Vec<&String> = want.difference(have).collect();
    if gone.is_empty() {
        String::new()
    } else {
        format!("{what} missing from {place}: {gone:?}\n")
    }
}

#[test]
fn every_function_of_the_header_is_declared_and_no_other() {
    let (h, r) = (header_functions(&header()), rust_functions(&source()));
    assert!(h.len() > 50, "the header parse found only {h:?}");
    let report = missing("functions of c_api.h", &h, &r, "ferry-sys/src/lib.rs")
        + &missing("functions of ferry-sys", &r, &h, "c_api.h");
    assert!(report.is_empty(), "{report}");
}

#[test]
fn every_enum_constant_of_the_header_is_declared_and_no_other() {
    let h = names_after(&header(), "kFerry", '=', |b| b.trim().is_empty());
    let r = names_after(&source(), "kFerry", ':', |b| b.trim() == "pub const");
    assert!(h.len() > 30, "the header parse found only {h:?}");
    let report = missing("constants of c_api.h", &h, &r, "ferry-sys/src/lib.rs")
        + &missing("constants of ferry-sys", &r, &h, "c_api.h");
    assert!(report.is_empty(), "{report}");
}

#[test]
fn the_parser_finds_what_it_should_and_nothing_else() {
    let text = "FERRY_DLL int FerryA(int x);\n\
                static inline size_t FerryB(const FerryAny* cell) {\n\
                /// FerryC(x) in a comment, and FerryD inside FerryE(FerryD(1));\n\
                FERRY_DLL void NotFerryF(void);\n\
                FERRY_DLL const char* const* FerryG(void);\n";
    let want: BTreeSet<String> = ["FerryA", "FerryB", "FerryG"].map(String::from).into();
    assert_eq!(header_functions(text), want);
    let rust = "    pub fn FerryA(x: i32) -> c_int;\npub unsafe fn FerryB(cell: &FerryAny) {\n\
                // pub fn FerryC(\n    fn FerryD(\n";
    let want: BTreeSet<String> = ["FerryA", "FerryB"].map(String::from).into();
    assert_eq!(rust_functions(rust), want);
}
