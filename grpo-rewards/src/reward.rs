//! The [`Reward`] trait: a verifiable reward function scored one group at a time.
//!
//! GRPO samples G completions per prompt; a reward sees the whole group at once so per-task
//! work (parsing the reference answer, compiling tests) happens once per group, not once per
//! completion.

use futures::future::BoxFuture;
use grpo_tasks::Task;

use crate::result::Verdict;

/// One reward function's judgement of one completion.
#[derive(Debug, Clone, PartialEq)]
pub struct Score {
    /// The reward value, or `None` when this reward does not apply to the task (a code reward
    /// on a math task, say). Missing values are handled by the composition rule.
    pub value: Option<f64>,
    /// Why the completion got this value.
    pub verdict: Verdict,
}

/// A verifiable reward function.
///
/// Implementations never fail on a completion: a malformed completion gets a value (usually
/// 0) and a [`Verdict`] saying why. Implementations must return exactly one [`Score`] per
/// completion, in order.
pub trait Reward: Send + Sync {
    /// The name under which this reward's value is reported (`accuracy`, `format`, …).
    fn name(&self) -> &str;

    /// Scores the completions of one task's group.
    fn score_group<'a>(
        &'a self,
        task: &'a Task,
        completions: &'a [String],
    ) -> BoxFuture<'a, Vec<Score>>;
}
