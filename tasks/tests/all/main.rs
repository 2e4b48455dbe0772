//! Integration tests of grpo-tasks: pack loading, the built-in packs and importers.
//!
//! One test binary per crate (each topic a module), so the crate and its dependencies link once.

mod builtin_packs;
mod import;
mod loading;
