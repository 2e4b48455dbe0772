//! `grpo sample`: Generate one completion for a prompt.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use candle_core::DType;
use grpo_runner::device::{ComputeDtype, DeviceSpec};
use grpo_runner::rollout::sampler::{SampleRequest, SamplingConfig, sample};

/// Generate one completion for a prompt.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A model directory (HF format) or GGUF file.
    #[arg(long)]
    pub model: std::path::PathBuf,
    /// The prompt text.
    #[arg(long)]
    pub prompt: String,
    /// Most tokens to generate.
    #[arg(long, default_value_t = 128)]
    pub max_new_tokens: usize,
    /// Sampling temperature; 0 decodes greedily.
    #[arg(long, default_value_t = 0.0)]
    pub temperature: f64,
    /// Nucleus sampling mass.
    #[arg(long, default_value_t = 1.0)]
    pub top_p: f64,
    /// Keep only the k most likely tokens (0: all).
    #[arg(long, default_value_t = 0)]
    pub top_k: usize,
    /// Random seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Feed the prompt as is, without the model's chat template.
    #[arg(long)]
    pub raw: bool,
    /// Where the model runs: `cpu`, `cuda:N` (`cuda` is `cuda:0`) or `metal` (GPUs need the
    /// binary built with `--features cuda` or `--features metal`).
    #[arg(long, default_value = "cpu")]
    pub device: DeviceSpec,
    /// The dtype of the forward passes: `f32`, `bf16` or `f16` (the weights load as f32).
    #[arg(long, default_value = "f32")]
    pub dtype: ComputeDtype,
}

impl Args {
    /// Runs the command: prints one JSON object (`completion`, `tokens`, `finish_reason`,
    /// `tokens_per_second`) on stdout.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        grpo_runner::cpu::configure();
        let device = self.device.open().context("--device")?;
        let (model, tokenizer) = grpo_runner::loading::load(&self.model, DType::F32, &device)
            .with_context(|| format!("loading the model from {}", self.model.display()))?;
        let model = model.with_compute_dtype(self.dtype.dtype())?;
        let prompt = if self.raw {
            tokenizer.encode(&self.prompt)?
        } else {
            tokenizer.encode_prompt(&self.prompt)?
        };
        let config = SamplingConfig {
            temperature: self.temperature,
            top_p: self.top_p,
            top_k: self.top_k,
            max_new_tokens: self.max_new_tokens,
            seed: self.seed,
            max_batch_rows: 0,
            ignore_eos: false,
        };
        let start = Instant::now();
        let prompts = std::slice::from_ref(&prompt);
        let completion = sample(&model, SampleRequest::new(prompts, 1, &config))
            .context("sampling")?
            .completions()
            .pop()
            .context("the sampler returned no completion")?;
        let seconds = start.elapsed().as_secs_f64();
        let text = tokenizer.decode(&completion.tokens)?;
        let rate = completion.tokens.len() as f64 / seconds.max(1e-9);
        eprintln!(
            "{} prompt tokens, {} generated in {seconds:.2} s ({rate:.1} tokens/s, prefill included)",
            prompt.len(),
            completion.tokens.len()
        );
        let out = serde_json::json!({
            "completion": text,
            "tokens": completion.tokens.len(),
            "finish_reason": completion.finish_reason,
            "tokens_per_second": rate,
        });
        println!("{out}");
        Ok(ExitCode::SUCCESS)
    }
}
