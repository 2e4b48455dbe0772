//! The decoder's weights, layer by layer, and their random initialisation.

use std::collections::HashMap;
use std::convert::Infallible;
use std::result::Result as StdResult;

use candle_core::{DType, Tensor, Var};

use rand_distr::{Distribution, Normal};

use crate::error::{Error, Result};

use super::ModelConfig;
use super::lora::{Adapter, Projection};
use super::ops::linear;

/// One decoder layer's weights (tensors that are either the `Var`s or detached views of them).
#[derive(Debug, Clone)]
pub(super) struct Layer {
    pub(super) input_norm: Tensor,
    pub(super) q: Tensor,
    pub(super) k: Tensor,
    pub(super) v: Tensor,
    pub(super) o: Tensor,
    pub(super) q_bias: Option<Tensor>,
    pub(super) k_bias: Option<Tensor>,
    pub(super) v_bias: Option<Tensor>,
    pub(super) o_bias: Option<Tensor>,
    pub(super) post_norm: Tensor,
    pub(super) gate: Tensor,
    pub(super) up: Tensor,
    pub(super) down: Tensor,
    /// LoRA adapters, indexed by [`Projection::index`].
    pub(super) adapters: [Option<Adapter>; Projection::COUNT],
}

impl Layer {
    /// `x·Wᵀ + b` of projection `which`; through its LoRA adapter when the layer has one
    /// there, so a model without adapters runs the plain projection and no LoRA code.
    pub(super) fn project(&self, which: Projection, x: &Tensor) -> candle_core::Result<Tensor> {
        let (weight, bias) = match which {
            Projection::Q => (&self.q, self.q_bias.as_ref()),
            Projection::K => (&self.k, self.k_bias.as_ref()),
            Projection::V => (&self.v, self.v_bias.as_ref()),
            Projection::O => (&self.o, self.o_bias.as_ref()),
            Projection::Gate => (&self.gate, None),
            Projection::Up => (&self.up, None),
            Projection::Down => (&self.down, None),
        };
        match &self.adapters[which.index()] {
            None => linear(x, weight, bias),
            Some(adapter) => adapter.project(x, weight, bias),
        }
    }
}

/// All weights of the decoder.
#[derive(Debug, Clone)]
pub(super) struct Weights {
    pub(super) embed: Tensor,
    pub(super) layers: Vec<Layer>,
    pub(super) norm: Tensor,
    /// `None` when tied to `embed`.
    pub(super) lm_head: Option<Tensor>,
}

impl Weights {
    pub(super) fn from_vars(config: &ModelConfig, vars: &HashMap<String, Var>) -> Result<Self> {
        let get = |name: String| -> Result<Tensor> {
            vars.get(&name)
                .map(|v| v.as_tensor().clone())
                .ok_or(Error::MissingTensor {
                    path: "<memory>".into(),
                    name,
                })
        };
        let opt = |on: bool, name: String| -> Result<Option<Tensor>> {
            if on { get(name).map(Some) } else { Ok(None) }
        };
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for l in 0..config.num_hidden_layers {
            let p = format!("model.layers.{l}");
            let a = format!("{p}.self_attn");
            layers.push(Layer {
                input_norm: get(format!("{p}.input_layernorm.weight"))?,
                q: get(format!("{a}.q_proj.weight"))?,
                k: get(format!("{a}.k_proj.weight"))?,
                v: get(format!("{a}.v_proj.weight"))?,
                o: get(format!("{a}.o_proj.weight"))?,
                q_bias: opt(config.qkv_bias(), format!("{a}.q_proj.bias"))?,
                k_bias: opt(config.qkv_bias(), format!("{a}.k_proj.bias"))?,
                v_bias: opt(config.qkv_bias(), format!("{a}.v_proj.bias"))?,
                o_bias: opt(config.o_bias(), format!("{a}.o_proj.bias"))?,
                post_norm: get(format!("{p}.post_attention_layernorm.weight"))?,
                gate: get(format!("{p}.mlp.gate_proj.weight"))?,
                up: get(format!("{p}.mlp.up_proj.weight"))?,
                down: get(format!("{p}.mlp.down_proj.weight"))?,
                adapters: Default::default(),
            });
        }
        Ok(Weights {
            embed: get("model.embed_tokens.weight".into())?,
            layers,
            norm: get("model.norm.weight".into())?,
            lm_head: opt(!config.tie_word_embeddings, "lm_head.weight".into())?,
        })
    }

    /// The same weights detached from the autograd graph (views sharing storage).
    pub(super) fn detached(&self) -> Self {
        match self.map(|t| Ok::<_, Infallible>(t.detach())) {
            Ok(weights) => weights,
            Err(never) => match never {},
        }
    }

    /// The weights cast to `dtype` (differentiable: gradients flow back to the originals).
    pub(super) fn to_dtype(&self, dtype: DType) -> candle_core::Result<Self> {
        self.map(|t| t.to_dtype(dtype))
    }

    /// The dtype the weights are stored in.
    pub(super) fn dtype(&self) -> DType {
        self.embed.dtype()
    }

    /// Every weight through `f`.
    fn map<E>(&self, f: impl Fn(&Tensor) -> StdResult<Tensor, E>) -> StdResult<Self, E> {
        let of = |t: &Option<Tensor>| t.as_ref().map(&f).transpose();
        Ok(Weights {
            embed: f(&self.embed)?,
            layers: self
                .layers
                .iter()
                .map(|l| {
                    Ok(Layer {
                        input_norm: f(&l.input_norm)?,
                        q: f(&l.q)?,
                        k: f(&l.k)?,
                        v: f(&l.v)?,
                        o: f(&l.o)?,
                        q_bias: of(&l.q_bias)?,
                        k_bias: of(&l.k_bias)?,
                        v_bias: of(&l.v_bias)?,
                        o_bias: of(&l.o_bias)?,
                        post_norm: f(&l.post_norm)?,
                        gate: f(&l.gate)?,
                        up: f(&l.up)?,
                        down: f(&l.down)?,
                        adapters: {
                            let mut out: [Option<Adapter>; Projection::COUNT] = Default::default();
                            for (slot, a) in out.iter_mut().zip(&l.adapters) {
                                *slot = a.as_ref().map(|a| a.map(&f)).transpose()?;
                            }
                            out
                        },
                    })
                })
                .collect::<StdResult<_, E>>()?,
            norm: f(&self.norm)?,
            lm_head: of(&self.lm_head)?,
        })
    }
}

/// `n` samples of N(0, std²) (`rand_distr`'s ziggurat sampler).
pub(super) fn normal_samples(rng: &mut impl rand::Rng, n: usize, std: f32) -> Result<Vec<f32>> {
    let normal = Normal::new(0.0, std).map_err(|e| Error::invalid(format!("N(0, {std}²): {e}")))?;
    Ok(normal.sample_iter(rng).take(n).collect())
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn normal_samples_have_the_asked_moments() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let n = 200_000;
        let xs = normal_samples(&mut rng, n, 0.02).unwrap();
        assert_eq!(xs.len(), n);
        let mean = xs.iter().map(|&x| f64::from(x)).sum::<f64>() / n as f64;
        let var = xs
            .iter()
            .map(|&x| (f64::from(x) - mean).powi(2))
            .sum::<f64>()
            / n as f64;
        // The mean's standard error is 0.02 / √n ≈ 4.5e-5; allow five of them.
        assert!(mean.abs() < 2.3e-4, "{mean}");
        assert!((var.sqrt() / 0.02 - 1.0).abs() < 0.01, "{}", var.sqrt());
        // About 68.3% within one standard deviation.
        let within = xs.iter().filter(|x| x.abs() <= 0.02).count() as f64 / n as f64;
        assert!((within - 0.6827).abs() < 0.005, "{within}");
        assert!(normal_samples(&mut rng, 3, f32::NAN).is_err());
    }
}
