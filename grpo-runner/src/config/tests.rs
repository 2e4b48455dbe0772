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
    for preset in [
        Preset::Tiny,
        Preset::Smoke,
        Preset::Smollm2,
        Preset::Smollm2Lora,
        Preset::Code,
        Preset::Tools,
    ] {
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

#[test]
fn conventions_set_the_grpo_core_options_and_round_trip() {
    use grpo_core::{Conventions, GroupOfOne, StatsPrecision, StdEstimator};
    let c =
        TrainConfig::resolve(Preset::Tiny, None, &["algorithm.conventions=verl".into()]).unwrap();
    assert_eq!(c.algorithm.conventions, Conventions::Verl);
    let a = &c.algorithm.advantage;
    assert_eq!(a.std_estimator, StdEstimator::Unbiased);
    assert_eq!(a.epsilon, 1e-6);
    assert_eq!(a.precision, StatsPrecision::F32);
    assert_eq!(a.group_of_one, GroupOfOne::RawScore);
    assert_eq!(c.algorithm.loss.log_ratio_clamp, Some(20.0));
    assert_eq!(c.algorithm.loss.sequence_log_ratio_clamp, Some(10.0));
    // The preset's own choices stay (the tiny run has β = 0 and dynamic sampling).
    let tiny = TrainConfig::preset(Preset::Tiny);
    assert_eq!(c.algorithm.loss.beta, tiny.algorithm.loss.beta);
    assert_eq!(c.algorithm.loss.reduction, tiny.algorithm.loss.reduction);
    assert_eq!(c.algorithm.shaping, tiny.algorithm.shaping);
    // The resolved values are in config.toml, and load back to the same config.
    let text = c.to_toml().unwrap();
    assert!(text.contains("conventions = \"verl\""), "{text}");
    assert!(text.contains("std_estimator = \"unbiased\""), "{text}");
    assert!(text.contains("log_ratio_clamp = 20.0"), "{text}");
    assert_eq!(TrainConfig::from_toml(&text).unwrap(), c);

    let trl =
        TrainConfig::resolve(Preset::Tiny, None, &["algorithm.conventions=trl".into()]).unwrap();
    assert_eq!(trl.algorithm.advantage.epsilon, 1e-4);
    assert_eq!(trl.algorithm.advantage.group_of_one, GroupOfOne::Reject);
    assert_eq!(trl.algorithm.loss.log_ratio_clamp, None);

    // Our defaults are unchanged, and `grpo-rs` names them.
    assert_eq!(tiny.algorithm.conventions, Conventions::GrpoRs);
    let ours = TrainConfig::resolve(
        Preset::Tiny,
        None,
        &["algorithm.conventions=grpo-rs".into()],
    )
    .unwrap();
    assert_eq!(ours, tiny);
    assert!(
        tiny.to_toml()
            .unwrap()
            .contains("conventions = \"grpo-rs\"")
    );
}

#[test]
fn conventions_survive_a_later_algorithm_name_and_yield_to_explicit_keys() {
    use grpo_core::{Algorithm, Conventions};
    let sets = [
        "algorithm.conventions=verl",
        "algorithm.name=gspo",
        "algorithm.advantage.epsilon=1e-5",
    ]
    .map(String::from);
    let c = TrainConfig::resolve(Preset::Tiny, None, &sets).unwrap();
    assert_eq!(c.algorithm.name, Algorithm::Gspo);
    assert_eq!(c.algorithm.conventions, Conventions::Verl);
    assert_eq!(c.algorithm.loss.sequence_log_ratio_clamp, Some(10.0));
    assert_eq!(c.algorithm.advantage.epsilon, 1e-5);
    // Within one file, conventions apply before the file's own algorithm keys.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.toml");
    std::fs::write(
        &path,
        "[algorithm]\nname = \"dapo\"\nconventions = \"trl\"\n[algorithm.advantage]\nepsilon = 0.001\n",
    )
    .unwrap();
    let c = TrainConfig::resolve(Preset::Tiny, Some(&path), &[]).unwrap();
    assert_eq!(c.algorithm.name, Algorithm::Dapo);
    assert_eq!(c.algorithm.conventions, Conventions::Trl);
    assert_eq!(c.algorithm.advantage.epsilon, 0.001);
    assert_eq!(
        c.algorithm.advantage.std_estimator,
        grpo_core::StdEstimator::Unbiased
    );
}

#[test]
fn unknown_conventions_are_errors_naming_the_field() {
    for set in ["algorithm.conventions=pytorch", "algorithm.conventions=3"] {
        let err = TrainConfig::resolve(Preset::Tiny, None, &[set.into()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("algorithm.conventions"), "{set}: {err}");
        assert!(err.contains("verl"), "{set}: {err}");
    }
    // In a saved config too.
    let text = TrainConfig::preset(Preset::Tiny)
        .to_toml()
        .unwrap()
        .replace("conventions = \"grpo-rs\"", "conventions = \"pytorch\"");
    let err = TrainConfig::from_toml(&text).unwrap_err().to_string();
    assert!(
        err.contains("conventions") && err.contains("pytorch"),
        "{err}"
    );
}

#[test]
fn a_group_of_one_needs_raw_scores_and_no_dynamic_sampling() {
    let ok = [
        "algorithm.conventions=verl",
        "algorithm.shaping.filter_zero_variance_groups=false",
        "sampling.group_size=1",
    ]
    .map(String::from);
    let c = TrainConfig::resolve(Preset::Tiny, None, &ok).unwrap();
    assert_eq!(c.sampling.group_size, 1);
    for sets in [
        // Our default: an error, as before.
        &["sampling.group_size=1"][..],
        // The tiny preset's dynamic sampling would drop every group of one.
        &["algorithm.conventions=verl", "sampling.group_size=1"][..],
        &[
            "algorithm.conventions=trl",
            "algorithm.shaping.filter_zero_variance_groups=false",
            "sampling.group_size=1",
        ][..],
    ] {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let err = TrainConfig::resolve(Preset::Tiny, None, &sets)
            .unwrap_err()
            .to_string();
        assert!(err.contains("sampling.group_size"), "{sets:?}: {err}");
    }
}

#[test]
fn device_and_dtype_default_to_cpu_f32_and_take_overrides() {
    use crate::device::{ComputeDtype, DeviceSpec};
    let c = TrainConfig::resolve(Preset::Smoke, None, &[]).unwrap();
    assert_eq!(c.model.device, DeviceSpec::Cpu);
    assert_eq!(c.model.dtype, ComputeDtype::F32);
    let sets = ["model.device=cuda:1", "model.dtype=bf16"].map(String::from);
    let c = TrainConfig::resolve(Preset::Smoke, None, &sets).unwrap();
    assert_eq!(c.model.device, DeviceSpec::Cuda(1));
    assert_eq!(c.model.dtype, ComputeDtype::Bf16);
    // Written back as users write them, and read back to the same value.
    let text = c.to_toml().unwrap();
    assert!(text.contains("device = \"cuda:1\""), "{text}");
    assert!(text.contains("dtype = \"bf16\""), "{text}");
    assert_eq!(TrainConfig::from_toml(&text).unwrap(), c);
    let c = TrainConfig::resolve(Preset::Smoke, None, &["model.device=cuda".into()]).unwrap();
    assert_eq!(c.model.device, DeviceSpec::Cuda(0));
    // A config.toml written before the two settings existed still loads, as cpu and f32.
    let old = TrainConfig::preset(Preset::Smoke)
        .to_toml()
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("device =") && !l.starts_with("dtype ="))
        .collect::<Vec<_>>()
        .join("\n");
    let c = TrainConfig::from_toml(&old).unwrap();
    assert_eq!(
        (c.model.device, c.model.dtype),
        (DeviceSpec::Cpu, ComputeDtype::F32)
    );
}

#[test]
fn bad_devices_and_dtypes_are_errors_naming_the_field() {
    for (set, field, shown) in [
        ("model.device=gpu", "model.device", "`gpu`"),
        ("model.device=cuda:x", "model.device", "`cuda:x`"),
        ("model.dtype=f64", "model.dtype", "`f64`"),
        ("model.dtype=fp16", "model.dtype", "`fp16`"),
    ] {
        let err = TrainConfig::resolve(Preset::Smoke, None, &[set.into()])
            .unwrap_err()
            .to_string();
        assert!(err.contains(field) && err.contains(shown), "{set}: {err}");
    }
}
