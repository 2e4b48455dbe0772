//! Update: μ passes over a step's groups in minibatches of whole groups, each an optimiser
//! step whose micro-batches share the minibatch's normaliser; the clipped surrogate and KL
//! come from grpo-core.

use candle_core::{DType, Tensor};
use grpo_core::{LossInputs, Normalizer, StepMetrics};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::rollout::Group;
use super::{Trainer, derive_seed};
use crate::batch::PackedBatch;
use crate::error::{Error, Result};
use crate::metrics::mean_std;
use crate::model::Model;
use crate::sampler::Completion;

impl Trainer {
    /// μ passes over the rollouts in minibatches of whole groups (`advantages`: one row per
    /// group); returns the merged metrics (losses averaged over optimiser steps) and the last
    /// grad norm.
    pub(super) fn update(
        &mut self,
        groups: &[Group],
        advantages: &Tensor,
        lr: f64,
    ) -> Result<(StepMetrics, f64)> {
        let cfg = &self.config;
        let g = cfg.sampling.group_size;
        let temperature = cfg.sampling.temperature;
        let loss_config = cfg.algorithm.loss.clone();
        let device = self.policy.device().clone();
        let eos = self.tokenizer.eos_token_ids().first().copied().unwrap_or(0);
        let minibatches = cfg.update.minibatches.min(groups.len()).max(1);
        let micro_groups = cfg.update.micro_batch_groups;
        let mut parts = Vec::new();
        let mut losses = Vec::new();
        let mut grad_norm = 0.0;
        for iteration in 0..cfg.update.iterations {
            let mut order: Vec<usize> = (0..groups.len()).collect();
            if cfg.update.iterations > 1 || minibatches > 1 {
                let mut rng = ChaCha8Rng::seed_from_u64(derive_seed(
                    cfg.seed,
                    3,
                    self.step,
                    iteration as u64,
                ));
                order.shuffle(&mut rng);
            }
            let per = order.len().div_ceil(minibatches);
            for minibatch in order.chunks(per) {
                let micro: Vec<&[usize]> = match micro_groups {
                    0 => vec![minibatch],
                    n => minibatch.chunks(n).collect(),
                };
                let mut packed = Vec::with_capacity(micro.len());
                for ids in &micro {
                    let rows: Vec<(&[u32], &[u32])> = ids
                        .iter()
                        .flat_map(|&i| {
                            groups[i]
                                .completions
                                .iter()
                                .map(move |c| (&groups[i].prompt_ids[..], &c.tokens[..]))
                        })
                        .collect();
                    packed.push(PackedBatch::pack(&rows, eos, &device)?.completion_window()?);
                }
                let normalizer = Normalizer::from_masks(packed.iter().map(|(_, b)| &b.mask))?;
                let mut step_metrics = Vec::with_capacity(micro.len());
                for (ids, (offset, batch)) in micro.iter().zip(&packed) {
                    let old: Vec<&[f32]> = ids
                        .iter()
                        .flat_map(|&i| groups[i].completions.iter().map(|c| &c.logprobs[..]))
                        .collect();
                    let old = aligned(batch, &old)?;
                    let reference = if loss_config.beta > 0.0 {
                        let refs: Vec<&[f32]> = ids
                            .iter()
                            .flat_map(|&i| {
                                groups[i]
                                    .reference
                                    .iter()
                                    .flat_map(|r| r.iter().map(|v| &v[..]))
                            })
                            .collect();
                        Some(aligned(batch, &refs)?)
                    } else {
                        None
                    };
                    let rows: Vec<u32> = ids.iter().map(|&i| i as u32).collect();
                    let adv = advantages
                        .index_select(&Tensor::new(rows.as_slice(), advantages.device())?, 0)?
                        .flatten_all()?
                        .to_dtype(DType::F32)?
                        .to_device(&device)?;
                    let mut logits = window_logits(&self.policy, batch, *offset)?;
                    if temperature != 1.0 {
                        logits = (logits / temperature)?;
                    }
                    let logp = grpo_core::token_logprobs(&logits, &batch.targets)?;
                    let inputs = LossInputs {
                        logprobs: &logp,
                        old_logprobs: &old,
                        ref_logprobs: reference.as_ref(),
                        advantages: &adv,
                        mask: &batch.mask,
                        logits: Some(&logits),
                        group_size: Some(g),
                    };
                    let (loss, m) = grpo_core::policy_loss(&inputs, &loss_config, &normalizer)?;
                    self.optimizer.accumulate(&loss.backward()?)?;
                    step_metrics.push(m);
                }
                let merged = StepMetrics::merge(&step_metrics);
                losses.push(merged.loss);
                parts.extend(step_metrics);
                grad_norm = self.optimizer.step(lr)?.grad_norm;
            }
        }
        let mut metrics = StepMetrics::merge(&parts);
        metrics.loss = mean_std(&losses).0;
        Ok((metrics, grad_norm))
    }
}

/// Logits of `batch`'s target positions from `offset` on (see
/// [`PackedBatch::completion_window`]): the prompt's positions are never projected. In f32
/// when the model computes in bf16 or f16 (see [`Model::logits`]).
pub(super) fn window_logits(model: &Model, batch: &PackedBatch, offset: usize) -> Result<Tensor> {
    let hidden = model.forward_hidden(&batch.inputs, &batch.left_pad(), None)?;
    let (_, seq, _) = hidden.dims3()?;
    let hidden = if offset == 0 {
        hidden
    } else {
        hidden.narrow(1, offset, seq - offset)?
    };
    model.logits(&hidden)
}

/// Log-probs of each completion of one group (`prompt` followed by each completion's tokens),
/// recomputed as the update computes them: one packed, right-padded teacher-forced forward
/// pass of `model` (recording a graph unless `model` is a [`Model::detached`] view), logits
/// divided by `temperature`, log-softmax in f32. What the sampler recorded must agree with
/// this within the tolerance of the compute dtype (the ratio starts at 1).
pub fn completion_logprobs(
    model: &Model,
    prompt: &[u32],
    group: &[Completion],
    temperature: f64,
) -> Result<Vec<Vec<f32>>> {
    let rows: Vec<(&[u32], &[u32])> = group.iter().map(|c| (prompt, &c.tokens[..])).collect();
    let eos = model.config().eos_token_ids.first().copied().unwrap_or(0);
    let (offset, batch) = PackedBatch::pack(&rows, eos, model.device())?.completion_window()?;
    let mut logits = window_logits(model, &batch, offset)?;
    if temperature != 1.0 {
        logits = (logits / temperature)?;
    }
    let logp = grpo_core::token_logprobs(&logits, &batch.targets)?.to_vec2::<f32>()?;
    Ok(logp
        .iter()
        .zip(batch.starts.iter().zip(&batch.lens))
        .map(|(row, (&s, &l))| row[s..s + l].to_vec())
        .collect())
}

/// Per-row values placed at each row's completion positions, zeros elsewhere: `[rows, seq]`.
fn aligned(batch: &PackedBatch, values: &[&[f32]]) -> Result<Tensor> {
    let (rows, seq) = batch.mask.dims2()?;
    if values.len() != rows {
        return Err(Error::invalid(format!(
            "{} rows of values for a batch of {rows}",
            values.len()
        )));
    }
    let mut out = vec![0f32; rows * seq];
    for (r, v) in values.iter().enumerate() {
        let (s, l) = (batch.starts[r], batch.lens[r]);
        if v.len() != l {
            return Err(Error::invalid(format!(
                "row {r}: {} values for {l} completion tokens",
                v.len()
            )));
        }
        out[r * seq + s..r * seq + s + l].copy_from_slice(v);
    }
    Ok(Tensor::from_vec(out, (rows, seq), batch.mask.device())?)
}
