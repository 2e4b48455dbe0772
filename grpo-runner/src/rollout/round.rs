//! What one sampling round of a step cost and left out, beside the groups it produced: the
//! rollout phase's metrics, which the step's tally ([`crate::run::tally`]) adds up.

/// Timings and counts of one round of sampling and scoring.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RoundMetrics {
    /// Seconds sampling (tool waits included).
    pub(crate) sample_seconds: f64,
    /// Seconds waiting for scoring after the overlapping work was done.
    pub(crate) score_seconds: f64,
    /// Seconds the scoring took in all (overlapped or not).
    pub(crate) scoring_seconds: f64,
    /// Tokens the round generated.
    pub(crate) generated_tokens: usize,
    /// Groups left out because their scoring faulted on every try, or their tool did.
    pub(crate) fault_groups: usize,
    /// Completions whose tool faulted on our side (runs with tools).
    pub(crate) tool_faults: Option<usize>,
    /// Seconds sampling waited for tool calls (runs with tools).
    pub(crate) tool_wait_seconds: f64,
}
