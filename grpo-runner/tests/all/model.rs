//! The decoder against candle-transformers (the oracle), its KV cache, left padding,
//! gradients (finite differences in f64), and save/load round trips (HF, sharded, GGUF).

use std::collections::HashMap;

use crate::common::{max_abs_diff, random_ids, random_model, random_tensors, small_config};
use candle_core::quantized::{GgmlDType, QTensor, gguf_file};
use candle_core::{D, DType, Device, IndexOp, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::{llama, quantized_llama, qwen2};
use grpo_runner::loading::{self, hf_config_json, permute_rope_rows};
use grpo_runner::model::{Architecture, KvCache, Model};
use grpo_runner::tokenizer::Tokenizer;

const CPU: Device = Device::Cpu;

fn ids_tensor(ids: &[u32]) -> Tensor {
    Tensor::new(ids, &CPU).unwrap().unsqueeze(0).unwrap()
}

/// Our logits at every position of `ids` (`[len, vocab]`).
fn our_logits(model: &Model, ids: &[u32]) -> Tensor {
    model
        .forward(&ids_tensor(ids), &[0], None)
        .unwrap()
        .squeeze(0)
        .unwrap()
}

#[test]
fn qwen2_logits_match_candle_transformers() {
    // Qwen2 with q/k/v biases, untied head, grouped-query attention.
    let config = small_config(Architecture::Qwen2, 50, false);
    let tensors = random_tensors(&config, 1);
    let model = Model::from_tensors(&config, tensors.clone(), DType::F32, &CPU).unwrap();
    let oracle_config: qwen2::Config =
        serde_json::from_value(hf_config_json(&config, DType::F32)).unwrap();
    let vb = VarBuilder::from_tensors(tensors, DType::F32, &CPU);
    let mut oracle = qwen2::ModelForCausalLM::new(&oracle_config, vb).unwrap();

    let ids = random_ids(12, 50, 2);
    let ours = our_logits(&model, &ids);
    // The oracle returns the last position only: compare every prefix.
    for len in 1..=ids.len() {
        oracle.clear_kv_cache();
        let theirs = oracle
            .forward(&ids_tensor(&ids[..len]), 0)
            .unwrap()
            .squeeze(0)
            .unwrap();
        let diff = max_abs_diff(&ours.narrow(0, len - 1, 1).unwrap(), &theirs);
        assert!(diff < 1e-4, "prefix {len}: max diff {diff}");
    }
}

#[test]
fn llama_logits_match_candle_transformers() {
    // Llama with a tied head and grouped-query attention.
    let config = small_config(Architecture::Llama, 40, true);
    let tensors = random_tensors(&config, 3);
    let model = Model::from_tensors(&config, tensors.clone(), DType::F32, &CPU).unwrap();
    let llama_config: llama::LlamaConfig =
        serde_json::from_value(hf_config_json(&config, DType::F32)).unwrap();
    let oracle_config = llama_config.into_config(false);
    let vb = VarBuilder::from_tensors(tensors, DType::F32, &CPU);
    let oracle = llama::Llama::load(vb, &oracle_config).unwrap();

    let ids = random_ids(10, 40, 4);
    let ours = our_logits(&model, &ids);
    for len in 1..=ids.len() {
        let mut cache = llama::Cache::new(false, DType::F32, &oracle_config, &CPU).unwrap();
        let theirs = oracle
            .forward(&ids_tensor(&ids[..len]), 0, &mut cache)
            .unwrap();
        let diff = max_abs_diff(&ours.narrow(0, len - 1, 1).unwrap(), &theirs);
        assert!(diff < 1e-4, "prefix {len}: max diff {diff}");
    }
}

#[test]
fn llama_attention_bias_includes_the_output_projection() {
    let mut config = small_config(Architecture::Llama, 20, true);
    config.attention_bias = true;
    let names: Vec<String> = config.tensor_shapes().into_iter().map(|(n, _)| n).collect();
    assert!(names.contains(&"model.layers.0.self_attn.o_proj.bias".to_string()));
    let mut qwen = small_config(Architecture::Qwen2, 20, true);
    qwen.attention_bias = false;
    let names: Vec<String> = qwen.tensor_shapes().into_iter().map(|(n, _)| n).collect();
    assert!(names.contains(&"model.layers.1.self_attn.v_proj.bias".to_string()));
    assert!(!names.contains(&"model.layers.1.self_attn.o_proj.bias".to_string()));
}

#[test]
fn kv_cache_decoding_equals_a_full_forward() {
    for arch in [Architecture::Llama, Architecture::Qwen2] {
        let config = small_config(arch, 30, arch == Architecture::Llama);
        let model = random_model(&config, 5, DType::F32);
        let ids = random_ids(11, 30, 6);
        let full = our_logits(&model, &ids);
        // Growing by concatenation, reserved for every position, and reserved for too few
        // (5: the buffers double twice).
        for capacity in [0, 11, 5] {
            // Prefill 4, then chunks of 1, 2, 1, 3.
            let mut cache = KvCache::with_capacity(config.num_hidden_layers, capacity);
            let mut pieces = Vec::new();
            let mut start = 0;
            for len in [4, 1, 2, 1, 3] {
                let chunk = &ids[start..start + len];
                pieces.push(
                    model
                        .forward(&ids_tensor(chunk), &[0], Some(&mut cache))
                        .unwrap()
                        .squeeze(0)
                        .unwrap(),
                );
                start += len;
            }
            assert_eq!(cache.len(), ids.len());
            let cached = Tensor::cat(&pieces, 0).unwrap();
            let diff = max_abs_diff(&full, &cached);
            assert!(
                diff < 1e-5,
                "{arch:?}, capacity {capacity}: max diff {diff}"
            );
        }
    }
}

#[test]
fn left_padding_gives_the_same_logits_per_row() {
    let config = small_config(Architecture::Qwen2, 30, true);
    let model = random_model(&config, 7, DType::F32);
    let rows = [
        random_ids(9, 30, 8),
        random_ids(5, 30, 9),
        random_ids(1, 30, 10),
    ];
    let width = 9;
    let pads: Vec<usize> = rows.iter().map(|r| width - r.len()).collect();
    // Pad with a real token id (17) to show padding content does not leak.
    let flat: Vec<u32> = rows
        .iter()
        .flat_map(|r| std::iter::repeat_n(17u32, width - r.len()).chain(r.iter().copied()))
        .collect();
    let batch = Tensor::from_vec(flat, (3, width), &CPU).unwrap();
    let mut cache = KvCache::new(config.num_hidden_layers);
    let padded = model.forward(&batch, &pads, Some(&mut cache)).unwrap();
    assert!(
        padded
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap()
            .iter()
            .all(|v| v.is_finite())
    );
    for (r, row) in rows.iter().enumerate() {
        let alone = our_logits(&model, row);
        let got = padded.i((r, pads[r]..width)).unwrap();
        let diff = max_abs_diff(&alone, &got);
        assert!(diff < 1e-5, "row {r}: max diff {diff}");
    }
    // Decoding one more token per row through the padded cache matches too.
    let next = [3u32, 4, 5];
    let step = model
        .forward(
            &Tensor::new(&next, &CPU).unwrap().unsqueeze(1).unwrap(),
            &pads,
            Some(&mut cache),
        )
        .unwrap();
    for (r, row) in rows.iter().enumerate() {
        let mut extended = row.clone();
        extended.push(next[r]);
        let alone = our_logits(&model, &extended);
        let diff = max_abs_diff(
            &alone.narrow(0, extended.len() - 1, 1).unwrap(),
            &step.i(r).unwrap(),
        );
        assert!(diff < 1e-5, "row {r} step: max diff {diff}");
    }
}

#[test]
fn detached_view_sees_updates_and_records_no_graph() {
    let config = small_config(Architecture::Llama, 20, true);
    let model = random_model(&config, 11, DType::F32);
    let detached = model.detached().unwrap();
    let ids = random_ids(4, 20, 12);
    let before = our_logits(&detached, &ids);
    // Scale every weight in place through the Vars.
    for var in model.vars() {
        let scaled = (var.as_tensor().detach() * 0.5).unwrap();
        var.set(&scaled).unwrap();
    }
    let after_detached = our_logits(&detached, &ids);
    let after_model = our_logits(&model, &ids);
    assert!(max_abs_diff(&before, &after_detached) > 1e-3);
    // Equal up to summation order: without a graph, a few rows go through the skinny
    // matrix-vector kernel instead of gemm.
    assert!(max_abs_diff(&after_detached, &after_model) < 1e-5);
    // No gradient flows through the detached view.
    let loss = our_logits(&detached, &ids).sum_all().unwrap();
    let grads = loss.backward().unwrap();
    assert!(
        model
            .vars()
            .iter()
            .all(|v| grads.get(v.as_tensor()).is_none())
    );
}

/// Loss for the gradient check: a fixed random projection of the log-softmax over a padded
/// batch (so masks, RoPE with offsets, GQA and every weight are on the path).
fn check_loss(model: &Model, batch: &Tensor, pads: &[usize], weights: &Tensor) -> Tensor {
    let logits = model.forward(batch, pads, None).unwrap();
    let logp = candle_nn::ops::log_softmax(&logits, D::Minus1).unwrap();
    (logp * weights).unwrap().sum_all().unwrap()
}

#[test]
fn gradients_match_finite_differences() {
    let mut config = small_config(Architecture::Qwen2, 13, false);
    config.hidden_size = 16;
    config.head_dim = 4;
    config.intermediate_size = 24;
    let model = random_model(&config, 13, DType::F64);
    let batch = Tensor::new(&[[5u32, 1, 2, 3, 4], [9, 9, 7, 8, 12]], &CPU).unwrap();
    let pads = [0usize, 2];
    let weights = Tensor::randn(0f64, 1.0, (2, 5, 13), &CPU).unwrap();
    // Padding positions do not count.
    let keep = Tensor::new(&[[1f64, 1., 1., 1., 1.], [0., 0., 1., 1., 1.]], &CPU).unwrap();
    let weights = weights.broadcast_mul(&keep.unsqueeze(2).unwrap()).unwrap();

    let loss = check_loss(&model, &batch, &pads, &weights);
    let grads = loss.backward().unwrap();
    let h = 1e-5;
    let mut checked = 0;
    for (name, var) in model.named_vars() {
        let grad = grads
            .get(var.as_tensor())
            .unwrap_or_else(|| panic!("{name}: no gradient"));
        let grad = grad.flatten_all().unwrap().to_vec1::<f64>().unwrap();
        assert!(
            grad.iter().all(|g| g.is_finite()),
            "{name}: non-finite gradient"
        );
        let original = var.as_tensor().detach().copy().unwrap();
        let shape = original.shape().clone();
        let values = original.flatten_all().unwrap().to_vec1::<f64>().unwrap();
        // Three entries per tensor, spread over it.
        for k in [0, values.len() / 2, values.len() - 1] {
            let eval = |delta: f64| {
                let mut v = values.clone();
                v[k] += delta;
                var.set(&Tensor::from_vec(v, shape.clone(), &CPU).unwrap())
                    .unwrap();
                check_loss(&model, &batch, &pads, &weights)
                    .to_scalar::<f64>()
                    .unwrap()
            };
            let numeric = (eval(h) - eval(-h)) / (2.0 * h);
            var.set(&original).unwrap();
            let err = (numeric - grad[k]).abs() / (1.0 + numeric.abs());
            assert!(
                err < 1e-6,
                "{name}[{k}]: analytic {} numeric {numeric}",
                grad[k]
            );
            checked += 1;
        }
    }
    // 3 per tensor: embed, norm, lm_head + 2 layers × 12 tensors (with q/k/v biases).
    assert_eq!(checked, 3 * (3 + 2 * 12));
}

fn tiny_tokenizer() -> Tokenizer {
    Tokenizer::train_chars("0123456789+-*/=? abcdefghijklmnopqrstuvwxyz").unwrap()
}

fn all_tensors(model: &Model) -> HashMap<String, Vec<f32>> {
    model
        .named_vars()
        .into_iter()
        .map(|(n, v)| {
            (
                n,
                v.as_tensor()
                    .flatten_all()
                    .unwrap()
                    .to_vec1::<f32>()
                    .unwrap(),
            )
        })
        .collect()
}

#[test]
fn save_then_load_is_exact() {
    let tokenizer = tiny_tokenizer();
    for arch in [Architecture::Llama, Architecture::Qwen2] {
        let mut config = small_config(arch, tokenizer.vocab_size(), arch == Architecture::Qwen2);
        config.eos_token_ids = tokenizer.eos_token_ids().to_vec();
        let model = random_model(&config, 14, DType::F32);
        let dir = tempfile::tempdir().unwrap();
        loading::save_hf_dir(&model, &tokenizer, dir.path()).unwrap();
        let (back, back_tok) = loading::load(dir.path(), DType::F32, &CPU).unwrap();
        assert_eq!(back.config(), model.config());
        assert_eq!(all_tensors(&back), all_tensors(&model));
        assert_eq!(
            back_tok.encode("12+3=15").unwrap(),
            tokenizer.encode("12+3=15").unwrap()
        );
        let ids = random_ids(6, config.vocab_size, 15);
        assert_eq!(
            max_abs_diff(&our_logits(&back, &ids), &our_logits(&model, &ids)),
            0.0
        );
    }
}

#[test]
fn sharded_checkpoints_load() {
    let tokenizer = tiny_tokenizer();
    let config = small_config(Architecture::Llama, tokenizer.vocab_size(), false);
    let model = random_model(&config, 16, DType::F32);
    let dir = tempfile::tempdir().unwrap();
    loading::save_hf_dir(&model, &tokenizer, dir.path()).unwrap();
    // Split model.safetensors in two shards with an index, as large HF checkpoints are.
    std::fs::remove_file(dir.path().join("model.safetensors")).unwrap();
    let mut shards = [HashMap::new(), HashMap::new()];
    let mut weight_map = serde_json::Map::new();
    for (i, (name, var)) in model.named_vars().into_iter().enumerate() {
        let file = format!("model-0000{}-of-00002.safetensors", i % 2 + 1);
        weight_map.insert(name.clone(), serde_json::json!(file));
        shards[i % 2].insert(name, var.as_tensor().detach());
    }
    for (i, shard) in shards.iter().enumerate() {
        let path = dir
            .path()
            .join(format!("model-0000{}-of-00002.safetensors", i + 1));
        candle_core::safetensors::save(shard, path).unwrap();
    }
    let index = serde_json::json!({"metadata": {}, "weight_map": weight_map});
    std::fs::write(
        dir.path().join("model.safetensors.index.json"),
        index.to_string(),
    )
    .unwrap();
    let (back, _) = loading::load(dir.path(), DType::F32, &CPU).unwrap();
    assert_eq!(all_tensors(&back), all_tensors(&model));
}

#[test]
fn missing_tensor_names_the_file_and_tensor() {
    let tokenizer = tiny_tokenizer();
    let config = small_config(Architecture::Llama, tokenizer.vocab_size(), true);
    let model = random_model(&config, 17, DType::F32);
    let dir = tempfile::tempdir().unwrap();
    loading::save_hf_dir(&model, &tokenizer, dir.path()).unwrap();
    let mut tensors =
        candle_core::safetensors::load(dir.path().join("model.safetensors"), &CPU).unwrap();
    tensors.remove("model.layers.1.mlp.up_proj.weight");
    candle_core::safetensors::save(&tensors, dir.path().join("model.safetensors")).unwrap();
    let err = loading::load(dir.path(), DType::F32, &CPU)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("model.safetensors") && err.contains("model.layers.1.mlp.up_proj.weight"),
        "{err}"
    );
}

/// Writes `model` as a llama.cpp-style GGUF with f32 tensors (q/k permuted for interleaved
/// RoPE, as llama.cpp's converter does) and a small byte-level BPE tokenizer.
fn write_gguf(model: &Model, path: &std::path::Path) {
    let c = model.config();
    let hf_to_gguf: HashMap<String, String> = {
        let mut m = HashMap::new();
        m.insert(
            "model.embed_tokens.weight".into(),
            "token_embd.weight".into(),
        );
        m.insert("model.norm.weight".into(), "output_norm.weight".into());
        m.insert("lm_head.weight".into(), "output.weight".into());
        for l in 0..c.num_hidden_layers {
            for (hf, gg) in [
                ("input_layernorm.weight", "attn_norm.weight"),
                ("post_attention_layernorm.weight", "ffn_norm.weight"),
                ("self_attn.q_proj.weight", "attn_q.weight"),
                ("self_attn.k_proj.weight", "attn_k.weight"),
                ("self_attn.v_proj.weight", "attn_v.weight"),
                ("self_attn.o_proj.weight", "attn_output.weight"),
                ("mlp.gate_proj.weight", "ffn_gate.weight"),
                ("mlp.up_proj.weight", "ffn_up.weight"),
                ("mlp.down_proj.weight", "ffn_down.weight"),
            ] {
                m.insert(format!("model.layers.{l}.{hf}"), format!("blk.{l}.{gg}"));
            }
        }
        m
    };
    let mut qtensors = Vec::new();
    for (name, var) in model.named_vars() {
        let mut t = var.as_tensor().detach();
        if name.ends_with("q_proj.weight") {
            t = permute_rope_rows(&t, c.num_attention_heads).unwrap();
        } else if name.ends_with("k_proj.weight") {
            t = permute_rope_rows(&t, c.num_key_value_heads).unwrap();
        }
        qtensors.push((
            hf_to_gguf[&name].clone(),
            QTensor::quantize(&t, GgmlDType::F32).unwrap(),
        ));
    }
    // Byte-level tokens: "<|endoftext|>", then single printable bytes, padded to the vocab.
    let mut tokens = vec!["<|endoftext|>".to_string()];
    for b in b'!'..=b'~' {
        if tokens.len() < c.vocab_size {
            tokens.push((b as char).to_string());
        }
    }
    while tokens.len() < c.vocab_size {
        tokens.push(format!("<extra_{}>", tokens.len()));
    }
    use gguf_file::Value as V;
    let types: Vec<V> = (0..c.vocab_size)
        .map(|i| V::I32(if i == 0 { 3 } else { 1 }))
        .collect();
    let meta: Vec<(&str, V)> = vec![
        ("general.architecture", V::String("llama".into())),
        (
            "llama.attention.head_count",
            V::U32(c.num_attention_heads as u32),
        ),
        (
            "llama.attention.head_count_kv",
            V::U32(c.num_key_value_heads as u32),
        ),
        ("llama.block_count", V::U32(c.num_hidden_layers as u32)),
        ("llama.embedding_length", V::U32(c.hidden_size as u32)),
        (
            "llama.feed_forward_length",
            V::U32(c.intermediate_size as u32),
        ),
        ("llama.rope.dimension_count", V::U32(c.head_dim as u32)),
        (
            "llama.attention.layer_norm_rms_epsilon",
            V::F32(c.rms_norm_eps as f32),
        ),
        ("llama.rope.freq_base", V::F32(c.rope_theta as f32)),
        (
            "llama.context_length",
            V::U32(c.max_position_embeddings as u32),
        ),
        ("tokenizer.ggml.model", V::String("gpt2".into())),
        ("tokenizer.ggml.pre", V::String("smollm".into())),
        (
            "tokenizer.ggml.tokens",
            V::Array(tokens.into_iter().map(V::String).collect()),
        ),
        ("tokenizer.ggml.merges", V::Array(vec![])),
        ("tokenizer.ggml.token_type", V::Array(types)),
        ("tokenizer.ggml.eos_token_id", V::U32(0)),
        (
            "tokenizer.chat_template",
            V::String("{{ messages[0]['content'] }}=".into()),
        ),
    ];
    let meta_refs: Vec<(&str, &V)> = meta.iter().map(|(k, v)| (*k, v)).collect();
    let tensor_refs: Vec<(&str, &QTensor)> =
        qtensors.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let mut file = std::fs::File::create(path).unwrap();
    gguf_file::write(&mut file, &meta_refs, &tensor_refs).unwrap();
}

#[test]
fn gguf_loads_unpermuted_and_matches_quantized_llama() {
    for tied in [true, false] {
        let mut config = small_config(Architecture::Llama, 60, tied);
        config.max_position_embeddings = 4096; // quantized_llama's tables are 4096 long
        let model = random_model(&config, 18, DType::F32);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tiny.gguf");
        write_gguf(&model, &path);

        let (back, tokenizer) = loading::load(&path, DType::F32, &CPU).unwrap();
        assert_eq!(all_tensors(&back), all_tensors(&model), "tied={tied}");
        assert_eq!(back.config().tie_word_embeddings, tied);
        assert_eq!(tokenizer.eos_token_ids(), &[0]);
        assert_eq!(
            tokenizer.encode_prompt("a+b").unwrap(),
            tokenizer.encode("a+b=").unwrap()
        );

        let mut reader = std::fs::File::open(&path).unwrap();
        let content = gguf_file::Content::read(&mut reader).unwrap();
        let mut oracle =
            quantized_llama::ModelWeights::from_gguf(content, &mut reader, &CPU).unwrap();
        let ids = random_ids(8, 60, 19);
        let ours = our_logits(&back, &ids);
        let theirs = oracle.forward(&ids_tensor(&ids), 0).unwrap();
        let diff = max_abs_diff(&ours.narrow(0, ids.len() - 1, 1).unwrap(), &theirs);
        assert!(diff < 1e-4, "tied={tied}: max diff {diff}");
    }
}
