//! Batched, seeded generation of G completions per prompt, with the log-probabilities the
//! GRPO ratio needs.
//!
//! Each prompt is prefilled once; its KV cache is then fanned out to `group_size` rows, and
//! all rows decode together one token per step. Rows that finish (EOS or length) leave the
//! batch, so late steps run on the survivors only. Every completion draws from its own ChaCha
//! stream (`seed`, stream = completion index), so results do not depend on batching or on
//! which other rows finished first.
//!
//! **Recorded log-probs.** `logprobs[i]` is `log softmax(logits / temperature)[token_i]` over
//! the *full* vocabulary: the temperature-scaled policy, before top-k/top-p truncation (those
//! only restrict which tokens may be drawn). This is the quantity a trainer recomputes from a
//! forward pass with the same temperature, so `ratio = exp(new − old)` is exactly 1 before the
//! first update. In greedy mode (`temperature == 0`) the recorded log-probs are those of the
//! unscaled distribution (temperature 1). [`SamplingConfig::ignore_eos`] is a restriction of the
//! same kind: EOS tokens are never drawn, and the recorded log-probs stay those of the full
//! distribution.

use std::time::Instant;

use candle_core::Tensor;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::{KvCache, Model};

mod decode;

pub use decode::ToolDriver;
use decode::{Round, Row, reborrow};

/// Which completion of a sampling call: its prompt's index in the whole prompt set (pieces
/// sampled with `first_prompt` count from the set's start) and its sample's index in the
/// prompt's group. The sampler, the tool and the rollout name a completion by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CompletionId {
    /// The prompt's index in the whole set.
    pub prompt: usize,
    /// The sample's index in its group, `0..group_size`.
    pub sample: usize,
}

impl CompletionId {
    /// The completion's place in the set's prompt-by-prompt order (`prompt × group_size +
    /// sample`): the number of its random stream, so the draws do not depend on batching.
    ///
    /// ```
    /// use grpo_runner::rollout::sampler::CompletionId;
    /// assert_eq!(CompletionId { prompt: 2, sample: 1 }.index(4), 9);
    /// ```
    pub fn index(self, group_size: usize) -> usize {
        self.prompt * group_size + self.sample
    }
}

/// How to draw tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SamplingConfig {
    /// Softmax temperature; 0 means greedy (argmax, ties to the lowest id).
    pub temperature: f64,
    /// Nucleus sampling: keep the smallest set of most likely tokens whose mass reaches
    /// `top_p` (1.0 keeps all).
    pub top_p: f64,
    /// Keep only the `top_k` most likely tokens (0 keeps all).
    pub top_k: usize,
    /// Most tokens generated per completion (EOS included).
    pub max_new_tokens: usize,
    /// Seed of the per-completion random streams.
    pub seed: u64,
    /// Most rows decoded in one forward pass; larger groups are processed in chunks of whole
    /// prompts (0 means no limit).
    pub max_batch_rows: usize,
    /// Never draw an end-of-sequence token, so every completion runs to `max_new_tokens` (or
    /// the context length). For benchmarks that compare trainers at an equal token count (as
    /// Hugging Face's `min_new_tokens`); the recorded log-probs are still those of the full
    /// distribution, as with top-k/top-p.
    pub ignore_eos: bool,
}

impl Default for SamplingConfig {
    fn default() -> Self {
        SamplingConfig {
            temperature: 1.0,
            top_p: 1.0,
            top_k: 0,
            max_new_tokens: 128,
            seed: 0,
            max_batch_rows: 0,
            ignore_eos: false,
        }
    }
}

impl SamplingConfig {
    /// Greedy decoding of up to `max_new_tokens` tokens.
    pub fn greedy(max_new_tokens: usize) -> Self {
        SamplingConfig {
            temperature: 0.0,
            max_new_tokens,
            ..Default::default()
        }
    }

    /// Checks the settings.
    pub fn validate(&self) -> Result<()> {
        if !(self.temperature >= 0.0 && self.temperature.is_finite()) {
            return Err(Error::invalid(format!(
                "temperature {} must be ≥ 0",
                self.temperature
            )));
        }
        if !(self.top_p > 0.0 && self.top_p <= 1.0) {
            return Err(Error::invalid(format!(
                "top_p {} must be in (0, 1]",
                self.top_p
            )));
        }
        if self.max_new_tokens == 0 {
            return Err(Error::invalid("max_new_tokens must be positive"));
        }
        Ok(())
    }

    pub(super) fn is_greedy(&self) -> bool {
        self.temperature == 0.0
    }
}

/// Why a completion stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// An end-of-sequence token was sampled (it is the last entry of `tokens`).
    Eos,
    /// `max_new_tokens` (or the context length) was reached.
    Length,
}

/// One sampled completion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    /// Which prompt this continues (index into the `prompts` argument).
    pub prompt_index: usize,
    /// The generated token ids, EOS included when sampled.
    pub tokens: Vec<u32>,
    /// The sampling policy's log-prob of each token (see the module docs for which).
    pub logprobs: Vec<f32>,
    /// Why generation stopped.
    pub finish_reason: FinishReason,
    /// Token ranges `[start, end)` of `tokens` that a tool wrote (its output, inserted as
    /// context): they are not the policy's actions, carry no recorded log-prob (`logprobs`
    /// holds 0 there) and are masked out of the loss. Empty without tools.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_spans: Vec<(usize, usize)>,
}

impl Completion {
    /// Whether token `i` is the policy's action (not a tool's output).
    pub fn is_action(&self, i: usize) -> bool {
        !self.tool_spans.iter().any(|&(s, e)| (s..e).contains(&i))
    }

    /// The policy's own tokens (tool output left out).
    pub fn action_count(&self) -> usize {
        self.tokens.len()
            - self
                .tool_spans
                .iter()
                .map(|&(s, e)| e.saturating_sub(s))
                .sum::<usize>()
    }
}

/// Where sampling time went.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SamplerStats {
    /// Seconds in prompt prefill forward passes.
    pub prefill_seconds: f64,
    /// Seconds in one-token decode forward passes.
    pub decode_seconds: f64,
    /// Seconds choosing tokens on the host (softmax, top-k/top-p, draws, copies).
    pub draw_seconds: f64,
    /// Decode forward passes run.
    pub decode_steps: usize,
    /// Tokens generated.
    pub generated_tokens: usize,
    /// Seconds waiting for tool calls to finish after the other rows' decoding was done
    /// (the tools' share of the critical path).
    #[serde(default)]
    pub tool_wait_seconds: f64,
}

impl SamplerStats {
    /// Generated tokens per second of total sampling time.
    pub fn tokens_per_second(&self) -> f64 {
        let total = self.prefill_seconds + self.decode_seconds + self.draw_seconds;
        self.generated_tokens as f64 / total.max(1e-12)
    }
}

/// What to sample: `group_size` completions for each of `prompts`, drawn as `config` says,
/// optionally as a piece of a larger prompt set ([`SampleRequest::starting_at`]) and with a
/// tool the policy may call ([`SampleRequest::with_tools`]). Built with
/// [`SampleRequest::new`] and passed to [`sample`], the one entry point of the sampler.
pub struct SampleRequest<'a> {
    prompts: &'a [Vec<u32>],
    group_size: usize,
    config: &'a SamplingConfig,
    first_prompt: usize,
    tools: Option<&'a mut dyn ToolDriver>,
}

impl<'a> SampleRequest<'a> {
    /// `group_size` completions for every prompt of `prompts`, no tool, the prompts the
    /// whole set.
    pub fn new(prompts: &'a [Vec<u32>], group_size: usize, config: &'a SamplingConfig) -> Self {
        SampleRequest {
            prompts,
            group_size,
            config,
            first_prompt: 0,
            tools: None,
        }
    }

    /// The prompts are the `first_prompt`-th onwards of a larger set: every completion draws
    /// from the random stream of its index in that set ([`CompletionId::index`]), so sampling
    /// a set in pieces draws the same tokens as sampling it at once (a caller can score the
    /// first piece while the next is sampled), and the tool sees the set's [`CompletionId`]s.
    pub fn starting_at(mut self, first_prompt: usize) -> Self {
        self.first_prompt = first_prompt;
        self
    }

    /// A tool the policy may call in the middle of a completion (`None` leaves it off): a row
    /// whose tokens end a call (as `tools` sees them) pauses while the call runs and the other
    /// rows go on decoding; when the round's decoding ends, each paused row gets the call's
    /// output as context tokens (recorded in [`Completion::tool_spans`]) and sampling
    /// continues, until every row has ended. Tool output counts toward `max_new_tokens`. Each
    /// completion keeps its own random stream across rounds, so the draws do not depend on
    /// batching.
    pub fn with_tools(mut self, tools: Option<&'a mut dyn ToolDriver>) -> Self {
        self.tools = tools;
        self
    }
}

/// What [`sample`] returns: one group of `group_size` completions per prompt, in prompt order,
/// and where the time went.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampled {
    /// The completions of each prompt, `group_size` each (`sample` 0, 1, …).
    pub groups: Vec<Vec<Completion>>,
    /// Where sampling time went.
    pub stats: SamplerStats,
}

impl Sampled {
    /// Every completion, prompt by prompt (`prompt_index` 0 × G, then 1 × G, …).
    pub fn completions(self) -> Vec<Completion> {
        self.groups.into_iter().flatten().collect()
    }
}

/// Samples what `request` asks for with `model`: the sampler's one entry point.
///
/// Runs on a [`Model::detached`] view of `model`, so no autograd graph is recorded, on the
/// model's device and in its compute dtype (the weights cast once per call); the logits come
/// back in f32 and the recorded log-probs are computed from them on the host in f64.
///
/// ```
/// use candle_core::{DType, Device};
/// use grpo_runner::model::{Model, ModelConfig};
/// use grpo_runner::rollout::sampler::{Completion, SampleRequest, SamplingConfig, sample};
/// let model = Model::random(&ModelConfig::tiny(16), DType::F32, &Device::Cpu, 1)?;
/// let prompts = vec![vec![1, 2, 3], vec![4, 5, 6]];
/// let config = SamplingConfig { max_new_tokens: 4, seed: 7, ..Default::default() };
/// let sampled = sample(&model, SampleRequest::new(&prompts, 3, &config))?;
/// assert_eq!(sampled.groups.len(), 2);
/// assert!(sampled.groups.iter().all(|group| group.len() == 3));
/// // The second prompt alone, as the second piece of the set: the same draws.
/// let piece = sample(&model, SampleRequest::new(&prompts[1..], 3, &config).starting_at(1))?;
/// let tokens = |groups: &[Vec<Completion>]| -> Vec<Vec<u32>> {
///     groups.iter().flatten().map(|c| c.tokens.clone()).collect()
/// };
/// assert_eq!(tokens(&piece.groups), tokens(&sampled.groups[1..]));
/// # Ok::<(), grpo_runner::Error>(())
/// ```
pub fn sample(model: &Model, request: SampleRequest<'_>) -> Result<Sampled> {
    let SampleRequest {
        prompts,
        group_size,
        config,
        first_prompt,
        mut tools,
    } = request;
    config.validate()?;
    if group_size == 0 {
        return Err(Error::invalid("group_size must be positive"));
    }
    if let Some(i) = prompts.iter().position(Vec::is_empty) {
        return Err(Error::invalid(format!("prompt {i} is empty")));
    }
    let model = model.detached()?;
    let prompts_per_chunk = if config.max_batch_rows == 0 {
        prompts.len().max(1)
    } else {
        (config.max_batch_rows / group_size).max(1)
    };
    let mut out = Vec::with_capacity(prompts.len() * group_size);
    let mut stats = SamplerStats::default();
    for (chunk_index, chunk) in prompts.chunks(prompts_per_chunk).enumerate() {
        let first = first_prompt + chunk_index * prompts_per_chunk;
        out.extend(sample_chunk(
            &model,
            chunk,
            first,
            group_size,
            config,
            &mut stats,
            reborrow(&mut tools),
        )?);
    }
    stats.generated_tokens = out.iter().map(|c| c.tokens.len()).sum();
    tracing::debug!(?stats, "sampled");
    // `out` is ordered prompt by prompt, G completions each.
    let mut completions = out.into_iter();
    let groups = prompts
        .iter()
        .map(|_| completions.by_ref().take(group_size).collect())
        .collect();
    Ok(Sampled { groups, stats })
}

fn sample_chunk(
    model: &Model,
    prompts: &[Vec<u32>],
    first_prompt: usize,
    group_size: usize,
    config: &SamplingConfig,
    stats: &mut SamplerStats,
    mut tools: Option<&mut dyn ToolDriver>,
) -> Result<Vec<Completion>> {
    let device = model.device().clone();
    let max_len = prompts.iter().map(Vec::len).max().unwrap_or(0);
    let context = model.config().max_position_embeddings;

    // Prefill each prompt once, left padded to the longest.
    let pads: Vec<usize> = prompts.iter().map(|p| max_len - p.len()).collect();
    let mut ids = Vec::with_capacity(prompts.len() * max_len);
    for p in prompts {
        ids.extend(std::iter::repeat_n(0u32, max_len - p.len()));
        ids.extend_from_slice(p);
    }
    let ids = Tensor::from_vec(ids, (prompts.len(), max_len), &device)?;
    let start = Instant::now();
    // Keys and values written in place into buffers for every position a row can reach.
    let mut cache = KvCache::with_capacity(
        model.config().num_hidden_layers,
        (max_len + config.max_new_tokens).min(context),
    );
    let hidden = model.forward_hidden(&ids, &pads, Some(&mut cache))?;
    let last = model
        .logits(&hidden.narrow(1, max_len - 1, 1)?)?
        .squeeze(1)?;

    // Fan out to G rows per prompt.
    let fan: Vec<u32> = (0..prompts.len() as u32)
        .flat_map(|p| std::iter::repeat_n(p, group_size))
        .collect();
    cache.select_rows(&fan)?;
    let logits = last.index_select(&Tensor::new(fan.as_slice(), &device)?, 0)?;
    let rows: Vec<Row> = fan
        .iter()
        .enumerate()
        .map(|(r, &p)| {
            let completion = CompletionId {
                prompt: first_prompt + p as usize,
                sample: r % group_size,
            };
            let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
            rng.set_stream(completion.index(group_size) as u64);
            Row {
                completion,
                prompt: p as usize,
                tokens: Vec::new(),
                logprobs: Vec::new(),
                rng,
                left_pad: pads[p as usize],
                tool_spans: Vec::new(),
            }
        })
        .collect();
    stats.prefill_seconds += start.elapsed().as_secs_f64();

    let mut done: Vec<(CompletionId, Completion)> = Vec::with_capacity(rows.len());
    let round = Round {
        model,
        prompts,
        config,
        context,
    };
    let mut paused = round.decode(cache, logits, rows, &mut tools, stats, &mut done)?;
    while let Some(driver) = tools.as_deref_mut() {
        if paused.is_empty() {
            break;
        }
        // Each paused row gets its call's output as context, then all continue together.
        let mut resumed = Vec::with_capacity(paused.len());
        for mut row in paused {
            let budget = config.max_new_tokens.saturating_sub(row.tokens.len());
            let waited = Instant::now();
            let output = driver.finish(row.completion, budget)?;
            stats.tool_wait_seconds += waited.elapsed().as_secs_f64();
            let output = &output[..output.len().min(budget)];
            if !output.is_empty() {
                let begin = row.tokens.len();
                row.tokens.extend_from_slice(output);
                row.logprobs.extend(std::iter::repeat_n(0.0, output.len()));
                row.tool_spans.push((begin, row.tokens.len()));
            }
            let position = prompts[row.prompt].len() + row.tokens.len();
            if row.tokens.len() >= config.max_new_tokens || position >= context {
                done.push(row.finish(FinishReason::Length));
            } else {
                resumed.push(row);
            }
        }
        if resumed.is_empty() {
            break;
        }
        let (cache, logits, rows) = round.prefill(resumed, stats)?;
        paused = round.decode(cache, logits, rows, &mut tools, stats, &mut done)?;
    }
    // Restore completion order: prompt by prompt, then by sample.
    done.sort_unstable_by_key(|(id, _)| *id);
    Ok(done.into_iter().map(|(_, c)| c).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_settings_are_rejected() {
        for config in [
            SamplingConfig {
                temperature: -1.0,
                ..Default::default()
            },
            SamplingConfig {
                top_p: 0.0,
                ..Default::default()
            },
            SamplingConfig {
                top_p: 1.5,
                ..Default::default()
            },
            SamplingConfig {
                max_new_tokens: 0,
                ..Default::default()
            },
        ] {
            assert!(config.validate().is_err(), "{config:?}");
        }
    }
}
