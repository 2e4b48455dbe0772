//! Devices and compute dtypes: the sampler's recorded log-probs agree with the trainer's
//! recomputed ones on every device this machine has and in every dtype; half-precision
//! forward passes send f32 gradients into the f32 master weights; a bf16 run keeps f32
//! weights and optimiser state and resumes exactly.

use candle_core::{DType, Device, Tensor};
use grpo_runner::config::{Preset, TrainConfig};
use grpo_runner::model::{Architecture, Model};
use grpo_runner::rollout::sampler::{SampleRequest, Sampled, SamplingConfig, sample};
use grpo_runner::run::dir::RunDir;
use grpo_runner::train::{Trainer, completion_logprobs};

use crate::common::{random_ids, random_tensors, small_config};

/// Every device this build and machine can run on: the CPU, and a GPU when there is one.
fn devices() -> Vec<Device> {
    let mut devices = vec![Device::Cpu];
    devices.extend(Device::new_cuda(0).ok());
    devices.extend(Device::new_metal(0).ok());
    devices
}

/// f32 master weights on `device`, forward passes in `dtype`.
fn model(device: &Device, dtype: DType) -> Model {
    let config = small_config(Architecture::Qwen2, 40, false);
    Model::from_tensors(&config, random_tensors(&config, 21), DType::F32, device)
        .unwrap()
        .with_compute_dtype(dtype)
        .unwrap()
}

fn prompts() -> Vec<Vec<u32>> {
    // Different lengths, so the sampler left-pads while the trainer right-pads.
    vec![
        random_ids(5, 40, 1),
        random_ids(2, 40, 2),
        random_ids(9, 40, 3),
    ]
}

/// The largest |recorded − recomputed| over every token of `group_size` completions per
/// prompt, sampled at `temperature`.
fn max_logprob_error(model: &Model, temperature: f64, seed: u64) -> f32 {
    let prompts = prompts();
    let group_size = 4;
    let config = SamplingConfig {
        temperature,
        max_new_tokens: 24,
        seed,
        ..Default::default()
    };
    let completions = sample(model, SampleRequest::new(&prompts, group_size, &config))
        .map(Sampled::completions)
        .unwrap();
    let mut worst = 0f32;
    for (p, group) in completions.chunks(group_size).enumerate() {
        let recomputed = completion_logprobs(model, &prompts[p], group, temperature).unwrap();
        for (c, again) in group.iter().zip(&recomputed) {
            assert_eq!(c.logprobs.len(), again.len());
            for (a, b) in c.logprobs.iter().zip(again) {
                assert!(a.is_finite() && b.is_finite());
                worst = worst.max((a - b).abs());
            }
        }
    }
    worst
}

/// The sampler (prefill, KV cache, one token per step, left padding, detached weights cast
/// once) and the trainer (one teacher-forced pass over right-padded rows, the `Var`s cast in
/// the graph) compute every dtype's log-probs along different paths; they must agree closely
/// enough that the GRPO ratio starts at 1 up to rounding.
///
/// Measured maxima over these 12 completions × 24 tokens at each of 2 temperatures, CPU
/// (candle 0.11.1): f32 3.2e-6; bf16 4.8e-7 (candle's CPU bf16 matmul widens to f32, so both
/// paths round the same f32 results); f16 7.6e-3 (its f16 kernels round differently for one
/// decode row than for a whole sequence). Tolerances per token, absolute: f32 1e-4; bf16
/// 5e-3 (about one bf16 ulp at 1); f16 3e-2 (4× the measured). Even f16's worst token moves
/// the GRPO ratio by under 1%, far inside the clip range, so the loss uses these log-probs
/// as they are (no separate f32 recomputation).
#[test]
fn sampler_and_trainer_logprobs_agree_on_every_device_and_dtype() {
    for device in devices() {
        for (dtype, tolerance) in [(DType::F32, 1e-4), (DType::BF16, 5e-3), (DType::F16, 3e-2)] {
            let model = model(&device, dtype);
            for (temperature, seed) in [(1.0, 5), (0.7, 6)] {
                let worst = max_logprob_error(&model, temperature, seed);
                eprintln!(
                    "{:?} {dtype:?} temperature {temperature}: max |recorded − recomputed| = {worst:e}",
                    device.location()
                );
                assert!(
                    worst <= tolerance,
                    "{:?} {dtype:?} temperature {temperature}: {worst} > {tolerance}",
                    device.location()
                );
            }
        }
    }
}

/// A half-precision forward pass stays close to the f32 one (it computes the same function).
#[test]
fn half_precision_logprobs_track_f32() {
    let f32_model = model(&Device::Cpu, DType::F32);
    let prompts = prompts();
    let config = SamplingConfig {
        max_new_tokens: 16,
        seed: 9,
        ..Default::default()
    };
    let completions = sample(&f32_model, SampleRequest::new(&prompts, 2, &config))
        .map(Sampled::completions)
        .unwrap();
    // Measured (max over 6 completions × 16 tokens, nats): bf16 4.5e-2, f16 1.2e-2.
    for (dtype, tolerance) in [(DType::BF16, 0.2), (DType::F16, 0.05)] {
        let half = model(&Device::Cpu, dtype);
        let mut worst = 0f32;
        for (p, group) in completions.chunks(2).enumerate() {
            let a = completion_logprobs(&f32_model, &prompts[p], group, 1.0).unwrap();
            let b = completion_logprobs(&half, &prompts[p], group, 1.0).unwrap();
            for (x, y) in a.iter().flatten().zip(b.iter().flatten()) {
                worst = worst.max((x - y).abs());
            }
        }
        eprintln!("{dtype:?} against f32: max |Δ log-prob| = {worst:e}");
        assert!(worst <= tolerance, "{dtype:?}: {worst}");
    }
}

/// `to_dtype` is differentiable: a bf16 or f16 forward pass gives every f32 `Var` an f32
/// gradient close to the f32 forward pass's.
#[test]
fn half_precision_gradients_reach_the_f32_master_weights() {
    let ids = Tensor::from_vec(random_ids(12, 40, 4), (1, 12), &Device::Cpu).unwrap();
    let targets = Tensor::from_vec(random_ids(12, 40, 5), (1, 12), &Device::Cpu).unwrap();
    let grads_of = |dtype: DType| {
        let m = model(&Device::Cpu, dtype);
        assert_eq!(m.dtype(), DType::F32);
        assert_eq!(m.compute_dtype(), dtype);
        let logits = m.forward(&ids, &[0], None).unwrap();
        assert_eq!(logits.dtype(), DType::F32, "logits come back in f32");
        let loss = grpo_core::token_logprobs(&logits, &targets)
            .unwrap()
            .mean_all()
            .unwrap()
            .neg()
            .unwrap();
        let grads = loss.backward().unwrap();
        m.named_vars()
            .into_iter()
            .map(|(name, var)| {
                let g = grads
                    .get(var.as_tensor())
                    .unwrap_or_else(|| panic!("{dtype:?}: no gradient for {name}"));
                assert_eq!(g.dtype(), DType::F32, "{name}");
                assert_eq!(var.dtype(), DType::F32, "{name}");
                (name, g.flatten_all().unwrap().to_vec1::<f32>().unwrap())
            })
            .collect::<Vec<_>>()
    };
    let reference = grads_of(DType::F32);
    for dtype in [DType::BF16, DType::F16] {
        for ((name, g), (_, r)) in grads_of(dtype).iter().zip(&reference) {
            let dot: f64 = g.iter().zip(r).map(|(a, b)| f64::from(a * b)).sum();
            let norm = |v: &[f32]| v.iter().map(|x| f64::from(x * x)).sum::<f64>().sqrt();
            let (ng, nr) = (norm(g), norm(r));
            assert!(
                ng > 0.0 && g.iter().all(|x| x.is_finite()),
                "{dtype:?} {name}"
            );
            // Same direction, same size, up to half-precision rounding.
            let cosine = dot / (ng * nr);
            assert!(cosine > 0.99, "{dtype:?} {name}: cosine {cosine}");
            assert!(
                (ng / nr - 1.0).abs() < 0.05,
                "{dtype:?} {name}: {ng} vs {nr}"
            );
        }
    }
}

fn smoke(extra: &[&str]) -> TrainConfig {
    let mut sets: Vec<String> = [
        "budget.steps=2",
        "checkpoint.every=2",
        "eval.every=2",
        "eval.problems=10",
        "rewards.format_mode=\"tag_count\"",
        "rewards.format=1.0",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    sets.extend(extra.iter().map(|s| s.to_string()));
    TrainConfig::resolve(Preset::Smoke, None, &sets).unwrap()
}

/// A bf16 run trains (non-zero updates), keeps its weights and AdamW moments in f32, and
/// checkpoints them as f32 on the host.
#[test]
fn a_bf16_run_keeps_f32_master_weights_and_checkpoints() {
    let config = smoke(&["model.dtype=bf16"]);
    let out = tempfile::tempdir().unwrap();
    let mut dir = RunDir::create(out.path(), &config).unwrap();
    let mut trainer = Trainer::new(config).unwrap();
    assert_eq!(trainer.policy().compute_dtype(), DType::BF16);
    let before: Vec<f32> = trainer.policy().vars()[0]
        .flatten_all()
        .unwrap()
        .to_vec1()
        .unwrap();
    trainer.run(&mut dir, None, &mut |_| {}).unwrap();
    let steps = dir.steps().unwrap();
    assert_eq!(steps.len(), 2);
    assert!(steps.iter().all(|s| s.grad_norm > 0.0), "{steps:?}");
    let policy = trainer.policy();
    assert!(policy.vars().iter().all(|v| v.dtype() == DType::F32));
    let after: Vec<f32> = policy.vars()[0].flatten_all().unwrap().to_vec1().unwrap();
    assert_ne!(before, after, "the f32 master weights moved");
    let ckpt = out.path().join("checkpoints/step-000002");
    for file in ["model.safetensors", "optimizer.safetensors"] {
        let tensors = candle_core::safetensors::load(ckpt.join(file), &Device::Cpu).unwrap();
        assert!(tensors.values().all(|t| t.dtype() == DType::F32), "{file}");
    }
    let resumed = Trainer::resume(out.path()).unwrap();
    assert_eq!(resumed.policy().compute_dtype(), DType::BF16);
    assert_eq!(resumed.policy().dtype(), DType::F32);
}

/// Asking for a GPU this build cannot use fails at setup, naming the setting and the feature.
#[test]
#[cfg(not(feature = "cuda"))]
fn a_cuda_run_without_the_feature_fails_at_setup() {
    let err = Trainer::new(smoke(&["model.device=cuda"]))
        .unwrap_err()
        .to_string();
    assert!(err.contains("model.device"), "{err}");
    assert!(err.contains("--features cuda"), "{err}");
}
