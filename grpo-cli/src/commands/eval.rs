//! `grpo eval`: Greedy accuracy and pass@k of a model on a task pack.
//!
//! Scored through the scoring contract (the pack's weights; code in the sandbox) and the one
//! evaluation path of the trainer. A run's `final/` model carries its evaluation settings
//! (`grpo_eval.json`: template, chat template, token limit, batch, split, problems); they are
//! the defaults here, so `grpo eval --model RUN/final --tasks PACK` reproduces the run's last
//! evaluation exactly. Flags override them.

use std::process::ExitCode;

use anyhow::Context;
use candle_core::DType;
use grpo_runner::device::{ComputeDtype, DeviceSpec};
use grpo_runner::eval::{EvalConfig, EvalSettings, encode_prompt, evaluate, evaluate_with_tools};
use grpo_runner::rollout::sampler::SamplingConfig;
use grpo_runner::rollout::sampler::ToolDriver;
use grpo_runner::rollout::tools::CodeTool;
use grpo_tasks::{Pack, Template};

/// Greedy accuracy and pass@k of a model on a task pack.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A model directory (HF format) or GGUF file.
    #[arg(long)]
    pub model: std::path::PathBuf,
    /// A PEFT LoRA adapter directory (`adapter_config.json` + `adapter_model.safetensors`)
    /// to put on the model, e.g. a run's `final/adapter/` on the model it started from.
    #[arg(long)]
    pub adapter: Option<std::path::PathBuf>,
    /// The task pack: a .jsonl file, a pack directory, or `builtin:NAME`.
    #[arg(long)]
    pub tasks: String,
    /// Samples per task for pass@k.
    #[arg(long)]
    pub samples: Option<usize>,
    /// The split to evaluate (default: the run's, else `eval`, else `test`, else the only
    /// split).
    #[arg(long)]
    pub split: Option<String>,
    /// Evaluate only the first N tasks (default: the run's count, else all).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Prompt template (`r1_zero`, `compact`, `plain`, or text with `{prompt}`); default: the
    /// run's, else the pack's.
    #[arg(long)]
    pub template: Option<String>,
    /// Most tokens per completion (default: the run's, else 256).
    #[arg(long)]
    pub max_new_tokens: Option<usize>,
    /// Temperature of the pass@k samples.
    #[arg(long, default_value_t = 1.0)]
    pub temperature: f64,
    /// Nucleus mass of the pass@k samples.
    #[arg(long, default_value_t = 1.0)]
    pub top_p: f64,
    /// Seed of the pass@k samples.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Tasks decoded together (default: the run's, else 8).
    #[arg(long)]
    pub batch: Option<usize>,
    /// Prompts through the model's chat template (default: the run's, else when the model
    /// has one).
    #[arg(long)]
    pub chat_template: Option<bool>,
    /// Also print one JSON line per task (before the summary).
    #[arg(long)]
    pub details: bool,
    /// Evaluate without the code interpreter even when the run gave the policy one (by
    /// default a run's `final/` is evaluated with its tool settings, as the run evaluated).
    #[arg(long)]
    pub no_tools: bool,
    /// Where the model runs: `cpu`, `cuda:N` (`cuda` is `cuda:0`) or `metal` (GPUs need the
    /// binary built with `--features cuda` or `--features metal`).
    #[arg(long, default_value = "cpu")]
    pub device: DeviceSpec,
    /// The dtype of the forward passes: `f32`, `bf16` or `f16` (the weights load as f32).
    #[arg(long, default_value = "f32")]
    pub dtype: ComputeDtype,
}

impl Args {
    /// Runs the command: prints the JSON summary on stdout.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        grpo_runner::cpu::configure();
        let run = if self.model.is_dir() {
            EvalSettings::read(&self.model)
                .with_context(|| format!("reading {}", self.model.display()))?
        } else {
            None
        };
        let pack =
            Pack::load(&self.tasks).with_context(|| format!("loading the pack {}", self.tasks))?;
        let split = self
            .split
            .clone()
            .or_else(|| run.as_ref().map(|r| r.split.clone()));
        let tasks = match &split {
            Some(name) => pack.split(name).with_context(|| {
                format!(
                    "{}: no split {name:?} (splits: {})",
                    self.tasks,
                    pack.split_names().join(", ")
                )
            })?,
            None => pack.eval(),
        };
        let limit = self
            .limit
            .or_else(|| run.as_ref().map(|r| r.problems).filter(|&n| n > 0));
        let tasks = &tasks[..limit.unwrap_or(tasks.len()).min(tasks.len())];
        let template = match self
            .template
            .clone()
            .or_else(|| run.as_ref().map(|r| r.template.clone()))
        {
            Some(spec) => Template::parse(&spec).context("--template")?,
            None => pack.manifest.template.clone(),
        };
        let scorer = super::pack_scorer(&pack.manifest, tasks, &self.tasks)?;
        let device = self.device.open().context("--device")?;
        let (model, tokenizer) = grpo_runner::loading::load(&self.model, DType::F32, &device)
            .with_context(|| format!("loading the model from {}", self.model.display()))?;
        let model = match &self.adapter {
            Some(dir) => model
                .load_adapter(dir)
                .with_context(|| format!("loading the adapter in {}", dir.display()))?,
            None => model,
        };
        let model = model.with_compute_dtype(self.dtype.dtype())?;
        let chat = self
            .chat_template
            .or_else(|| run.as_ref().map(|r| r.chat_template))
            .unwrap_or(tokenizer.chat_template().is_some());
        let prompts: Vec<Vec<u32>> = tasks
            .iter()
            .map(|t| encode_prompt(&tokenizer, &template.render(t), chat))
            .collect::<Result<_, _>>()
            .context("encoding the prompts")?;
        let config = EvalConfig {
            max_new_tokens: self
                .max_new_tokens
                .or_else(|| run.as_ref().map(|r| r.max_new_tokens))
                .unwrap_or(256),
            samples: self.samples.unwrap_or(0),
            sampling: SamplingConfig {
                temperature: self.temperature,
                top_p: self.top_p,
                seed: self.seed,
                ..Default::default()
            },
            batch_prompts: self
                .batch
                .or_else(|| run.as_ref().map(|r| r.batch_prompts))
                .unwrap_or(8),
        };
        let judge = |index: usize, completions: &[String]| -> grpo_runner::Result<Vec<bool>> {
            let scored =
                scorer.score_group_blocking(&tasks[index], completions, scorer.options())?;
            Ok(scored.iter().map(|s| s.correct).collect())
        };
        // A run that gave the policy the interpreter is evaluated with it, as the run was.
        let tools = run
            .as_ref()
            .and_then(|r| r.tools.clone())
            .filter(|_| !self.no_tools);
        eprintln!(
            "evaluating {} tasks of {} with {}{}",
            tasks.len(),
            self.tasks,
            self.model.display(),
            if tools.is_some() {
                " and the code interpreter"
            } else {
                ""
            }
        );
        let report = match &tools {
            None => evaluate(&model, &tokenizer, &prompts, &config, judge),
            Some(settings) => {
                let sandbox =
                    grpo_runner::rollout::tools::sandbox(settings, config.batch_prompts, 0, None)
                        .context("starting the code interpreter's sandbox")?;
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(sandbox.concurrency().max(1))
                    .enable_all()
                    .build()
                    .context("starting the interpreter's runtime")?;
                let mut make_tool = || -> Box<dyn ToolDriver + '_> {
                    Box::new(CodeTool::new(
                        sandbox.clone(),
                        &runtime,
                        &tokenizer,
                        settings,
                    ))
                };
                evaluate_with_tools(
                    &model,
                    &tokenizer,
                    &prompts,
                    &config,
                    Some(&mut make_tool),
                    judge,
                )
            }
        }
        .context("evaluating")?;
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
