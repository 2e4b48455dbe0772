//! Per-run limits: time, memory, output and files.

use grpo_tasks::CodeTask;
use serde::{Deserialize, Serialize};

/// The smallest memory cap the snapshotted interpreter starts under (its image is ~26 MiB);
/// the task schema's rule, [`grpo_tasks::MIN_MEMORY_MB`].
pub use grpo_tasks::MIN_MEMORY_MB;

/// How many times its CPU limit a run's default wall clock is: a program within its CPU limit
/// reaches the wall clock only when it gets less than a third of a core.
pub const WALL_FACTOR: u64 = 3;

/// What one program run may use.
///
/// ```
/// use grpo_rewards::code::Limits;
/// let strict = Limits { time_limit_ms: 500, ..Limits::default() };
/// assert_eq!(strict.wall_limit_ms(), 1500);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// CPU time the program may spend, in milliseconds: the CPU time its own thread received
    /// (checked every 10 ms), so time the machine gives to other work does not count, nor
    /// does time blocked in the host, such as `time.sleep`.
    pub time_limit_ms: u64,
    /// Wall-clock limit in milliseconds, a net for programs that wait (`time.sleep`, a
    /// blocked read) rather than compute; `None` means [`WALL_FACTOR`] times
    /// `time_limit_ms`, so load alone does not reach it.
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
            .unwrap_or(self.time_limit_ms.saturating_mul(WALL_FACTOR))
    }

    /// These limits held to `caps`: CPU time and memory at most the caps', and the wall clock
    /// at most [`WALL_FACTOR`] times the capped CPU time (so a caller's cap on time bounds how
    /// long a run can hold a worker, whatever wall clock was asked for). The one rule for
    /// every caller that clamps a run to a service's maxima.
    pub fn capped(&self, caps: LimitCaps) -> Limits {
        let time_limit_ms = self.time_limit_ms.min(caps.time_limit_ms);
        Limits {
            time_limit_ms,
            memory_mb: self.memory_mb.min(caps.memory_mb),
            wall_limit_ms: Some(
                self.wall_limit_ms()
                    .min(caps.time_limit_ms.saturating_mul(WALL_FACTOR)),
            ),
            ..self.clone()
        }
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
            (300, 64, 900)
        );
        let l = base.for_task(&task(None, None));
        assert_eq!(l, base);
    }

    #[test]
    fn capped_limits_take_the_smaller_of_each_and_bound_the_wall_clock() {
        let caps = LimitCaps {
            time_limit_ms: 1_000,
            memory_mb: 128,
        };
        // Asking for more than the caps: time and memory clamped, wall clock 3 x the cap.
        let big = Limits {
            time_limit_ms: 10_000,
            wall_limit_ms: Some(60_000),
            memory_mb: 1024,
            ..Limits::default()
        };
        let l = big.capped(caps);
        assert_eq!(
            (l.time_limit_ms, l.memory_mb, l.wall_limit_ms),
            (1_000, 128, Some(3_000))
        );
        // Within the caps: unchanged, the default wall clock made explicit.
        let small = Limits {
            time_limit_ms: 200,
            memory_mb: 64,
            ..Limits::default()
        };
        let l = small.capped(caps);
        assert_eq!(
            (l.time_limit_ms, l.memory_mb, l.wall_limit_ms),
            (200, 64, Some(600))
        );
        // A short wall clock asked for is kept.
        let waits = Limits {
            wall_limit_ms: Some(250),
            ..small
        };
        assert_eq!(waits.capped(caps).wall_limit_ms, Some(250));
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
