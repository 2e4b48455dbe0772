//! Integration tests of grpo-sandbox: Python, JavaScript, TypeScript, C and C++ programs in
//! the sandbox (hostile ones included), the C/C++ toolchain, the code judge on HumanEval.
//!
//! One test binary per crate (each topic a module), so the crate and its dependencies link once.
#![allow(
    clippy::expect_used,
    reason = "a test panics, with its message, on what it did not expect"
)]

mod cc;
mod cc_toolchain;
mod common;
mod harness_idioms;
mod imported_grading;
mod judging;
mod module_graph;
mod sandbox;
mod sandbox_cc;
mod sandbox_humaneval;
mod sandbox_js;
mod sandbox_throughput;
mod scientific;
mod session;
mod testlib;
mod vendored_wasmtime;
mod workspace;
