//! Integration tests of grpo-rewards: the math checker, the sandbox, C/C++
//! compilation and the service.
//!
//! One test binary per crate (each topic a module), so the crate and its dependencies link once.

#[cfg(feature = "sandbox")]
mod cc;
#[cfg(feature = "sandbox")]
mod cc_toolchain;
mod math;
mod math_forms;
mod math_fuzz;
mod math_rules;
#[cfg(feature = "sandbox")]
mod sandbox;
#[cfg(feature = "sandbox")]
mod sandbox_cc;
#[cfg(feature = "sandbox")]
mod sandbox_humaneval;
#[cfg(feature = "sandbox")]
mod sandbox_js;
#[cfg(feature = "sandbox")]
mod sandbox_throughput;
#[cfg(feature = "service")]
mod service;
