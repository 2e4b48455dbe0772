//! The [`Reward`] trait: a verifiable reward function scored one group at a time.
//!
//! GRPO samples G completions per prompt; a reward sees the whole group at once so per-task
//! work (parsing the reference answer, compiling tests) happens once per group, not once per
//! completion.

use futures::future::BoxFuture;
use grpo_tasks::Task;

use crate::error::Result;
use crate::result::{Verdict, VerdictKind};

/// One reward function's judgement of one completion.
#[derive(Debug, Clone, PartialEq)]
pub struct Score {
    /// The reward value, or `None` when this reward does not apply to the task (a code reward
    /// on a math task, say). Missing values are handled by the composition rule.
    pub value: Option<f64>,
    /// Why the completion got this value.
    pub verdict: Verdict,
}

impl Score {
    /// A score for a task this reward does not judge: no value, and a verdict that says so.
    pub fn not_applicable(reward: &str, task: &Task) -> Score {
        Score {
            value: None,
            verdict: Verdict::new(
                VerdictKind::NoAnswer,
                format!(
                    "the {reward} reward does not apply to {} tasks",
                    task.kind_name()
                ),
            ),
        }
    }
}

/// A verifiable reward function.
///
/// Implementations never fail on a completion: a malformed completion gets a value (usually
/// 0) and a [`Verdict`] saying why. An `Err` means the reward could not judge at all for a
/// reason on our side (the sandbox failed, no checker is configured for the task's kind):
/// a [`RewardError::Fault`](crate::RewardError::Fault), never a 0 that would train a policy.
/// On success implementations return exactly one [`Score`] per completion, in order.
pub trait Reward: Send + Sync {
    /// The name under which this reward's value is reported (`accuracy`, `format`, …).
    fn name(&self) -> &str;

    /// Scores the completions of one task's group.
    fn score_group<'a>(
        &'a self,
        task: &'a Task,
        completions: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Score>>>;
}
