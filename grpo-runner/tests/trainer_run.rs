//! The smoke preset end to end: the run directory has every file, records parse, the final
//! model loads back, and a learning rate of 0 leaves the policy unchanged.

use grpo_runner::config::{Preset, TrainConfig};
use grpo_runner::report::RunDir;
use grpo_runner::trainer::Trainer;

#[test]
fn smoke_run_writes_the_run_directory() {
    let out = tempfile::tempdir().unwrap();
    let config = TrainConfig::resolve(Preset::Smoke, None, &[]).unwrap();
    let mut dir = RunDir::create(out.path(), &config).unwrap();
    let mut trainer = Trainer::new(config.clone()).unwrap();
    let mut events = 0usize;
    let summary = trainer.run(&mut dir, None, &mut |_| events += 1).unwrap();
    assert!(events > 0);
    assert_eq!(summary.steps, config.budget.steps);
    for name in [
        "config.toml",
        "provenance.json",
        "metrics.jsonl",
        "eval.jsonl",
        "samples.jsonl",
        "plot.png",
        "final/config.json",
        "final/model.safetensors",
        "final/tokenizer.json",
    ] {
        assert!(out.path().join(name).exists(), "{name} missing");
    }
    let saved = std::fs::read_to_string(out.path().join("config.toml")).unwrap();
    assert_eq!(TrainConfig::from_toml(&saved).unwrap(), config);
    let steps = dir.steps().unwrap();
    assert_eq!(steps.len() as u64, config.budget.steps);
    for (i, s) in steps.iter().enumerate() {
        assert_eq!(s.step, i as u64 + 1);
        assert!(s.reward_mean.is_finite() && s.completion_len_mean > 0.0);
        assert!((0.0..=1.0).contains(&s.zero_variance_group_fraction));
    }
    let evals = dir.evals().unwrap();
    assert_eq!(evals.first().unwrap().step, 0);
    assert_eq!(evals.last().unwrap().step, config.budget.steps);
    assert!(evals.iter().all(|e| e.problems == 200));
    let samples = std::fs::read_to_string(out.path().join("samples.jsonl")).unwrap();
    assert_eq!(
        samples.lines().count() as u64,
        config.budget.steps * config.checkpoint.samples_per_step as u64
    );
    let (model, _) = grpo_runner::loading::load(
        &out.path().join("final"),
        candle_core::DType::F32,
        &candle_core::Device::Cpu,
    )
    .unwrap();
    assert_eq!(model.num_parameters(), trainer.policy().num_parameters());
}

#[test]
fn zero_learning_rate_leaves_the_policy_unchanged() {
    let config = TrainConfig::resolve(
        Preset::Smoke,
        None,
        &["optimizer.lr=0".into(), "warmup.steps=0".into()],
    )
    .unwrap();
    let mut trainer = Trainer::new(config).unwrap();
    let before: Vec<Vec<f32>> = trainer
        .policy()
        .named_vars()
        .iter()
        .map(|(_, v)| v.as_tensor().flatten_all().unwrap().to_vec1().unwrap())
        .collect();
    for _ in 0..2 {
        trainer.step().unwrap();
    }
    let after: Vec<Vec<f32>> = trainer
        .policy()
        .named_vars()
        .iter()
        .map(|(_, v)| v.as_tensor().flatten_all().unwrap().to_vec1().unwrap())
        .collect();
    assert_eq!(before, after);
}

/// DAPO's dynamic sampling drops tied groups and samples more prompts to refill the batch.
#[test]
fn dynamic_sampling_refills_dropped_groups() {
    let sets = [
        "algorithm.name=dapo",
        "rewards.format_mode=\"tag_count\"",
        "rewards.format=1.0",
        "warmup.steps=0",
        "update.max_refill_rounds=3",
    ]
    .map(String::from);
    let config = TrainConfig::resolve(Preset::Smoke, None, &sets).unwrap();
    assert!(config.algorithm.shaping.filter_zero_variance_groups);
    let mut trainer = Trainer::new(config.clone()).unwrap();
    for _ in 0..3 {
        let (record, _) = trainer.step().unwrap();
        assert!(record.groups <= config.sampling.prompts_per_step);
        assert!(record.refill_rounds <= 3);
        // Every group the update used had reward variance, so a refill happened exactly when
        // some sampled group was tied and the batch was not yet full.
        if record.zero_variance_group_fraction == 0.0 {
            assert_eq!(record.refill_rounds, 0);
            assert_eq!(record.groups, config.sampling.prompts_per_step);
        }
    }
}
