//! The error type of grpo-core.
//!
//! Every variant carries the data needed to act on it: the argument's name, the shape that was
//! expected and the one that came, the prompt and completion index of a bad reward.

/// Result alias used across the crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Everything that can go wrong in the GRPO math.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A tensor operation failed inside candle.
    #[error("tensor operation failed: {0}")]
    Candle(#[from] candle_core::Error),

    /// An argument had the wrong number of dimensions or the wrong sizes.
    #[error("`{name}` must have shape {expected}, got {got:?}")]
    Shape {
        /// The argument's name (`rewards`, `logprobs`, `mask`, …).
        name: &'static str,
        /// The expected shape, in words (`[prompts, group]`, `[batch, seq]`).
        expected: String,
        /// The dimensions that came.
        got: Vec<usize>,
    },

    /// An argument had an element type the function cannot use.
    #[error("`{name}` must be {expected}, got {got:?}")]
    DType {
        /// The argument's name.
        name: &'static str,
        /// The accepted element types, in words.
        expected: &'static str,
        /// The element type that came.
        got: candle_core::DType,
    },

    /// The reward tensor has no prompts.
    #[error("rewards are empty: there must be at least one prompt")]
    EmptyRewards,

    /// A group has fewer than two completions, so no relative advantage exists.
    #[error("group size must be at least 2, got {group_size}")]
    GroupTooSmall {
        /// The number of completions per prompt that came.
        group_size: usize,
    },

    /// A reward is NaN or infinite.
    #[error("reward of prompt {prompt}, completion {completion} is not finite ({value})")]
    NonFiniteReward {
        /// Row of the reward tensor.
        prompt: usize,
        /// Column of the reward tensor.
        completion: usize,
        /// The offending value.
        value: f64,
    },

    /// The mean or standard deviation of rewards overflowed the numeric range.
    #[error("reward statistics of {} exceed the numeric range", match prompt { Some(p) => format!("prompt {p}"), None => "the batch".to_string() })]
    RewardStatsOverflow {
        /// Row of the reward tensor whose statistics overflowed; `None` for batch statistics.
        prompt: Option<usize>,
    },

    /// A configuration value is out of range.
    #[error("invalid configuration `{field}` = {value}: {reason}")]
    InvalidConfig {
        /// The field's path (`loss.epsilon_low`).
        field: &'static str,
        /// The value that came, printed.
        value: String,
        /// What the value must satisfy.
        reason: &'static str,
    },

    /// The loss has a KL term (β > 0) but no reference log-probs were given.
    #[error("beta is {beta} but no reference log-probs were given")]
    MissingReference {
        /// The configured KL coefficient.
        beta: f64,
    },

    /// A response span does not fit in the sequence.
    #[error(
        "row {row}: response starts at {start} with length {len}, beyond sequence length {seq_len}"
    )]
    SpanOutOfRange {
        /// Row of the batch.
        row: usize,
        /// First response position.
        start: usize,
        /// Response length.
        len: usize,
        /// Number of positions in the row.
        seq_len: usize,
    },

    /// Two per-row inputs have different lengths.
    #[error("`{name}` has {got} entries, expected {expected} (one per row)")]
    LengthMismatch {
        /// The argument's name.
        name: &'static str,
        /// Number of rows.
        expected: usize,
        /// Number of entries that came.
        got: usize,
    },
}
