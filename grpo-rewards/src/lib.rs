//! Verifiable rewards for GRPO-style reinforcement learning.
//!
//! A reward looks at a model's completion for a task and says how good it is, with a reason:
//! is the math answer equivalent to the reference, does the generated Python pass its tests
//! inside a wasmtime sandbox, is the `<think>…</think><answer>…</answer>` format kept. Rewards
//! score a whole group of completions at once ([`Reward`]), and every outcome is a value with a
//! [`Verdict`], never a panic. A failure on our side (the sandbox broke) is an error
//! ([`RewardError::Fault`]), never a reward of 0 that would train a policy.
//!
//! How the parts fit:
//!
//! - [`math`], [`countdown`], [`code`] and [`format`] are the reward functions; [`code`] holds
//!   the sandbox (wasmtime, CPython for WASI, limits) and the test harness;
//! - [`compose`] combines them by weight into a [`RewardSet`], routing accuracy by task kind;
//! - [`scoring`] is the one builder of that set ([`Scoring`]): every `grpo` command and the
//!   [`service`] build their rewards there, so a completion scores the same everywhere;
//! - [`result`] holds the shapes every caller shares (run result, scored result, verdict).
//!
//! Cargo features, both on by default: `sandbox` (the wasmtime sandbox and the code reward)
//! and `service` (the HTTP verifier service, implies `sandbox`). With
//! `default-features = false` the crate is the math, countdown and format rewards alone, and
//! builds without wasmtime, tokio or axum; code tasks are then faults.
//!
//! ```
//! use grpo_rewards::Scoring;
//! use grpo_tasks::Task;
//! let task: Task = serde_json::from_str(
//!     r#"{"id":"t","kind":"math","prompt":"Half of one?","answer":"1/2"}"#).unwrap();
//! // No sandbox: math and countdown only (a code task would be a fault, not a 0).
//! let rewards = Scoring::default().build(None).unwrap();
//! let scored = futures::executor::block_on(rewards.score_group(&task, &[
//!     "<think>1/2</think><answer>0.5</answer>".to_string(),
//!     "\\boxed{1/3}".to_string(),
//! ])).unwrap();
//! assert!(scored[0].correct && !scored[1].correct);
//! assert_eq!(scored[1].verdict.kind, grpo_rewards::VerdictKind::WrongAnswer);
//! ```
#![deny(clippy::unwrap_used)]
#![warn(missing_docs)]

pub mod code;
pub mod compose;
pub mod countdown;
pub mod error;
pub mod format;
pub mod math;
pub mod result;
pub mod reward;
pub mod scoring;
#[cfg(feature = "service")]
pub mod service;

pub use compose::{AccuracyReward, RewardSet};
pub use error::{Result, RewardError};
pub use format::{FormatConfig, FormatMode, FormatReward};
pub use math::{MathCheck, MathChecker, MathConfig, MathReward};
pub use result::{RunResult, RunStatus, ScoredResult, TestOutcome, Verdict, VerdictKind};
pub use reward::{Reward, Score};
pub use scoring::{Scoring, Weights};
