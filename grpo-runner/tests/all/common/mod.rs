//! Helpers shared by the model and sampler tests: small configurations and random weights
//! with non-trivial norms and biases (so the tests exercise every parameter).

#![allow(
    dead_code,
    reason = "each test module uses its own subset of the helpers"
)]

use std::collections::HashMap;

use candle_core::{DType, Device, Tensor};
use grpo_runner::model::{Architecture, Model, ModelConfig};
use rand::{Rng, SeedableRng};

/// A small config of the given architecture: 2 layers, width 32, 4 query heads, 2 KV heads.
pub fn small_config(architecture: Architecture, vocab: usize, tied: bool) -> ModelConfig {
    ModelConfig {
        architecture,
        vocab_size: vocab,
        hidden_size: 32,
        intermediate_size: 48,
        num_hidden_layers: 2,
        num_attention_heads: 4,
        num_key_value_heads: 2,
        head_dim: 8,
        rms_norm_eps: 1e-6,
        rope_theta: 10_000.0,
        max_position_embeddings: 64,
        tie_word_embeddings: tied,
        attention_bias: false,
        bos_token_id: None,
        eos_token_ids: vec![0],
    }
}

/// Random HF-named tensors for `config`: weights uniform in ±0.3, norms in 1 ± 0.2, biases
/// in ±0.1 (so a wrong bias or norm shows up in the logits).
pub fn random_tensors(config: &ModelConfig, seed: u64) -> HashMap<String, Tensor> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    config
        .tensor_shapes()
        .into_iter()
        .map(|(name, shape)| {
            let n: usize = shape.iter().product();
            let values: Vec<f32> = (0..n)
                .map(|_| {
                    let u: f32 = rng.gen_range(-1.0..1.0);
                    if name.ends_with("norm.weight") {
                        1.0 + 0.2 * u
                    } else if name.ends_with(".bias") {
                        0.1 * u
                    } else {
                        0.3 * u
                    }
                })
                .collect();
            let t = Tensor::from_vec(values, shape, &Device::Cpu).unwrap();
            (name, t)
        })
        .collect()
}

/// A model over `random_tensors`.
pub fn random_model(config: &ModelConfig, seed: u64, dtype: DType) -> Model {
    Model::from_tensors(config, random_tensors(config, seed), dtype, &Device::Cpu).unwrap()
}

/// Largest absolute difference between two tensors of the same shape.
pub fn max_abs_diff(a: &Tensor, b: &Tensor) -> f64 {
    assert_eq!(a.dims(), b.dims());
    let a = a
        .to_dtype(DType::F64)
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1::<f64>()
        .unwrap();
    let b = b
        .to_dtype(DType::F64)
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1::<f64>()
        .unwrap();
    a.iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// Token ids `[1, len]` drawn from `1..vocab` with a fixed seed.
pub fn random_ids(len: usize, vocab: usize, seed: u64) -> Vec<u32> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..len).map(|_| rng.gen_range(1..vocab as u32)).collect()
}
