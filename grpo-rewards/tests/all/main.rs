//! Integration tests of grpo-rewards: the math checker, the sandbox and the service.
//!
//! One test binary per crate (each topic a module), so the crate and its dependencies link once.

mod math;
mod math_forms;
mod math_fuzz;
mod math_rules;
mod sandbox;
mod sandbox_humaneval;
mod sandbox_throughput;
mod service;
