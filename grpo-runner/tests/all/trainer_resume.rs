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
    let mut dir = RunDir::reopen(split.path(), 2).unwrap();
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

/// A run killed during its warm-up has no checkpoint: `grpo train --resume` starts it over
/// from the saved config (with a warning) and ends where an uninterrupted run ends. A torn
/// record left by the kill is dropped.
#[test]
fn resume_before_the_first_checkpoint_starts_over() {
    let sets = [
        "--preset",
        "smoke",
        "--set",
        "budget.steps=2",
        "--set",
        "checkpoint.every=2",
        "--set",
        "threads=1",
        "--quiet",
    ];
    let whole = tempfile::tempdir().unwrap();
    let out = super::common::grpo()
        .args(["train", "--out"])
        .arg(whole.path())
        .args(sets)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // What a kill during the warm-up leaves: the config, no checkpoint, a torn record.
    let killed = tempfile::tempdir().unwrap();
    std::fs::copy(
        whole.path().join("config.toml"),
        killed.path().join("config.toml"),
    )
    .unwrap();
    std::fs::write(killed.path().join("eval.jsonl"), "{\"step\":0,\"accur").unwrap();
    let out = super::common::grpo()
        .args(["train", "--resume", "--quiet", "--out"])
        .arg(killed.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("starting it over"), "{stderr}");
    for name in ["eval.jsonl", "metrics.jsonl"] {
        let read = |dir: &std::path::Path| -> Vec<serde_json::Value> {
            std::fs::read_to_string(dir.join(name))
                .unwrap()
                .lines()
                .map(|l| {
                    let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                    if let Some(obj) = v.as_object_mut() {
                        obj.retain(|k, _| {
                            !(k.ends_with("_seconds")
                                || k.ends_with("per_second")
                                || k == "seconds"
                                || k == "score_fraction")
                        });
                    }
                    v
                })
                .collect()
        };
        assert_eq!(read(killed.path()), read(whole.path()), "{name}");
    }
    assert_eq!(
        std::fs::read(killed.path().join("final/model.safetensors")).unwrap(),
        std::fs::read(whole.path().join("final/model.safetensors")).unwrap()
    );
}
