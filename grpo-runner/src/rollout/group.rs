//! A group: one prompt's G completions, scored, with what the rollout knows of each (texts,
//! verdicts, shaped rewards, tool calls), the unit dynamic sampling keeps or drops and the
//! advantages normalise over; and the groups a step trains on, packed once ([`StepBatch`]).

use candle_core::Device;
use grpo_rewards::ScoredResult;
use grpo_tasks::Task;

use super::batch::GroupBatch;
use super::logprobs::batch_logprobs;
use super::sampler::Completion;
use super::tools::ToolCall;
use crate::error::Result;
use crate::model::Model;

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

/// The groups a step trains on, packed once: every completion after its group's prompt,
/// tool output masked from the loss. The reference log-probs and every pass of the update read
/// this one batch; a micro-batch is a [`GroupBatch::select`] of it.
pub(crate) struct StepBatch<'a> {
    pub(crate) groups: &'a [Group],
    pub(crate) packed: GroupBatch,
    /// Reference log-probs per group, per completion (β > 0 only; see
    /// [`reference_logprobs`]).
    pub(crate) reference: Option<Vec<Vec<Vec<f32>>>>,
}

impl<'a> StepBatch<'a> {
    /// Packs `groups` (at least one) with `pad_id` on `device`, without reference log-probs.
    pub(crate) fn pack(groups: &'a [Group], pad_id: u32, device: &Device) -> Result<Self> {
        let rows: Vec<(&[u32], Vec<&[u32]>)> = groups
            .iter()
            .map(|g| {
                let completions = g.completions.iter().map(|c| &c.tokens[..]);
                (&g.prompt_ids[..], completions.collect())
            })
            .collect();
        let mut packed = GroupBatch::pack(&rows, pad_id, device)?;
        // Tool output is context, not the policy's action.
        let spans: Vec<&[(usize, usize)]> = groups
            .iter()
            .flat_map(|g| g.completions.iter().map(|c| &c.tool_spans[..]))
            .collect();
        if spans.iter().any(|s| !s.is_empty()) {
            packed.mask_spans(&spans)?;
        }
        Ok(StepBatch {
            groups,
            packed,
            reference: None,
        })
    }
}

/// The reference log-probs phase: every completion of `batch` scored under `reference` (at
/// `temperature`, as the update's ratio), per group, per completion. The reference is
/// detached once for the step, and scored group by group: the numbers a batch of one group
/// gives, whatever else the step holds.
pub(crate) fn reference_logprobs(
    reference: &Model,
    batch: &StepBatch<'_>,
    temperature: f64,
) -> Result<Vec<Vec<Vec<f32>>>> {
    let model = reference.detached()?;
    (0..batch.groups.len())
        .map(|g| batch_logprobs(&model, &batch.packed.select(&[g])?, temperature))
        .collect()
}
