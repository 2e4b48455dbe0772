//! The R1-Zero-style GRPO trainer on candle, and the library behind the `grpo` binary.
//!
//! The crate's folders are its layers; each imports only the ones listed before it
//! (`tests/all/module_graph/` checks that the top-level modules import each other in no cycle):
//!
//! - [`error`], [`cpu`], [`device`]: errors, CPU settings, where the model runs
//!   (`model.device`) and the dtype of its forward passes (`model.dtype`; weights stay f32);
//! - [`model`], [`tokenizer`], [`tiny`], [`loading`]: a trainable Qwen2/Llama decoder built
//!   from differentiable candle ops (LoRA in [`model::lora`]), its tokenizer and chat
//!   template, the fresh tiny model, HF and GGUF loading;
//! - [`optim`], [`schedule`]: fused AdamW and the learning-rate schedules;
//! - [`config`]: the typed run config (presets, TOML layers, `--set` overrides), validated
//!   before any work starts and saved as the run's `config.toml`;
//! - [`rollout`]: what one sampling round produces, to the tensors the loss reads:
//!   [`rollout::sampler`] (G completions per prompt), [`rollout::tools`] (the code
//!   interpreter inside a completion), [`rollout::batch`] (packing),
//!   [`rollout::logprobs`] (log-probs recomputed from a forward pass);
//! - [`eval`]: the one evaluation path (the trainer's held-out evaluations and `grpo eval`);
//! - [`run`]: what a run leaves on disk: [`run::dir`] (the run directory and its final
//!   model), [`run::records`] (`metrics.jsonl`, `eval.jsonl`, `samples.jsonl`),
//!   [`run::checkpoint`], [`run::plot`], [`run::tensorboard`];
//! - [`train`]: the trainer; one GRPO step is sample → score (the scoring contract of
//!   `grpo_rewards`, code in the sandbox) → group advantages → the clipped loss (`grpo_core`)
//!   on the step's batch, packed once → [`optim`] → records; [`train::sft`] is the
//!   supervised warm-up that teaches the answer format.
//!
//! ```
//! use grpo_runner::config::{Preset, TrainConfig};
//! use grpo_runner::train::Trainer;
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

pub mod config;
pub mod cpu;
pub mod device;
pub mod error;
pub mod eval;
pub mod loading;
pub mod model;
pub mod optim;
pub mod rollout;
pub mod run;
pub mod schedule;
pub mod tiny;
pub mod tokenizer;
pub mod train;

pub use error::{Error, Result};
pub use model::{Architecture, KvCache, Model, ModelConfig};
