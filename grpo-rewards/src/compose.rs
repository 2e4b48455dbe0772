//! Weighted composition of rewards, and routing the accuracy reward by task kind.
//!
//! A [`RewardSet`] holds `(reward, weight)` components, one of them marked as the accuracy
//! component. Scoring a group runs every component on the group and combines, per
//! completion:
//!
//! - `reward = Σ weight_k · value_k` over the components whose value is present. **A missing
//!   value (`None`: the reward does not apply to this task) contributes nothing**; the other
//!   weights are not renormalised, so a code task under a set `{accuracy: 1, format: 0.5}`
//!   still scores on the same scale as a math task.
//! - `rewards`: each present component's value by name (missing ones are absent).
//! - `correct`: the accuracy component's verdict is `correct`.
//! - `verdict`: the accuracy component's verdict (the first component's when no accuracy
//!   component is marked).
//!
//! A component that cannot judge (a [`RewardError::Fault`]: the sandbox failed, no checker
//! for the task's kind) fails the whole group: a fault is never a reward.
//!
//! [`AccuracyReward`] dispatches by [`TaskKind`] so one set scores mixed packs: math and
//! countdown are routed out of the box; code (which needs a sandbox) is added with
//! [`AccuracyReward::with_kind`]. Commands do not assemble sets by hand: they use
//! [`Scoring`](crate::Scoring), the one builder, so every command scores alike.
//!
//! ```
//! use grpo_rewards::{AccuracyReward, FormatReward, RewardSet};
//! use grpo_tasks::Task;
//! let set = RewardSet::new()
//!     .with_accuracy(Box::new(AccuracyReward::new()), 1.0)
//!     .with(Box::new(FormatReward::default()), 0.5);
//! let task: Task = serde_json::from_str(
//!     r#"{"id":"t","kind":"math","prompt":"1+1?","answer":"2"}"#).unwrap();
//! let scored = futures::executor::block_on(set.score_group(&task, &[
//!     "<think>1+1=2</think><answer>2</answer>".to_string(),
//!     "3".to_string(),
//! ])).unwrap();
//! assert_eq!(scored[0].reward, 1.5);
//! assert!(scored[0].correct);
//! assert_eq!(scored[1].reward, 0.0);
//! ```

use std::collections::{BTreeMap, HashMap};

use futures::future::{BoxFuture, join_all};
use grpo_tasks::{Task, TaskKind};

use crate::countdown::CountdownReward;
use crate::error::{Result, RewardError};
use crate::math::MathReward;
use crate::result::{ScoredResult, Verdict, VerdictKind};
use crate::reward::{Reward, Score};

/// One weighted component of a [`RewardSet`].
pub struct Component {
    /// The reward function.
    pub reward: Box<dyn Reward>,
    /// Its weight in the total.
    pub weight: f64,
}

/// Rewards combined by weight; see the module docs for the rules.
#[derive(Default)]
pub struct RewardSet {
    components: Vec<Component>,
    accuracy: Option<usize>,
}

impl std::fmt::Debug for RewardSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<(String, f64)> = self
            .components
            .iter()
            .map(|c| (c.reward.name().to_string(), c.weight))
            .collect();
        f.debug_struct("RewardSet")
            .field("components", &names)
            .field("accuracy", &self.accuracy)
            .finish()
    }
}

impl RewardSet {
    /// An empty set.
    pub fn new() -> Self {
        RewardSet::default()
    }

    /// Builds a set from components; `accuracy` is the index of the accuracy component.
    /// Errors: a non-finite weight, an accuracy index out of range, two components with the
    /// same name.
    pub fn from_components(
        components: Vec<(Box<dyn Reward>, f64)>,
        accuracy: Option<usize>,
    ) -> Result<Self> {
        let mut names = std::collections::HashSet::new();
        for (reward, weight) in &components {
            if !weight.is_finite() {
                return Err(RewardError::InvalidConfig {
                    field: format!("weight of {}", reward.name()),
                    reason: "not finite".into(),
                });
            }
            if !names.insert(reward.name().to_string()) {
                return Err(RewardError::InvalidConfig {
                    field: reward.name().to_string(),
                    reason: "two rewards with this name".into(),
                });
            }
        }
        if accuracy.is_some_and(|a| a >= components.len()) {
            return Err(RewardError::InvalidConfig {
                field: "accuracy".into(),
                reason: "index out of range".into(),
            });
        }
        let components = components
            .into_iter()
            .map(|(reward, weight)| Component { reward, weight })
            .collect();
        Ok(RewardSet {
            components,
            accuracy,
        })
    }

    /// Adds a component.
    pub fn with(mut self, reward: Box<dyn Reward>, weight: f64) -> Self {
        self.components.push(Component { reward, weight });
        self
    }

    /// Adds the accuracy component (the one `correct` and `verdict` come from).
    pub fn with_accuracy(mut self, reward: Box<dyn Reward>, weight: f64) -> Self {
        self.accuracy = Some(self.components.len());
        self.components.push(Component { reward, weight });
        self
    }

    /// The components.
    pub fn components(&self) -> &[Component] {
        &self.components
    }

    /// The weight of the component named `name`, if there is one.
    pub fn weight(&self, name: &str) -> Option<f64> {
        self.components
            .iter()
            .find(|c| c.reward.name() == name)
            .map(|c| c.weight)
    }

    /// Scores the completions of one task: one result per completion, in order; a fault of
    /// any component is the group's error.
    pub async fn score_group(
        &self,
        task: &Task,
        completions: &[String],
    ) -> Result<Vec<ScoredResult>> {
        let per_component: Vec<Vec<Score>> = join_all(
            self.components
                .iter()
                .map(|c| c.reward.score_group(task, completions)),
        )
        .await
        .into_iter()
        .collect::<Result<_>>()?;
        if let Some(short) = per_component.iter().find(|s| s.len() != completions.len()) {
            return Err(RewardError::fault(
                task.id(),
                format!(
                    "a reward gave {} scores for {} completions",
                    short.len(),
                    completions.len()
                ),
            ));
        }
        Ok((0..completions.len())
            .map(|i| {
                let mut reward = 0.0;
                let mut rewards = BTreeMap::new();
                for (c, scores) in self.components.iter().zip(&per_component) {
                    if let Some(v) = scores.get(i).and_then(|s| s.value) {
                        reward += c.weight * v;
                        rewards.insert(c.reward.name().to_string(), v);
                    }
                }
                let verdict = self
                    .accuracy
                    .or((!self.components.is_empty()).then_some(0))
                    .and_then(|k| per_component.get(k)?.get(i))
                    .map(|s| s.verdict.clone())
                    .unwrap_or_else(|| {
                        Verdict::new(VerdictKind::Crash, "no reward produced a verdict")
                    });
                let correct = self.accuracy.is_some() && verdict.is_correct();
                ScoredResult {
                    task_id: task.id().to_string(),
                    reward,
                    rewards,
                    correct,
                    verdict,
                }
            })
            .collect())
    }

    /// Scores many groups concurrently; one result per group, in the order of `groups` (a
    /// fault fails its own group only).
    pub async fn score_batch(
        &self,
        groups: &[(Task, Vec<String>)],
    ) -> Vec<Result<Vec<ScoredResult>>> {
        join_all(
            groups
                .iter()
                .map(|(task, completions)| self.score_group(task, completions)),
        )
        .await
    }
}

/// The accuracy reward of a mixed pack: dispatches each task to the reward for its kind.
pub struct AccuracyReward {
    routes: HashMap<TaskKind, Box<dyn Reward>>,
}

impl Default for AccuracyReward {
    fn default() -> Self {
        AccuracyReward::new()
    }
}

impl AccuracyReward {
    /// Math routed to the default [`MathReward`] and countdown to the default
    /// [`CountdownReward`]; code unrouted until [`AccuracyReward::with_kind`] adds a
    /// `CodeReward` (it needs a sandbox, which is costly to build and not always wanted).
    pub fn new() -> Self {
        AccuracyReward::empty()
            .with_kind(TaskKind::Math, Box::new(MathReward::default()))
            .with_kind(TaskKind::Countdown, Box::new(CountdownReward::new()))
    }

    /// No routes at all.
    pub fn empty() -> Self {
        AccuracyReward {
            routes: HashMap::new(),
        }
    }

    /// Routes `kind` to `reward` (replacing an earlier route).
    pub fn with_kind(mut self, kind: TaskKind, reward: Box<dyn Reward>) -> Self {
        self.routes.insert(kind, reward);
        self
    }

    /// Whether `kind` has a route.
    pub fn handles(&self, kind: TaskKind) -> bool {
        self.routes.contains_key(&kind)
    }
}

impl Reward for AccuracyReward {
    fn name(&self) -> &str {
        "accuracy"
    }

    fn score_group<'a>(
        &'a self,
        task: &'a Task,
        completions: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Score>>> {
        match self.routes.get(&task.kind()) {
            Some(r) => r.score_group(task, completions),
            None => Box::pin(async move {
                Err(RewardError::fault(
                    task.id(),
                    format!(
                        "no accuracy reward is configured for {} tasks (code needs the sandbox)",
                        task.kind_name()
                    ),
                ))
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::FormatReward;

    /// A reward that gives a fixed value to code tasks only, to exercise routing and the
    /// missing-value rule.
    struct LengthReward;

    impl Reward for LengthReward {
        fn name(&self) -> &str {
            "length"
        }
        fn score_group<'a>(
            &'a self,
            task: &'a Task,
            completions: &'a [String],
        ) -> BoxFuture<'a, Result<Vec<Score>>> {
            Box::pin(async move {
                Ok(completions
                    .iter()
                    .map(|c| Score {
                        value: (task.kind() == TaskKind::Math).then_some(c.len() as f64),
                        verdict: Verdict::new(VerdictKind::Correct, "length"),
                    })
                    .collect())
            })
        }
    }

    fn math(id: &str, answer: &str) -> Task {
        serde_json::from_str(&format!(
            r#"{{"id":"{id}","kind":"math","prompt":"p","answer":"{answer}"}}"#
        ))
        .unwrap()
    }

    fn countdown() -> Task {
        serde_json::from_str(
            r#"{"id":"c","kind":"countdown","prompt":"p","numbers":[1,2],"target":3}"#,
        )
        .unwrap()
    }

    fn code() -> Task {
        serde_json::from_str(
            r#"{"id":"k","kind":"code","prompt":"p","language":"python","mode":"full","tests":{"type":"stdio","cases":[]}}"#,
        )
        .unwrap()
    }

    #[test]
    fn weighted_sum_and_missing_values() {
        let set = RewardSet::new()
            .with_accuracy(Box::new(AccuracyReward::new()), 2.0)
            .with(Box::new(FormatReward::default()), 0.5)
            .with(Box::new(LengthReward), 0.1);
        let c = vec![
            "<think>x</think><answer>7</answer>".to_string(),
            "8".to_string(),
        ];
        let r = futures::executor::block_on(set.score_group(&math("m", "7"), &c)).unwrap();
        // 2·1 + 0.5·1 + 0.1·34 = 5.9 ; 2·0 + 0.5·0 + 0.1·1 = 0.1
        assert!((r[0].reward - 5.9).abs() < 1e-12, "{}", r[0].reward);
        assert!((r[1].reward - 0.1).abs() < 1e-12);
        assert!(r[0].correct && !r[1].correct);
        assert_eq!(r[1].verdict.kind, VerdictKind::WrongAnswer);
        // A reward that does not apply is missing from `rewards` and adds nothing.
        let set = RewardSet::new()
            .with_accuracy(Box::new(AccuracyReward::new()), 1.0)
            .with(Box::new(LengthReward), 0.1);
        let r = futures::executor::block_on(set.score_group(&countdown(), &c)).unwrap();
        assert_eq!(r[0].rewards.keys().collect::<Vec<_>>(), vec!["accuracy"]);
        assert_eq!(r[0].reward, 0.0);
    }

    #[test]
    fn an_unrouted_kind_is_a_fault_not_a_zero() {
        let set = RewardSet::new()
            .with_accuracy(Box::new(AccuracyReward::new()), 1.0)
            .with(Box::new(FormatReward::default()), 0.5);
        let c = vec!["<think>x</think><answer>print(1)</answer>".to_string()];
        let err = futures::executor::block_on(set.score_group(&code(), &c)).unwrap_err();
        assert!(err.is_fault(), "{err}");
        assert!(err.to_string().contains("code tasks"), "{err}");
    }

    #[test]
    fn default_router_checks_countdown_exactly() {
        let set = RewardSet::new().with_accuracy(Box::new(AccuracyReward::new()), 1.0);
        let c = vec![
            "<answer>1 + 2</answer>".to_string(),
            "<answer>2 * 1</answer>".to_string(),
        ];
        let r = futures::executor::block_on(set.score_group(&countdown(), &c)).unwrap();
        assert!(r[0].correct && r[0].reward == 1.0, "{:?}", r[0]);
        assert!(!r[1].correct && r[1].reward == 0.0, "{:?}", r[1]);
    }

    #[test]
    fn with_kind_routes_and_batch_keeps_order() {
        let acc =
            AccuracyReward::new().with_kind(TaskKind::Countdown, Box::new(FormatReward::default()));
        assert!(acc.handles(TaskKind::Countdown) && !acc.handles(TaskKind::Code));
        let set = RewardSet::new().with_accuracy(Box::new(acc), 1.0);
        let groups = vec![
            (
                math("a", "1"),
                vec!["\\boxed{1}".to_string(), "\\boxed{2}".to_string()],
            ),
            (
                countdown(),
                vec!["<think>x</think><answer>1</answer>".to_string()],
            ),
            (math("b", "2"), vec!["2".to_string()]),
        ];
        let out = futures::executor::block_on(set.score_batch(&groups));
        let out: Vec<Vec<ScoredResult>> = out.into_iter().map(|g| g.unwrap()).collect();
        let ids: Vec<Vec<&str>> = out
            .iter()
            .map(|g| g.iter().map(|r| r.task_id.as_str()).collect())
            .collect();
        assert_eq!(ids, vec![vec!["a", "a"], vec!["c"], vec!["b"]]);
        let correct: Vec<Vec<bool>> = out
            .iter()
            .map(|g| g.iter().map(|r| r.correct).collect())
            .collect();
        assert_eq!(correct, vec![vec![true, false], vec![true], vec![true]]);
    }

    #[test]
    fn invalid_components_are_refused() {
        let two = vec![
            (Box::new(FormatReward::default()) as Box<dyn Reward>, 1.0),
            (Box::new(FormatReward::default()) as Box<dyn Reward>, 1.0),
        ];
        assert!(RewardSet::from_components(two, None).is_err());
        let nan = vec![(
            Box::new(FormatReward::default()) as Box<dyn Reward>,
            f64::NAN,
        )];
        assert!(RewardSet::from_components(nan, None).is_err());
        let ok = vec![(Box::new(MathReward::default()) as Box<dyn Reward>, 1.0)];
        assert!(RewardSet::from_components(ok, Some(1)).is_err());
    }
}
