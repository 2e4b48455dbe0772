//! The rounds of one chunk's decoding: every row until it ends or pauses on a tool call,
//! then the paused rows again from a prefill of their own context (see
//! [`super::sample_with_tools`]), and the [`ToolDriver`] a tool implements.

use std::time::Instant;

use candle_core::Tensor;

use super::{
    Completion, CompletionId, FinishReason, Row, SamplerStats, SamplingConfig, draw, host_rows,
};
use crate::error::Result;
use crate::model::{KvCache, Model};

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
/// [`crate::rollout::tools`]), as [`super::sample_with_tools`] drives it, naming each completion by
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
