//! Reward faults during training: a reward that fails or hangs for a share of its calls
//! neither stops the run nor poisons the update; the affected groups are retried, then left
//! out and counted.

use std::sync::atomic::{AtomicUsize, Ordering};

use futures::future::BoxFuture;
use grpo_rewards::result::{Verdict, VerdictKind};
use grpo_rewards::{Reward, RewardError, Score, Scorer, ScoringConfig};
use grpo_runner::config::{Preset, TrainConfig};
use grpo_runner::run::dir::RunDir;
use grpo_runner::train::Trainer;
use grpo_tasks::Task;

/// Scores completions by length parity (so groups have variance), but every third call
/// fails with a fault and every fifth call never answers.
struct Flaky {
    calls: AtomicUsize,
}

impl Reward for Flaky {
    fn name(&self) -> &str {
        "accuracy"
    }

    fn score_group<'a>(
        &'a self,
        task: &'a Task,
        completions: &'a [String],
    ) -> BoxFuture<'a, grpo_rewards::Result<Vec<Score>>> {
        let call = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        Box::pin(async move {
            if call.is_multiple_of(5) {
                futures::future::pending::<()>().await;
            }
            if call.is_multiple_of(3) {
                return Err(RewardError::fault(task.id(), "injected fault"));
            }
            Ok(completions
                .iter()
                .map(|c| Score {
                    value: Some((c.len() % 2) as f64),
                    verdict: Verdict::new(VerdictKind::Correct, "parity"),
                })
                .collect())
        })
    }
}

#[test]
fn failing_and_hanging_rewards_skip_groups_and_the_run_finishes() {
    let sets: Vec<String> = [
        "budget.steps=4",
        "checkpoint.every=0",
        "eval.every=4",
        "eval.problems=8",
        "rewards.fault_retries=1",
        "rewards.group_timeout_s=0.2",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let config = TrainConfig::resolve(Preset::Smoke, None, &sets).unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut dir = RunDir::create(out.path(), &config).unwrap();
    let mut trainer = Trainer::new(config).unwrap();
    let flaky = Flaky {
        calls: AtomicUsize::new(0),
    };
    trainer.set_scorer(
        Scorer::new(&ScoringConfig::default())
            .unwrap()
            .with_accuracy(Box::new(flaky)),
    );
    let summary = trainer.run(&mut dir, None, &mut |_| {}).unwrap();
    assert_eq!(summary.steps, 4);

    let steps = dir.steps().unwrap();
    assert_eq!(steps.len(), 4);
    let faulted: usize = steps.iter().map(|s| s.fault_groups).sum();
    assert!(faulted > 0, "some groups must have faulted on every try");
    let trained: usize = steps.iter().map(|s| s.groups).sum();
    assert!(trained > 0, "the other groups must still train");
    for s in &steps {
        assert!(s.loss.is_finite() && s.grad_norm.is_finite(), "{s:?}");
    }
    for (name, var) in trainer.policy().named_vars() {
        let values: Vec<f32> = var.as_tensor().flatten_all().unwrap().to_vec1().unwrap();
        assert!(
            values.iter().all(|v| v.is_finite()),
            "{name} has a non-finite weight"
        );
    }
    assert!(out.path().join("final/model.safetensors").exists());
}
