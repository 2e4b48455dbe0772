//! The tiny-model factory: a randomly initialised decoder and a character-level tokenizer
//! trained in-process on a vocabulary text, for tests and the default CPU training preset.
//!
//! ```
//! # fn main() -> grpo_runner::Result<()> {
//! use candle_core::Device;
//! use grpo_runner::tiny::{TinyModelSpec, tiny_model};
//!
//! let spec = TinyModelSpec { hidden_size: 32, num_hidden_layers: 1, ..Default::default() };
//! let (model, tokenizer) = tiny_model(&spec, "0123456789+= ", &Device::Cpu)?;
//! assert_eq!(model.config().vocab_size, tokenizer.vocab_size());
//! # Ok(())
//! # }
//! ```

use candle_core::{DType, Device};
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::model::{Architecture, Model, ModelConfig};
use crate::tokenizer::Tokenizer;

/// The dimensions of a tiny model. The default (width 256, 4 layers, 4 heads, MLP 768) has
/// about 3.2 M parameters with a character vocabulary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TinyModelSpec {
    /// Width of the residual stream.
    pub hidden_size: usize,
    /// Number of decoder layers.
    pub num_hidden_layers: usize,
    /// Number of query heads (the head width is `hidden_size / num_attention_heads`).
    pub num_attention_heads: usize,
    /// Number of key/value heads.
    pub num_key_value_heads: usize,
    /// Width of the MLP.
    pub intermediate_size: usize,
    /// Longest prompt + completion.
    pub max_position_embeddings: usize,
    /// Seed of the weight initialisation.
    pub seed: u64,
    /// Weight dtype (`F32` for training on CPU, `F64` for gradient checks).
    #[serde(skip, default = "default_dtype")]
    pub dtype: DType,
}

fn default_dtype() -> DType {
    DType::F32
}

impl Default for TinyModelSpec {
    fn default() -> Self {
        TinyModelSpec {
            hidden_size: 256,
            num_hidden_layers: 4,
            num_attention_heads: 4,
            num_key_value_heads: 4,
            intermediate_size: 768,
            max_position_embeddings: 1024,
            seed: 0,
            dtype: DType::F32,
        }
    }
}

impl TinyModelSpec {
    /// The model configuration for a vocabulary of `vocab_size` tokens whose EOS id is
    /// `eos_token_id`.
    pub fn config(&self, vocab_size: usize, eos_token_id: u32) -> ModelConfig {
        ModelConfig {
            architecture: Architecture::Llama,
            vocab_size,
            hidden_size: self.hidden_size,
            intermediate_size: self.intermediate_size,
            num_hidden_layers: self.num_hidden_layers,
            num_attention_heads: self.num_attention_heads,
            num_key_value_heads: self.num_key_value_heads,
            head_dim: self.hidden_size / self.num_attention_heads.max(1),
            rms_norm_eps: 1e-6,
            rope_theta: 10_000.0,
            max_position_embeddings: self.max_position_embeddings,
            tie_word_embeddings: true,
            attention_bias: false,
            bos_token_id: None,
            eos_token_ids: vec![eos_token_id],
        }
    }
}

/// A tiny model and its tokenizer: the tokenizer is trained on `vocab_text` (every character
/// that occurs in it becomes a token; see [`Tokenizer::train_chars`]) and the model is
/// initialised randomly with `spec.seed`.
pub fn tiny_model(
    spec: &TinyModelSpec,
    vocab_text: &str,
    device: &Device,
) -> Result<(Model, Tokenizer)> {
    let tokenizer = Tokenizer::train_chars(vocab_text)?;
    let eos = tokenizer.eos_id()?;
    let config = spec.config(tokenizer.vocab_size(), eos);
    let model = Model::random(&config, spec.dtype, device, spec.seed)?;
    tracing::info!(
        parameters = model.num_parameters(),
        vocab = config.vocab_size,
        "tiny model ready"
    );
    Ok((model, tokenizer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_spec_is_a_few_million_parameters() {
        // 4 layers × (4·256² attention + 3·256·768 MLP + 2·256 norms) + 40·256 embedding + 256.
        let config = TinyModelSpec::default().config(40, 0);
        let per_layer = 4 * 256 * 256 + 3 * 256 * 768 + 2 * 256;
        assert_eq!(config.num_parameters(), 4 * per_layer + 40 * 256 + 256);
        assert!((3_000_000..4_000_000).contains(&config.num_parameters()));
    }
}
