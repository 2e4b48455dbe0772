//! Log-probabilities of completions recomputed from a forward pass over a [`GroupBatch`]: the
//! update's ratio and the reference's KL term read them. Each group's prompt runs once and
//! its completions continue from its KV cache.

use candle_core::Tensor;

use crate::error::{Error, Result};
use crate::model::{KvCache, Model};
use crate::rollout::batch::GroupBatch;
use crate::rollout::sampler::Completion;

/// Logits of every completion position of `batch` (the window of [`GroupBatch`]): each
/// group's prompt runs through `model` once, its KV cache is fanned out to the group's rows,
/// and the completions continue from it, so the prompt's positions are neither recomputed per
/// completion nor projected to the vocabulary. Differentiable (the cache grows by
/// concatenation and the fan-out is an index select). In f32 when the model computes in bf16
/// or f16 (see [`Model::logits`]).
///
/// # Shapes
/// returns `[rows, width, vocab]`, aligned with `batch.window.targets`.
pub fn window_logits(model: &Model, batch: &GroupBatch) -> Result<Tensor> {
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
    batch_logprobs(model, &batch, temperature)
}

/// Log-probs of every row of `batch` under `model` (logits divided by `temperature`,
/// log-softmax in f32), each cut to its completion's length.
pub fn batch_logprobs(
    model: &Model,
    batch: &GroupBatch,
    temperature: f64,
) -> Result<Vec<Vec<f32>>> {
    let mut logits = window_logits(model, batch)?;
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

#[cfg(test)]
pub(crate) mod tests {
    use candle_core::{DType, Device};

    use super::*;
    use crate::model::ModelConfig;
    use crate::rollout::batch::PackedBatch;
    use crate::rollout::sampler::{CompletionId, SampleRequest, sample};

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
    pub(crate) fn gradient_differences(
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

    /// A tool that answers once, after the third token, with three fixed tokens.
    struct FixedTool {
        calls: std::collections::HashSet<CompletionId>,
    }

    impl crate::rollout::sampler::ToolDriver for FixedTool {
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
        let config = crate::rollout::sampler::SamplingConfig {
            temperature: 0.9,
            max_new_tokens: 10,
            seed: 5,
            ignore_eos: true,
            ..Default::default()
        };
        let mut tool = FixedTool {
            calls: Default::default(),
        };
        let request = SampleRequest::new(&prompts, 3, &config).with_tools(Some(&mut tool));
        let groups = sample(&model, request).unwrap().groups;
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
        let plain = sample(&model, SampleRequest::new(&prompts, 3, &config))
            .unwrap()
            .groups;
        for (a, b) in groups.iter().flatten().zip(plain.iter().flatten()) {
            assert_eq!(a.tokens[..3], b.tokens[..3]);
        }
    }
}
