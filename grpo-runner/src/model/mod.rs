//! The trainable Qwen2/Llama decoder.
//!
//! candle-transformers' decoders use fused kernels (`rms_norm`, `softmax_last_dim`, `rope`)
//! that have no backward pass, so gradients silently stop at them. This decoder is built from
//! differentiable candle ops only — explicit RMSNorm, a softmax made of `exp`/`sum`, rotate-half
//! RoPE with `narrow`/`cat`, `Tensor::cat` for the KV cache — and keeps its weights as
//! [`candle_nn::Var`]s under the Hugging Face tensor names, so the same safetensors load into
//! it and into candle-transformers (which the tests use as the oracle for the logits).
//!
//! Batches are **left padded**: row `r` of a `[batch, seq]` input starts with `left_pad[r]`
//! padding tokens. Positions count from the first real token of each row, and attention masks
//! padding with a large *finite* negative ([`MASK_VALUE`]) so that a fully masked row (a
//! padding query) gives uniform attention and finite gradients instead of NaN.
//!
//! ```
//! # fn main() -> grpo_runner::Result<()> {
//! use candle_core::{DType, Device, Tensor};
//! use grpo_runner::model::{Model, ModelConfig};
//!
//! let config = ModelConfig::tiny(32);
//! let model = Model::random(&config, DType::F32, &Device::Cpu, 0)?;
//! let ids = Tensor::new(&[[1u32, 2, 3]], &Device::Cpu)?;
//! let logits = model.forward(&ids, &[0], None)?; // [1, 3, 32]
//! assert_eq!(logits.dims(), &[1, 3, 32]);
//! # Ok(())
//! # }
//! ```
//!
//! Files: `config.rs` (the shape of a decoder), `weights.rs` (the weights by layer and their
//! initialisation), `cache.rs` (the KV cache), `ops.rs` (the differentiable kernels); the
//! forward pass is here.

mod cache;
mod config;
mod ops;
mod weights;

use std::collections::HashMap;

use candle_core::{DType, Device, Tensor, Var};
use candle_nn::VarMap;
use rand::SeedableRng;

use crate::error::{Error, Result};

pub use cache::KvCache;
pub use config::{Architecture, ModelConfig};
use ops::{linear, repeat_kv, rms_norm, rope, rope_tables, softmax_last_dim};
use weights::{Layer, Weights, normal_samples};

/// The value added to attention scores of masked keys: large and negative, but finite, so a
/// query with every key masked still has a well-defined softmax and gradient.
pub const MASK_VALUE: f64 = -1e9;

/// The mask value for f16, whose range ends at 65504.
const MASK_VALUE_F16: f64 = -3e4;

/// A Qwen2/Llama decoder whose weights are trainable [`Var`]s under HF names.
///
/// Cloning is cheap and shares the weights.
#[derive(Clone)]
pub struct Model {
    config: ModelConfig,
    varmap: VarMap,
    weights: Weights,
    /// `[max_position_embeddings, head_dim / 2]`, model dtype.
    cos: Tensor,
    sin: Tensor,
    device: Device,
    dtype: DType,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("config", &self.config)
            .field("device", &self.device)
            .field("dtype", &self.dtype)
            .finish_non_exhaustive()
    }
}

impl Model {
    /// A model with freshly initialised weights: matrices and embeddings drawn from
    /// N(0, 0.02²) with a ChaCha generator seeded by `seed` (the same on every device),
    /// norms set to one and biases to zero.
    pub fn random(config: &ModelConfig, dtype: DType, device: &Device, seed: u64) -> Result<Self> {
        config.validate()?;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut tensors = HashMap::new();
        for (name, shape) in config.tensor_shapes() {
            let n: usize = shape.iter().product();
            let values: Vec<f32> = if name.ends_with("norm.weight") {
                vec![1.0; n]
            } else if name.ends_with(".bias") {
                vec![0.0; n]
            } else {
                normal_samples(&mut rng, n, 0.02)
            };
            tensors.insert(name, Tensor::from_vec(values, shape, &Device::Cpu)?);
        }
        Self::from_tensors(config, tensors, dtype, device)
    }

    /// A model from HF-named tensors (any dtype, any device); each becomes a fresh `Var` of
    /// `dtype` on `device`. Extra tensors are ignored; a missing or misshapen one is an error.
    pub fn from_tensors(
        config: &ModelConfig,
        mut tensors: HashMap<String, Tensor>,
        dtype: DType,
        device: &Device,
    ) -> Result<Self> {
        config.validate()?;
        let varmap = VarMap::new();
        {
            let mut data = varmap
                .data()
                .lock()
                .map_err(|_| Error::invalid("the variable map lock is poisoned"))?;
            for (name, shape) in config.tensor_shapes() {
                let tensor = tensors.remove(&name).ok_or_else(|| Error::MissingTensor {
                    path: "<memory>".into(),
                    name: name.clone(),
                })?;
                if tensor.dims() != shape.as_slice() {
                    return Err(Error::TensorShape {
                        path: "<memory>".into(),
                        name,
                        expected: shape,
                        found: tensor.dims().to_vec(),
                    });
                }
                let var = Var::from_tensor(&tensor.to_dtype(dtype)?.to_device(device)?)?;
                data.insert(name, var);
            }
        }
        let weights = {
            let data = varmap
                .data()
                .lock()
                .map_err(|_| Error::invalid("the variable map lock is poisoned"))?;
            Weights::from_vars(config, &data)?
        };
        let (cos, sin) = rope_tables(config, dtype, device)?;
        Ok(Model {
            config: config.clone(),
            varmap,
            weights,
            cos,
            sin,
            device: device.clone(),
            dtype,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// The device the weights live on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The weights' dtype.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The variable map holding every weight under its HF name (shared, not copied).
    pub fn varmap(&self) -> &VarMap {
        &self.varmap
    }

    /// Every trainable weight, sorted by HF name (a stable order for optimiser state).
    pub fn named_vars(&self) -> Vec<(String, Var)> {
        let mut vars: Vec<(String, Var)> = match self.varmap.data().lock() {
            Ok(data) => data.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            Err(poisoned) => poisoned
                .into_inner()
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        };
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        vars
    }

    /// Every trainable weight, in the order of [`Model::named_vars`].
    pub fn vars(&self) -> Vec<Var> {
        self.named_vars().into_iter().map(|(_, v)| v).collect()
    }

    /// Total number of parameters.
    pub fn num_parameters(&self) -> usize {
        self.config.num_parameters()
    }

    /// A view of this model whose weights are detached from the autograd graph but share
    /// storage with the `Var`s: it sees every optimiser update, copies nothing, and its
    /// forward pass records no graph (faster for sampling and reference log-probs).
    pub fn detached(&self) -> Model {
        Model {
            weights: self.weights.detached(),
            ..self.clone()
        }
    }

    /// A deep copy with its own storage (for a frozen reference policy).
    pub fn deep_copy(&self) -> Result<Model> {
        let tensors = self
            .named_vars()
            .into_iter()
            .map(|(name, var)| Ok((name, var.as_tensor().copy()?)))
            .collect::<Result<HashMap<_, _>>>()?;
        Self::from_tensors(&self.config, tensors, self.dtype, &self.device)
    }

    /// Logits for every position.
    ///
    /// # Shapes
    /// - `input_ids`: `[batch, seq]`, u32, left padded.
    /// - `left_pad`: `batch` entries, the number of padding tokens at the start of each row
    ///   (counting those already in `cache`).
    /// - returns `[batch, seq, vocab]` in the model dtype.
    ///
    /// With a cache, `input_ids` continues the cached sequences and is appended to the cache.
    pub fn forward(
        &self,
        input_ids: &Tensor,
        left_pad: &[usize],
        cache: Option<&mut KvCache>,
    ) -> Result<Tensor> {
        let hidden = self.forward_hidden(input_ids, left_pad, cache)?;
        self.logits(&hidden)
    }

    /// The final hidden states (after the last RMSNorm), `[batch, seq, hidden]`; see
    /// [`Model::forward`] for the arguments. Pair with [`Model::logits`] to project only the
    /// positions needed.
    pub fn forward_hidden(
        &self,
        input_ids: &Tensor,
        left_pad: &[usize],
        cache: Option<&mut KvCache>,
    ) -> Result<Tensor> {
        let (batch, seq) = input_ids.dims2()?;
        if left_pad.len() != batch {
            return Err(Error::invalid(format!(
                "{} left-padding counts for a batch of {batch}",
                left_pad.len()
            )));
        }
        if seq == 0 {
            return Err(Error::invalid("empty input"));
        }
        let mut cache = cache;
        let offset = cache.as_ref().map_or(0, |c| c.len);
        let total = offset + seq;
        if let Some(c) = cache.as_ref()
            && c.layers.len() != self.config.num_hidden_layers
        {
            return Err(Error::invalid("the KV cache was made for another model"));
        }
        let positions = self.positions(left_pad, offset, seq)?;
        if let Some(&max) = positions.iter().max()
            && max as usize >= self.config.max_position_embeddings
        {
            return Err(Error::invalid(format!(
                "position {max} is beyond max_position_embeddings {}",
                self.config.max_position_embeddings
            )));
        }
        let half = self.config.head_dim / 2;
        let pos = Tensor::from_vec(positions, batch * seq, &self.device)?;
        let cos = self
            .cos
            .index_select(&pos, 0)?
            .reshape((batch, 1, seq, half))?;
        let sin = self
            .sin
            .index_select(&pos, 0)?
            .reshape((batch, 1, seq, half))?;
        let mask = self.mask(left_pad, offset, seq)?;

        let ids = input_ids.flatten_all()?;
        let vocab = self.config.vocab_size as u32;
        if ids.max(0)?.to_scalar::<u32>()? >= vocab {
            return Err(Error::invalid(format!(
                "a token id is outside the vocabulary of {vocab}"
            )));
        }
        let mut x = self.weights.embed.index_select(&ids, 0)?.reshape((
            batch,
            seq,
            self.config.hidden_size,
        ))?;
        for (index, layer) in self.weights.layers.iter().enumerate() {
            let slot = cache.as_mut().map(|c| &mut c.layers[index]);
            x = self.layer(layer, &x, &cos, &sin, mask.as_ref(), slot)?;
        }
        if let Some(c) = cache.as_mut() {
            c.len = total;
        }
        Ok(rms_norm(&x, &self.weights.norm, self.config.rms_norm_eps)?)
    }

    /// Projects hidden states `[.., hidden]` to logits `[.., vocab]`.
    pub fn logits(&self, hidden: &Tensor) -> Result<Tensor> {
        let head = self.weights.lm_head.as_ref().unwrap_or(&self.weights.embed);
        Ok(linear(hidden, head, None)?)
    }

    /// Position ids for `seq` new columns after `offset` cached ones: the index from each
    /// row's first real token (padding gets 0).
    fn positions(&self, left_pad: &[usize], offset: usize, seq: usize) -> Result<Vec<u32>> {
        let mut out = Vec::with_capacity(left_pad.len() * seq);
        for &pad in left_pad {
            for j in 0..seq {
                let p = (offset + j).saturating_sub(pad);
                out.push(u32::try_from(p).map_err(|_| Error::invalid("position overflows u32"))?);
            }
        }
        Ok(out)
    }

    /// The additive attention mask `[batch, 1, seq, offset + seq]`: 0 where query `i` may see
    /// key `j` (`j <= i` and `j` is not padding), [`MASK_VALUE`] elsewhere. `None` when
    /// nothing is masked (one new token and no padding).
    fn mask(&self, left_pad: &[usize], offset: usize, seq: usize) -> Result<Option<Tensor>> {
        let total = offset + seq;
        if seq == 1 && left_pad.iter().all(|&p| p == 0) {
            return Ok(None);
        }
        let value = if self.dtype == DType::F16 {
            MASK_VALUE_F16
        } else {
            MASK_VALUE
        };
        let mut data = Vec::with_capacity(left_pad.len() * seq * total);
        for &pad in left_pad {
            for i in 0..seq {
                let query = offset + i;
                data.extend((0..total).map(|key| {
                    if key <= query && key >= pad {
                        0f32
                    } else {
                        value as f32
                    }
                }));
            }
        }
        let mask = Tensor::from_vec(data, (left_pad.len(), 1, seq, total), &self.device)?;
        Ok(Some(mask.to_dtype(self.dtype)?))
    }

    fn layer(
        &self,
        layer: &Layer,
        x: &Tensor,
        cos: &Tensor,
        sin: &Tensor,
        mask: Option<&Tensor>,
        cache: Option<&mut Option<(Tensor, Tensor)>>,
    ) -> Result<Tensor> {
        let c = &self.config;
        let (batch, seq, _) = x.dims3()?;
        let (heads, kv_heads, hd) = (c.num_attention_heads, c.num_key_value_heads, c.head_dim);

        let h = rms_norm(x, &layer.input_norm, c.rms_norm_eps)?;
        let q = linear(&h, &layer.q, layer.q_bias.as_ref())?
            .reshape((batch, seq, heads, hd))?
            .transpose(1, 2)?;
        let k = linear(&h, &layer.k, layer.k_bias.as_ref())?
            .reshape((batch, seq, kv_heads, hd))?
            .transpose(1, 2)?;
        let v = linear(&h, &layer.v, layer.v_bias.as_ref())?
            .reshape((batch, seq, kv_heads, hd))?
            .transpose(1, 2)?
            .contiguous()?;
        let q = rope(&q, cos, sin)?;
        let k = rope(&k, cos, sin)?;
        let (k, v) = match cache {
            None => (k, v),
            Some(slot) => {
                let (k, v) = match slot.as_ref() {
                    None => (k, v),
                    Some((pk, pv)) => (Tensor::cat(&[pk, &k], 2)?, Tensor::cat(&[pv, &v], 2)?),
                };
                *slot = Some((k.clone(), v.clone()));
                (k, v)
            }
        };
        let k = repeat_kv(&k, heads / kv_heads)?;
        let v = repeat_kv(&v, heads / kv_heads)?;
        let scores = (q.matmul(&k.t()?)? * (1.0 / (hd as f64).sqrt()))?;
        let scores = match mask {
            Some(m) => scores.broadcast_add(m)?,
            None => scores,
        };
        let attn = softmax_last_dim(&scores)?.matmul(&v)?;
        let attn = attn.transpose(1, 2)?.reshape((batch, seq, heads * hd))?;
        let x = (x + linear(&attn, &layer.o, layer.o_bias.as_ref())?)?;

        let h = rms_norm(&x, &layer.post_norm, c.rms_norm_eps)?;
        let gate = linear(&h, &layer.gate, None)?.silu()?;
        let up = linear(&h, &layer.up, None)?;
        let mlp = linear(&(gate * up)?, &layer.down, None)?;
        Ok((x + mlp)?)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn tiny_config_counts_parameters() {
        // embed 32·64 + 2 layers · (norm 64 + q 64·64 + k 32·64 + v 32·64 + o 64·64
        // + norm 64 + gate/up/down 3·128·64) + final norm 64, tied head.
        let per_layer = 64 + 64 * 64 + 32 * 64 * 2 + 64 * 64 + 64 + 3 * 128 * 64;
        assert_eq!(
            ModelConfig::tiny(32).num_parameters(),
            32 * 64 + 2 * per_layer + 64
        );
    }

    #[test]
    fn validate_rejects_bad_head_counts() {
        let mut c = ModelConfig::tiny(32);
        c.num_key_value_heads = 3;
        assert!(
            matches!(c.validate(), Err(Error::Config { field, .. }) if field == "num_key_value_heads")
        );
        let mut c = ModelConfig::tiny(32);
        c.eos_token_ids = vec![32];
        assert!(c.validate().is_err());
    }

    #[test]
    fn random_init_is_seeded() {
        let c = ModelConfig::tiny(16);
        let a = Model::random(&c, DType::F32, &Device::Cpu, 7).unwrap();
        let b = Model::random(&c, DType::F32, &Device::Cpu, 7).unwrap();
        let d = Model::random(&c, DType::F32, &Device::Cpu, 8).unwrap();
        let w = |m: &Model| {
            m.weights
                .embed
                .flatten_all()
                .unwrap()
                .to_vec1::<f32>()
                .unwrap()
        };
        assert_eq!(w(&a), w(&b));
        assert_ne!(w(&a), w(&d));
    }

    #[test]
    fn out_of_vocabulary_ids_are_rejected() {
        let m = Model::random(&ModelConfig::tiny(16), DType::F32, &Device::Cpu, 0).unwrap();
        let ids = Tensor::new(&[[3u32, 16]], &Device::Cpu).unwrap();
        assert!(matches!(
            m.forward(&ids, &[0], None),
            Err(Error::InvalidInput { .. })
        ));
    }

    #[test]
    fn softmax_of_fully_masked_row_is_uniform_and_finite() {
        let x = Tensor::new(
            &[[MASK_VALUE as f32, MASK_VALUE as f32, MASK_VALUE as f32]],
            &Device::Cpu,
        )
        .unwrap();
        let p = softmax_last_dim(&x).unwrap().to_vec2::<f32>().unwrap();
        for v in &p[0] {
            assert!((v - 1.0 / 3.0).abs() < 1e-6);
        }
    }
}
