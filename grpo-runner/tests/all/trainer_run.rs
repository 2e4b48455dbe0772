//! The smoke preset end to end: the run directory has every file, records parse, the final
//! model loads back, and a learning rate of 0 leaves the policy unchanged.

use grpo_runner::config::{Preset, TrainConfig};
use grpo_runner::run::dir::RunDir;
use grpo_runner::train::Trainer;

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
    // Each step records its first completions, as many as the groups it trained on hold.
    let samples = std::fs::read_to_string(out.path().join("samples.jsonl")).unwrap();
    // Then, flagged `dropped`, as many of the groups dynamic sampling left out.
    let mut per_step = vec![(0usize, 0usize); steps.len()];
    for line in samples.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let counts = &mut per_step[v["step"].as_u64().unwrap() as usize - 1];
        if v["dropped"] == true {
            counts.1 += 1;
        } else {
            counts.0 += 1;
        }
    }
    for (s, (trained_lines, dropped_lines)) in steps.iter().zip(per_step) {
        let trained = s.groups * config.sampling.group_size;
        let limit = config.checkpoint.samples_per_step;
        assert_eq!(trained_lines, trained.min(limit), "step {}", s.step);
        assert!(dropped_lines <= limit, "step {}", s.step);
        if s.zero_variance_group_fraction == 0.0 {
            assert_eq!(dropped_lines, 0, "step {}", s.step);
        }
    }
    let (model, _) = grpo_runner::loading::load(
        &out.path().join("final"),
        candle_core::DType::F32,
        &candle_core::Device::Cpu,
    )
    .unwrap();
    assert_eq!(model.num_parameters(), trainer.policy().num_parameters());
}

/// Every weight of the policy, tensor by tensor.
fn weights(trainer: &Trainer) -> Vec<Vec<f32>> {
    trainer
        .policy()
        .named_vars()
        .iter()
        .map(|(_, v)| v.as_tensor().flatten_all().unwrap().to_vec1().unwrap())
        .collect()
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
    let before = weights(&trainer);
    for _ in 0..2 {
        trainer.step().unwrap();
    }
    assert_eq!(before, weights(&trainer));
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

/// A run whose groups are all dropped (every reward 0, so every group tied) still records
/// what it sampled, flagged as dropped, instead of an empty `samples.jsonl`.
#[test]
fn dropped_groups_are_recorded_as_dropped() {
    // Answers two new tokens cannot reach, and no format reward: every reward is 0.
    let pack = tempfile::tempdir().unwrap();
    let path = pack.path().join("far.jsonl");
    let tasks: String = (0..8)
        .map(|i| {
            format!(
                "{{\"id\":\"far-{i}\",\"kind\":\"math\",\"prompt\":\"{i}+1=?\",\"answer\":\"987654321{i}\"}}\n"
            )
        })
        .collect();
    std::fs::write(&path, tasks).unwrap();
    let sets = [
        "algorithm.name=dapo".to_owned(),
        format!("pack.source={:?}", path.display().to_string()),
        "rewards.accuracy=1.0".to_owned(),
        "rewards.format=0.0".to_owned(),
        "sampling.max_new_tokens=2".to_owned(),
        "warmup.steps=0".to_owned(),
        "update.max_refill_rounds=1".to_owned(),
        "pack.train_split=\"far\"".to_owned(),
        "pack.eval_split=\"far\"".to_owned(),
    ];
    let config = TrainConfig::resolve(Preset::Smoke, None, &sets).unwrap();
    assert!(config.algorithm.shaping.filter_zero_variance_groups);
    let mut trainer = Trainer::new(config.clone()).unwrap();
    let (record, samples) = trainer.step().unwrap();
    assert_eq!(record.groups, 0, "every group is tied at 0 and dropped");
    assert_eq!(samples.len(), config.checkpoint.samples_per_step);
    for s in &samples {
        assert!(s.dropped, "{s:?}");
        assert_eq!((s.reward, s.advantage), (0.0, 0.0));
    }
    let line = serde_json::to_value(&samples[0]).unwrap();
    assert_eq!(line["dropped"], true);
    // A trained completion's line has no `dropped` key (the format it always had).
    let (_, trained) = Trainer::new(TrainConfig::resolve(Preset::Smoke, None, &[]).unwrap())
        .unwrap()
        .step()
        .unwrap();
    let kept = trained
        .iter()
        .find(|s| !s.dropped)
        .expect("a trained completion");
    assert!(serde_json::to_value(kept).unwrap().get("dropped").is_none());
}

/// A sandbox fault is never a reward: after its retries the group is left out of the update
/// and counted, and the policy does not move.
#[test]
fn a_sandbox_fault_skips_the_group_and_is_counted() {
    let sets = [
        "pack.source=\"builtin:python\"",
        "sandbox.temp_dir=\"/nonexistent/grpo-fault-injection\"",
        "rewards.fault_retries=1",
        "warmup.steps=0",
    ]
    .map(String::from);
    let config = TrainConfig::resolve(Preset::Smoke, None, &sets).unwrap();
    let mut trainer = Trainer::new(config.clone()).unwrap();
    let before = weights(&trainer);
    let (record, samples) = trainer.step().unwrap();
    // Dynamic sampling (on in the smoke preset) samples again for the groups left out.
    assert_eq!(
        record.fault_groups,
        config.sampling.prompts_per_step * (1 + record.refill_rounds)
    );
    assert_eq!(record.groups, 0);
    assert!(record.verdicts.is_empty(), "{:?}", record.verdicts);
    assert!(samples.is_empty());
    assert_eq!(before, weights(&trainer));
    // Evaluation leaves faulted problems out and counts them.
    let eval = trainer.evaluate().unwrap();
    assert_eq!(eval.problems, 0);
    assert!(eval.faults > 0);
}

/// What the run config leaves out comes from the pack, and the resolved config says so.
#[test]
fn the_trainer_takes_template_and_weights_from_the_pack() {
    let mut config = TrainConfig::resolve(Preset::Smoke, None, &["warmup.steps=0".into()]).unwrap();
    config.pack.template = None;
    config.rewards.accuracy = None;
    config.rewards.format = None;
    let trainer = Trainer::new(config).unwrap();
    // builtin:arith-digits: template "compact", [rewards] accuracy 1.0, format 0.1.
    assert_eq!(
        trainer.config().pack.template,
        Some(grpo_tasks::Template::Compact)
    );
    assert_eq!(trainer.config().rewards.accuracy, Some(1.0));
    assert_eq!(trainer.config().rewards.format, Some(0.1));
    let text = trainer.config().to_toml().unwrap();
    assert!(text.contains("template = \"compact\""), "{text}");
}
