//! Shared inputs for the grpo-rs benchmarks (`cargo bench -p grpo-benches`).
#![warn(missing_docs)]

pub mod math_pairs;
