//! The trainable Qwen2/Llama decoder.
//!
//! candle-transformers' decoders use fused kernels (`rms_norm`, `softmax_last_dim`, `rope`)
//! that have no backward pass, so gradients silently stop at them. This decoder's kernels have
//! a backward: on the CPU in f32, fused RMSNorm, RoPE and attention softmax with their
//! analytic gradients (`fused/`, checked against finite differences); on other devices and
//! dtypes, the same functions from differentiable candle ops (explicit RMSNorm, a softmax made
//! of `exp`/`sum`, rotate-half RoPE with `narrow`/`cat`); `Tensor::cat` for the KV cache. Grouped
//! query heads meet their key/value head without copies. It keeps its weights as
//! [`candle_nn::Var`]s under the Hugging Face tensor names, so the same safetensors load into
//! it and into candle-transformers (which the tests use as the oracle for the logits).
//!
//! Batches are **left padded**: row `r` of a `[batch, seq]` input starts with `left_pad[r]`
//! padding tokens. Positions count from the first real token of each row, and attention masks
//! padding with a large *finite* negative ([`MASK_VALUE`]) so that a fully masked row (a
//! padding query) gives uniform attention and finite gradients instead of NaN.
//!
//! **Dtypes.** The weights are stored in the dtype they were created with (f32 for training:
//! the *master weights*, which the optimiser updates) and the forward pass computes in the
//! *compute dtype* ([`Model::with_compute_dtype`], f32 unless set). When the two differ, every
//! forward pass first casts the weights to the compute dtype; the cast is differentiable, so
//! gradients flow back into the f32 `Var`s (and stay f32 for the optimiser). With a half
//! compute dtype (bf16, f16):
//!
//! - in the compute dtype: the embedding lookup, every matrix multiply (projections, MLP,
//!   attention scores and values, the LM head), RoPE, SiLU, the residual stream, the KV cache;
//! - in f32: RMSNorm's mean of squares and normalisation (then cast back and scaled by the
//!   norm weight), the attention softmax with its mask (the scores are cast up first), and the
//!   logits: [`Model::logits`] returns f32, so the log-softmax over the vocabulary (the
//!   sampler's recorded log-probs, the trainer's recomputed ones), the GRPO loss and the KL
//!   all run in f32 (f64 on the sampler's host side).
//!
//! candle 0.11.1's CPU backend runs all of this in bf16 and f16 (its bf16 matrix multiply
//! widens to f32 internally and rounds the result back to bf16), so every dtype works on
//! every device; on the CPU, half precision saves no time (see the README for measurements).
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
//! initialisation), `cache.rs` (the KV cache), `ops.rs` (the kernels, composed from candle
//! ops), `fused/` (the fused CPU kernels with their backward); the forward pass is here.

mod cache;
mod config;
mod fused;
pub mod lora;
mod ops;
mod weights;

use std::collections::HashMap;

use candle_core::{DType, Device, Tensor, Var};
use candle_nn::VarMap;
use rand::SeedableRng;

use crate::error::{Error, Result};

pub use cache::KvCache;
pub use config::{Architecture, ModelConfig};
use lora::{Adapters, Projection};
use ops::{attention_probs, linear, rms_norm, rope, rope_tables, swiglu};
use weights::{Layer, Weights, normal_samples};

/// The value added to attention scores of masked keys: large and negative, but finite, so a
/// query with every key masked still has a well-defined softmax and gradient.
pub const MASK_VALUE: f64 = -1e9;

/// A Qwen2/Llama decoder whose weights are trainable [`Var`]s under HF names.
///
/// Cloning is cheap and shares the weights.
#[derive(Clone)]
pub struct Model {
    config: ModelConfig,
    varmap: VarMap,
    /// The `Var`s, detached views of them, or (in a detached view of a model whose compute
    /// dtype differs) a snapshot already cast to the compute dtype.
    weights: Weights,
    /// `[max_position_embeddings, head_dim / 2]`, compute dtype.
    cos: Tensor,
    sin: Tensor,
    device: Device,
    /// The dtype of the `Var`s (the master weights).
    dtype: DType,
    /// The dtype forward passes compute in.
    compute: DType,
    /// LoRA adapters, when on: then the base weights are constants and these are the only
    /// trainable weights.
    adapters: Option<Adapters>,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("config", &self.config)
            .field("device", &self.device)
            .field("dtype", &self.dtype)
            .field("compute_dtype", &self.compute)
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
                normal_samples(&mut rng, n, 0.02)?
            };
            // Drawn on the host, so the same seed gives the same weights on every device;
            // `from_tensors` moves them to `device`.
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
            compute: dtype,
            adapters: None,
        })
    }

    /// The same model (sharing its weights) computing its forward passes in `dtype`: the
    /// weights stay in their own dtype and are cast once per forward pass (see the module
    /// docs for which parts run in which dtype). A float dtype: f32, f64, bf16 or f16.
    pub fn with_compute_dtype(self, dtype: DType) -> Result<Self> {
        if !matches!(dtype, DType::F32 | DType::F64 | DType::BF16 | DType::F16) {
            return Err(Error::invalid(format!(
                "compute dtype {dtype:?} is not a float dtype"
            )));
        }
        if dtype == self.compute {
            return Ok(self);
        }
        let (cos, sin) = rope_tables(&self.config, dtype, &self.device)?;
        Ok(Model {
            cos,
            sin,
            compute: dtype,
            ..self
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

    /// The weights' dtype (the `Var`s, which the optimiser updates).
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The dtype forward passes compute in (see the module docs).
    pub fn compute_dtype(&self) -> DType {
        self.compute
    }

    /// The variable map holding every weight under its HF name (shared, not copied).
    pub fn varmap(&self) -> &VarMap {
        &self.varmap
    }

    /// Every trainable weight, sorted by name (a stable order for optimiser state): the HF
    /// weights, or with LoRA on only the adapters (PEFT names).
    pub fn named_vars(&self) -> Vec<(String, Var)> {
        if let Some(adapters) = &self.adapters {
            return adapters
                .vars
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
        }
        self.base_vars()
    }

    /// The base weights by HF name, sorted (with LoRA on, frozen).
    pub fn base_vars(&self) -> Vec<(String, Var)> {
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

    /// A view of this model whose weights are detached from the autograd graph, for
    /// sampling and reference log-probs: its forward pass records no graph.
    ///
    /// When the compute dtype is the weights' dtype, the view shares storage with the `Var`s:
    /// it copies nothing and sees every optimiser update. Otherwise it holds the weights cast
    /// to the compute dtype once, here (so a decode loop does not cast them at every token):
    /// a snapshot that does not see later updates, so take a fresh view after one.
    pub fn detached(&self) -> Result<Model> {
        let weights = self.weights.detached();
        let weights = if weights.dtype() == self.compute {
            weights
        } else {
            weights.to_dtype(self.compute)?
        };
        Ok(Model {
            weights,
            ..self.clone()
        })
    }

    /// A deep copy with its own storage (for a frozen reference policy), adapters included.
    pub fn deep_copy(&self) -> Result<Model> {
        let copy = |vars: Vec<(String, Var)>| {
            vars.into_iter()
                .map(|(name, var)| Ok((name, var.as_tensor().copy()?)))
                .collect::<Result<HashMap<_, _>>>()
        };
        let model = Self::from_tensors(
            &self.config,
            copy(self.base_vars())?,
            self.dtype,
            &self.device,
        )?
        .with_compute_dtype(self.compute)?;
        match &self.adapters {
            None => Ok(model),
            Some(adapters) => model.with_adapters(&adapters.config, copy(self.named_vars())?),
        }
    }

    /// Logits for every position.
    ///
    /// # Shapes
    /// - `input_ids`: `[batch, seq]`, u32, left padded.
    /// - `left_pad`: `batch` entries, the number of padding tokens at the start of each row
    ///   (counting those already in `cache`).
    /// - returns `[batch, seq, vocab]`: f32 when the compute dtype is bf16 or f16, else the
    ///   compute dtype.
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
        let capacity = cache.as_ref().map_or(0, |c| c.capacity());
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
            .reshape((batch, seq, 1, half))?;
        let sin = self
            .sin
            .index_select(&pos, 0)?
            .reshape((batch, seq, 1, half))?;
        let mask = self.mask(left_pad, offset, seq)?;
        // The master weights cast to the compute dtype, once for the whole pass.
        let cast;
        let weights = if self.weights.dtype() == self.compute {
            &self.weights
        } else {
            cast = self.weights.to_dtype(self.compute)?;
            &cast
        };

        let ids = input_ids.flatten_all()?;
        let vocab = self.config.vocab_size as u32;
        if ids.max(0)?.to_scalar::<u32>()? >= vocab {
            return Err(Error::invalid(format!(
                "a token id is outside the vocabulary of {vocab}"
            )));
        }
        let mut x =
            weights
                .embed
                .index_select(&ids, 0)?
                .reshape((batch, seq, self.config.hidden_size))?;
        for (index, layer) in weights.layers.iter().enumerate() {
            let slot = cache.as_mut().map(|c| cache::LayerCache {
                slot: &mut c.layers[index],
                capacity,
                offset,
            });
            x = self.layer(layer, &x, &cos, &sin, mask.as_ref(), slot)?;
        }
        if let Some(c) = cache.as_mut() {
            c.len = total;
        }
        Ok(rms_norm(&x, &weights.norm, self.config.rms_norm_eps)?)
    }

    /// Projects hidden states `[.., hidden]` (compute dtype) to logits `[.., vocab]`: the
    /// multiply runs in the compute dtype, and with bf16 or f16 the logits are returned in
    /// f32, so every log-softmax over the vocabulary runs in f32.
    pub fn logits(&self, hidden: &Tensor) -> Result<Tensor> {
        let head = self.weights.lm_head.as_ref().unwrap_or(&self.weights.embed);
        if head.dtype() == self.compute && !is_half(self.compute) {
            return Ok(linear(hidden, head, None)?);
        }
        let head = head.to_dtype(self.compute)?;
        Ok(linear(hidden, &head, None)?.to_dtype(self.attention_dtype())?)
    }

    /// The dtype of the attention softmax and of the logits: f32 for a half compute dtype,
    /// else the compute dtype.
    fn attention_dtype(&self) -> DType {
        if is_half(self.compute) {
            DType::F32
        } else {
            self.compute
        }
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
        let value = MASK_VALUE;
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
        Ok(Some(mask.to_dtype(self.attention_dtype())?))
    }

    fn layer(
        &self,
        layer: &Layer,
        x: &Tensor,
        cos: &Tensor,
        sin: &Tensor,
        mask: Option<&Tensor>,
        cache: Option<cache::LayerCache<'_>>,
    ) -> Result<Tensor> {
        let c = &self.config;
        let (batch, seq, _) = x.dims3()?;
        let (heads, kv_heads, hd) = (c.num_attention_heads, c.num_key_value_heads, c.head_dim);

        let h = rms_norm(x, &layer.input_norm, c.rms_norm_eps)?;
        // RoPE on `[batch, seq, heads, head_dim]`, then the heads forward.
        let q = layer
            .project(Projection::Q, &h)?
            .reshape((batch, seq, heads, hd))?;
        let q = rope(&q, cos, sin)?.transpose(1, 2)?.contiguous()?;
        let k = layer
            .project(Projection::K, &h)?
            .reshape((batch, seq, kv_heads, hd))?;
        let k = rope(&k, cos, sin)?.transpose(1, 2)?.contiguous()?;
        let v = layer
            .project(Projection::V, &h)?
            .reshape((batch, seq, kv_heads, hd))?
            .transpose(1, 2)?
            .contiguous()?;
        let (k, v) = match cache {
            None => (k, v),
            Some(layer_cache) => cache::append(layer_cache, k, v)?,
        };
        // Grouped-query attention without copying keys and values per query head: the
        // `group` query heads of one key/value head are consecutive, so the queries as
        // `[batch, kv_heads, group · seq, head_dim]` meet the keys `[batch, kv_heads, keys,
        // head_dim]` directly.
        let group = heads / kv_heads;
        let keys = k.dim(2)?;
        let scores = q
            .reshape((batch, kv_heads, group * seq, hd))?
            .matmul(&k.t()?)?
            .reshape((batch, heads, seq, keys))?;
        // Half precision: the mask and the softmax in f32, the probabilities cast back.
        let scale = 1.0 / (hd as f64).sqrt();
        let probs = attention_probs(&scores, scale, mask, self.attention_dtype())?
            .to_dtype(self.compute)?
            .reshape((batch, kv_heads, group * seq, keys))?;
        let attn = probs
            .matmul(&v)?
            .reshape((batch, heads, seq, hd))?
            .transpose(1, 2)?
            .reshape((batch, seq, heads * hd))?;
        let x = (x + layer.project(Projection::O, &attn)?)?;

        let h = rms_norm(&x, &layer.post_norm, c.rms_norm_eps)?;
        let gate = layer.project(Projection::Gate, &h)?;
        let up = layer.project(Projection::Up, &h)?;
        let mlp = layer.project(Projection::Down, &swiglu(&gate, &up)?)?;
        Ok((x + mlp)?)
    }
}

/// Whether `dtype` is a 16-bit float.
fn is_half(dtype: DType) -> bool {
    matches!(dtype, DType::BF16 | DType::F16)
}

#[cfg(test)]
mod tests {
    use super::ops::softmax_last_dim;
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
