//! Integration tests of the `grpo` command line: each subcommand run as a process, as users
//! run it.
//!
//! One test binary per crate (each topic a module), so the crate and its dependencies link once.
#![allow(
    clippy::expect_used,
    reason = "a test panics, with its message, on what it did not expect"
)]

mod cli_bench;
mod cli_check_math;
mod cli_eval;
mod cli_score;
mod cli_serve;
mod cli_tasks;
mod cli_toolchain;
mod cli_train;
mod common;
