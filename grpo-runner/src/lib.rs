//! The R1-Zero-style GRPO trainer on candle, and the library behind the `grpo` binary.
//!
//! How the parts fit, in the order of one run:
//!
//! - [`config`]: the typed run config (presets, TOML layers, `--set` overrides), validated
//!   before any work starts and saved as the run's `config.toml`;
//! - [`device`]: where the model runs (`model.device`) and the dtype of its forward passes
//!   (`model.dtype`; the weights stay f32);
//! - [`model`], [`tokenizer`], [`loading`], [`tiny`]: a trainable Qwen2/Llama decoder built
//!   from differentiable candle ops, its tokenizer and chat template, HF and GGUF loading;
//! - [`sft`]: the supervised warm-up that teaches the answer format (math worked solutions,
//!   code reference solutions);
//! - [`trainer`]: one GRPO step is sample ([`sampler`]) → score (the scoring contract of
//!   `grpo_rewards`, code in the sandbox) → group advantages and the clipped loss
//!   (`grpo_core`, on a [`batch`]) → [`optim`] → report ([`metrics`], [`report`]);
//! - [`eval`]: the one evaluation path (the trainer's held-out evaluations and `grpo eval`);
//! - [`checkpoint`]: atomic checkpoints a run resumes from exactly.
//!
//! ```
//! use grpo_runner::config::{Preset, TrainConfig};
//! use grpo_runner::trainer::Trainer;
//! // The seconds-long smoke preset, without its warm-up: one GRPO step.
//! let config = TrainConfig::resolve(Preset::Smoke, None, &["warmup.steps=0".into()])?;
//! let mut trainer = Trainer::new(config)?;
//! let (record, _samples) = trainer.step()?;
//! assert_eq!(record.step, 1);
//! assert_eq!(record.fault_groups, 0);
//! # Ok::<(), grpo_runner::Error>(())
//! ```
#![deny(clippy::unwrap_used)]
#![warn(missing_docs)]

pub mod batch;
pub mod checkpoint;
pub mod config;
pub mod cpu;
pub mod device;
pub mod error;
pub mod eval;
pub mod loading;
pub mod logprobs;
pub mod metrics;
pub mod model;
pub mod optim;
pub mod plot;
pub mod report;
pub mod sampler;
pub mod schedule;
pub mod sft;
pub mod tensorboard;
pub mod tiny;
pub mod tokenizer;
pub mod tools;
pub mod trainer;

pub use error::{Error, Result};
pub use model::{Architecture, KvCache, Model, ModelConfig};
