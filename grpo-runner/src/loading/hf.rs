//! Hugging Face directories: `config.json`, safetensors (sharded or not), tokenizer files.

use std::collections::HashMap;
use std::path::Path;

use candle_core::{DType, Device, Tensor};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::model::{Architecture, Model, ModelConfig};
use crate::tokenizer::Tokenizer;

use super::{read_json, write_json};

/// Saves `model` and `tokenizer` as an HF directory (created if missing).
pub fn save_hf_dir(model: &Model, tokenizer: &Tokenizer, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let config = hf_config_json(model.config(), model.dtype());
    write_json(&dir.join("config.json"), &config)?;
    let generation = json!({
        "eos_token_id": model.config().eos_token_ids,
        "bos_token_id": model.config().bos_token_id,
    });
    write_json(&dir.join("generation_config.json"), &generation)?;
    // The weights (in their own dtype, f32 for a trained model) copied to the host.
    let tensors = model
        .named_vars()
        .into_iter()
        .map(|(name, var)| Ok((name, var.as_tensor().detach().to_device(&Device::Cpu)?)))
        .collect::<Result<HashMap<String, Tensor>>>()?;
    let path = dir.join("model.safetensors");
    candle_core::safetensors::save(&tensors, &path)?;
    tokenizer.save_dir(dir)?;
    tracing::info!(dir = %dir.display(), parameters = model.num_parameters(), "saved model");
    Ok(())
}

/// Loads an HF directory.
pub fn load_hf_dir(dir: &Path, dtype: DType, device: &Device) -> Result<(Model, Tokenizer)> {
    let config_path = dir.join("config.json");
    let hf: HfConfig = read_json(&config_path)?;
    let mut config = hf.to_model_config(&config_path)?;
    let generation_path = dir.join("generation_config.json");
    if generation_path.exists() {
        let generation: GenerationConfig = read_json(&generation_path)?;
        for id in generation
            .eos_token_id
            .map(EosIds::into_vec)
            .unwrap_or_default()
        {
            if !config.eos_token_ids.contains(&id) {
                config.eos_token_ids.push(id);
            }
        }
    }
    let tokenizer = Tokenizer::load_dir(dir)?;
    for &id in tokenizer.eos_token_ids() {
        if !config.eos_token_ids.contains(&id) {
            config.eos_token_ids.push(id);
        }
    }
    let tensors = read_safetensors(dir, device)?;
    let model = model_from_file_tensors(
        &config,
        tensors,
        dtype,
        device,
        &dir.join("model.safetensors"),
    )?;
    tracing::info!(dir = %dir.display(), parameters = model.num_parameters(), "loaded HF model");
    Ok((model, tokenizer))
}

/// Reads `model.safetensors`, or every shard named by `model.safetensors.index.json`.
fn read_safetensors(dir: &Path, device: &Device) -> Result<HashMap<String, Tensor>> {
    let single = dir.join("model.safetensors");
    if single.exists() {
        return Ok(candle_core::safetensors::load(&single, device)?);
    }
    let index_path = dir.join("model.safetensors.index.json");
    if !index_path.exists() {
        return Err(Error::MissingTensor {
            path: single,
            name: "(no model.safetensors or model.safetensors.index.json)".into(),
        });
    }
    let index: ShardIndex = read_json(&index_path)?;
    let mut files: Vec<&String> = index.weight_map.values().collect();
    files.sort();
    files.dedup();
    let mut tensors = HashMap::new();
    for file in files {
        tensors.extend(candle_core::safetensors::load(dir.join(file), device)?);
    }
    Ok(tensors)
}

/// Checks names and shapes against the config with the file's path in the errors, then
/// builds the model.
pub(super) fn model_from_file_tensors(
    config: &ModelConfig,
    tensors: HashMap<String, Tensor>,
    dtype: DType,
    device: &Device,
    path: &Path,
) -> Result<Model> {
    for (name, shape) in config.tensor_shapes() {
        match tensors.get(&name) {
            None => {
                return Err(Error::MissingTensor {
                    path: path.to_path_buf(),
                    name,
                });
            }
            Some(t) if t.dims() != shape.as_slice() => {
                return Err(Error::TensorShape {
                    path: path.to_path_buf(),
                    name,
                    expected: shape,
                    found: t.dims().to_vec(),
                });
            }
            Some(_) => {}
        }
    }
    Model::from_tensors(config, tensors, dtype, device)
}

/// The `config.json` written by [`save_hf_dir`]: HF's field names, plus the Qwen2 fields
/// candle-transformers requires.
pub fn hf_config_json(config: &ModelConfig, dtype: DType) -> Value {
    let (arch, model_type) = match config.architecture {
        Architecture::Llama => ("LlamaForCausalLM", "llama"),
        Architecture::Qwen2 => ("Qwen2ForCausalLM", "qwen2"),
    };
    let torch_dtype = match dtype {
        DType::F16 => "float16",
        DType::BF16 => "bfloat16",
        DType::F64 => "float64",
        _ => "float32",
    };
    let mut value = json!({
        "architectures": [arch],
        "model_type": model_type,
        "vocab_size": config.vocab_size,
        "hidden_size": config.hidden_size,
        "intermediate_size": config.intermediate_size,
        "num_hidden_layers": config.num_hidden_layers,
        "num_attention_heads": config.num_attention_heads,
        "num_key_value_heads": config.num_key_value_heads,
        "head_dim": config.head_dim,
        "hidden_act": "silu",
        "rms_norm_eps": config.rms_norm_eps,
        "rope_theta": config.rope_theta,
        "max_position_embeddings": config.max_position_embeddings,
        "tie_word_embeddings": config.tie_word_embeddings,
        "attention_bias": config.attention_bias,
        "bos_token_id": config.bos_token_id,
        "eos_token_id": config.eos_token_ids,
        "torch_dtype": torch_dtype,
    });
    if config.architecture == Architecture::Qwen2
        && let Some(map) = value.as_object_mut()
    {
        map.insert(
            "sliding_window".into(),
            json!(config.max_position_embeddings),
        );
        map.insert("max_window_layers".into(), json!(config.num_hidden_layers));
        map.insert("use_sliding_window".into(), json!(false));
    }
    value
}

/// The fields of HF's `config.json` the decoder uses; others are ignored.
#[derive(Debug, Deserialize)]
pub(super) struct HfConfig {
    model_type: Option<String>,
    #[serde(default)]
    architectures: Vec<String>,
    vocab_size: usize,
    hidden_size: usize,
    intermediate_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    num_key_value_heads: Option<usize>,
    head_dim: Option<usize>,
    hidden_act: Option<String>,
    rms_norm_eps: f64,
    rope_theta: Option<f64>,
    rope_scaling: Option<Value>,
    max_position_embeddings: usize,
    tie_word_embeddings: Option<bool>,
    attention_bias: Option<bool>,
    mlp_bias: Option<bool>,
    use_sliding_window: Option<bool>,
    bos_token_id: Option<u32>,
    eos_token_id: Option<EosIds>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum EosIds {
    One(u32),
    Many(Vec<u32>),
}

impl EosIds {
    fn into_vec(self) -> Vec<u32> {
        match self {
            EosIds::One(id) => vec![id],
            EosIds::Many(ids) => ids,
        }
    }
}

#[derive(Debug, Deserialize)]
struct GenerationConfig {
    eos_token_id: Option<EosIds>,
}

#[derive(Debug, Deserialize, Serialize)]
struct ShardIndex {
    weight_map: HashMap<String, String>,
}

impl HfConfig {
    pub(super) fn to_model_config(&self, path: &Path) -> Result<ModelConfig> {
        let bad = |field: &str, message: String| Error::Config {
            path: path.to_path_buf(),
            field: field.into(),
            message,
        };
        let kind = self
            .model_type
            .clone()
            .or_else(|| self.architectures.first().map(|a| a.to_lowercase()))
            .unwrap_or_default();
        let architecture = match kind.as_str() {
            "llama" | "llamaforcausallm" => Architecture::Llama,
            "qwen2" | "qwen2forcausallm" => Architecture::Qwen2,
            other => {
                return Err(bad(
                    "model_type",
                    format!("{other:?} is not supported (llama, qwen2)"),
                ));
            }
        };
        if let Some(act) = &self.hidden_act
            && act != "silu"
        {
            return Err(bad(
                "hidden_act",
                format!("{act:?} is not supported (silu)"),
            ));
        }
        if let Some(scaling) = &self.rope_scaling
            && !scaling.is_null()
        {
            let kind = scaling.get("rope_type").or_else(|| scaling.get("type"));
            if kind.and_then(Value::as_str) != Some("default") {
                return Err(bad("rope_scaling", format!("{scaling} is not supported")));
            }
        }
        if self.mlp_bias == Some(true) {
            return Err(bad("mlp_bias", "MLP biases are not supported".into()));
        }
        if self.use_sliding_window == Some(true) {
            return Err(bad(
                "use_sliding_window",
                "sliding-window attention is not supported".into(),
            ));
        }
        if self.num_attention_heads == 0 {
            return Err(bad("num_attention_heads", "must be positive".into()));
        }
        let config = ModelConfig {
            architecture,
            vocab_size: self.vocab_size,
            hidden_size: self.hidden_size,
            intermediate_size: self.intermediate_size,
            num_hidden_layers: self.num_hidden_layers,
            num_attention_heads: self.num_attention_heads,
            num_key_value_heads: self.num_key_value_heads.unwrap_or(self.num_attention_heads),
            head_dim: self
                .head_dim
                .unwrap_or(self.hidden_size / self.num_attention_heads),
            rms_norm_eps: self.rms_norm_eps,
            rope_theta: self.rope_theta.unwrap_or(10_000.0),
            max_position_embeddings: self.max_position_embeddings,
            tie_word_embeddings: self.tie_word_embeddings.unwrap_or(false),
            attention_bias: self.attention_bias.unwrap_or(false),
            bos_token_id: self.bos_token_id,
            eos_token_ids: self
                .eos_token_id
                .as_ref()
                .map_or_else(Vec::new, |e| match e {
                    EosIds::One(id) => vec![*id],
                    EosIds::Many(ids) => ids.clone(),
                }),
        };
        config.validate().map_err(|e| match e {
            Error::Config { field, message, .. } => Error::Config {
                path: path.to_path_buf(),
                field,
                message,
            },
            other => other,
        })?;
        Ok(config)
    }
}
