//! Resolution, round trips and validation of the config.

use grpo_core::Algorithm;

use super::*;
use crate::schedule::ScheduleKind;

#[test]
fn presets_start_from_the_model_and_template_they_name() {
    let tiny = TrainConfig::preset(Preset::Tiny);
    assert_eq!(tiny.model.source, ModelSource::Tiny);
    assert_eq!(tiny.model_path(), None);
    assert_eq!(
        tiny.pack.template.map(|t| t.spec().to_owned()).as_deref(),
        Some("{prompt}\n")
    );
    let smollm2 = TrainConfig::preset(Preset::Smollm2);
    assert_eq!(
        smollm2.model_path(),
        Some("smollm2-135m-instruct.gguf".into())
    );
    // In TOML the source stays the plain string users write.
    assert!(
        smollm2
            .to_toml()
            .unwrap()
            .contains("source = \"smollm2-135m-instruct.gguf\"")
    );
}

#[test]
fn every_preset_validates_and_round_trips() {
    for preset in [Preset::Tiny, Preset::Smoke, Preset::Smollm2, Preset::Code] {
        let config = TrainConfig::preset(preset);
        config.validate().unwrap();
        let text = config.to_toml().unwrap();
        assert_eq!(TrainConfig::from_toml(&text).unwrap(), config, "{preset:?}");
    }
}

#[test]
fn overrides_apply_in_order_and_parse_toml_values() {
    let sets = [
        "sampling.group_size=4",
        "optimizer.lr=0",
        "pack.template=plain",
        "algorithm.loss.beta=0.04",
        "sampling.group_size=6",
        "schedule.kind=\"cosine\"",
        "warmup.problems=300",
    ]
    .map(String::from);
    let c = TrainConfig::resolve(Preset::Tiny, None, &sets).unwrap();
    assert_eq!(c.sampling.group_size, 6);
    assert_eq!(c.warmup.problems, 300);
    assert_eq!(c.optimizer.lr, 0.0);
    assert_eq!(c.pack.template, Some(grpo_tasks::Template::Plain));
    assert_eq!(c.algorithm.loss.beta, 0.04);
    assert_eq!(c.schedule.kind, ScheduleKind::Cosine);
}

#[test]
fn algorithm_name_resets_the_section_before_other_keys() {
    let sets = ["algorithm.name=dapo", "algorithm.loss.epsilon_high=0.3"].map(String::from);
    let c = TrainConfig::resolve(Preset::Tiny, None, &sets).unwrap();
    assert_eq!(c.algorithm.name, Algorithm::Dapo);
    assert!(c.algorithm.shaping.filter_zero_variance_groups);
    assert_eq!(c.algorithm.loss.reduction, grpo_core::LossReduction::Token);
    // Applied after the preset, within the same layer.
    assert_eq!(c.algorithm.loss.epsilon_high, 0.3);
    // Dr. GRPO's constant normaliser takes the configured completion length.
    let sets = ["sampling.max_new_tokens=64", "algorithm.name=dr_grpo"].map(String::from);
    let c = TrainConfig::resolve(Preset::Tiny, None, &sets).unwrap();
    assert_eq!(
        c.algorithm.loss.reduction,
        grpo_core::LossReduction::Constant { max_len: 64 }
    );
}

#[test]
fn a_file_layer_merges_over_the_preset() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.toml");
    std::fs::write(
        &path,
        "seed = 7\n[sampling]\ngroup_size = 3\n[budget]\nsteps = 9\n",
    )
    .unwrap();
    let c = TrainConfig::resolve(Preset::Smoke, Some(&path), &["budget.steps=11".into()]).unwrap();
    assert_eq!((c.seed, c.sampling.group_size, c.budget.steps), (7, 3, 11));
    // Untouched fields keep the preset's values.
    assert_eq!(
        c.sampling.prompts_per_step,
        TrainConfig::preset(Preset::Smoke).sampling.prompts_per_step
    );
    // The preset can be chosen by a layer.
    let c = TrainConfig::resolve(Preset::Tiny, None, &["preset=smoke".into()]).unwrap();
    assert_eq!(c.preset, Preset::Smoke);
}

#[test]
fn unknown_and_mistyped_keys_are_errors_naming_them() {
    for (set, needle) in [
        ("sampling.group_sise=4", "group_sise"),
        ("nonsense=1", "nonsense"),
        ("sampling.group_size=\"many\"", "group_size"),
        ("algorithm.name=ppo", "algorithm.name"),
        ("preset=huge", "huge"),
        ("no_equals_sign", "key=value"),
    ] {
        let err = TrainConfig::resolve(Preset::Tiny, None, &[set.into()])
            .unwrap_err()
            .to_string();
        assert!(err.contains(needle), "{set}: {err}");
    }
}

#[test]
fn validation_names_the_field() {
    for (set, field) in [
        ("sampling.group_size=1", "sampling.group_size"),
        ("sampling.temperature=0", "sampling.temperature"),
        ("sampling.top_p=1.5", "sampling.top_p"),
        ("optimizer.lr=-1", "optimizer.lr"),
        ("optimizer.beta2=1", "optimizer.beta2"),
        ("update.minibatches=0", "update.minibatches"),
        ("update.minibatches=99", "update.minibatches"),
        ("eval.every=0", "eval.every"),
        ("warmup.worked_fraction=1.5", "warmup.worked_fraction"),
        ("pack.template=\"no placeholder\"", "pack.template"),
        ("model.source=\"\"", "model.source"),
        ("model.tiny.num_attention_heads=3", "model.tiny.hidden_size"),
        ("algorithm.loss.epsilon_low=2", "algorithm"),
        ("rewards.format=nan", "rewards.format"),
    ] {
        let err = TrainConfig::resolve(Preset::Tiny, None, &[set.into()])
            .unwrap_err()
            .to_string();
        assert!(err.contains(field), "{set}: {err}");
    }
}
