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
use crate::batch::{GroupBatch, PackedBatch};
use crate::error::{Error, Result};
use crate::metrics::mean_std;
use crate::model::{KvCache, Model};
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
        let eos = self.tokenizer.eos_id()?;
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
                    let rows: Vec<(&[u32], Vec<&[u32]>)> = ids
                        .iter()
                        .map(|&i| {
                            let completions = groups[i].completions.iter().map(|c| &c.tokens[..]);
                            (&groups[i].prompt_ids[..], completions.collect())
                        })
                        .collect();
                    let mut batch = GroupBatch::pack(&rows, eos, &device)?;
                    // Tool output is context, not the policy's action.
                    let spans: Vec<&[(usize, usize)]> = ids
                        .iter()
                        .flat_map(|&i| groups[i].completions.iter().map(|c| &c.tool_spans[..]))
                        .collect();
                    if spans.iter().any(|s| !s.is_empty()) {
                        batch.mask_spans(&spans)?;
                    }
                    packed.push(batch);
                }
                let normalizer = Normalizer::from_masks(packed.iter().map(|b| &b.window.mask))?;
                let mut step_metrics = Vec::with_capacity(micro.len());
                for (ids, grouped) in micro.iter().zip(&packed) {
                    let batch = &grouped.window;
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
                    let mut logits = window_logits(&self.policy, grouped)?;
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

/// Logits of every completion position of `batch` (the window of [`GroupBatch`]): each
/// group's prompt runs through `model` once, its KV cache is fanned out to the group's rows,
/// and the completions continue from it, so the prompt's positions are neither recomputed per
/// completion nor projected to the vocabulary. Differentiable (the cache grows by
/// concatenation and the fan-out is an index select). In f32 when the model computes in bf16
/// or f16 (see [`Model::logits`]).
///
/// # Shapes
/// returns `[rows, width, vocab]`, aligned with `batch.window.targets`.
pub(super) fn window_logits(model: &Model, batch: &GroupBatch) -> Result<Tensor> {
    let mut cache = KvCache::new(model.config().num_hidden_layers);
    let prompt = model.forward_hidden(&batch.prompts, &batch.prompt_pad, Some(&mut cache))?;
    let (_, prompt_len, _) = prompt.dims3()?;
    let fan = Tensor::new(batch.group_of_row.as_slice(), model.device())?;
    // The prompt's last position predicts each completion's first token.
    let first = prompt
        .narrow(1, prompt_len - 1, 1)?
        .contiguous()?
        .index_select(&fan, 0)?;
    let hidden = match &batch.continuations {
        None => first,
        Some(continuations) => {
            cache.select_rows(&batch.group_of_row)?;
            let rest = model.forward_hidden(continuations, &batch.row_pad(), Some(&mut cache))?;
            Tensor::cat(&[&first, &rest], 1)?
        }
    };
    model.logits(&hidden)
}

/// Log-probs of each completion of one group (`prompt` followed by each completion's tokens),
/// recomputed as the update computes them: the prompt once, the completions as its
/// continuations (see [`window_logits`]), recording a graph unless `model` is a
/// [`Model::detached`] view, logits divided by `temperature`, log-softmax in f32. What the
/// sampler recorded must agree with this within the tolerance of the compute dtype (the
/// ratio starts at 1).
pub fn completion_logprobs(
    model: &Model,
    prompt: &[u32],
    group: &[Completion],
    temperature: f64,
) -> Result<Vec<Vec<f32>>> {
    let completions: Vec<&[u32]> = group.iter().map(|c| &c.tokens[..]).collect();
    let eos = model
        .config()
        .eos_token_ids
        .first()
        .copied()
        .ok_or_else(|| Error::invalid("the model config has no end-of-sequence token id"))?;
    let batch = GroupBatch::pack(&[(prompt, completions)], eos, model.device())?;
    let mut logits = window_logits(model, &batch)?;
    if temperature != 1.0 {
        logits = (logits / temperature)?;
    }
    let logp = grpo_core::token_logprobs(&logits, &batch.window.targets)?.to_vec2::<f32>()?;
    Ok(logp
        .iter()
        .zip(&batch.window.lens)
        .map(|(row, &l)| row[..l].to_vec())
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

#[cfg(test)]
mod tests {
    use candle_core::{DType, Device};

    use super::*;
    use crate::model::ModelConfig;
    use crate::sampler::CompletionId;
    use grpo_core::{LossInputs, Normalizer, StepMetrics};

    /// Σ of the completion tokens' log-probs, through the grouped pass and through one full
    /// forward pass per row (prompt ++ completion, right padded).
    fn both_ways(model: &Model, groups: &[(&[u32], Vec<&[u32]>)]) -> (Tensor, Tensor) {
        let grouped = GroupBatch::pack(groups, 0, model.device()).unwrap();
        let logits = window_logits(model, &grouped).unwrap();
        let logp = grpo_core::token_logprobs(&logits, &grouped.window.targets).unwrap();
        let a = (logp * &grouped.window.mask).unwrap().sum_all().unwrap();
        let rows: Vec<(&[u32], &[u32])> = groups
            .iter()
            .flat_map(|(p, cs)| cs.iter().map(move |c| (*p, *c)))
            .collect();
        let packed = PackedBatch::pack(&rows, 0, model.device()).unwrap();
        let logits = model
            .forward(&packed.inputs, &packed.left_pad(), None)
            .unwrap();
        let logp = grpo_core::token_logprobs(&logits, &packed.targets).unwrap();
        let b = (logp * &packed.mask).unwrap().sum_all().unwrap();
        (a, b)
    }

    #[test]
    fn the_grouped_pass_gives_the_per_row_logprobs_and_gradients() {
        let model = Model::random(&ModelConfig::tiny(16), DType::F32, &Device::Cpu, 3).unwrap();
        let groups: Vec<(&[u32], Vec<&[u32]>)> = vec![
            (&[1, 2, 3], vec![&[4, 5, 6], &[7], &[8, 9]]),
            (&[5], vec![&[3, 3, 1, 2], &[0]]),
        ];
        let (a, b) = both_ways(&model, &groups);
        let (va, vb) = (a.to_scalar::<f32>().unwrap(), b.to_scalar::<f32>().unwrap());
        assert!((va - vb).abs() < 1e-4, "{va} vs {vb}");
        let (ga, gb) = (a.backward().unwrap(), b.backward().unwrap());
        for (name, diff) in gradient_differences(&model, &ga, &gb) {
            assert!(diff < 1e-4, "{name}: gradients differ by {diff}");
        }
    }

    /// Per weight of `model`, the largest absolute difference between two gradient sets.
    fn gradient_differences(
        model: &Model,
        a: &candle_core::backprop::GradStore,
        b: &candle_core::backprop::GradStore,
    ) -> Vec<(String, f32)> {
        model
            .named_vars()
            .into_iter()
            .map(|(name, var)| {
                let (x, y) = (
                    a.get(var.as_tensor()).unwrap(),
                    b.get(var.as_tensor()).unwrap(),
                );
                let diff = (x - y).unwrap().abs().unwrap().max_all().unwrap();
                (name, diff.to_scalar::<f32>().unwrap())
            })
            .collect()
    }

    /// The loss of one group with the given mask, ratio against `old`, token reduction.
    fn token_loss(
        model: &Model,
        batch: &GroupBatch,
        mask: &Tensor,
        old: &Tensor,
        advantages: &[f32],
    ) -> (Tensor, StepMetrics) {
        let logits = window_logits(model, batch).unwrap();
        let logp = grpo_core::token_logprobs(&logits, &batch.window.targets).unwrap();
        let adv = Tensor::new(advantages, model.device()).unwrap();
        let config = grpo_core::LossConfig {
            beta: 0.0,
            reduction: grpo_core::LossReduction::Token,
            ..Default::default()
        };
        let inputs = LossInputs {
            logprobs: &logp,
            old_logprobs: old,
            ref_logprobs: None,
            advantages: &adv,
            mask,
            logits: None,
            group_size: None,
        };
        grpo_core::policy_loss(&inputs, &config, &Normalizer::from_mask(mask).unwrap()).unwrap()
    }

    #[test]
    fn tool_output_is_out_of_the_loss_and_its_gradients() {
        let model = Model::random(&ModelConfig::tiny(16), DType::F32, &Device::Cpu, 7).unwrap();
        let prompt: &[u32] = &[1, 2, 3];
        // Completion 0: two policy tokens, three a tool wrote, two policy tokens again.
        let c0: &[u32] = &[4, 5, 6, 7, 8, 9, 10];
        let c1: &[u32] = &[11, 12];
        let mut batch = GroupBatch::pack(&[(prompt, vec![c0, c1])], 0, &Device::Cpu).unwrap();
        batch.mask_spans(&[&[(2, 5)], &[]]).unwrap();
        // The old log-probs are the current policy's: every ratio is 1.
        let old = {
            let logits = window_logits(&model.detached().unwrap(), &batch).unwrap();
            grpo_core::token_logprobs(&logits, &batch.window.targets).unwrap()
        };
        let advantages = [1.0f32, -1.0];
        let (loss, metrics) = token_loss(&model, &batch, &batch.window.mask, &old, &advantages);
        // Hand-derived: at ratio 1 the token-mean loss is −Σ A·(policy tokens) / Σ (policy
        // tokens) = −(1·4 + (−1)·2) / 6 = −1/3; counting the tool's three tokens would give
        // −(1·7 − 2) / 9 = −5/9.
        let value = loss.to_scalar::<f32>().unwrap();
        assert!((value - (-1.0 / 3.0)).abs() < 1e-6, "{value}");
        assert_eq!(metrics.tokens, 6.0);
        assert!((metrics.mean_ratio - 1.0).abs() < 1e-6);
        // The same loss, with the mask written out by hand (policy positions only).
        let by_hand = Tensor::new(
            &[[1f32, 1., 0., 0., 0., 1., 1.], [1., 1., 0., 0., 0., 0., 0.]],
            &Device::Cpu,
        )
        .unwrap();
        assert_eq!(
            batch.window.mask.to_vec2::<f32>().unwrap(),
            by_hand.to_vec2::<f32>().unwrap()
        );
        let (hand_loss, _) = token_loss(&model, &batch, &by_hand, &old, &advantages);
        assert_eq!(value, hand_loss.to_scalar::<f32>().unwrap());
        let (ga, gb) = (loss.backward().unwrap(), hand_loss.backward().unwrap());
        for (name, diff) in gradient_differences(&model, &ga, &gb) {
            assert_eq!(diff, 0.0, "{name}");
        }
        // And the tool's tokens carry no gradient at all: changing them as targets (the
        // model still reads them as context) changes neither loss nor gradients.
        let c0_other: &[u32] = &[4, 5, 13, 14, 15, 9, 10];
        let mut other = GroupBatch::pack(&[(prompt, vec![c0_other, c1])], 0, &Device::Cpu).unwrap();
        other.mask_spans(&[&[(2, 5)], &[]]).unwrap();
        let logits = window_logits(&model.detached().unwrap(), &other).unwrap();
        let other_old = grpo_core::token_logprobs(&logits, &other.window.targets).unwrap();
        let (other_loss, _) =
            token_loss(&model, &other, &other.window.mask, &other_old, &advantages);
        assert!((other_loss.to_scalar::<f32>().unwrap() - value).abs() < 1e-6);
    }

    /// A tool that answers once, after the third token, with three fixed tokens.
    struct FixedTool {
        calls: std::collections::HashSet<CompletionId>,
    }

    impl crate::sampler::ToolDriver for FixedTool {
        fn is_call(&mut self, completion: CompletionId, tokens: &[u32]) -> Result<bool> {
            Ok(tokens.len() == 3 && !self.calls.contains(&completion))
        }
        fn start(&mut self, completion: CompletionId, _tokens: &[u32]) -> Result<()> {
            self.calls.insert(completion);
            Ok(())
        }
        fn finish(&mut self, _completion: CompletionId, budget: usize) -> Result<Vec<u32>> {
            Ok([13u32, 14, 15].into_iter().take(budget).collect())
        }
    }

    #[test]
    fn the_ratio_is_one_on_policy_tokens_after_tool_output() {
        let model = Model::random(&ModelConfig::tiny(16), DType::F32, &Device::Cpu, 11).unwrap();
        let prompts = vec![vec![1u32, 2, 3], vec![4u32]];
        let config = crate::sampler::SamplingConfig {
            temperature: 0.9,
            max_new_tokens: 10,
            seed: 5,
            ignore_eos: true,
            ..Default::default()
        };
        let mut tool = FixedTool {
            calls: Default::default(),
        };
        let (groups, _) =
            crate::sampler::sample_with_tools(&model, &prompts, 0, 3, &config, Some(&mut tool))
                .unwrap();
        for (prompt, group) in prompts.iter().zip(&groups) {
            for c in group {
                assert_eq!(c.tool_spans, [(3, 6)]);
                assert_eq!(&c.tokens[3..6], [13, 14, 15]);
                assert_eq!(&c.logprobs[3..6], [0.0, 0.0, 0.0]);
                assert_eq!(c.tokens.len(), 10);
                assert_eq!(c.action_count(), 7);
            }
            // What the update recomputes equals what the sampler recorded, on every token
            // the policy drew, so the first micro-step's ratios are 1.
            let recomputed = completion_logprobs(&model, prompt, group, 0.9).unwrap();
            for (c, new) in group.iter().zip(&recomputed) {
                for (i, (a, b)) in c.logprobs.iter().zip(new).enumerate() {
                    if c.is_action(i) {
                        assert!((a - b).abs() < 1e-5, "token {i}: {a} vs {b}");
                    }
                }
            }
        }
        // The same draws as without a tool up to the call: each completion keeps its stream.
        let (plain, _) =
            crate::sampler::sample_with_tools(&model, &prompts, 0, 3, &config, None).unwrap();
        for (a, b) in groups.iter().flatten().zip(plain.iter().flatten()) {
            assert_eq!(a.tokens[..3], b.tokens[..3]);
        }
    }
}
