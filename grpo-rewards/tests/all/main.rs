//! Integration tests of grpo-rewards: the math checker (extraction, parsing, equivalence) and
//! its fuzz corpus.
//!
//! One test binary per crate (each topic a module), so the crate and its dependencies link once.
#![allow(
    clippy::expect_used,
    reason = "a test panics, with its message, on what it did not expect"
)]

mod math;
mod math_families;
mod math_forms;
mod math_fuzz;
mod math_rules;
mod math_symmetry;
