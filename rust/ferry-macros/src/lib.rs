//! Procedural macros of the `ferry` crate.
//!
//! `#[derive(ferry::Object)]` (a Rust struct registered as a Ferry runtime type through
//! `FerryTypeRegisterWithFields`) is planned here and not written yet; the crate exists so the
//! workspace has its final shape.
