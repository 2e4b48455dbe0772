//! Errors of the reward library.
//!
//! A bad *completion* is never an error: it gets a [`Verdict`](crate::Verdict). Errors are for
//! bad *inputs on our side*: a reference answer that cannot be read, a malformed configuration,
//! an expression the parser refuses (the math checker turns that into an `unparsable` verdict).

/// The reward library's error type.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RewardError {
    /// An expression could not be parsed.
    #[error("cannot parse {input:?} at byte {position}: {reason}")]
    Parse {
        /// The input (cut to 80 characters).
        input: String,
        /// Byte offset of the problem.
        position: usize,
        /// What was wrong.
        reason: String,
    },
    /// An input is longer than the configured cap.
    #[error("input of {len} bytes is longer than the cap of {max} bytes")]
    InputTooLong {
        /// The input's length in bytes.
        len: usize,
        /// The cap.
        max: usize,
    },
    /// An expression nests deeper than the recursion cap.
    #[error("expression nests deeper than {max} levels")]
    TooDeep {
        /// The cap.
        max: usize,
    },
    /// An exact value would exceed the size cap (a huge power or factorial).
    #[error("exact value too large: {what}")]
    TooLarge {
        /// What overflowed (`10^(10^10)`, `factorial of 100000`, …).
        what: String,
    },
    /// Evaluation is undefined (division by zero, a function outside its domain).
    #[error("undefined: {reason}")]
    Undefined {
        /// Why.
        reason: String,
    },
    /// A reward could not judge a task for a reason on our side: the sandbox or its engine
    /// failed, or no checker is configured for the task's kind. Not the completion's fault,
    /// so never a reward: trainers skip the group, the service answers 503.
    #[error("scoring fault on task `{task_id}`: {reason}")]
    Fault {
        /// The task being scored.
        task_id: String,
        /// What failed.
        reason: String,
    },
    /// A configuration value is invalid.
    #[error("invalid configuration field `{field}`: {reason}")]
    InvalidConfig {
        /// The field.
        field: String,
        /// Why it is invalid.
        reason: String,
    },
}

impl RewardError {
    /// A scoring fault on `task_id`.
    pub fn fault(task_id: impl Into<String>, reason: impl Into<String>) -> Self {
        RewardError::Fault {
            task_id: task_id.into(),
            reason: reason.into(),
        }
    }

    /// Whether this is a [`RewardError::Fault`].
    pub fn is_fault(&self) -> bool {
        matches!(self, RewardError::Fault { .. })
    }

    /// A parse error at `position` of `input`, keeping at most 80 characters of the input.
    pub fn parse(input: &str, position: usize, reason: impl Into<String>) -> Self {
        let input: String = input.chars().take(80).collect();
        RewardError::Parse {
            input,
            position,
            reason: reason.into(),
        }
    }
}

/// The library's result alias.
pub type Result<T, E = RewardError> = std::result::Result<T, E>;
