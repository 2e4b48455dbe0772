//! Task packs for reinforcement learning with verifiable rewards.
//!
//! A task pack is a set of problems, one JSON object per line, whose answers a program can
//! check: math problems with a reference answer, code problems with tests, and countdown
//! puzzles. This crate owns the schema ([`Task`]); the rewards that check completions live in
//! `grpo-rewards`.
#![deny(clippy::unwrap_used)]
#![warn(missing_docs)]

pub mod task;

pub use task::{
    AssertTests, CallCase, CallTests, CodeMode, CodeTask, CodeTests, CountdownTask, Language,
    MathTask, Metadata, StdioCase, StdioTests, Task, TaskKind,
};
