//! Verifiable rewards for GRPO-style reinforcement learning: the verifiers and the
//! [`Scorer`].
//!
//! A reward looks at a model's completion for a task and says how good it is, with a reason:
//! is the math answer equivalent to the reference, is the countdown expression right, is the
//! `<think>…</think><answer>…</answer>` format kept. Every outcome is a value with a
//! [`Verdict`], never a panic. A failure on our side (a sandbox broke) is an error
//! ([`RewardError::Fault`]), never a reward of 0 that would train a policy.
//!
//! How the parts fit:
//!
//! - [`scorer`] holds the [`Scorer`], the one owner of scoring: built once from a
//!   [`ScoringConfig`], it scores a group of completions with per-call [`ScoreOptions`];
//!   every `grpo` command, the trainer, the service and the Python package score through it;
//! - [`answer`] is the one place the think and answer tags are searched for
//!   ([`AnswerFormat`]), read by [`format`] and by every extractor;
//! - [`math`], [`countdown`] and [`format`] are the pure verifiers; [`code`] finds the program
//!   in a completion and holds the limits of a sandboxed run;
//! - running code is the `grpo-sandbox` crate's, behind the [`CodeJudge`] trait;
//! - [`result`] holds the shapes every caller shares (run result, scored result, verdict).
//!
//! The crate has no features and links no wasmtime, tokio or HTTP stack: a math-only user
//! depends on it alone.
//!
//! ```
//! use grpo_rewards::{Scorer, ScoringConfig};
//! use grpo_tasks::Task;
//! let task: Task = serde_json::from_str(
//!     r#"{"id":"t","kind":"math","prompt":"Half of one?","answer":"1/2"}"#).unwrap();
//! // No code judge: math and countdown only (a code task would be a fault, not a 0).
//! let scorer = Scorer::new(&ScoringConfig::default()).unwrap();
//! let scored = scorer.score_group_blocking(&task, &[
//!     "<think>1/2</think><answer>0.5</answer>".to_string(),
//!     "\\boxed{1/3}".to_string(),
//! ], scorer.options()).unwrap();
//! assert!(scored[0].correct && !scored[1].correct);
//! assert_eq!(scored[1].verdict.kind, grpo_rewards::VerdictKind::WrongAnswer);
//! ```
#![deny(clippy::unwrap_used)]
#![warn(missing_docs)]

pub mod answer;
pub mod code;
pub mod countdown;
pub mod error;
pub mod format;
pub mod math;
pub mod result;
pub mod reward;
pub mod scorer;

pub use answer::{AnswerBlock, AnswerFormat};
pub use code::{Credit, LimitCaps, Limits};
pub use countdown::CountdownReward;
pub use error::{Result, RewardError};
pub use format::{FormatConfig, FormatMode, FormatReward};
pub use math::{MathCheck, MathChecker, MathConfig};
pub use result::{
    Components, RunResult, RunStatus, ScoredResult, TestOutcome, Verdict, VerdictKind,
};
pub use reward::{Reward, Score};
pub use scorer::{CodeJudge, ScoreOptions, Scorer, ScoringConfig, Weights};
