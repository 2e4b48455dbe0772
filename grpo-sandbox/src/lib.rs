//! Running generated code (Python, C, C++, JavaScript, TypeScript) against tests, safely,
//! inside wasmtime; and [`CodeReward`], the [`CodeJudge`](grpo_rewards::CodeJudge) that
//! scores code tasks for the [`Scorer`](grpo_rewards::Scorer).
//!
//! (The threat model and the capability sheet are this crate's `README.md`, included below.)
#![doc = include_str!("../README.md")]
#![deny(clippy::unwrap_used)]
#![warn(missing_docs)]

// The layers, from the bottom up: each imports only those below it (checked by
// `tests/all/module_graph.rs`).
//
// | layer | what |
// |---|---|
// | `error` | the crate's error type (names the error types of the layers) |
// | `engine/` | wasmtime, the one run path, budgets, CPU slots, streams, run directories |
// | `guest/` | what runs on the engine: Python, QuickJS, TypeScript, WASIp1 modules, C/C++ |
// | `sandbox` | [`Sandbox`]: the engine and the guests' caches behind one handle |
// | `run_program` | [`RunRequest`] to [`RunOutput`]: the one dispatch by language |
// | `session` | interpreter sessions: an interpreter kept alive across calls |
// | `workspace/` | [`Workspace`]: a directory across commands (`python3`, `g++`, `./a.out`, `node`) |
// | `judge/` | [`CodeReward`]: programs against tests, comparisons, checkers, time scaling |
pub mod engine;
pub mod error;
pub mod guest;
pub mod judge;
pub mod run_program;
pub mod sandbox;
pub mod session;
pub mod workspace;

use std::sync::Arc;

pub use engine::runtime::{Allocator, EngineOptions};
pub use error::SandboxError;
pub use grpo_rewards::code::{Credit, LimitCaps, Limits};
pub use judge::CodeReward;
pub use judge::compare::first_difference;
pub use run_program::{CompileStep, RunOutput, RunRequest};
pub use sandbox::{Sandbox, SandboxOptions};
pub use session::{Session, SessionLimits, SessionStats};
pub use workspace::{ExecResult, Workspace, WorkspaceError, WorkspaceLimits};

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
