//! Running generated Python against tests, safely, inside wasmtime.
//!
//! (The threat model and the capability sheet are in `README.md` beside this file, included
//! below.)
#![doc = include_str!("README.md")]

pub mod error;
pub mod extract;
pub mod harness;
pub mod limits;
pub mod reward;
pub mod runtime;
pub mod sandbox;

pub use error::SandboxError;
pub use extract::{extract_code, program_for};
pub use limits::Limits;
pub use reward::{CodeReward, Credit, LimitCaps, check_reference, first_difference};
pub use runtime::{Allocator, EngineOptions};
pub use sandbox::{Sandbox, SandboxOptions};
