//! Running generated code (Python, C, C++, JavaScript, TypeScript) against tests, safely,
//! inside wasmtime.
//!
//! (The threat model and the capability sheet are in `README.md` beside this file, included
//! below.)
#![cfg_attr(feature = "sandbox", doc = include_str!("README.md"))]

#[cfg(feature = "sandbox")]
mod budget;
#[cfg(feature = "sandbox")]
pub mod cc;
pub mod error;
pub mod extract;
#[cfg(feature = "sandbox")]
pub mod files;
#[cfg(feature = "sandbox")]
pub mod harness;
#[cfg(feature = "sandbox")]
mod js;
#[cfg(feature = "sandbox")]
pub mod languages;
pub mod limits;
#[cfg(feature = "sandbox")]
mod module;
#[cfg(feature = "sandbox")]
mod pipe;
#[cfg(feature = "sandbox")]
pub mod reward;
#[cfg(feature = "sandbox")]
pub mod runtime;
#[cfg(feature = "sandbox")]
pub mod sandbox;
#[cfg(feature = "sandbox")]
pub mod ts;

pub use error::SandboxError;
pub use extract::{extract_code, program_for};
pub use limits::{Credit, LimitCaps, Limits};
#[cfg(feature = "sandbox")]
pub use reward::{CodeReward, check_reference, first_difference};
#[cfg(feature = "sandbox")]
pub use runtime::{Allocator, EngineOptions};
#[cfg(feature = "sandbox")]
pub use sandbox::{Sandbox, SandboxOptions};

/// Built without the `sandbox` feature, no sandbox can exist: this type has no values, so
/// `Scoring::build(None)` is the only call there is, and a code task is a fault (never a 0).
#[cfg(not(feature = "sandbox"))]
#[derive(Debug, Clone)]
pub enum Sandbox {}
