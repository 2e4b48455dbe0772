//! Decoding: the rows of one chunk ([`Row`]: a completion, its tokens, log-probs and random
//! stream), each round drawing one token per row ([`draw`]) until every row ends or pauses on
//! a tool call, then the paused rows again from a prefill of their own context (see
//! [`super::sample`]); and the [`ToolDriver`] a tool implements.

use std::time::Instant;

use candle_core::{DType, Tensor};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{Completion, CompletionId, FinishReason, SamplerStats, SamplingConfig};
use crate::error::Result;
use crate::model::{KvCache, Model};

/// One decoding row: which completion it is and what it has produced.
pub(super) struct Row {
    pub(super) completion: CompletionId,
    /// The chunk's prompt this row continues.
    pub(super) prompt: usize,
    pub(super) tokens: Vec<u32>,
    pub(super) logprobs: Vec<f32>,
    pub(super) rng: ChaCha8Rng,
    pub(super) left_pad: usize,
    pub(super) tool_spans: Vec<(usize, usize)>,
}

impl Row {
    pub(super) fn finish(self, finish_reason: FinishReason) -> (CompletionId, Completion) {
        (
            self.completion,
            Completion {
                prompt_index: self.completion.prompt,
                tokens: self.tokens,
                logprobs: self.logprobs,
                finish_reason,
                tool_spans: self.tool_spans,
            },
        )
    }
}

/// What every decoding round of one chunk shares.
pub(super) struct Round<'a> {
    pub(super) model: &'a Model,
    pub(super) prompts: &'a [Vec<u32>],
    pub(super) config: &'a SamplingConfig,
    pub(super) context: usize,
}

impl Round<'_> {
    /// Prefills rows that continue after a tool call: each row's prompt and completion so
    /// far, left padded to the longest; returns the cache, the next-token logits and the
    /// rows with their new padding.
    pub(super) fn prefill(
        &self,
        mut rows: Vec<Row>,
        stats: &mut SamplerStats,
    ) -> Result<(KvCache, Tensor, Vec<Row>)> {
        let start = Instant::now();
        let device = self.model.device().clone();
        let contexts: Vec<Vec<u32>> = rows
            .iter()
            .map(|r| [&self.prompts[r.prompt][..], &r.tokens[..]].concat())
            .collect();
        let width = contexts.iter().map(Vec::len).max().unwrap_or(0);
        let mut ids = Vec::with_capacity(rows.len() * width);
        for (row, c) in rows.iter_mut().zip(&contexts) {
            row.left_pad = width - c.len();
            ids.extend(std::iter::repeat_n(0u32, row.left_pad));
            ids.extend_from_slice(c);
        }
        let pads: Vec<usize> = rows.iter().map(|r| r.left_pad).collect();
        let ids = Tensor::from_vec(ids, (rows.len(), width), &device)?;
        let longest_left = rows
            .iter()
            .map(|r| self.config.max_new_tokens.saturating_sub(r.tokens.len()))
            .max()
            .unwrap_or(0);
        let mut cache = KvCache::with_capacity(
            self.model.config().num_hidden_layers,
            (width + longest_left).min(self.context),
        );
        let hidden = self.model.forward_hidden(&ids, &pads, Some(&mut cache))?;
        let logits = self
            .model
            .logits(&hidden.narrow(1, width - 1, 1)?)?
            .squeeze(1)?;
        stats.prefill_seconds += start.elapsed().as_secs_f64();
        Ok((cache, logits, rows))
    }

    /// Decodes `rows` one token per step until each ends (into `done`) or pauses on a tool
    /// call (returned, its call started).
    pub(super) fn decode(
        &self,
        mut cache: KvCache,
        mut logits: Tensor,
        mut rows: Vec<Row>,
        tools: &mut Option<&mut dyn ToolDriver>,
        stats: &mut SamplerStats,
        done: &mut Vec<(CompletionId, Completion)>,
    ) -> Result<Vec<Row>> {
        let device = self.model.device().clone();
        let config = self.config;
        let eos = &self.model.config().eos_token_ids;
        let banned: &[u32] = if config.ignore_eos { eos } else { &[] };
        let mut paused = Vec::new();
        loop {
            let start = Instant::now();
            let logits_host = host_rows(&logits)?;
            let before = rows.len();
            let mut next = Vec::with_capacity(rows.len());
            let mut keep = Vec::with_capacity(rows.len());
            let mut still = Vec::with_capacity(rows.len());
            for (r, (mut row, row_logits)) in rows.into_iter().zip(logits_host).enumerate() {
                let (token, logprob) = draw(&row_logits, config, banned, &mut row.rng);
                row.tokens.push(token);
                row.logprobs.push(logprob);
                let position = self.prompts[row.prompt].len() + row.tokens.len();
                let finish = if eos.contains(&token) {
                    Some(FinishReason::Eos)
                } else if row.tokens.len() >= config.max_new_tokens || position > self.context {
                    Some(FinishReason::Length)
                } else {
                    None
                };
                if let Some(finish_reason) = finish {
                    done.push(row.finish(finish_reason));
                    continue;
                }
                if let Some(driver) = tools.as_deref_mut()
                    && driver.is_call(row.completion, &row.tokens)?
                {
                    driver.start(row.completion, &row.tokens)?;
                    paused.push(row);
                    continue;
                }
                next.push(token);
                keep.push(r as u32);
                still.push(row);
            }
            rows = still;
            stats.draw_seconds += start.elapsed().as_secs_f64();
            if rows.is_empty() {
                return Ok(paused);
            }
            let start = Instant::now();
            if rows.len() != before {
                cache.select_rows(&keep)?;
            }
            let pads: Vec<usize> = rows.iter().map(|r| r.left_pad).collect();
            let input = Tensor::from_vec(next, (rows.len(), 1), &device)?;
            logits = self
                .model
                .forward(&input, &pads, Some(&mut cache))?
                .squeeze(1)?;
            stats.decode_seconds += start.elapsed().as_secs_f64();
            stats.decode_steps += 1;
        }
    }
}

/// The driver for one more use (a trait object behind `&mut` is invariant in its lifetime,
/// so `as_deref_mut` cannot shorten it; a coercion can).
pub(super) fn reborrow<'b>(
    tools: &'b mut Option<&mut dyn ToolDriver>,
) -> Option<&'b mut dyn ToolDriver> {
    match tools {
        Some(driver) => Some(&mut **driver),
        None => None,
    }
}

/// A tool the policy calls in the middle of a completion (the code interpreter of
/// [`crate::rollout::tools`]), as [`super::sample`] drives it, naming each completion by
/// its [`CompletionId`].
pub trait ToolDriver {
    /// Whether `tokens`, the completion so far, end a call the row may make now (checked
    /// after every sampled token).
    fn is_call(&mut self, completion: CompletionId, tokens: &[u32]) -> Result<bool>;
    /// Starts the call that `tokens` end; it may run while other rows decode.
    fn start(&mut self, completion: CompletionId, tokens: &[u32]) -> Result<()>;
    /// Waits for the call's output and returns it as context tokens, at most `budget` of
    /// them.
    fn finish(&mut self, completion: CompletionId, budget: usize) -> Result<Vec<u32>>;
}

/// Copies `[rows, vocab]` logits (on any device) to host memory as f32 rows.
fn host_rows(logits: &Tensor) -> Result<Vec<Vec<f32>>> {
    Ok(logits.to_dtype(DType::F32)?.to_vec2::<f32>()?)
}

/// Draws one token from `logits`, never one of `banned`, and returns it with its recorded
/// log-prob (over the full distribution).
fn draw(
    logits: &[f32],
    config: &SamplingConfig,
    banned: &[u32],
    rng: &mut ChaCha8Rng,
) -> (u32, f32) {
    let temperature = if config.is_greedy() {
        1.0
    } else {
        config.temperature
    };
    let scaled: Vec<f64> = logits.iter().map(|&l| f64::from(l) / temperature).collect();
    let max = scaled.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let log_z = max + scaled.iter().map(|s| (s - max).exp()).sum::<f64>().ln();
    let logprob = |t: usize| (scaled[t] - log_z) as f32;

    if config.is_greedy() {
        let best = argmax(&scaled, banned);
        return (best as u32, logprob(best));
    }
    let mut probs: Vec<f64> = scaled.iter().map(|s| (s - log_z).exp()).collect();
    for &t in banned {
        if let Some(p) = probs.get_mut(t as usize) {
            *p = 0.0;
        }
    }
    let truncate = config.top_k > 0 || config.top_p < 1.0;
    let token = if truncate {
        let mut order: Vec<usize> = (0..probs.len()).filter(|&t| probs[t] > 0.0).collect();
        // Descending probability, ties by id, so the candidate set is deterministic.
        order.sort_by(|&a, &b| probs[b].total_cmp(&probs[a]).then(a.cmp(&b)));
        if config.top_k > 0 {
            order.truncate(config.top_k);
        }
        if config.top_p < 1.0 {
            let mut mass = 0.0;
            let mut keep = 0;
            for &t in &order {
                mass += probs[t];
                keep += 1;
                if mass >= config.top_p {
                    break;
                }
            }
            order.truncate(keep.max(1));
        }
        let total: f64 = order.iter().map(|&t| probs[t]).sum();
        pick(order.iter().map(|&t| (t, probs[t])), total, rng)
    } else {
        let total = if banned.is_empty() {
            1.0
        } else {
            probs.iter().sum()
        };
        pick(probs.iter().copied().enumerate(), total, rng)
    };
    (token as u32, logprob(token))
}

/// Inverse-CDF draw from `(token, weight)` pairs whose weights sum to `total`.
fn pick(candidates: impl Iterator<Item = (usize, f64)>, total: f64, rng: &mut ChaCha8Rng) -> usize {
    let u = rng.r#gen::<f64>() * total;
    let mut acc = 0.0;
    let mut last = 0;
    for (t, w) in candidates {
        if w <= 0.0 {
            continue;
        }
        acc += w;
        last = t;
        if u < acc {
            return t;
        }
    }
    last
}

/// The index of the largest value not in `banned` (ties to the lowest index; 0 when every
/// index is banned).
fn argmax(values: &[f64], banned: &[u32]) -> usize {
    let mut best: Option<usize> = None;
    for (i, &v) in values.iter().enumerate() {
        if banned.contains(&(i as u32)) {
            continue;
        }
        if best.is_none_or(|b| v > values[b]) {
            best = Some(i);
        }
    }
    best.unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    fn rng() -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(0)
    }

    #[test]
    fn greedy_takes_the_argmax_and_records_its_logprob() {
        // log_softmax([0, ln 3]) = [ln 1/4, ln 3/4]
        let (t, lp) = draw(
            &[0.0, 3f32.ln()],
            &SamplingConfig::greedy(4),
            &[],
            &mut rng(),
        );
        assert_eq!(t, 1);
        assert!((lp - 0.75f32.ln()).abs() < 1e-6);
    }

    #[test]
    fn top_k_one_is_greedy_but_records_the_tempered_logprob() {
        let config = SamplingConfig {
            temperature: 0.5,
            top_k: 1,
            ..Default::default()
        };
        // logits / 0.5 = [0, 2 ln 3]: p = [1/10, 9/10].
        let (t, lp) = draw(&[0.0, 3f32.ln()], &config, &[], &mut rng());
        assert_eq!(t, 1);
        assert!((lp - 0.9f32.ln()).abs() < 1e-6);
    }

    #[test]
    fn top_p_keeps_the_nucleus_only() {
        // p = [0.6, 0.3, 0.1]: top_p 0.5 keeps only token 0.
        let logits = [0.6f32.ln(), 0.3f32.ln(), 0.1f32.ln()];
        let config = SamplingConfig {
            top_p: 0.5,
            ..Default::default()
        };
        let mut r = rng();
        for _ in 0..50 {
            assert_eq!(draw(&logits, &config, &[], &mut r).0, 0);
        }
        // top_p 0.85 keeps tokens 0 and 1, never 2.
        let config = SamplingConfig {
            top_p: 0.85,
            ..Default::default()
        };
        let seen: std::collections::HashSet<u32> = (0..200)
            .map(|_| draw(&logits, &config, &[], &mut r).0)
            .collect();
        assert_eq!(seen, [0, 1].into_iter().collect());
    }

    #[test]
    fn sampling_frequencies_follow_the_distribution() {
        // p = [0.2, 0.8]; 4000 draws: mean 3200, sd ≈ 25, so ±150 is a 6σ band.
        let logits = [0.2f32.ln(), 0.8f32.ln()];
        let config = SamplingConfig::default();
        let mut r = rng();
        let ones = (0..4000)
            .filter(|_| draw(&logits, &config, &[], &mut r).0 == 1)
            .count();
        assert!((3050..=3350).contains(&ones), "{ones}");
    }

    #[test]
    fn banned_tokens_are_never_drawn_but_logprobs_keep_the_full_distribution() {
        // p = [0.7, 0.2, 0.1] with token 0 (an EOS) banned: draws split 2:1 between 1 and 2,
        // and the recorded log-prob of token 1 is still ln 0.2.
        let logits = [0.7f32.ln(), 0.2f32.ln(), 0.1f32.ln()];
        let mut r = rng();
        let config = SamplingConfig::default();
        let mut ones = 0;
        for _ in 0..3000 {
            let (t, lp) = draw(&logits, &config, &[0], &mut r);
            assert_ne!(t, 0);
            if t == 1 {
                ones += 1;
                assert!((lp - 0.2f32.ln()).abs() < 1e-6);
            }
        }
        // mean 2000, sd ≈ 26: ±150 is a 6σ band.
        assert!((1850..=2150).contains(&ones), "{ones}");
        // Greedy skips the banned argmax; top-k counts only allowed tokens.
        let (t, lp) = draw(&logits, &SamplingConfig::greedy(4), &[0], &mut r);
        assert_eq!(t, 1);
        assert!((lp - 0.2f32.ln()).abs() < 1e-6);
        let top1 = SamplingConfig {
            top_k: 1,
            ..Default::default()
        };
        assert_eq!(draw(&logits, &top1, &[0], &mut r).0, 1);
    }
}
