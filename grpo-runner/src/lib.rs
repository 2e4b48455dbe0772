//! The R1-Zero-style GRPO trainer on candle, and the library behind the `grpo` binary.
#![deny(clippy::unwrap_used)]
#![warn(missing_docs)]

pub mod cpu;
pub mod error;
pub mod eval;
pub mod loading;
pub mod model;
pub mod sampler;
pub mod tiny;
pub mod tokenizer;

pub use error::{Error, Result};
pub use model::{Architecture, KvCache, Model, ModelConfig};
