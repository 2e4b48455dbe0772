//! The update phase: μ passes over a step's groups in minibatches of whole groups, each an
//! optimiser step whose micro-batches share the minibatch's normaliser; the clipped surrogate
//! and KL come from grpo-core.

use candle_core::{DType, Tensor};
use grpo_core::{LossInputs, Normalizer, StepMetrics};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::derive_seed;
use crate::config::TrainConfig;
use crate::error::{Error, Result};
use crate::model::Model;
use crate::optim::AdamW;
use crate::rollout::batch::PackedBatch;
use crate::rollout::group::StepBatch;
use crate::rollout::logprobs::window_logits;
use crate::run::records::mean_std;

/// μ passes of `policy` over the batch of step `step` in minibatches of whole groups
/// (`advantages`: one row per group), each an `optimizer` step at learning rate `lr`, as
/// `config` sets them (`update`, `algorithm.loss`, the sampling temperature and group size,
/// the seed of the minibatch order); returns the merged metrics (losses averaged over
/// optimiser steps) and the last grad norm.
pub(super) fn update(
    policy: &Model,
    optimizer: &mut AdamW,
    batch: &StepBatch<'_>,
    advantages: &Tensor,
    config: &TrainConfig,
    step: u64,
    lr: f64,
) -> Result<(StepMetrics, f64)> {
    let groups = batch.groups;
    let cfg = config;
    let g = cfg.sampling.group_size;
    let temperature = cfg.sampling.temperature;
    let loss_config = cfg.algorithm.loss.clone();
    let device = policy.device().clone();
    let minibatches = cfg.update.minibatches.min(groups.len()).max(1);
    let micro_groups = cfg.update.micro_batch_groups;
    let mut parts = Vec::new();
    let mut losses = Vec::new();
    let mut grad_norm = 0.0;
    for iteration in 0..cfg.update.iterations {
        let mut order: Vec<usize> = (0..groups.len()).collect();
        if cfg.update.iterations > 1 || minibatches > 1 {
            let mut rng =
                ChaCha8Rng::seed_from_u64(derive_seed(cfg.seed, 3, step, iteration as u64));
            order.shuffle(&mut rng);
        }
        let per = order.len().div_ceil(minibatches);
        for minibatch in order.chunks(per) {
            let micro: Vec<&[usize]> = match micro_groups {
                0 => vec![minibatch],
                n => minibatch.chunks(n).collect(),
            };
            let packed = micro
                .iter()
                .map(|ids| batch.packed.select(ids))
                .collect::<Result<Vec<_>>>()?;
            let normalizer = Normalizer::from_masks(packed.iter().map(|b| &b.window.mask))?;
            let mut step_metrics = Vec::with_capacity(micro.len());
            for (ids, grouped) in micro.iter().zip(&packed) {
                let window = &grouped.window;
                let old: Vec<&[f32]> = ids
                    .iter()
                    .flat_map(|&i| groups[i].completions.iter().map(|c| &c.logprobs[..]))
                    .collect();
                let old = aligned(window, &old)?;
                let reference = match &batch.reference {
                    Some(scored) if loss_config.beta > 0.0 => {
                        let refs: Vec<&[f32]> = ids
                            .iter()
                            .flat_map(|&i| scored[i].iter().map(|v| &v[..]))
                            .collect();
                        Some(aligned(window, &refs)?)
                    }
                    _ => None,
                };
                let rows: Vec<u32> = ids.iter().map(|&i| i as u32).collect();
                let adv = advantages
                    .index_select(&Tensor::new(rows.as_slice(), advantages.device())?, 0)?
                    .flatten_all()?
                    .to_dtype(DType::F32)?
                    .to_device(&device)?;
                let mut logits = window_logits(policy, grouped)?;
                if temperature != 1.0 {
                    logits = (logits / temperature)?;
                }
                let logp = grpo_core::token_logprobs(&logits, &window.targets)?;
                let inputs = LossInputs {
                    logprobs: &logp,
                    old_logprobs: &old,
                    ref_logprobs: reference.as_ref(),
                    advantages: &adv,
                    mask: &window.mask,
                    logits: Some(&logits),
                    group_size: Some(g),
                };
                let (loss, m) = grpo_core::policy_loss(&inputs, &loss_config, &normalizer)?;
                optimizer.accumulate(&loss.backward()?)?;
                step_metrics.push(m);
            }
            let merged = StepMetrics::merge(&step_metrics);
            losses.push(merged.loss);
            parts.extend(step_metrics);
            grad_norm = optimizer.step(lr)?.grad_norm;
        }
    }
    let mut metrics = StepMetrics::merge(&parts);
    metrics.loss = mean_std(&losses).0;
    Ok((metrics, grad_norm))
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
    use crate::model::{Model, ModelConfig};
    use crate::rollout::batch::GroupBatch;
    use crate::rollout::logprobs::tests::gradient_differences;
    use crate::rollout::logprobs::window_logits;
    use grpo_core::{LossInputs, Normalizer, StepMetrics};

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

    /// The update phase on its own, on one sampled group whose first completion scored above
    /// its second: one optimiser step widens the gap between their log-probs (to first order
    /// the gap moves by `(g₀ − g₁)ᵀ D (g₀ − g₁) ≥ 0` for AdamW's positive diagonal `D`), and
    /// the first micro-step's ratios are 1 (the sampler recorded what the update recomputes).
    #[test]
    fn an_update_moves_the_policy_toward_the_better_completion() -> Result<()> {
        use crate::config::{Preset, TrainConfig};
        use crate::rollout::logprobs::completion_logprobs;
        use crate::rollout::sampler::{SampleRequest, SamplingConfig, sample};
        use crate::train::advantages::advantages;
        use crate::train::rollout::tests::scored_group;

        let model = Model::random(&ModelConfig::tiny(16), DType::F32, &Device::Cpu, 3)?;
        let prompt = vec![1u32, 2, 3];
        let sampling = SamplingConfig {
            max_new_tokens: 6,
            seed: 11,
            ignore_eos: true,
            ..Default::default()
        };
        let prompts = std::slice::from_ref(&prompt);
        let completions = sample(&model, SampleRequest::new(prompts, 2, &sampling))?.completions();
        assert_ne!(completions[0].tokens, completions[1].tokens);
        // Rewards of a right and a wrong answer, on the two sampled completions.
        let mut group = scored_group(&["<answer>5</answer>", "<answer>4</answer>"])?;
        group.prompt_ids = prompt.clone();
        group.completions = completions;
        let groups = [group];
        let mut config = TrainConfig::resolve(Preset::Smoke, None, &[])?;
        config.sampling.temperature = 1.0;
        config.sampling.group_size = 2;
        config.algorithm.loss.beta = 0.0;
        config.optimizer.weight_decay = 0.0;
        let advantages = advantages(&groups, 2, &config.algorithm.advantage)?.expect("a group");
        let batch = StepBatch::pack(&groups, 0, &Device::Cpu)?;
        let mut optimizer = AdamW::new(model.named_vars(), config.optimizer.adamw())?;
        let gap = |model: &Model| -> Result<f32> {
            let lp = completion_logprobs(model, &prompt, &groups[0].completions, 1.0)?;
            Ok(lp[0].iter().sum::<f32>() - lp[1].iter().sum::<f32>())
        };
        let before = gap(&model)?;
        let (metrics, grad_norm) = update(
            &model,
            &mut optimizer,
            &batch,
            &advantages,
            &config,
            1,
            1e-3,
        )?;
        assert!((metrics.mean_ratio - 1.0).abs() < 1e-4, "{metrics:?}");
        assert!(grad_norm > 0.0);
        let after = gap(&model)?;
        assert!(after > before, "{before} → {after}");
        Ok(())
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
}
