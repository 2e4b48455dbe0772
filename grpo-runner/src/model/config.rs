//! The shape of a decoder: everything needed to allocate and run it.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The decoder families this module implements. They differ only in which projections carry
/// biases (Qwen2: q, k and v always; Llama: per `attention_bias`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Architecture {
    /// `LlamaForCausalLM` (also SmolLM2).
    Llama,
    /// `Qwen2ForCausalLM`.
    Qwen2,
}

/// The shape of a decoder: everything needed to allocate and run it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// Llama or Qwen2.
    pub architecture: Architecture,
    /// Number of token embeddings (rows of `embed_tokens`).
    pub vocab_size: usize,
    /// Width of the residual stream.
    pub hidden_size: usize,
    /// Width of the SwiGLU MLP.
    pub intermediate_size: usize,
    /// Number of decoder layers.
    pub num_hidden_layers: usize,
    /// Number of query heads.
    pub num_attention_heads: usize,
    /// Number of key/value heads (grouped-query attention when fewer than query heads).
    pub num_key_value_heads: usize,
    /// Width of one head; usually `hidden_size / num_attention_heads`.
    pub head_dim: usize,
    /// Epsilon inside RMSNorm's square root.
    pub rms_norm_eps: f64,
    /// RoPE base frequency.
    pub rope_theta: f64,
    /// Longest sequence (prompt + completion) the RoPE tables cover.
    pub max_position_embeddings: usize,
    /// Whether the output projection reuses the token embeddings.
    pub tie_word_embeddings: bool,
    /// Whether q/k/v (and, for Llama, o) projections have biases.
    pub attention_bias: bool,
    /// Beginning-of-sequence token, if the model uses one.
    pub bos_token_id: Option<u32>,
    /// Tokens that end a generation.
    pub eos_token_ids: Vec<u32>,
}

impl ModelConfig {
    /// A tiny Llama-style configuration (2 layers, width 64, 4 heads, 2 KV heads) for tests.
    pub fn tiny(vocab_size: usize) -> Self {
        ModelConfig {
            architecture: Architecture::Llama,
            vocab_size,
            hidden_size: 64,
            intermediate_size: 128,
            num_hidden_layers: 2,
            num_attention_heads: 4,
            num_key_value_heads: 2,
            head_dim: 16,
            rms_norm_eps: 1e-6,
            rope_theta: 10_000.0,
            max_position_embeddings: 512,
            tie_word_embeddings: true,
            attention_bias: false,
            bos_token_id: None,
            eos_token_ids: vec![0],
        }
    }

    /// Checks that the dimensions fit together.
    pub fn validate(&self) -> Result<()> {
        let bad = |field: &str, message: String| Error::Config {
            path: "<memory>".into(),
            field: field.to_string(),
            message,
        };
        let positive = [
            ("vocab_size", self.vocab_size),
            ("hidden_size", self.hidden_size),
            ("intermediate_size", self.intermediate_size),
            ("num_hidden_layers", self.num_hidden_layers),
            ("num_attention_heads", self.num_attention_heads),
            ("num_key_value_heads", self.num_key_value_heads),
            ("head_dim", self.head_dim),
            ("max_position_embeddings", self.max_position_embeddings),
        ];
        for (field, value) in positive {
            if value == 0 {
                return Err(bad(field, "must be positive".into()));
            }
        }
        if !self
            .num_attention_heads
            .is_multiple_of(self.num_key_value_heads)
        {
            return Err(bad(
                "num_key_value_heads",
                format!(
                    "{} query heads are not a multiple of {} key/value heads",
                    self.num_attention_heads, self.num_key_value_heads
                ),
            ));
        }
        if !self.head_dim.is_multiple_of(2) {
            return Err(bad(
                "head_dim",
                format!("{} is odd; RoPE needs pairs", self.head_dim),
            ));
        }
        if !(self.rms_norm_eps > 0.0 && self.rope_theta > 0.0) {
            return Err(bad(
                "rms_norm_eps",
                "eps and rope_theta must be positive".into(),
            ));
        }
        if let Some(bad_eos) = self
            .eos_token_ids
            .iter()
            .find(|&&t| t as usize >= self.vocab_size)
        {
            return Err(bad(
                "eos_token_ids",
                format!("{bad_eos} is outside the vocabulary"),
            ));
        }
        Ok(())
    }

    /// The HF names and shapes of every weight, in a stable order.
    pub fn tensor_shapes(&self) -> Vec<(String, Vec<usize>)> {
        let (h, i, hd) = (self.hidden_size, self.intermediate_size, self.head_dim);
        let (q, kv) = (self.num_attention_heads * hd, self.num_key_value_heads * hd);
        let mut out = vec![(
            "model.embed_tokens.weight".to_string(),
            vec![self.vocab_size, h],
        )];
        for l in 0..self.num_hidden_layers {
            let p = format!("model.layers.{l}");
            out.push((format!("{p}.input_layernorm.weight"), vec![h]));
            out.push((format!("{p}.self_attn.q_proj.weight"), vec![q, h]));
            out.push((format!("{p}.self_attn.k_proj.weight"), vec![kv, h]));
            out.push((format!("{p}.self_attn.v_proj.weight"), vec![kv, h]));
            out.push((format!("{p}.self_attn.o_proj.weight"), vec![h, q]));
            if self.qkv_bias() {
                out.push((format!("{p}.self_attn.q_proj.bias"), vec![q]));
                out.push((format!("{p}.self_attn.k_proj.bias"), vec![kv]));
                out.push((format!("{p}.self_attn.v_proj.bias"), vec![kv]));
            }
            if self.o_bias() {
                out.push((format!("{p}.self_attn.o_proj.bias"), vec![h]));
            }
            out.push((format!("{p}.post_attention_layernorm.weight"), vec![h]));
            out.push((format!("{p}.mlp.gate_proj.weight"), vec![i, h]));
            out.push((format!("{p}.mlp.up_proj.weight"), vec![i, h]));
            out.push((format!("{p}.mlp.down_proj.weight"), vec![h, i]));
        }
        out.push(("model.norm.weight".to_string(), vec![h]));
        if !self.tie_word_embeddings {
            out.push(("lm_head.weight".to_string(), vec![self.vocab_size, h]));
        }
        out
    }

    /// Total number of parameters.
    pub fn num_parameters(&self) -> usize {
        self.tensor_shapes()
            .iter()
            .map(|(_, s)| s.iter().product::<usize>())
            .sum()
    }

    pub(super) fn qkv_bias(&self) -> bool {
        self.architecture == Architecture::Qwen2 || self.attention_bias
    }

    pub(super) fn o_bias(&self) -> bool {
        self.architecture == Architecture::Llama && self.attention_bias
    }
}
