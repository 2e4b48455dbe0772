//! Running generated code (Python, C, C++, JavaScript, TypeScript) against tests, safely,
//! inside wasmtime; and [`CodeReward`], the [`CodeJudge`](grpo_rewards::CodeJudge) that
//! scores code tasks for the [`Scorer`](grpo_rewards::Scorer).
//!
//! (The threat model and the capability sheet are this crate's `README.md`, included below.)
#![doc = include_str!("../README.md")]
#![deny(clippy::unwrap_used)]
#![warn(missing_docs)]

mod budget;
pub mod cc;
pub mod checker;
pub mod compare;
mod cpu_clock;
mod digest;
pub mod error;
pub mod files;
pub mod harness;
mod js;
pub mod languages;
mod module;
pub mod native_time;
mod pipe;
pub mod reward;
mod run;
mod rundir;
pub mod runtime;
pub mod sandbox;
pub mod session;
mod slot;
mod stale;
pub mod ts;

use std::sync::Arc;

pub use compare::first_difference;
pub use error::SandboxError;
pub use grpo_rewards::code::{Credit, LimitCaps, Limits};
pub use languages::{CompileStep, RunOutput, RunRequest};
pub use reward::CodeReward;
pub use runtime::{Allocator, EngineOptions};
pub use sandbox::{Sandbox, SandboxOptions};
pub use session::{Session, SessionLimits, SessionStats};

/// The scorer of `config` with a code judge on `sandbox` when one is given (the judge takes
/// the config's default limits): what every command, the trainer, the service and the
/// Python package build once.
pub fn scorer(
    config: &grpo_rewards::ScoringConfig,
    sandbox: Option<Sandbox>,
) -> grpo_rewards::Result<grpo_rewards::Scorer> {
    let scorer = grpo_rewards::Scorer::new(config)?;
    Ok(match sandbox {
        Some(sandbox) => scorer.with_code(Arc::new(
            CodeReward::new(sandbox)
                .with_limits(config.limits.clone())
                .with_time_limits(config.time_limits, config.time_scale),
        )),
        None => scorer,
    })
}
