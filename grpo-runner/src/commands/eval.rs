//! `grpo eval`: Greedy accuracy and pass@k of a model on a task pack.

use std::process::ExitCode;

use anyhow::Context;
use candle_core::{DType, Device};
use grpo_rewards::code::{CodeReward, Sandbox};
use grpo_rewards::{AccuracyReward, Reward, VerdictKind};
use grpo_runner::eval::{EvalConfig, evaluate};
use grpo_runner::sampler::SamplingConfig;
use grpo_tasks::{Pack, TaskKind, Template};

/// Greedy accuracy and pass@k of a model on a task pack.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A model directory (HF format) or GGUF file.
    #[arg(long)]
    pub model: std::path::PathBuf,
    /// The task pack: a .jsonl file, a pack directory, or `builtin:NAME`.
    #[arg(long)]
    pub tasks: String,
    /// Samples per task for pass@k.
    #[arg(long)]
    pub samples: Option<usize>,
    /// The split to evaluate (default: `eval`, else `test`, else the only split).
    #[arg(long)]
    pub split: Option<String>,
    /// Evaluate only the first N tasks.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Prompt template (`r1_zero`, `compact`, `plain`, or text with `{prompt}`); default: the
    /// pack's.
    #[arg(long)]
    pub template: Option<String>,
    /// Most tokens per completion.
    #[arg(long, default_value_t = 256)]
    pub max_new_tokens: usize,
    /// Temperature of the pass@k samples.
    #[arg(long, default_value_t = 1.0)]
    pub temperature: f64,
    /// Nucleus mass of the pass@k samples.
    #[arg(long, default_value_t = 1.0)]
    pub top_p: f64,
    /// Seed of the pass@k samples.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Tasks decoded together.
    #[arg(long, default_value_t = 8)]
    pub batch: usize,
    /// Also print one JSON line per task (before the summary).
    #[arg(long)]
    pub details: bool,
}

impl Args {
    /// Runs the command: prints the JSON summary on stdout.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        grpo_runner::cpu::configure();
        let pack =
            Pack::load(&self.tasks).with_context(|| format!("loading the pack {}", self.tasks))?;
        let tasks = match &self.split {
            Some(name) => pack.split(name).with_context(|| {
                format!(
                    "{}: no split {name:?} (splits: {})",
                    self.tasks,
                    pack.split_names().join(", ")
                )
            })?,
            None => pack.eval(),
        };
        let tasks = &tasks[..self.limit.unwrap_or(tasks.len()).min(tasks.len())];
        let template = match &self.template {
            Some(spec) => Template::parse(spec).context("--template")?,
            None => pack.manifest.template.clone(),
        };
        let mut accuracy = AccuracyReward::new();
        if tasks.iter().any(|t| t.kind() == TaskKind::Code) {
            let sandbox = Sandbox::shared().context("starting the Python sandbox")?;
            accuracy = accuracy.with_kind(TaskKind::Code, Box::new(CodeReward::new(sandbox)));
        }
        let device = Device::Cpu;
        let (model, tokenizer) = grpo_runner::loading::load(&self.model, DType::F32, &device)
            .with_context(|| format!("loading the model from {}", self.model.display()))?;
        let prompts: Vec<String> = tasks.iter().map(|t| template.render(t)).collect();
        let config = EvalConfig {
            max_new_tokens: self.max_new_tokens,
            samples: self.samples.unwrap_or(0),
            sampling: SamplingConfig {
                temperature: self.temperature,
                top_p: self.top_p,
                seed: self.seed,
                ..Default::default()
            },
            batch_prompts: self.batch,
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the async runtime for the rewards")?;
        let judge = |index: usize, completions: &[String]| -> Vec<bool> {
            runtime
                .block_on(accuracy.score_group(&tasks[index], completions))
                .iter()
                .map(|s| s.value.is_some() && s.verdict.kind == VerdictKind::Correct)
                .collect()
        };
        eprintln!(
            "evaluating {} tasks of {} with {}",
            tasks.len(),
            self.tasks,
            self.model.display()
        );
        let report =
            evaluate(&model, &tokenizer, &prompts, &config, judge).context("evaluating")?;
        if self.details {
            for r in &report.results {
                let line = serde_json::json!({
                    "task_id": tasks[r.index].id(),
                    "greedy_correct": r.greedy_correct,
                    "correct_samples": r.correct_samples,
                    "greedy_completion": r.greedy_completion,
                });
                println!("{line}");
            }
        }
        let pass: serde_json::Map<String, serde_json::Value> = report
            .pass_at_k
            .iter()
            .map(|(k, v)| (format!("pass@{k}"), serde_json::json!(v)))
            .collect();
        let summary = serde_json::json!({
            "model": self.model.display().to_string(),
            "pack": self.tasks,
            "tasks": report.prompts,
            "greedy_correct": report.greedy_correct,
            "greedy_accuracy": report.greedy_accuracy,
            "samples": report.samples,
            "pass_at_k": pass,
            "generated_tokens": report.generated_tokens,
            "generation_seconds": report.generation_seconds,
            "tokens_per_second": report.generated_tokens as f64 / report.generation_seconds.max(1e-9),
        });
        println!("{summary}");
        Ok(ExitCode::SUCCESS)
    }
}
