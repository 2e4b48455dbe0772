//! The result shapes shared by the library, the `grpo` command line and the HTTP service.
//!
//! A *run result* describes one sandboxed program; a *scored result* describes one completion
//! of one task. Both serialise to the JSON documented in DESIGN.md.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How a sandboxed program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Exited with status 0 and its output is complete.
    Ok,
    /// Non-zero exit or an uncaught exception.
    Error,
    /// Ran past its CPU or wall-clock limit.
    Timeout,
    /// Hit its memory cap.
    MemoryLimit,
    /// Wrote more than its output cap; the output was truncated (never `ok`).
    OutputLimit,
    /// A trap or a host-side failure.
    Crash,
}

impl RunStatus {
    /// The status of a run whose stdout or stderr was cut at its cap: a cut stream is never
    /// `ok`, and the cap is the cause unless time or memory stopped the run first. The one
    /// rule for runs and interpreter calls.
    pub fn with_output_cut(self) -> RunStatus {
        match self {
            RunStatus::Timeout | RunStatus::MemoryLimit => self,
            _ => RunStatus::OutputLimit,
        }
    }

    /// The status's name as results write it (`memory_limit`), the same as its JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::Error => "error",
            RunStatus::Timeout => "timeout",
            RunStatus::MemoryLimit => "memory_limit",
            RunStatus::OutputLimit => "output_limit",
            RunStatus::Crash => "crash",
        }
    }
}

/// One sandboxed program's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// How the program ended.
    pub status: RunStatus,
    /// The exit code, when the program exited.
    pub exit_code: Option<i32>,
    /// Standard output (lossy UTF-8, possibly truncated).
    pub stdout: String,
    /// Standard error (lossy UTF-8, possibly truncated).
    pub stderr: String,
    /// Wall-clock time of the run.
    pub duration_ms: f64,
    /// CPU time the program's own thread received, the time its limit is charged with (a
    /// machine's load lengthens `duration_ms`, not this); 0 where nothing ran.
    #[serde(default)]
    pub cpu_ms: f64,
    /// Whether stdout or stderr was cut at its cap.
    pub truncated: bool,
}

/// The category of a verdict on one completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictKind {
    /// The accuracy check fully passed.
    Correct,
    /// An answer was found and parsed, but is not equivalent to the reference.
    WrongAnswer,
    /// No answer could be found in the completion.
    NoAnswer,
    /// An answer was found but could not be parsed.
    Unparsable,
    /// The program ran, but not every test passed.
    TestsFailed,
    /// The program ran out of time.
    Timeout,
    /// The program ran out of memory.
    MemoryLimit,
    /// The program wrote more output than allowed.
    OutputLimit,
    /// The program crashed, or the checker failed on our side.
    Crash,
}

impl VerdictKind {
    /// The snake_case name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            VerdictKind::Correct => "correct",
            VerdictKind::WrongAnswer => "wrong_answer",
            VerdictKind::NoAnswer => "no_answer",
            VerdictKind::Unparsable => "unparsable",
            VerdictKind::TestsFailed => "tests_failed",
            VerdictKind::Timeout => "timeout",
            VerdictKind::MemoryLimit => "memory_limit",
            VerdictKind::OutputLimit => "output_limit",
            VerdictKind::Crash => "crash",
        }
    }
}

/// The outcome of one test case of a code task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestOutcome {
    /// Index of the case in the task's tests (0 for a single assert block).
    pub index: usize,
    /// Whether the case passed.
    pub passed: bool,
    /// How the program run for this case ended.
    pub status: RunStatus,
    /// A short explanation (the assertion, the first differing line, the limit hit).
    pub reason: String,
    /// The case's score in `[0, 1]` when a checker gave partial points (`None`: 1 when
    /// passed, else 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points: Option<f64>,
}

/// Why a completion got its score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The category.
    pub kind: VerdictKind,
    /// A sentence a person can read.
    pub reason: String,
    /// Per-test outcomes, for code tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests: Option<Vec<TestOutcome>>,
}

impl Verdict {
    /// A verdict without per-test outcomes.
    pub fn new(kind: VerdictKind, reason: impl Into<String>) -> Self {
        Verdict {
            kind,
            reason: reason.into(),
            tests: None,
        }
    }

    /// Whether the verdict is [`VerdictKind::Correct`].
    pub fn is_correct(&self) -> bool {
        self.kind == VerdictKind::Correct
    }
}

/// One completion of one task, scored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoredResult {
    /// The task's id.
    pub task_id: String,
    /// The weighted total of the reward components.
    pub reward: f64,
    /// Each component's value (JSON: `rewards`, an object by reward name; components
    /// without a value are absent).
    #[serde(rename = "rewards")]
    pub components: Components,
    /// Whether the accuracy component fully passed, regardless of format or partial credit.
    pub correct: bool,
    /// The accuracy component's verdict.
    pub verdict: Verdict,
}

/// The value of each reward component of one completion (`None`: the reward does not apply).
///
/// Serialises as one flat object by name, `{"accuracy": 1.0, "format": 0.0, "length": 3.0}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Components {
    /// The accuracy reward (math, countdown, code, or a custom accuracy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<f64>,
    /// The format reward.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<f64>,
    /// Rewards of the caller's own, by name.
    #[serde(flatten)]
    pub extra: BTreeMap<String, f64>,
}

impl Components {
    /// The components that have a value, by name: `accuracy`, `format`, then the others in
    /// name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, f64)> {
        [("accuracy", self.accuracy), ("format", self.format)]
            .into_iter()
            .filter_map(|(name, v)| Some((name, v?)))
            .chain(self.extra.iter().map(|(k, v)| (k.as_str(), *v)))
    }

    /// The components that have a value, as a map by name.
    pub fn to_map(&self) -> BTreeMap<String, f64> {
        self.iter().map(|(k, v)| (k.to_owned(), v)).collect()
    }
}

/// At most 80 characters of `text` (77 and an ellipsis when longer), for verdict reasons that
/// quote a completion.
pub fn clip(text: &str) -> String {
    const MAX: usize = 80;
    if text.chars().count() <= MAX {
        text.to_owned()
    } else {
        text.chars().take(MAX - 3).collect::<String>() + "…"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_output_is_the_cause_unless_time_or_memory_came_first() {
        use RunStatus::*;
        for (before, after) in [
            (Ok, OutputLimit),
            (Error, OutputLimit),
            (Crash, OutputLimit),
            (OutputLimit, OutputLimit),
            (Timeout, Timeout),
            (MemoryLimit, MemoryLimit),
        ] {
            assert_eq!(before.with_output_cut(), after, "{before:?}");
        }
    }

    #[test]
    fn status_names_are_their_json() {
        for status in [
            RunStatus::Ok,
            RunStatus::Error,
            RunStatus::Timeout,
            RunStatus::MemoryLimit,
            RunStatus::OutputLimit,
            RunStatus::Crash,
        ] {
            assert_eq!(
                serde_json::to_value(status).unwrap(),
                serde_json::json!(status.as_str())
            );
        }
    }

    #[test]
    fn verdict_kinds_serialise_as_documented() {
        for kind in [
            VerdictKind::Correct,
            VerdictKind::WrongAnswer,
            VerdictKind::NoAnswer,
            VerdictKind::Unparsable,
            VerdictKind::TestsFailed,
            VerdictKind::Timeout,
            VerdictKind::MemoryLimit,
            VerdictKind::OutputLimit,
            VerdictKind::Crash,
        ] {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.as_str()));
        }
    }

    #[test]
    fn components_serialise_as_one_object_by_name() {
        let c = Components {
            accuracy: Some(1.0),
            format: None,
            extra: BTreeMap::from([("length".to_string(), 3.0)]),
        };
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(json, r#"{"accuracy":1.0,"length":3.0}"#);
        assert_eq!(serde_json::from_str::<Components>(&json).unwrap(), c);
    }

    #[test]
    fn run_result_json_shape() {
        let r = RunResult {
            status: RunStatus::OutputLimit,
            exit_code: None,
            stdout: "x".into(),
            stderr: String::new(),
            duration_ms: 1.5,
            cpu_ms: 0.5,
            truncated: true,
        };
        let v: serde_json::Value = serde_json::to_value(&r).unwrap();
        assert_eq!(v["status"], "output_limit");
        assert!(v["exit_code"].is_null());
        assert_eq!(v["truncated"], true);
    }

    #[test]
    fn clip_keeps_short_text_and_cuts_long_text_at_characters() {
        assert_eq!(clip("x = 3"), "x = 3");
        let long = "é".repeat(200);
        let clipped = clip(&long);
        assert_eq!(clipped.chars().count(), 78);
        assert!(clipped.ends_with('…'));
        assert_eq!(clip(&"a".repeat(80)), "a".repeat(80));
    }
}
