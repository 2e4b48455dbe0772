//! Measures sampling speed (generated tokens per second) and where the time goes: prompt
//! prefill, one-token decode forwards, and choosing tokens on the host.
//!
//! ```text
//! cargo run --release -p grpo-runner --example sample_speed                      # tiny model
//! cargo run --release -p grpo-runner --example sample_speed -- MODEL [PROMPTS] [GROUP] [TOKENS]
//! ```
//!
//! With no model the default tiny preset model (about 3.2 M parameters, character vocabulary)
//! is built in memory. Prints one JSON line per configuration.

use candle_core::{DType, Device};
use grpo_runner::rollout::sampler::{SampleRequest, SamplingConfig, sample};
use grpo_runner::tiny::{TinyModelSpec, tiny_model};

fn main() -> anyhow::Result<()> {
    grpo_runner::cpu::configure();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let device = Device::Cpu;
    let prompt_text = "What is 37 + 48? Reason in <think></think>, answer in <answer></answer>.\n";
    let (model, tokenizer, label) = match args.first() {
        Some(path) => {
            let (m, t) =
                grpo_runner::loading::load(std::path::Path::new(path), DType::F32, &device)?;
            (m, t, path.clone())
        }
        None => {
            let vocab =
                "0123456789+-*/=()?.,:<>/ \nabcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
            let (m, t) = tiny_model(&TinyModelSpec::default(), vocab, &device)?;
            (m, t, "tiny".to_string())
        }
    };
    let parse =
        |i: usize, default: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(default);
    let prompts_n = parse(1, 8);
    let group = parse(2, 8);
    let tokens = parse(3, 64);
    let prompt = tokenizer.encode_prompt(prompt_text)?;
    for (p, g) in [(1usize, 1usize), (prompts_n, group)] {
        let prompts = vec![prompt.clone(); p];
        // No EOS stop: every row generates exactly `tokens` tokens, so rates compare.
        let mut config = model.config().clone();
        config.eos_token_ids.clear();
        let tensors = model
            .named_vars()
            .into_iter()
            .map(|(n, v)| (n, v.as_tensor().detach()))
            .collect();
        let timed = grpo_runner::model::Model::from_tensors(&config, tensors, DType::F32, &device)?;
        let sampling = SamplingConfig {
            max_new_tokens: tokens,
            seed: 1,
            ..Default::default()
        };
        let stats = sample(&timed, SampleRequest::new(&prompts, g, &sampling))?.stats;
        let line = serde_json::json!({
            "model": label,
            "parameters": model.num_parameters(),
            "prompt_tokens": prompt.len(),
            "rows": p * g,
            "max_new_tokens": tokens,
            "tokens_per_second": stats.tokens_per_second(),
            "stats": stats,
        });
        println!("{line}");
    }
    Ok(())
}
