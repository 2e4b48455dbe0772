//! Prints a model's logits for one sequence of token ids, as JSON: the check that other
//! tools (transformers, PEFT) read our weights and adapters as we do.
//!
//! ```text
//! cargo run -p grpo-runner --example logits -- MODEL [--adapter DIR] [--tokens 1,2,3]
//! ```
//!
//! `MODEL` is an HF model directory or a GGUF file; `--adapter` puts a PEFT LoRA adapter
//! (`adapter_config.json` + `adapter_model.safetensors`) on it. Without `--tokens` the ids
//! are those of the text `What is 2 + 3?`. Prints `{"tokens": [...], "logits": [[...], ...]}`
//! (one row of vocabulary logits per position, f32).

use std::path::PathBuf;

use anyhow::{Context, bail};
use candle_core::{DType, Device, Tensor};

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let mut model_path = None;
    let mut adapter = None;
    let mut tokens: Option<Vec<u32>> = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--adapter" => adapter = Some(PathBuf::from(args.next().context("--adapter DIR")?)),
            "--tokens" => {
                let list = args.next().context("--tokens 1,2,3")?;
                let ids = list
                    .split(',')
                    .map(|s| s.trim().parse::<u32>())
                    .collect::<Result<Vec<_>, _>>()
                    .with_context(|| format!("--tokens {list:?}: comma-separated ids"))?;
                tokens = Some(ids);
            }
            flag if flag.starts_with("--") => bail!("unknown flag {flag}"),
            path => model_path = Some(PathBuf::from(path)),
        }
    }
    let model_path = model_path.context("usage: logits MODEL [--adapter DIR] [--tokens 1,2,3]")?;
    let device = Device::Cpu;
    let (mut model, tokenizer) = grpo_runner::loading::load(&model_path, DType::F32, &device)
        .with_context(|| format!("loading {}", model_path.display()))?;
    if let Some(dir) = &adapter {
        model = model
            .load_adapter(dir)
            .with_context(|| format!("loading the adapter in {}", dir.display()))?;
    }
    let tokens = match tokens {
        Some(ids) => ids,
        None => tokenizer.encode_prompt("What is 2 + 3?")?,
    };
    if tokens.is_empty() {
        bail!("no tokens");
    }
    let ids = Tensor::new(tokens.as_slice(), &device)?.unsqueeze(0)?;
    let logits = model.forward(&ids, &[0], None)?.squeeze(0)?;
    let rows: Vec<Vec<f32>> = logits.to_dtype(DType::F32)?.to_vec2()?;
    println!(
        "{}",
        serde_json::json!({ "tokens": tokens, "logits": rows })
    );
    Ok(())
}
