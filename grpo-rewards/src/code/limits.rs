//! Per-run limits: time, memory, output and files.

use grpo_tasks::CodeTask;
use serde::{Deserialize, Serialize};

/// The smallest memory cap the snapshotted interpreter starts under (its image is ~26 MiB);
/// the task schema's rule, [`grpo_tasks::MIN_MEMORY_MB`].
pub use grpo_tasks::MIN_MEMORY_MB;

/// What one program run may use.
///
/// ```
/// use grpo_rewards::code::Limits;
/// let strict = Limits { time_limit_ms: 500, ..Limits::default() };
/// assert_eq!(strict.wall_limit_ms(), 1000);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Time the program may spend executing, in milliseconds (enforced by epoch interruption
    /// at 10 ms granularity; time blocked in the host, such as `time.sleep`, does not count).
    pub time_limit_ms: u64,
    /// Wall-clock limit in milliseconds, including time blocked in `time.sleep` or waiting
    /// for a core; `None` means twice `time_limit_ms`.
    pub wall_limit_ms: Option<u64>,
    /// Linear-memory cap in MiB (at least [`MIN_MEMORY_MB`]).
    pub memory_mb: u64,
    /// Cap on each of stdout and stderr, in bytes; output beyond it is cut and the run ends
    /// with `output_limit`.
    pub output_bytes: usize,
    /// Cap on the total size of files the program writes in its temporary directory, in bytes.
    pub file_quota_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            time_limit_ms: 5_000,
            wall_limit_ms: None,
            memory_mb: 256,
            output_bytes: 1 << 20,
            file_quota_bytes: 8 << 20,
        }
    }
}

impl Limits {
    /// The wall-clock limit in effect.
    pub fn wall_limit_ms(&self) -> u64 {
        self.wall_limit_ms
            .unwrap_or(self.time_limit_ms.saturating_mul(2))
    }

    /// These limits with a code task's `time_limit_ms` and `memory_mb` applied.
    pub fn for_task(&self, task: &CodeTask) -> Limits {
        Limits {
            time_limit_ms: task.time_limit_ms.unwrap_or(self.time_limit_ms),
            memory_mb: task.memory_mb.unwrap_or(self.memory_mb),
            wall_limit_ms: if task.time_limit_ms.is_some() {
                None
            } else {
                self.wall_limit_ms
            },
            ..self.clone()
        }
    }

    /// Checks that every limit is usable.
    pub fn validate(&self) -> Result<(), LimitError> {
        let bad = |field, reason: String| Err(LimitError { field, reason });
        if self.time_limit_ms == 0 {
            return bad("time_limit_ms", "must be positive".into());
        }
        if self.wall_limit_ms == Some(0) {
            return bad("wall_limit_ms", "must be positive".into());
        }
        if self.memory_mb < MIN_MEMORY_MB {
            return bad(
                "memory_mb",
                format!(
                    "{} MiB is below the interpreter's minimum of {MIN_MEMORY_MB} MiB",
                    self.memory_mb
                ),
            );
        }
        if self.output_bytes < 1024 {
            return bad(
                "output_bytes",
                format!("{} is below the minimum of 1024", self.output_bytes),
            );
        }
        Ok(())
    }
}

/// A limit out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid limit `{field}`: {reason}")]
pub struct LimitError {
    /// The field of [`Limits`].
    pub field: &'static str,
    /// Why it is invalid.
    pub reason: String,
}

/// How per-test outcomes become a reward value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Credit {
    /// 1 when every test passes, else 0.
    #[default]
    Binary,
    /// The fraction of test cases passed (an assert block counts as one case).
    Partial,
}

/// The most a task's own `time_limit_ms` and `memory_mb` may ask for: larger values are
/// clamped to these (the HTTP service's `max_run_timeout_s` and `max_memory_mb`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitCaps {
    /// The largest time limit, in milliseconds.
    pub time_limit_ms: u64,
    /// The largest memory cap, in MiB.
    pub memory_mb: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(time: Option<u64>, memory: Option<u64>) -> CodeTask {
        let line = r#"{"id":"t","prompt":"","language":"python","mode":"full","tests":{"type":"stdio","cases":[]}}"#;
        let mut t: CodeTask = serde_json::from_str(line).unwrap();
        t.time_limit_ms = time;
        t.memory_mb = memory;
        t
    }

    #[test]
    fn task_overrides_apply_and_defaults_stay() {
        let base = Limits {
            wall_limit_ms: Some(9_000),
            ..Limits::default()
        };
        let l = base.for_task(&task(Some(300), Some(64)));
        assert_eq!(
            (l.time_limit_ms, l.memory_mb, l.wall_limit_ms()),
            (300, 64, 600)
        );
        let l = base.for_task(&task(None, None));
        assert_eq!(l, base);
    }

    #[test]
    fn validation_rejects_unusable_limits() {
        assert!(Limits::default().validate().is_ok());
        for (limits, field) in [
            (
                Limits {
                    time_limit_ms: 0,
                    ..Limits::default()
                },
                "time_limit_ms",
            ),
            (
                Limits {
                    wall_limit_ms: Some(0),
                    ..Limits::default()
                },
                "wall_limit_ms",
            ),
            (
                Limits {
                    memory_mb: 16,
                    ..Limits::default()
                },
                "memory_mb",
            ),
            (
                Limits {
                    output_bytes: 10,
                    ..Limits::default()
                },
                "output_bytes",
            ),
        ] {
            match limits.validate() {
                Err(LimitError { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: {other:?}"),
            }
        }
    }
}
