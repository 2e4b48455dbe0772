//! The R1-Zero-style GRPO trainer on candle, and the library behind the `grpo` binary.
#![deny(clippy::unwrap_used)]
#![warn(missing_docs)]

pub mod batch;
pub mod checkpoint;
pub mod config;
pub mod cpu;
pub mod error;
pub mod eval;
pub mod loading;
pub mod metrics;
pub mod model;
pub mod optim;
pub mod plot;
pub mod report;
pub mod sampler;
pub mod schedule;
pub mod sft;
pub mod tiny;
pub mod tokenizer;
pub mod trainer;

pub use error::{Error, Result};
pub use model::{Architecture, KvCache, Model, ModelConfig};
