//! GGUF files (llama.cpp): dequantised tensors under HF names, tokenizer and chat template
//! from the metadata.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use candle_core::quantized::gguf_file;
use candle_core::{DType, Device, Tensor};

use crate::error::{Error, Result};
use crate::model::{Architecture, Model, ModelConfig};
use crate::tokenizer::Tokenizer;

use super::hf::model_from_file_tensors;

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

    // Read and dequantised on the host (the row unpermutation below is host work too), then
    // moved to `device` by `model_from_file_tensors`.
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
