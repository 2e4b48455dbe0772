//! Integration tests of grpo-tasks: pack loading, the built-in packs and importers.
//!
//! One test binary per crate (each topic a module), so the crate and its dependencies link once.
#![allow(
    clippy::expect_used,
    reason = "a test panics, with its message, on what it did not expect"
)]

mod builtin_packs;
mod import;
mod loading;
