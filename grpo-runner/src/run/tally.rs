//! What a step's rounds and update add up to, as its `metrics.jsonl` record ([`StepTally`])
//! and its `samples.jsonl` records ([`sample_records`]).

use std::collections::BTreeMap;

use grpo_core::StepMetrics;

use super::records::{SampleRecord, StepRecord, mean_std};
use crate::rollout::group::Group;
use crate::rollout::round::RoundMetrics;
use crate::rollout::sampler::FinishReason;

/// Running totals over every group a step sampled, kept for the update or filtered out.
#[derive(Debug, Default)]
pub(crate) struct StepTally {
    /// The shaped reward of every sampled completion, in sampling order.
    rewards: Vec<f64>,
    completions: usize,
    correct: usize,
    formatted: usize,
    truncated: usize,
    lengths: Vec<f64>,
    groups: usize,
    tied_groups: usize,
    fault_groups: usize,
    components: BTreeMap<String, (f64, usize)>,
    verdicts: BTreeMap<String, usize>,
    sample_seconds: f64,
    score_seconds: f64,
    scoring_seconds: f64,
    generated_tokens: usize,
    tools: Option<ToolTally>,
}

/// The code-interpreter calls of a step's sampled completions.
#[derive(Debug, Default)]
struct ToolTally {
    calls: usize,
    errors: usize,
    truncations: usize,
    faults: usize,
    seconds: f64,
    wait_seconds: f64,
}

/// What the update phase of a step did.
#[derive(Debug, Default)]
pub(crate) struct UpdateOutcome {
    pub(crate) metrics: StepMetrics,
    pub(crate) grad_norm: f64,
    pub(crate) lr: f64,
    pub(crate) seconds: f64,
}

/// The parts of a step record that only the trainer knows.
#[derive(Debug)]
pub(crate) struct StepFacts {
    pub(crate) step: u64,
    /// Groups the update used.
    pub(crate) used_groups: usize,
    /// Completion tokens the update trained on.
    pub(crate) trained_tokens: usize,
    /// Extra sampling rounds of dynamic sampling.
    pub(crate) refill_rounds: usize,
    /// Programs the sandbox started during the step.
    pub(crate) sandbox_runs: u64,
    pub(crate) step_seconds: f64,
}

impl StepTally {
    /// Counts a round's timings and faults; its groups are added one by one with
    /// [`StepTally::add_group`].
    pub(crate) fn add_round(&mut self, rollout: &RoundMetrics) {
        self.sample_seconds += rollout.sample_seconds;
        self.score_seconds += rollout.score_seconds;
        self.scoring_seconds += rollout.scoring_seconds;
        self.generated_tokens += rollout.generated_tokens;
        self.fault_groups += rollout.fault_groups;
        if let Some(faults) = rollout.tool_faults {
            let tools = self.tools.get_or_insert_with(ToolTally::default);
            tools.faults += faults;
            tools.wait_seconds += rollout.tool_wait_seconds;
        }
    }

    /// Counts one sampled group.
    pub(crate) fn add_group(&mut self, group: &Group) {
        self.groups += 1;
        for (c, s) in group.completions.iter().zip(&group.scores) {
            self.completions += 1;
            self.correct += usize::from(s.correct);
            *self
                .verdicts
                .entry(s.verdict.kind.as_str().to_owned())
                .or_insert(0) += 1;
            self.formatted += usize::from(s.components.format.is_some_and(|v| v >= 1.0));
            self.lengths.push(c.tokens.len() as f64);
            self.truncated += usize::from(c.finish_reason == FinishReason::Length);
            for (name, v) in s.components.iter() {
                let e = self.components.entry(name.to_owned()).or_insert((0.0, 0));
                e.0 += v;
                e.1 += 1;
            }
        }
        self.rewards.extend_from_slice(&group.rewards);
        self.tied_groups += usize::from(group.is_tied());
        if let Some(tools) = self.tools.as_mut() {
            for call in group.tool_calls.iter().flatten() {
                tools.calls += 1;
                tools.errors += usize::from(call.status != grpo_rewards::RunStatus::Ok);
                tools.truncations += usize::from(call.truncated);
                tools.seconds += call.seconds;
            }
        }
    }

    /// The step's `metrics.jsonl` record.
    pub(crate) fn record(self, facts: StepFacts, update: UpdateOutcome) -> StepRecord {
        let frac = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let (reward_mean, reward_std) = mean_std(&self.rewards);
        let step_seconds = facts.step_seconds;
        let m = update.metrics;
        StepRecord {
            step: facts.step,
            reward_mean,
            reward_std,
            rewards: self
                .components
                .into_iter()
                .map(|(k, (s, n))| (k, s / n.max(1) as f64))
                .collect(),
            accuracy: frac(self.correct, self.completions),
            format_rate: frac(self.formatted, self.completions),
            loss: m.loss,
            kl: m.kl,
            clip_fraction_low: m.clip_fraction_low,
            clip_fraction_high: m.clip_fraction_high,
            mean_ratio: m.mean_ratio,
            entropy: m.entropy,
            completion_len_mean: mean_std(&self.lengths).0,
            completion_len_min: self
                .lengths
                .iter()
                .fold(usize::MAX, |m, &l| m.min(l as usize)),
            completion_len_max: self.lengths.iter().fold(0, |m, &l| m.max(l as usize)),
            truncated_fraction: frac(self.truncated, self.completions),
            zero_variance_group_fraction: frac(self.tied_groups, self.groups),
            groups: facts.used_groups,
            refill_rounds: facts.refill_rounds,
            grad_norm: update.grad_norm,
            lr: update.lr,
            sample_tokens_per_second: self.generated_tokens as f64 / self.sample_seconds.max(1e-9),
            tokens_per_second: facts.trained_tokens as f64 / step_seconds.max(1e-9),
            sample_seconds: self.sample_seconds,
            score_seconds: self.score_seconds,
            update_seconds: update.seconds,
            step_seconds,
            score_fraction: self.score_seconds / step_seconds.max(1e-9),
            scoring_seconds: self.scoring_seconds,
            verdicts: self.verdicts,
            fault_groups: self.fault_groups,
            sandbox_runs: facts.sandbox_runs,
            sandbox_runs_per_second: if self.scoring_seconds > 0.0 {
                facts.sandbox_runs as f64 / self.scoring_seconds
            } else {
                0.0
            },
            stopped: None,
            tool_calls_per_completion: self.tools.as_ref().map(|t| frac(t.calls, self.completions)),
            tool_errors: self.tools.as_ref().map(|t| t.errors),
            tool_truncations: self.tools.as_ref().map(|t| t.truncations),
            tool_faults: self.tools.as_ref().map(|t| t.faults),
            tool_seconds: self.tools.as_ref().map(|t| t.seconds),
            tool_wait_seconds: self.tools.as_ref().map(|t| t.wait_seconds),
            tool_fraction: self
                .tools
                .as_ref()
                .map(|t| t.wait_seconds / step_seconds.max(1e-9)),
        }
    }
}

/// The first `limit` completions of the groups the update used, each with the shaped reward
/// and the advantage it trained with (`advantages` holds one row per group), then the first
/// `limit` completions of the groups dynamic sampling dropped, flagged `dropped`.
pub(crate) fn sample_records(
    step: u64,
    used: &[Group],
    advantages: &[Vec<f64>],
    dropped: &[Group],
    limit: usize,
) -> Vec<SampleRecord> {
    let record = |gr: &Group, index: usize, advantage: f64, dropped: bool| {
        let s = &gr.scores[index];
        SampleRecord {
            step,
            task_id: gr.task.id().to_string(),
            prompt: gr.prompt.clone(),
            completion: gr.texts[index].clone(),
            reward: s.reward,
            shaped_reward: gr.rewards[index],
            rewards: s.components.to_map(),
            verdict: s.verdict.kind.as_str().to_string(),
            reason: s.verdict.reason.clone(),
            advantage,
            dropped,
            tool_calls: gr.tool_calls.get(index).cloned().unwrap_or_default(),
        }
    };
    let trained = used
        .iter()
        .zip(advantages)
        .flat_map(|(gr, adv)| {
            (0..completions(gr).min(adv.len())).map(move |i| record(gr, i, adv[i], false))
        })
        .take(limit);
    let left_out = dropped
        .iter()
        .flat_map(|gr| (0..completions(gr)).map(move |i| record(gr, i, 0.0, true)))
        .take(limit);
    trained.chain(left_out).collect()
}

/// How many completions of `gr` have a text, a score and a shaped reward (all of them).
fn completions(gr: &Group) -> usize {
    gr.texts.len().min(gr.scores.len()).min(gr.rewards.len())
}
