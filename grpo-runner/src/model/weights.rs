//! The decoder's weights, layer by layer, and their random initialisation.

use std::collections::HashMap;

use candle_core::{Tensor, Var};

use crate::error::{Error, Result};

use super::ModelConfig;

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
            });
        }
        Ok(Weights {
            embed: get("model.embed_tokens.weight".into())?,
            layers,
            norm: get("model.norm.weight".into())?,
            lm_head: opt(!config.tie_word_embeddings, "lm_head.weight".into())?,
        })
    }

    pub(super) fn detached(&self) -> Self {
        let d = |t: &Tensor| t.detach();
        let od = |t: &Option<Tensor>| t.as_ref().map(Tensor::detach);
        Weights {
            embed: d(&self.embed),
            layers: self
                .layers
                .iter()
                .map(|l| Layer {
                    input_norm: d(&l.input_norm),
                    q: d(&l.q),
                    k: d(&l.k),
                    v: d(&l.v),
                    o: d(&l.o),
                    q_bias: od(&l.q_bias),
                    k_bias: od(&l.k_bias),
                    v_bias: od(&l.v_bias),
                    o_bias: od(&l.o_bias),
                    post_norm: d(&l.post_norm),
                    gate: d(&l.gate),
                    up: d(&l.up),
                    down: d(&l.down),
                })
                .collect(),
            norm: d(&self.norm),
            lm_head: od(&self.lm_head),
        }
    }
}

/// `n` samples of N(0, std²) by Box–Muller.
pub(super) fn normal_samples(rng: &mut impl rand::Rng, n: usize, std: f32) -> Vec<f32> {
    let mut out = Vec::with_capacity(n + 1);
    while out.len() < n {
        let u1: f64 = rng.r#gen::<f64>().max(f64::MIN_POSITIVE);
        let u2: f64 = rng.r#gen();
        let r = (-2.0 * u1.ln()).sqrt();
        let t = std::f64::consts::TAU * u2;
        out.push((r * t.cos()) as f32 * std);
        out.push((r * t.sin()) as f32 * std);
    }
    out.truncate(n);
    out
}
