//! A group: one prompt's G completions, scored, with what the rollout knows of each (texts,
//! verdicts, shaped rewards, tool calls). The unit dynamic sampling keeps or drops, the
//! advantages normalise over, and [`super::batch::StepBatch`] packs.

use grpo_rewards::ScoredResult;
use grpo_tasks::Task;

use super::sampler::Completion;
use super::tools::ToolCall;

/// One prompt's group of sampled completions, scored.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub(crate) task: Task,
    pub(crate) prompt: String,
    pub(crate) prompt_ids: Vec<u32>,
    pub(crate) completions: Vec<Completion>,
    pub(crate) texts: Vec<String>,
    pub(crate) scores: Vec<ScoredResult>,
    /// The rewards the advantages are computed from: each score's reward plus shaping
    /// (the overlong penalty, when on).
    pub(crate) rewards: Vec<f64>,
    /// The code-interpreter calls of each completion (empty without tools).
    pub(crate) tool_calls: Vec<Vec<ToolCall>>,
}

impl Group {
    /// Whether every completion got the same shaped reward (its advantages are all zero).
    pub(crate) fn is_tied(&self) -> bool {
        grpo_core::is_tied(&self.rewards)
    }
}
