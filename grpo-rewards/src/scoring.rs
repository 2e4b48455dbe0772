//! The scoring contract: the one builder of the reward set that every command uses.
//!
//! `grpo train`, `grpo eval`, `grpo score`, `grpo tasks check` and `grpo serve` all build their
//! [`RewardSet`] here, so the same task and completion get the same score whichever command
//! asks. The set is always the same two components:
//!
//! - `accuracy`, routed by task kind: math equivalence, countdown, and code run against its
//!   tests in the sandbox (binary or partial credit, [`Credit`]); code is routed whenever a
//!   sandbox is given, and a code task scored without one is a fault, never a 0;
//! - `format`, the `<think>…</think><answer>…</answer>` reward, always reported in `rewards`
//!   (its weight may be 0).
//!
//! Weights come in layers: an explicit value (a run's config, a request) over the pack's
//! `pack.toml` `[rewards]` table over [`Weights::DEFAULT`] (accuracy 1, format 0).
//!
//! ```
//! use grpo_rewards::Scoring;
//! use grpo_tasks::{Pack, Task};
//! let pack = Pack::load("builtin:arith-digits").unwrap();
//! let scoring = Scoring::for_pack(&pack.manifest).unwrap();
//! assert_eq!((scoring.weights.accuracy, scoring.weights.format), (1.0, 0.1));
//! assert!(!Scoring::needs_sandbox(pack.tasks()));
//! let set = scoring.build(None).unwrap();
//! let task = &pack.eval()[0];
//! let Task::Math(m) = task else { unreachable!() };
//! let done = format!("<think>ok</think><answer>{}</answer>", m.answer);
//! let scored = futures::executor::block_on(set.score_group(task, &[done])).unwrap();
//! assert!(scored[0].correct);
//! assert!((scored[0].reward - 1.1).abs() < 1e-12);
//! ```

use grpo_tasks::{Manifest, RewardWeights, Task, TaskKind};
use serde::{Deserialize, Serialize};

#[cfg(feature = "sandbox")]
use crate::code::CodeReward;
use crate::code::{Credit, LimitCaps, Limits, Sandbox};
use crate::compose::{AccuracyReward, RewardSet};
use crate::error::{Result, RewardError};
use crate::format::{FormatConfig, FormatMode, FormatReward};

/// Resolved reward weights.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Weights {
    /// Weight of the accuracy reward.
    pub accuracy: f64,
    /// Weight of the format reward.
    pub format: f64,
}

impl Weights {
    /// The weights when neither the caller nor the pack gives one.
    pub const DEFAULT: Weights = Weights {
        accuracy: 1.0,
        format: 0.0,
    };

    /// `explicit` over `pack` over [`Weights::DEFAULT`], weight by weight.
    pub fn resolve(explicit: &RewardWeights, pack: &RewardWeights) -> Weights {
        Weights {
            accuracy: explicit
                .accuracy
                .or(pack.accuracy)
                .unwrap_or(Weights::DEFAULT.accuracy),
            format: explicit
                .format
                .or(pack.format)
                .unwrap_or(Weights::DEFAULT.format),
        }
    }

    /// Checks that every weight is finite and not negative, and that they do not all vanish.
    pub fn validate(&self) -> Result<()> {
        for (field, value) in [("accuracy", self.accuracy), ("format", self.format)] {
            if !value.is_finite() || value < 0.0 {
                return Err(RewardError::InvalidConfig {
                    field: format!("rewards.{field}"),
                    reason: format!("must be a finite number ≥ 0, got {value}"),
                });
            }
        }
        if self.accuracy + self.format <= 0.0 {
            return Err(RewardError::InvalidConfig {
                field: "rewards".into(),
                reason: "at least one weight must be positive".into(),
            });
        }
        Ok(())
    }
}

impl Default for Weights {
    fn default() -> Self {
        Weights::DEFAULT
    }
}

/// How completions are scored: the settings the reward set is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct Scoring {
    /// The reward weights.
    pub weights: Weights,
    /// What the format reward asks for.
    pub format_mode: FormatMode,
    /// Binary or partial credit for code tests.
    pub credit: Credit,
    /// Default limits of one sandboxed run (a task's own limits override them).
    pub limits: Limits,
    /// Caps on what a task's own limits may ask for (the service's maxima).
    pub caps: Option<LimitCaps>,
}

impl Default for Scoring {
    fn default() -> Self {
        Scoring {
            weights: Weights::DEFAULT,
            format_mode: FormatConfig::default().mode,
            credit: Credit::Binary,
            limits: Limits::default(),
            caps: None,
        }
    }
}

impl Scoring {
    /// Scoring with the pack's weights (defaults where the pack gives none).
    pub fn for_pack(manifest: &Manifest) -> Result<Scoring> {
        Scoring::with_weights(&RewardWeights::default(), &manifest.rewards)
    }

    /// Scoring with `explicit` weights over the pack's.
    pub fn with_weights(explicit: &RewardWeights, pack: &RewardWeights) -> Result<Scoring> {
        let weights = Weights::resolve(explicit, pack);
        weights.validate()?;
        Ok(Scoring {
            weights,
            ..Scoring::default()
        })
    }

    /// Whether any of `tasks` needs the sandbox (a code task).
    pub fn needs_sandbox<'a>(tasks: impl IntoIterator<Item = &'a Task>) -> bool {
        tasks.into_iter().any(|t| t.kind() == TaskKind::Code)
    }

    /// The reward set: accuracy (math, countdown, and code when `sandbox` is given) and format.
    pub fn build(&self, sandbox: Option<Sandbox>) -> Result<RewardSet> {
        self.weights.validate()?;
        self.limits
            .validate()
            .map_err(|e| RewardError::InvalidConfig {
                field: "limits".into(),
                reason: e.to_string(),
            })?;
        let accuracy = self.accuracy(sandbox);
        let format = FormatReward::new(FormatConfig {
            mode: self.format_mode,
            ..FormatConfig::default()
        });
        RewardSet::from_components(
            vec![
                (Box::new(accuracy), self.weights.accuracy),
                (Box::new(format), self.weights.format),
            ],
            Some(0),
        )
    }

    /// Accuracy routed by task kind: math and countdown always, code through `sandbox`.
    #[cfg(feature = "sandbox")]
    fn accuracy(&self, sandbox: Option<Sandbox>) -> AccuracyReward {
        let accuracy = AccuracyReward::new();
        let Some(sandbox) = sandbox else {
            return accuracy;
        };
        let mut code = CodeReward::new(sandbox)
            .with_limits(self.limits.clone())
            .with_credit(self.credit);
        if let Some(caps) = self.caps {
            code = code.with_caps(caps);
        }
        accuracy.with_kind(TaskKind::Code, Box::new(code))
    }

    /// Accuracy routed by task kind: math and countdown (no sandbox exists in this build).
    #[cfg(not(feature = "sandbox"))]
    fn accuracy(&self, sandbox: Option<Sandbox>) -> AccuracyReward {
        if let Some(never) = sandbox {
            match never {}
        }
        AccuracyReward::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weights(accuracy: Option<f64>, format: Option<f64>) -> RewardWeights {
        RewardWeights { accuracy, format }
    }

    #[test]
    fn explicit_weights_win_over_the_pack_and_the_defaults() {
        let pack = weights(Some(2.0), Some(0.5));
        assert_eq!(
            Weights::resolve(&weights(None, Some(0.0)), &pack),
            Weights {
                accuracy: 2.0,
                format: 0.0
            }
        );
        assert_eq!(
            Weights::resolve(&weights(None, None), &weights(None, None)),
            Weights::DEFAULT
        );
    }

    #[test]
    fn bad_weights_name_the_field() {
        for (w, field) in [
            (weights(Some(f64::NAN), None), "rewards.accuracy"),
            (weights(None, Some(-1.0)), "rewards.format"),
            (weights(Some(0.0), Some(0.0)), "rewards"),
        ] {
            let err = Scoring::with_weights(&w, &RewardWeights::default()).unwrap_err();
            assert!(
                matches!(&err, RewardError::InvalidConfig { field: f, .. } if f == field),
                "{err}"
            );
        }
    }

    #[test]
    fn format_is_always_reported_and_weighted() {
        let set = Scoring::default().build(None).unwrap();
        let task: Task =
            serde_json::from_str(r#"{"id":"m","kind":"math","prompt":"p","answer":"4"}"#).unwrap();
        let out = futures::executor::block_on(
            set.score_group(&task, &["<think>2+2</think><answer>4</answer>".to_string()]),
        )
        .unwrap();
        assert_eq!(out[0].rewards["format"], 1.0);
        assert_eq!(out[0].reward, 1.0);
    }
}
