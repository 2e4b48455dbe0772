//! Integration tests of grpo-runner: the model, the sampler, and the trainer (the `grpo` command line has its own, in grpo-cli).
//!
//! One test binary per crate (each topic a module), so the crate and its dependencies link once.
#![allow(
    clippy::expect_used,
    reason = "a test panics, with its message, on what it did not expect"
)]

mod common;
mod model;
mod module_graph;
mod precision;
mod sampler;
mod smollm2;
mod tools;
mod trainer_faults;
mod trainer_resume;
mod trainer_run;
