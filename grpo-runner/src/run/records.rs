//! What a run records: one [`StepRecord`] per GRPO step (`metrics.jsonl`), one [`EvalRecord`]
//! per evaluation (`eval.jsonl`), a few [`SampleRecord`]s per step (`samples.jsonl`), and the
//! [`Event`]s a progress display follows.
//!
//! Records are plain serde structs written as JSON lines; computing them (the trainer) is
//! separate from rendering them (a bar, JSON logs, nothing), which the binary chooses.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One GRPO step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// The step number, from 1.
    pub step: u64,
    /// Mean total reward of the completions trained on.
    pub reward_mean: f64,
    /// Population standard deviation of those rewards.
    pub reward_std: f64,
    /// Mean of each reward component, by name.
    pub rewards: BTreeMap<String, f64>,
    /// Fraction of sampled completions whose accuracy verdict is correct.
    pub accuracy: f64,
    /// Fraction of sampled completions that kept the answer format (format reward of 1).
    pub format_rate: f64,
    /// The loss (summed over micro-batches, averaged over minibatches and iterations).
    pub loss: f64,
    /// Mean per-token KL to the reference (when β > 0).
    pub kl: Option<f64>,
    /// Fraction of negative-advantage tokens clipped below.
    pub clip_fraction_low: f64,
    /// Fraction of positive-advantage tokens clipped above.
    pub clip_fraction_high: f64,
    /// Mean importance ratio.
    pub mean_ratio: f64,
    /// Mean per-token entropy of the policy on the sampled completions.
    pub entropy: Option<f64>,
    /// Mean completion length in tokens.
    pub completion_len_mean: f64,
    /// Shortest completion.
    pub completion_len_min: usize,
    /// Longest completion.
    pub completion_len_max: usize,
    /// Fraction of completions cut at `max_new_tokens`.
    pub truncated_fraction: f64,
    /// Fraction of sampled groups whose rewards were all equal (before any filtering).
    pub zero_variance_group_fraction: f64,
    /// Groups the update used.
    pub groups: usize,
    /// Extra sampling rounds spent refilling dropped groups (dynamic sampling).
    pub refill_rounds: usize,
    /// Global gradient norm before clipping (of the last optimiser step of this step).
    pub grad_norm: f64,
    /// Learning rate of this step.
    pub lr: f64,
    /// Generated tokens per second of sampling time.
    pub sample_tokens_per_second: f64,
    /// Trained (completion) tokens per second of the whole step.
    pub tokens_per_second: f64,
    /// Seconds generating.
    pub sample_seconds: f64,
    /// Seconds scoring that did not overlap other work.
    pub score_seconds: f64,
    /// Seconds in forward/backward passes and optimiser steps.
    pub update_seconds: f64,
    /// Wall-clock seconds of the whole step.
    pub step_seconds: f64,
    /// Share of the step spent waiting for scoring (`score_seconds / step_seconds`): the
    /// part of scoring on the critical path.
    #[serde(default)]
    pub score_fraction: f64,
    /// Seconds scoring took in all, overlapped with other work or not.
    #[serde(default)]
    pub scoring_seconds: f64,
    /// Accuracy verdicts of the sampled completions, by kind (`correct`, `tests_failed`, …).
    #[serde(default)]
    pub verdicts: BTreeMap<String, usize>,
    /// Groups left out of the update because their scoring faulted on every try (a sandbox
    /// fault is never a reward).
    #[serde(default)]
    pub fault_groups: usize,
    /// Programs the sandbox ran for this step.
    #[serde(default)]
    pub sandbox_runs: u64,
    /// Sandbox programs per second of scoring time.
    #[serde(default)]
    pub sandbox_runs_per_second: f64,
    /// Set on the last record when the run stopped before its planned steps: `time_limit`
    /// when the wall-clock safety limit (`budget.max_minutes`) cut it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// Code-interpreter calls per sampled completion (runs with `tools.enabled`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls_per_completion: Option<f64>,
    /// Calls whose code did not succeed (an exception, a limit): output the model saw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_errors: Option<usize>,
    /// Calls whose output block was cut to `tools.max_output_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_truncations: Option<usize>,
    /// Completions whose tool failed on our side (their groups were left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_faults: Option<usize>,
    /// Wall-clock seconds of the step's calls, added up (they overlap decoding).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_seconds: Option<f64>,
    /// Seconds sampling waited for calls once the other rows had nothing left to decode:
    /// the tools' part of the critical path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_wait_seconds: Option<f64>,
    /// `tool_wait_seconds / step_seconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_fraction: Option<f64>,
}

impl StepRecord {
    /// The record with every timing field zeroed: what must be identical between a resumed
    /// run and an uninterrupted one.
    pub fn without_timings(&self) -> StepRecord {
        StepRecord {
            sample_tokens_per_second: 0.0,
            tokens_per_second: 0.0,
            sample_seconds: 0.0,
            score_seconds: 0.0,
            update_seconds: 0.0,
            step_seconds: 0.0,
            score_fraction: 0.0,
            scoring_seconds: 0.0,
            sandbox_runs_per_second: 0.0,
            tool_seconds: self.tool_seconds.map(|_| 0.0),
            tool_wait_seconds: self.tool_wait_seconds.map(|_| 0.0),
            tool_fraction: self.tool_fraction.map(|_| 0.0),
            ..self.clone()
        }
    }
}

/// One held-out evaluation: greedy decoding, the accuracy verdict only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalRecord {
    /// GRPO steps taken when evaluated (0: after the warm-up, before any GRPO step).
    pub step: u64,
    /// Fraction of problems answered correctly.
    pub accuracy: f64,
    /// Problems answered correctly.
    pub correct: usize,
    /// Problems evaluated.
    pub problems: usize,
    /// Fraction of greedy completions that kept the answer format.
    pub format_rate: f64,
    /// Mean greedy completion length in tokens.
    pub completion_len_mean: f64,
    /// Wall-clock seconds of the evaluation.
    pub seconds: f64,
    /// Problems left out because their scoring faulted on every try (not in `problems`).
    #[serde(default)]
    pub faults: usize,
}

/// One sampled completion with its scores, to inspect what the rewards reward.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleRecord {
    /// The step it was sampled at.
    pub step: u64,
    /// The task.
    pub task_id: String,
    /// The prompt as the model saw it.
    pub prompt: String,
    /// The completion text.
    pub completion: String,
    /// The weighted total of the reward components (what `grpo score` gives the completion).
    pub reward: f64,
    /// The reward the advantage was computed from: `reward` plus shaping (the overlong
    /// penalty, when on).
    pub shaped_reward: f64,
    /// Each component's value.
    pub rewards: BTreeMap<String, f64>,
    /// The accuracy verdict's kind (`correct`, `wrong_answer`, …).
    pub verdict: String,
    /// The accuracy verdict's reason.
    pub reason: String,
    /// Its advantage (0 for a dropped group's completion).
    pub advantage: f64,
    /// The group was dropped before the update (dynamic sampling leaves out groups whose
    /// rewards are all equal): recorded so that a run whose groups are all dropped still
    /// shows what it sampled and why it learned nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dropped: bool,
    /// The code-interpreter calls the completion made, in order: the code, and the output
    /// exactly as the code printed it (the completion text holds each as a
    /// ```` ```python ```` block followed by its ```` ```output ```` block).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<crate::rollout::tools::ToolCall>,
}

/// What a progress display is told.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The warm-up starts; `steps` optimiser steps follow.
    WarmupStarted {
        /// Steps to come.
        steps: u64,
    },
    /// One warm-up step finished.
    WarmupStep {
        /// Step from 0.
        step: u64,
        /// Its cross-entropy.
        loss: f64,
    },
    /// GRPO starts; `steps` steps follow (counting from `from` + 1).
    GrpoStarted {
        /// The last step already taken (0 unless resumed).
        from: u64,
        /// The final step.
        steps: u64,
    },
    /// An evaluation finished.
    Eval(EvalRecord),
    /// A GRPO step finished.
    Step(Box<StepRecord>),
    /// A checkpoint was written.
    Checkpoint {
        /// The step it holds.
        step: u64,
    },
}

/// Population mean and standard deviation.
pub fn mean_std(values: &[f64]) -> (f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_std_golden() {
        // [0, 1, 1, 0]: mean 0.5, population std 0.5.
        assert_eq!(mean_std(&[0.0, 1.0, 1.0, 0.0]), (0.5, 0.5));
        // [2, 4, 4, 4, 5, 5, 7, 9]: mean 5, population std 2 (the textbook example).
        assert_eq!(
            mean_std(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]),
            (5.0, 2.0)
        );
        assert_eq!(mean_std(&[]), (0.0, 0.0));
    }
}
