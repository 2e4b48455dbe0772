//! Resuming from a checkpoint continues exactly like an uninterrupted run (same thread count).

use grpo_runner::config::{Preset, TrainConfig};
use grpo_runner::metrics::StepRecord;
use grpo_runner::report::RunDir;
use grpo_runner::trainer::Trainer;

fn smoke(extra: &[&str]) -> TrainConfig {
    // Partial format credit gives a random policy reward variance, so the updates are real.
    let mut sets: Vec<String> = [
        "budget.steps=4",
        "checkpoint.every=2",
        "eval.every=2",
        "eval.problems=20",
        "rewards.format_mode=\"tag_count\"",
        "rewards.format=1.0",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    sets.extend(extra.iter().map(|s| s.to_string()));
    TrainConfig::resolve(Preset::Smoke, None, &sets).unwrap()
}

fn timeless(records: &[StepRecord]) -> Vec<StepRecord> {
    records.iter().map(StepRecord::without_timings).collect()
}

fn resume_matches(extra: &[&str]) {
    let whole = tempfile::tempdir().unwrap();
    let mut dir = RunDir::create(whole.path(), &smoke(extra)).unwrap();
    let mut trainer = Trainer::new(smoke(extra)).unwrap();
    let summary = trainer.run(&mut dir, None, &mut |_| {}).unwrap();
    assert_eq!(summary.steps, 4);
    let uninterrupted = dir.steps().unwrap();
    assert_eq!(uninterrupted.len(), 4);
    assert!(
        uninterrupted.iter().all(|s| s.grad_norm > 0.0),
        "updates must be non-trivial: {uninterrupted:?}"
    );

    let split = tempfile::tempdir().unwrap();
    let mut dir = RunDir::create(split.path(), &smoke(extra)).unwrap();
    let mut trainer = Trainer::new(smoke(extra)).unwrap();
    let first = trainer.run(&mut dir, Some(3), &mut |_| {}).unwrap();
    assert!(first.stopped_early);
    drop(trainer);
    // The run died after step 3; the last checkpoint holds step 2, so step 3 is redone.
    let mut resumed = Trainer::resume(split.path()).unwrap();
    assert_eq!(resumed.steps_taken(), 2);
    let mut dir = RunDir::reopen(split.path(), 2, &smoke(extra)).unwrap();
    resumed.run(&mut dir, None, &mut |_| {}).unwrap();
    let continued = dir.steps().unwrap();
    assert_eq!(timeless(&continued), timeless(&uninterrupted));
    let evals: Vec<u64> = dir.evals().unwrap().iter().map(|e| e.step).collect();
    assert_eq!(evals, [0, 2, 4]);
    assert!(
        split
            .path()
            .join("checkpoints/step-000000/model.safetensors")
            .exists()
    );
}

#[test]
fn resume_continues_identically() {
    resume_matches(&[]);
}

/// With β > 0 the frozen reference is checkpointed too, and μ = 2 with two minibatches
/// exercises the shuffled minibatch order.
#[test]
fn resume_continues_identically_with_reference_and_minibatches() {
    resume_matches(&[
        "algorithm.loss.beta=0.04",
        "update.iterations=2",
        "update.minibatches=2",
        "update.micro_batch_groups=1",
    ]);
}

/// In bf16 the checkpoint holds the f32 master weights, the frozen reference and the f32
/// moments; the resumed run casts them again and continues exactly.
#[test]
fn resume_continues_identically_in_bf16() {
    resume_matches(&["model.dtype=bf16", "algorithm.loss.beta=0.04"]);
}
