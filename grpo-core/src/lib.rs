//! GRPO math on candle tensors: from rewards to a differentiable loss.
//!
//! The crate is the algorithm of Group Relative Policy Optimization and its variants as pure
//! functions, with no I/O, model or sampler: the trainer owns those and calls, in pipeline
//! order,
//!
//! 1. shaping of the scorer's one reward per completion: [`overlong_penalty`] (DAPO) and
//!    [`is_tied`], the groups dynamic sampling drops;
//! 2. [`group_advantages`] — rewards `[prompts, group]` into advantages, relative to the group;
//! 3. [`token_logprobs`] and [`response_mask`] — the log-probability of every sampled token and
//!    which tokens are actions;
//! 4. [`policy_loss`] — clipped surrogate (token- or sequence-level ratio), β·KL to the
//!    reference ([`kl_k3`] by default), reduced by [`LossReduction`] with a batch-wide
//!    [`Normalizer`], returning the loss and [`StepMetrics`].
//!
//! Everything is configured by [`GrpoConfig`] (serde, validated, with [`Algorithm`] presets
//! for GRPO, Dr. GRPO, DAPO and GSPO). Functions take and return `candle_core::Tensor`s on any
//! device, f32 for training and f64 for gradient checks; shapes are documented in each
//! function's `# Shapes` section. Advantages and log-probs are computed per the DeepSeekMath
//! formulas (population standard deviation, stabilizer 1e-8, a tied group gets exactly zero);
//! where peers differ (TRL, verl) the docs say so, and [`Conventions`] switches to their
//! numerics (unbiased std and its stabilizer, f32 statistics, groups of one, log-ratio clamps)
//! for comparing runs.
//!
//! Gradient accumulation is exact: the reduction divides by counts from the whole batch, so the
//! losses (and gradients) of k micro-batches sum to the one-batch loss (and gradient).
//!
//! # Example
//! ```
//! use candle_core::{DType, Device, Tensor, Var};
//! use grpo_core::{
//!     Algorithm, GrpoConfig, LossInputs, Normalizer, group_advantages, policy_loss,
//!     response_mask, token_logprobs,
//! };
//!
//! let cpu = Device::Cpu;
//! let config = GrpoConfig::preset(Algorithm::Grpo, 4);
//! config.validate()?;
//!
//! // One prompt, a group of two completions; the first was right.
//! let rewards = Tensor::new(&[[1f32, 0.]], &cpu)?;
//! let advantages = group_advantages(&rewards, &config.advantage)?.flatten_all()?; // [+1, −1]
//!
//! // Logits of a toy policy over a vocabulary of 3 for 2 × 4 target positions; the response
//! // starts at position 1 and has 3 and 2 tokens.
//! let logits = Var::zeros((2, 4, 3), DType::F32, &cpu)?;
//! let targets = Tensor::new(&[[0u32, 1, 2, 1], [0, 2, 2, 0]], &cpu)?;
//! let mask = response_mask(&[1, 1], &[3, 2], 4, &cpu)?;
//! let logprobs = token_logprobs(logits.as_tensor(), &targets)?;
//! let old = logprobs.detach(); // on-policy: the sampler's log-probs
//!
//! let inputs = LossInputs {
//!     logprobs: &logprobs,
//!     old_logprobs: &old,
//!     ref_logprobs: Some(&old),
//!     advantages: &advantages,
//!     mask: &mask,
//!     logits: Some(logits.as_tensor()),
//!     group_size: Some(2),
//! };
//! let (loss, metrics) = policy_loss(&inputs, &config.loss, &Normalizer::from_mask(&mask)?)?;
//! // Ratio 1, KL 0: the loss is −mean(A) = 0, but the gradient pushes the first completion up.
//! assert!(loss.to_scalar::<f32>()?.abs() < 1e-6);
//! assert_eq!(metrics.mean_ratio, 1.0);
//! let grads = loss.backward()?;
//! assert!(grads.get(logits.as_tensor()).is_some());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(clippy::unwrap_used)]
#![warn(missing_docs)]

mod advantage;
mod config;
mod error;
mod fused;
mod kl;
mod logprob;
mod loss;
mod metrics;
mod shaping;

pub use advantage::group_advantages;
pub use config::{
    AdvantageConfig, Algorithm, Baseline, Conventions, GroupOfOne, GrpoConfig, KlEstimator,
    LossConfig, LossReduction, OverlongConfig, RatioLevel, ShapingConfig, StatsPrecision,
    StdEstimator, StdScaling,
};
pub use error::{Error, Result};
pub use kl::{kl_estimate, kl_k1, kl_k2, kl_k3};
pub use logprob::{completion_lengths, response_mask, token_entropy, token_logprobs};
pub use loss::{LossInputs, Normalizer, policy_loss};
pub use metrics::StepMetrics;
pub use shaping::{is_tied, overlong_penalty};
