//! Verifiable rewards for GRPO-style reinforcement learning.
//!
//! A reward looks at a model's completion for a task and says how good it is, with a reason:
//! is the math answer equivalent to the reference, does the generated Python pass its tests
//! inside a wasmtime sandbox, is the `<think>…</think><answer>…</answer>` format kept. Rewards
//! score a whole group of completions at once ([`Reward`]), and every outcome is a value with a
//! [`Verdict`], never a panic.
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
pub mod service;

pub use compose::{AccuracyReward, RewardSet};
pub use error::{Result, RewardError};
pub use format::{FormatConfig, FormatMode, FormatReward};
pub use math::{MathCheck, MathChecker, MathConfig, MathReward};
pub use result::{RunResult, RunStatus, ScoredResult, TestOutcome, Verdict, VerdictKind};
pub use reward::{Reward, Score};
pub use scoring::{Scoring, Weights};
