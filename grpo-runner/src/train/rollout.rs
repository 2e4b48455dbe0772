//! Rollout: sample a step's groups with the current policy and score them with the reward
//! set (code in the sandbox, the first half scored while the second is sampled); faulted
//! groups are retried, then left out.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::join_all;
use grpo_rewards::{RewardError, ScoreOptions, ScoredResult, Scorer};
use grpo_tasks::Task;
use rand::Rng;

use super::{Trainer, derive_seed};
use crate::error::{Error, Result};
use crate::rollout::group::Group;
use crate::rollout::round::RoundMetrics;
use crate::rollout::sampler::{
    Completion, CompletionId, SampleRequest, Sampled, SamplingConfig, ToolDriver, sample,
};
use crate::rollout::tools::{CodeTool, ToolLog};

/// What one round of sampling and scoring produced: its groups, and what the round cost.
pub(super) struct Rollout {
    pub(super) groups: Vec<Group>,
    pub(super) metrics: RoundMetrics,
}

impl Trainer {
    /// Samples and scores groups for `count` new prompts (sampling round `round` of this step).
    pub(super) fn sample_and_score(&mut self, count: usize, round: u64) -> Result<Rollout> {
        let tasks: Vec<Task> = (0..count)
            .map(|_| self.train_tasks[self.prompt_rng.gen_range(0..self.train_tasks.len())].clone())
            .collect();
        let encoded: Vec<(String, Vec<u32>)> = tasks
            .iter()
            .map(|t| self.encode_prompt(t))
            .collect::<Result<_>>()?;
        let s = &self.config.sampling;
        let g = s.group_size;
        let sampling = SamplingConfig {
            temperature: s.temperature,
            top_p: s.top_p,
            top_k: s.top_k,
            max_new_tokens: s.max_new_tokens,
            seed: derive_seed(self.config.seed, 2, self.step, round),
            max_batch_rows: s.max_batch_rows,
            ignore_eos: s.ignore_eos,
        };
        let prompt_ids: Vec<Vec<u32>> = encoded.iter().map(|(_, ids)| ids.clone()).collect();
        // With code tasks the prompts are sampled in two pieces and the first piece is scored
        // in the sandbox while the second is sampled; the draws are the same either way (each
        // completion has its own random stream).
        let pieces = if self.scores_code && count > 1 { 2 } else { 1 };
        let per_piece = count.div_ceil(pieces);
        let retries = self.config.rewards.fault_retries;
        let timeout = self.config.rewards.group_timeout();
        // A code task that samples its tests draws another subset each step.
        let test_seed = Some(derive_seed(self.config.seed, 3, self.step, round));
        // One entry per prompt: its G completions and their decoded texts.
        let mut sampled: Vec<(Vec<Completion>, Vec<String>)> = Vec::with_capacity(count);
        let mut scoring = Vec::with_capacity(pieces);
        let mut sample_seconds = 0.0;
        let mut generated_tokens = 0;
        let mut tool_log = ToolLog::default();
        let mut tool_wait_seconds = 0.0;
        for (piece, ids) in prompt_ids.chunks(per_piece).enumerate() {
            let start = Instant::now();
            let first = piece * per_piece;
            let mut tool = self.tool_sandbox().map(|sandbox| {
                CodeTool::new(
                    sandbox.clone(),
                    &self.runtime,
                    &self.tokenizer,
                    &self.config.tools,
                )
            });
            let request = SampleRequest::new(ids, g, &sampling)
                .starting_at(first)
                .with_tools(tool.as_mut().map(|t| t as &mut dyn ToolDriver));
            let Sampled { groups, stats } = sample(&self.policy, request)?;
            if let Some(tool) = tool {
                let log = tool.finish_all();
                tool_log.calls.extend(log.calls);
                tool_log.faults.extend(log.faults);
            }
            sample_seconds += start.elapsed().as_secs_f64();
            tool_wait_seconds += stats.tool_wait_seconds;
            generated_tokens += stats.generated_tokens;
            let mut jobs: Vec<(Task, Vec<String>)> = Vec::with_capacity(groups.len());
            for (task, group) in tasks[first..].iter().zip(groups) {
                let texts = group
                    .iter()
                    .map(|c| self.tokenizer.decode(&c.tokens))
                    .collect::<Result<Vec<_>>>()?;
                jobs.push((task.clone(), texts.clone()));
                sampled.push((group, texts));
            }
            let rewards = Arc::clone(&self.rewards);
            scoring.push(self.runtime.spawn(async move {
                let started = Instant::now();
                let scored = score_with_retries(&rewards, &jobs, retries, timeout, test_seed).await;
                (scored, started.elapsed().as_secs_f64())
            }));
        }
        let wait = Instant::now();
        let mut scored = Vec::with_capacity(count);
        let mut scoring_seconds = 0.0;
        for handle in scoring {
            let (piece, seconds) = self
                .runtime
                .block_on(handle)
                .map_err(|e| Error::invalid(format!("scoring task failed: {e}")))?;
            scored.extend(piece);
            scoring_seconds += seconds;
        }
        let score_seconds = wait.elapsed().as_secs_f64();
        let overlong = self.config.algorithm.shaping.overlong;
        let mut groups = Vec::with_capacity(tasks.len());
        let mut fault_groups = 0;
        for (prompt_index, (((task, (prompt, ids)), (completions, texts)), scores)) in tasks
            .into_iter()
            .zip(encoded)
            .zip(sampled)
            .zip(scored)
            .enumerate()
        {
            let ids_of_group = (0..g).map(|sample| CompletionId {
                prompt: prompt_index,
                sample,
            });
            // A group whose scoring faulted on every try gets no reward, nor one whose tool
            // failed on our side (its completions saw no real output): it is left out.
            let tool_fault = ids_of_group
                .clone()
                .any(|id| tool_log.faults.contains_key(&id));
            let Some(scores) = scores.filter(|_| !tool_fault) else {
                fault_groups += 1;
                continue;
            };
            let tool_calls = if self.config.tools.enabled {
                ids_of_group
                    .map(|id| tool_log.calls.remove(&id).unwrap_or_default())
                    .collect()
            } else {
                Vec::new()
            };
            let mut rewards = Vec::with_capacity(g);
            for (c, s) in completions.iter().zip(&scores) {
                let penalty = match &overlong {
                    Some(o) => grpo_core::overlong_penalty(c.tokens.len(), o)?,
                    None => 0.0,
                };
                rewards.push(s.reward + penalty);
            }
            groups.push(Group {
                task,
                prompt,
                prompt_ids: ids,
                completions,
                texts,
                scores,
                rewards,
                tool_calls,
            });
        }
        let metrics = RoundMetrics {
            sample_seconds,
            score_seconds,
            scoring_seconds,
            generated_tokens,
            fault_groups,
            tool_faults: self.config.tools.enabled.then_some(tool_log.faults.len()),
            tool_wait_seconds,
        };
        Ok(Rollout { groups, metrics })
    }
}

/// Scores `groups`, scoring a group again (up to `retries` times) while it faults; a group
/// that faults on every try is `None`: it gets no reward at all. A group whose scoring takes
/// longer than `timeout` (a reward that hangs) is a fault like any other. `test_seed` varies
/// the tests a code task samples ([`ScoreOptions::test_seed`]).
pub(super) async fn score_with_retries(
    scorer: &Scorer,
    groups: &[(Task, Vec<String>)],
    retries: usize,
    timeout: Option<Duration>,
    test_seed: Option<u64>,
) -> Vec<Option<Vec<ScoredResult>>> {
    let options = ScoreOptions {
        test_seed,
        ..*scorer.options()
    };
    let options = &options;
    let mut out: Vec<Option<Vec<ScoredResult>>> = vec![None; groups.len()];
    let mut pending: Vec<usize> = (0..groups.len()).collect();
    for attempt in 0..=retries {
        let results = join_all(pending.iter().map(|&i| async move {
            let (task, completions) = &groups[i];
            let scoring = scorer.score_group(task, completions, options);
            match timeout {
                Some(limit) => tokio::time::timeout(limit, scoring)
                    .await
                    .unwrap_or_else(|_| {
                        Err(RewardError::fault(
                            task.id(),
                            format!(
                                "scoring took longer than rewards.group_timeout_s = {}",
                                limit.as_secs_f64()
                            ),
                        ))
                    }),
                None => scoring.await,
            }
        }))
        .await;
        let mut failed = Vec::new();
        for (&i, result) in pending.iter().zip(results) {
            match result {
                Ok(scores) => out[i] = Some(scores),
                Err(e) => {
                    tracing::warn!(attempt, task = groups[i].0.id(), error = %e, "scoring fault");
                    failed.push(i);
                }
            }
        }
        pending = failed;
        if pending.is_empty() {
            break;
        }
    }
    out
}
