//! The GRPO policy loss: clipped surrogate, KL penalty, and reduction over tokens.
//!
//! Per valid token `t` of sequence `i`, with advantage `A_i` and ratio `ρ_{i,t}`:
//!
//! ```text
//! ℓ_{i,t} = −min(ρ·A, clip(ρ, 1 − ε_low, 1 + ε_high)·A) + β·KL_{i,t}
//! ```
//!
//! and, with dual-clip `c`, a negative-advantage token's surrogate is also floored at `c·A`.
//! Equivalently the surrogate is `A·ρ̃` where `ρ̃` is `ρ` until it leaves the trusted side:
//! above `1 + ε_high` for `A > 0`, below `1 − ε_low` or above `c` for `A < 0`; there `ρ̃` is
//! the constant bound and the token gives no gradient. The code builds exactly that, with
//! strict comparisons, so the gradient at the boundary is defined (full) rather than halved.
//!
//! The ratio is per token (`exp(logπ − logπ_old)`, GRPO) or per sequence (GSPO:
//! `s_i = exp(mean_t(logπ − logπ_old))`) in the stop-gradient form of the GSPO paper,
//! `s_{i,t} = sg[s_i] · π(o_t)/sg[π(o_t)]`: every token carries the value `s_i`, and with the
//! sequence-mean reduction the loss and its gradient equal GSPO's sequence objective.
//!
//! Optional clamps follow verl: with token ratios, `log π − log π_old` clamped to `[−c, c]`
//! (`log_ratio_clamp`, verl 20); with sequence ratios, the sequence log-ratio clamped from above
//! at `c` (`sequence_log_ratio_clamp`, verl 10). A clamped token or sequence carries the
//! constant `exp(±c)` and gives no gradient.
//!
//! The per-token losses are reduced by [`LossReduction`] using a [`Normalizer`] computed from
//! the *whole* batch, so the losses of k micro-batches add up to the one-batch loss, and their
//! gradients to the one-batch gradient.

use std::ops::Add;

use candle_core::{DType, Tensor};

use crate::config::{LossConfig, LossReduction, RatioLevel};
use crate::error::{Error, Result};
use crate::kl::kl_estimate;
use crate::logprob::token_entropy;
use crate::metrics::StepMetrics;

/// The tensors the loss is computed from (one micro-batch).
///
/// # Shapes
/// - `logprobs`: `[batch, seq]`, current policy, differentiable, f32 or f64.
/// - `old_logprobs`: `[batch, seq]`, the policy that sampled (treated as constant).
/// - `ref_logprobs`: `[batch, seq]`, the reference policy (constant); needed when β > 0.
/// - `advantages`: `[batch]` (or `[batch, 1]`), one per sequence (constant).
/// - `mask`: `[batch, seq]`, 1 on response tokens, 0 on prompt and padding (any dtype).
/// - `logits`: `[batch, seq, vocab]`, optional, only for the entropy metric.
#[derive(Debug, Clone, Copy)]
pub struct LossInputs<'a> {
    /// Log-probs of the sampled tokens under the current policy.
    pub logprobs: &'a Tensor,
    /// Log-probs recorded when the tokens were sampled.
    pub old_logprobs: &'a Tensor,
    /// Log-probs under the reference policy, for the KL term and metric.
    pub ref_logprobs: Option<&'a Tensor>,
    /// One advantage per sequence.
    pub advantages: &'a Tensor,
    /// The response mask.
    pub mask: &'a Tensor,
    /// The current policy's logits, for the entropy metric.
    pub logits: Option<&'a Tensor>,
    /// Completions per prompt, when the rows are whole groups in order, for the
    /// zero-advantage-group metric.
    pub group_size: Option<usize>,
}

/// The batch-wide counts the reduction divides by.
///
/// Compute it once from the masks of the *whole* batch and pass it to every micro-batch;
/// `Normalizer::from_mask(mask)` of a single batch is the no-accumulation case.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Normalizer {
    /// Number of sequences in the batch.
    pub sequences: usize,
    /// Number of valid (masked-in) tokens in the batch.
    pub tokens: usize,
}

impl Normalizer {
    /// Counts sequences (rows) and valid tokens (non-zero entries) of one mask.
    ///
    /// # Shapes
    /// - `mask`: `[batch, seq]`.
    pub fn from_mask(mask: &Tensor) -> Result<Self> {
        let (sequences, _) = mask.dims2().map_err(|_| Error::Shape {
            name: "mask",
            expected: "[batch, seq]".into(),
            got: mask.dims().to_vec(),
        })?;
        let tokens = mask
            .ne(0.0)?
            .to_dtype(DType::F64)?
            .sum_all()?
            .to_scalar::<f64>()?;
        Ok(Self {
            sequences,
            tokens: tokens as usize,
        })
    }

    /// Sums the counts of several masks (the micro-batches of one step).
    pub fn from_masks<'a>(masks: impl IntoIterator<Item = &'a Tensor>) -> Result<Self> {
        masks.into_iter().try_fold(
            Self::default(),
            |acc, mask| Ok(acc + Self::from_mask(mask)?),
        )
    }

    /// The divisor of the summed (per-sequence-averaged, for `Sequence`) token losses.
    fn divisor(&self, reduction: LossReduction) -> f64 {
        match reduction {
            LossReduction::Sequence => self.sequences.max(1) as f64,
            LossReduction::Token => self.tokens.max(1) as f64,
            LossReduction::Constant { max_len } => (self.sequences * max_len).max(1) as f64,
            LossReduction::TokenSum => 1.0,
        }
    }
}

impl Add for Normalizer {
    type Output = Normalizer;

    fn add(self, other: Normalizer) -> Normalizer {
        Normalizer {
            sequences: self.sequences + other.sequences,
            tokens: self.tokens + other.tokens,
        }
    }
}

/// The GRPO loss of one micro-batch and its metrics.
///
/// Sequences with no valid token contribute nothing but still count as sequences. Positions
/// outside the mask never influence the value or the gradient, even when their log-probs are
/// garbage (±∞ from padding).
///
/// # Shapes
/// See [`LossInputs`]; returns a scalar tensor (0-D) in the dtype of `logprobs`.
///
/// # Errors
/// An invalid `config`; shapes that disagree; β > 0 without reference log-probs; a batch not
/// divisible by `group_size`.
///
/// # Example
/// ```
/// use candle_core::{Device, Tensor};
/// use grpo_core::{policy_loss, LossConfig, LossInputs, Normalizer};
///
/// let cpu = Device::Cpu;
/// // Recorded probability 0.2; the current policy gives 0.3: ratio 1.5.
/// let old = Tensor::new(&[[0.2f32.ln()]], &cpu)?;
/// let logp = Tensor::new(&[[0.3f32.ln()]], &cpu)?;
/// let mask = Tensor::new(&[[1f32]], &cpu)?;
/// let advantages = Tensor::new(&[1f32], &cpu)?;
/// let inputs = LossInputs {
///     logprobs: &logp, old_logprobs: &old, ref_logprobs: None, advantages: &advantages,
///     mask: &mask, logits: None, group_size: None,
/// };
/// let config = LossConfig { beta: 0.0, ..Default::default() };
/// let (loss, metrics) = policy_loss(&inputs, &config, &Normalizer::from_mask(&mask)?)?;
/// // Clipped at 1 + ε = 1.2: the loss is −1.2 · A.
/// assert!((loss.to_scalar::<f32>()? + 1.2).abs() < 1e-6);
/// assert!((metrics.mean_ratio - 1.5).abs() < 1e-6);
/// assert_eq!(metrics.clip_fraction_high, 1.0);
/// # Ok::<(), grpo_core::Error>(())
/// ```
pub fn policy_loss(
    inputs: &LossInputs<'_>,
    config: &LossConfig,
    normalizer: &Normalizer,
) -> Result<(Tensor, StepMetrics)> {
    config.validate()?;
    let logprobs = inputs.logprobs;
    let (batch, seq) = logprobs.dims2().map_err(|_| Error::Shape {
        name: "logprobs",
        expected: "[batch, seq]".into(),
        got: logprobs.dims().to_vec(),
    })?;
    let dtype = logprobs.dtype();
    if !matches!(dtype, DType::F32 | DType::F64) {
        return Err(Error::DType {
            name: "logprobs",
            expected: "f32 or f64",
            got: dtype,
        });
    }
    let expect_same = |name: &'static str, t: &Tensor| -> Result<()> {
        if t.dims() != [batch, seq] {
            return Err(Error::Shape {
                name,
                expected: format!("[{batch}, {seq}] (the shape of logprobs)"),
                got: t.dims().to_vec(),
            });
        }
        Ok(())
    };
    expect_same("old_logprobs", inputs.old_logprobs)?;
    expect_same("mask", inputs.mask)?;
    if let Some(reference) = inputs.ref_logprobs {
        expect_same("ref_logprobs", reference)?;
    }
    if inputs.advantages.elem_count() != batch || inputs.advantages.rank() > 2 {
        return Err(Error::Shape {
            name: "advantages",
            expected: format!("[{batch}] (one per sequence)"),
            got: inputs.advantages.dims().to_vec(),
        });
    }
    if config.beta > 0.0 && inputs.ref_logprobs.is_none() {
        return Err(Error::MissingReference { beta: config.beta });
    }

    let mask = inputs.mask.to_dtype(dtype)?; // [b, t]
    let valid = mask.ne(0.0)?; // [b, t] u8
    let mask = valid.to_dtype(dtype)?; // exactly 0/1
    let zeros = logprobs.zeros_like()?;
    let ones = logprobs.ones_like()?;
    // Every input is zeroed outside the mask first, so ±∞ or NaN from padding can reach
    // neither the value nor the gradient (`where_cond` routes no gradient to the other side).
    let logprobs = &valid.where_cond(logprobs, &zeros)?;
    let old = valid
        .where_cond(&inputs.old_logprobs.to_dtype(dtype)?, &zeros)?
        .detach();
    let log_ratio = (logprobs - &old)?; // [b, t], 0 outside the mask
    let lengths = mask.sum_keepdim(1)?; // [b, 1]
    let ratio = match config.ratio_level {
        RatioLevel::Token => match config.log_ratio_clamp {
            // verl: clamp(logπ − logπ_old, −c, c) before exp; outside, a constant.
            Some(c) => {
                let above = log_ratio.gt(c)?;
                let below = log_ratio.lt(-c)?;
                above
                    .where_cond(
                        &(&ones * c)?,
                        &below.where_cond(&(&ones * -c)?, &log_ratio)?,
                    )?
                    .exp()?
            }
            None => log_ratio.exp()?,
        },
        RatioLevel::Sequence => {
            let seq_log_ratio = log_ratio
                .sum_keepdim(1)?
                .div(&lengths.maximum(1.0)?)?
                .detach(); // [b, 1]
            // sg[s_i] · exp(logπ − sg[logπ]): value s_i, gradient s_i per token.
            let log_s = (&log_ratio - log_ratio.detach())?.broadcast_add(&seq_log_ratio)?;
            match config.sequence_log_ratio_clamp {
                // verl: clamp(log s_i, max = c); above it, a constant.
                Some(c) => log_s.gt(c)?.where_cond(&(&ones * c)?, &log_s)?.exp()?,
                None => log_s.exp()?,
            }
        }
    }; // [b, t]

    let advantages = inputs
        .advantages
        .to_dtype(dtype)?
        .reshape((batch, 1))?
        .broadcast_as((batch, seq))?
        .detach(); // [b, t]
    let positive = advantages.gt(0.0)?;
    let negative = advantages.lt(0.0)?;
    let high_bound = 1.0 + config.epsilon_high;
    let low_bound = 1.0 - config.epsilon_low;
    let clipped_high = (&positive * ratio.gt(high_bound)?)?.mul(&valid)?;
    let clipped_low = (&negative * ratio.lt(low_bound)?)?.mul(&valid)?;
    let mut effective_ratio = clipped_high.where_cond(
        &(&ones * high_bound)?,
        &clipped_low.where_cond(&(&ones * low_bound)?, &ratio)?,
    )?;
    let dual_clipped = match config.dual_clip {
        Some(c) => {
            let dual = (&negative * ratio.gt(c)?)?.mul(&valid)?;
            effective_ratio = dual.where_cond(&(&ones * c)?, &effective_ratio)?;
            Some(dual)
        }
        None => None,
    };
    let surrogate = (&effective_ratio * &advantages)?; // [b, t]

    let kl = match inputs.ref_logprobs {
        Some(reference) => {
            let reference = valid.where_cond(&reference.to_dtype(dtype)?, &zeros)?;
            Some(kl_estimate(logprobs, &reference, config.kl_estimator)?)
        }
        None => None,
    };
    let mut per_token = surrogate.neg()?;
    if let Some(kl) = &kl
        && config.beta > 0.0
    {
        per_token = (per_token + (kl * config.beta)?)?;
    }
    let per_token = valid.where_cond(&per_token, &zeros)?; // [b, t]

    let summed = match config.reduction {
        LossReduction::Sequence => per_token
            .sum_keepdim(1)?
            .div(&lengths.maximum(1.0)?)?
            .sum_all()?,
        LossReduction::Token | LossReduction::Constant { .. } | LossReduction::TokenSum => {
            per_token.sum_all()?
        }
    };
    let loss = (summed / normalizer.divisor(config.reduction))?;

    let metrics = step_metrics(StepParts {
        inputs,
        loss: &loss,
        mask: &mask,
        ratio: &ratio,
        clipped_low: &clipped_low,
        clipped_high: &clipped_high,
        dual_clipped: dual_clipped.as_ref(),
        kl: kl.as_ref(),
        batch,
    })?;
    Ok((loss, metrics))
}

struct StepParts<'a> {
    inputs: &'a LossInputs<'a>,
    loss: &'a Tensor,
    mask: &'a Tensor,
    ratio: &'a Tensor,
    clipped_low: &'a Tensor,
    clipped_high: &'a Tensor,
    dual_clipped: Option<&'a Tensor>,
    kl: Option<&'a Tensor>,
    batch: usize,
}

/// Reads every metric back in one transfer: a vector of masked sums.
fn step_metrics(parts: StepParts<'_>) -> Result<StepMetrics> {
    let mask = parts.mask.detach();
    let dtype = mask.dtype();
    let masked_sum =
        |t: &Tensor| -> Result<Tensor> { Ok((t.detach().to_dtype(dtype)? * &mask)?.sum_all()?) };
    let mut sums = vec![
        parts.loss.detach(),
        mask.sum_all()?,
        masked_sum(parts.clipped_low)?,
        masked_sum(parts.clipped_high)?,
        match parts.dual_clipped {
            Some(d) => masked_sum(d)?,
            None => mask.sum_all()?.zeros_like()?,
        },
        masked_sum(parts.ratio)?,
    ];
    if let Some(kl) = parts.kl {
        sums.push(masked_sum(kl)?);
    }
    if let Some(logits) = parts.inputs.logits {
        let entropy = token_entropy(&logits.detach())?;
        if entropy.dims() != mask.dims() {
            return Err(Error::Shape {
                name: "logits",
                expected: format!("{:?} plus a vocabulary dimension", mask.dims()),
                got: logits.dims().to_vec(),
            });
        }
        sums.push(masked_sum(&entropy)?);
    }
    let sums = Tensor::stack(&sums, 0)?
        .to_dtype(DType::F64)?
        .to_vec1::<f64>()?;
    let tokens = sums[1];
    let mean = |s: f64| if tokens > 0.0 { s / tokens } else { 0.0 };
    let mut rest = sums[6..].iter();
    let kl = parts.kl.and_then(|_| rest.next().map(|&s| mean(s)));
    let entropy = parts
        .inputs
        .logits
        .and_then(|_| rest.next().map(|&s| mean(s)));
    let zero_advantage_group_fraction = match parts.inputs.group_size {
        Some(group) => Some(zero_advantage_group_fraction(
            parts.inputs.advantages,
            group,
            parts.batch,
        )?),
        None => None,
    };
    Ok(StepMetrics {
        loss: sums[0],
        clip_fraction_low: mean(sums[2]),
        clip_fraction_high: mean(sums[3]),
        dual_clip_fraction: mean(sums[4]),
        mean_ratio: mean(sums[5]),
        kl,
        entropy,
        zero_advantage_group_fraction,
        tokens,
        sequences: parts.batch as f64,
    })
}

fn zero_advantage_group_fraction(advantages: &Tensor, group: usize, batch: usize) -> Result<f64> {
    if group == 0 || !batch.is_multiple_of(group) {
        return Err(Error::Shape {
            name: "advantages",
            expected: format!("a whole number of groups of {group}"),
            got: advantages.dims().to_vec(),
        });
    }
    let values = advantages
        .flatten_all()?
        .to_dtype(DType::F64)?
        .to_vec1::<f64>()?;
    let groups = values.chunks(group);
    let n = groups.len();
    let zero = groups.filter(|g| g.iter().all(|&a| a == 0.0)).count();
    Ok(zero as f64 / n as f64)
}
