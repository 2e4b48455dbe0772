//! Resuming from a checkpoint continues exactly like an uninterrupted run (same thread count).

use grpo_runner::config::{Preset, TrainConfig};
use grpo_runner::run::dir::RunDir;
use grpo_runner::run::records::StepRecord;
use grpo_runner::train::Trainer;

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

/// With LoRA, checkpoints hold the frozen base and the adapters (and the reference, β > 0):
/// resuming continues identically.
#[test]
fn resume_continues_identically_with_lora() {
    resume_matches(&[
        "lora.enabled=true",
        "lora.rank=4",
        "algorithm.loss.beta=0.04",
    ]);
}

/// A LoRA run trains the adapters only, and its final model is the adapters folded in,
/// with the adapter itself beside it in PEFT's layout.
#[test]
fn a_lora_run_keeps_its_base_and_saves_merged_weights_and_the_adapter() {
    use candle_core::Tensor;
    let config = smoke(&["lora.enabled=true", "lora.rank=4", "lora.alpha=8"]);
    let out = tempfile::tempdir().unwrap();
    let mut dir = RunDir::create(out.path(), &config).unwrap();
    let mut trainer = Trainer::new(config).unwrap();
    assert_eq!(trainer.policy().lora().map(|l| l.rank), Some(4));
    let base_before: Vec<Vec<f32>> = trainer
        .policy()
        .base_vars()
        .iter()
        .map(|(_, v)| v.as_tensor().flatten_all().unwrap().to_vec1().unwrap())
        .collect();
    trainer.run(&mut dir, None, &mut |_| {}).unwrap();
    let base_after: Vec<Vec<f32>> = trainer
        .policy()
        .base_vars()
        .iter()
        .map(|(_, v)| v.as_tensor().flatten_all().unwrap().to_vec1().unwrap())
        .collect();
    assert_eq!(base_before, base_after, "the base weights are frozen");

    let final_dir = out.path().join("final");
    // The adapter in its own directory: transformers would apply an adapter_config.json
    // next to the merged weights a second time.
    assert!(!final_dir.join("adapter_config.json").exists());
    let adapter: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(final_dir.join("adapter/adapter_config.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(adapter["peft_type"], "LORA");
    assert_eq!(adapter["base_model_name_or_path"], "tiny");
    assert!(final_dir.join("adapter/adapter_model.safetensors").exists());
    // The merged weights give the trained policy's logits.
    let (merged, _) = grpo_runner::loading::load_hf_dir(
        &final_dir,
        candle_core::DType::F32,
        &candle_core::Device::Cpu,
    )
    .unwrap();
    assert!(merged.lora().is_none());
    let ids = Tensor::new(&[[3u32, 4, 5, 6]], &candle_core::Device::Cpu).unwrap();
    let a = trainer.policy().forward(&ids, &[0], None).unwrap();
    let b = merged.forward(&ids, &[0], None).unwrap();
    let diff = (a - b)
        .unwrap()
        .abs()
        .unwrap()
        .max_all()
        .unwrap()
        .to_scalar::<f32>()
        .unwrap();
    assert!(diff < 1e-4, "merged logits differ by {diff}");
}
