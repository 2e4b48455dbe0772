//! The [`Scorer`]: the one owner of scoring. Every caller (the trainer, `grpo score`,
//! `grpo eval`, `grpo tasks check`, the HTTP service and the Python package) builds one
//! `Scorer` once and scores groups through it, so a completion scores the same everywhere.
//!
//! A group's result has two components, combined by weight:
//!
//! - `accuracy`, by task kind: math equivalence ([`MathChecker`]), countdown
//!   ([`CountdownReward`]), and code through a [`CodeJudge`] (the sandbox, in the
//!   `grpo-sandbox` crate). A code task scored by a `Scorer` without a judge is a fault, never
//!   a 0.
//! - `format`, the `<think>…</think><answer>…</answer>` reward, always reported (its weight
//!   may be 0).
//!
//! Both read completions through the same [`AnswerFormat`], so custom tags move the format
//! reward and the answer extraction together. Rewards of your own join with
//! [`Scorer::with_reward`] (a missing value, `None`, adds nothing; weights are not
//! renormalised), or replace accuracy with [`Scorer::with_accuracy`].
//!
//! Weights come in layers: an explicit value (a run's config, a request) over the pack's
//! `pack.toml` `[rewards]` table over [`Weights::DEFAULT`] (accuracy 1, format 0). What may
//! change per call (code credit, the format weight, caps on a task's limits) is a
//! [`ScoreOptions`]: nothing is rebuilt per request.
//!
//! ```
//! use grpo_rewards::{ScoringConfig, Scorer};
//! use grpo_tasks::{Pack, Task};
//! let pack = Pack::load("builtin:arith-digits").unwrap();
//! let config = ScoringConfig::for_pack(&pack.manifest).unwrap();
//! assert_eq!((config.weights.accuracy, config.weights.format), (1.0, 0.1));
//! assert!(!Scorer::needs_code(pack.tasks()));
//! let scorer = Scorer::new(&config).unwrap();
//! let task = &pack.eval()[0];
//! let Task::Math(m) = task else { unreachable!() };
//! let done = format!("<think>ok</think><answer>{}</answer>", m.answer);
//! let scored = scorer.score_group_blocking(task, &[done], scorer.options()).unwrap();
//! assert!(scored[0].correct);
//! assert!((scored[0].reward - 1.1).abs() < 1e-12);
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::future::{BoxFuture, join_all};
use grpo_tasks::{CodeTask, Manifest, RewardWeights, Task, TaskKind, TimeLimits};
use serde::{Deserialize, Serialize};

use crate::answer::AnswerFormat;
use crate::code::{Credit, LimitCaps, Limits, program_for};
use crate::countdown::CountdownReward;
use crate::error::{Result, RewardError};
use crate::format::{FormatConfig, FormatMode, FormatReward};
use crate::math::{MathChecker, MathConfig};
use crate::result::{Components, ScoredResult};
use crate::reward::{Reward, Score};

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
            check_weight(&format!("rewards.{field}"), value)?;
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

fn check_weight(field: &str, value: f64) -> Result<()> {
    if !value.is_finite() || value < 0.0 {
        return Err(RewardError::InvalidConfig {
            field: field.into(),
            reason: format!("must be a finite number ≥ 0, got {value}"),
        });
    }
    Ok(())
}

/// The settings a [`Scorer`] (and the code judge beside it) is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoringConfig {
    /// The reward weights.
    pub weights: Weights,
    /// What the format reward asks for.
    pub format_mode: FormatMode,
    /// The think and answer tags (format reward and extraction alike).
    pub tags: AnswerFormat,
    /// Binary or partial credit for code tests (the default of [`Scorer::options`]).
    pub credit: Credit,
    /// Default limits of one sandboxed run (a task's own limits override them); read by the
    /// code judge.
    pub limits: Limits,
    /// Caps on what a task's own limits may ask for (the service's maxima).
    pub caps: Option<LimitCaps>,
    /// A number reference accepts only a number written out, not arithmetic that evaluates
    /// to it ([`crate::math::EquivConfig::evaluated_numbers`]; a pack's `[math]` table).
    pub evaluated_numbers: bool,
    /// What the code tasks' own time limits were set for (a pack's `[code]` table): native
    /// limits are multiplied by the sandbox's measured slowdown for the task's language.
    pub time_limits: TimeLimits,
    /// Multiplies every code task's own time limit by this instead (native or not); `None`:
    /// `time_limits` decides.
    pub time_scale: Option<f64>,
}

impl Default for ScoringConfig {
    fn default() -> Self {
        ScoringConfig {
            weights: Weights::DEFAULT,
            format_mode: FormatConfig::default().mode,
            tags: AnswerFormat::default(),
            credit: Credit::Binary,
            limits: Limits::default(),
            caps: None,
            evaluated_numbers: false,
            time_limits: TimeLimits::Sandbox,
            time_scale: None,
        }
    }
}

impl ScoringConfig {
    /// The pack's weights (defaults where the pack gives none) and math options, default
    /// everything else.
    pub fn for_pack(manifest: &Manifest) -> Result<ScoringConfig> {
        let config = ScoringConfig::with_weights(&RewardWeights::default(), &manifest.rewards)?;
        Ok(ScoringConfig {
            evaluated_numbers: manifest.math.evaluated_numbers,
            time_limits: manifest.code.time_limits,
            ..config
        })
    }

    /// `explicit` weights over the pack's, default everything else.
    pub fn with_weights(explicit: &RewardWeights, pack: &RewardWeights) -> Result<ScoringConfig> {
        let weights = Weights::resolve(explicit, pack);
        weights.validate()?;
        Ok(ScoringConfig {
            weights,
            ..ScoringConfig::default()
        })
    }

    /// Checks the weights, the limits and the time scale.
    pub fn validate(&self) -> Result<()> {
        self.weights.validate()?;
        if let Some(scale) = self.time_scale
            && !(scale.is_finite() && scale > 0.0)
        {
            return Err(RewardError::InvalidConfig {
                field: "time_scale".into(),
                reason: format!("must be a positive number, got {scale}"),
            });
        }
        self.limits
            .validate()
            .map_err(|e| RewardError::InvalidConfig {
                field: format!("limits.{}", e.field),
                reason: e.reason,
            })
    }

    /// The per-call options these settings imply.
    pub fn options(&self) -> ScoreOptions {
        ScoreOptions {
            credit: self.credit,
            format_weight: None,
            caps: self.caps,
            test_seed: None,
        }
    }
}

/// What may change from one scoring call to the next.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ScoreOptions {
    /// Binary or partial credit for code tests.
    pub credit: Credit,
    /// The format weight of this call (`None`: the scorer's).
    pub format_weight: Option<f64>,
    /// Caps on what a code task's own limits may ask for.
    pub caps: Option<LimitCaps>,
    /// Varies the tests a code task's plan samples (`max_tests` with `sample = "random"`)
    /// from one call to the next (the trainer passes its step); `None` draws the plan's own
    /// fixed subset.
    pub test_seed: Option<u64>,
}

/// The seam to the code sandbox: judges the programs of one code task's group.
///
/// The [`Scorer`] extracts each completion's program (its [`AnswerFormat`], the task's mode)
/// and hands the judge one program per completion, in order. Implementations return exactly
/// one [`Score`] per program; an `Err` is a fault on our side (the sandbox broke), never a 0.
/// The future must not need a particular async runtime to be polled:
/// [`Scorer::score_group_blocking`] drives it with a plain executor.
pub trait CodeJudge: Send + Sync {
    /// Judges `programs` (one per completion) against `task`'s tests.
    fn judge<'a>(
        &'a self,
        task: &'a CodeTask,
        programs: &'a [String],
        options: &'a ScoreOptions,
    ) -> BoxFuture<'a, Result<Vec<Score>>>;
}

/// Scorers built by this process so far.
static BUILT: AtomicU64 = AtomicU64::new(0);

/// How many [`Scorer`]s this process has built: callers that promise to build one and keep
/// it (the service, the Python package) are tested against it.
pub fn built_count() -> u64 {
    BUILT.load(Ordering::Relaxed)
}

/// The one owner of scoring; see the module docs.
pub struct Scorer {
    weights: Weights,
    options: ScoreOptions,
    format: FormatReward,
    math: MathChecker,
    countdown: CountdownReward,
    code: Option<Arc<dyn CodeJudge>>,
    accuracy: Option<Box<dyn Reward>>,
    extra: Vec<(Box<dyn Reward>, f64)>,
}

impl std::fmt::Debug for Scorer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let extra: Vec<(&str, f64)> = self.extra.iter().map(|(r, w)| (r.name(), *w)).collect();
        f.debug_struct("Scorer")
            .field("weights", &self.weights)
            .field("options", &self.options)
            .field("format", self.format.config())
            .field("code", &self.code.is_some())
            .field("custom_accuracy", &self.accuracy.is_some())
            .field("extra", &extra)
            .finish()
    }
}

impl Scorer {
    /// A scorer for math, countdown and format (code joins with [`Scorer::with_code`]).
    /// Errors: invalid weights or limits.
    pub fn new(config: &ScoringConfig) -> Result<Scorer> {
        config.validate()?;
        let mut math = MathConfig {
            answer: config.tags.clone(),
            ..MathConfig::default()
        };
        math.equiv.evaluated_numbers = config.evaluated_numbers;
        let math = MathChecker::new(math)?;
        BUILT.fetch_add(1, Ordering::Relaxed);
        Ok(Scorer {
            weights: config.weights,
            options: config.options(),
            format: FormatReward::new(FormatConfig {
                mode: config.format_mode,
                tags: config.tags.clone(),
                ..FormatConfig::default()
            }),
            math,
            countdown: CountdownReward::with_tags(config.tags.clone()),
            code: None,
            accuracy: None,
            extra: Vec::new(),
        })
    }

    /// The same scorer judging code tasks with `judge`.
    pub fn with_code(mut self, judge: Arc<dyn CodeJudge>) -> Scorer {
        self.code = Some(judge);
        self
    }

    /// The same scorer with `reward` as the accuracy component for every task kind (instead
    /// of the routing by kind): a verifier of your own, or a test's injected fault.
    pub fn with_accuracy(mut self, reward: Box<dyn Reward>) -> Scorer {
        self.accuracy = Some(reward);
        self
    }

    /// The same scorer with one more component. Errors: a weight that is not a finite number
    /// ≥ 0, or a name already taken (`accuracy`, `format` or an earlier component's).
    pub fn with_reward(mut self, reward: Box<dyn Reward>, weight: f64) -> Result<Scorer> {
        check_weight(&format!("weight of {}", reward.name()), weight)?;
        let name = reward.name();
        if name == "accuracy"
            || name == "format"
            || self.extra.iter().any(|(r, _)| r.name() == name)
        {
            return Err(RewardError::InvalidConfig {
                field: name.to_string(),
                reason: "two rewards with this name".into(),
            });
        }
        self.extra.push((reward, weight));
        Ok(self)
    }

    /// The weights.
    pub fn weights(&self) -> Weights {
        self.weights
    }

    /// The options this scorer was configured with (credit, caps; the scorer's format
    /// weight).
    pub fn options(&self) -> &ScoreOptions {
        &self.options
    }

    /// The think and answer tags.
    pub fn tags(&self) -> &AnswerFormat {
        &self.format.config().tags
    }

    /// Whether code tasks can be scored (a judge is attached, or accuracy is custom).
    pub fn judges_code(&self) -> bool {
        self.code.is_some() || self.accuracy.is_some()
    }

    /// Whether any of `tasks` needs a code judge (a code task).
    pub fn needs_code<'a>(tasks: impl IntoIterator<Item = &'a Task>) -> bool {
        tasks.into_iter().any(|t| t.kind() == TaskKind::Code)
    }

    /// Scores the completions of one task: one result per completion, in order. A fault of
    /// any component (the sandbox broke, code without a judge) is the group's error.
    pub async fn score_group(
        &self,
        task: &Task,
        completions: &[String],
        options: &ScoreOptions,
    ) -> Result<Vec<ScoredResult>> {
        let format_weight = options.format_weight.unwrap_or(self.weights.format);
        check_weight("format_weight", format_weight)?;
        let (accuracy, extra) = futures::join!(
            self.accuracy(task, completions, options),
            join_all(
                self.extra
                    .iter()
                    .map(|(reward, _)| reward.score_group(task, completions))
            )
        );
        let accuracy = accuracy?;
        let extra: Vec<Vec<Score>> = extra.into_iter().collect::<Result<_>>()?;
        let format = self.format.score_all(completions);
        for scores in std::iter::once(&accuracy).chain(&extra) {
            if scores.len() != completions.len() {
                return Err(RewardError::fault(
                    task.id(),
                    format!(
                        "a reward gave {} scores for {} completions",
                        scores.len(),
                        completions.len()
                    ),
                ));
            }
        }
        let results = accuracy
            .into_iter()
            .zip(format)
            .enumerate()
            .map(|(i, (acc, fmt))| {
                let mut reward = 0.0;
                let mut components = Components {
                    accuracy: acc.value,
                    format: fmt.value,
                    extra: BTreeMap::new(),
                };
                if let Some(v) = acc.value {
                    reward += self.weights.accuracy * v;
                }
                if let Some(v) = fmt.value {
                    reward += format_weight * v;
                }
                for ((r, weight), scores) in self.extra.iter().zip(&extra) {
                    if let Some(v) = scores.get(i).and_then(|s| s.value) {
                        reward += weight * v;
                        components.extra.insert(r.name().to_string(), v);
                    }
                }
                ScoredResult {
                    task_id: task.id().to_string(),
                    reward,
                    components,
                    correct: acc.verdict.is_correct(),
                    verdict: acc.verdict,
                }
            })
            .collect();
        Ok(results)
    }

    /// [`Scorer::score_group`] on this thread (for the command line and the Python package).
    pub fn score_group_blocking(
        &self,
        task: &Task,
        completions: &[String],
        options: &ScoreOptions,
    ) -> Result<Vec<ScoredResult>> {
        futures::executor::block_on(self.score_group(task, completions, options))
    }

    /// The accuracy component of a group: routed by kind, or the custom accuracy reward.
    async fn accuracy(
        &self,
        task: &Task,
        completions: &[String],
        options: &ScoreOptions,
    ) -> Result<Vec<Score>> {
        if let Some(custom) = &self.accuracy {
            return custom.score_group(task, completions).await;
        }
        match task {
            Task::Math(math) => {
                let gold = self.math.prepare(&math.answer, &math.alternatives);
                Ok(completions
                    .iter()
                    .map(|c| {
                        let check = self.math.check_prepared(&gold, c);
                        Score {
                            value: Some(if check.correct { 1.0 } else { 0.0 }),
                            verdict: check.verdict,
                        }
                    })
                    .collect())
            }
            Task::Countdown(countdown) => Ok(self.countdown.score_all(countdown, completions)),
            Task::Code(code) => {
                let Some(judge) = &self.code else {
                    return Err(RewardError::fault(
                        task.id(),
                        "no accuracy reward is configured for code tasks (code needs the sandbox)",
                    ));
                };
                let tags = self.tags();
                let programs: Vec<String> = completions
                    .iter()
                    .map(|c| program_for(code, c, tags))
                    .collect();
                judge.judge(code, &programs, options).await
            }
        }
    }
}

#[cfg(test)]
mod tests;
