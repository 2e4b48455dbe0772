//! The named run presets, each a complete config.

use std::str::FromStr;

use grpo_core::Algorithm;
use grpo_rewards::FormatMode;
use serde::{Deserialize, Serialize};

use grpo_rewards::code::Credit;
use grpo_tasks::Template;

use super::schema::{default_fault_retries, default_group_timeout_s};
use super::*;
use crate::device::{ComputeDtype, DeviceSpec};
use crate::error::{Error, Result};
use crate::schedule::ScheduleKind;
use crate::tiny::TinyModelSpec;

/// The named run presets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Preset {
    /// The built-in CPU run: tiny model from scratch, warm-up, GRPO on `builtin:arith-digits`.
    Tiny,
    /// The same pipeline, small enough to finish in seconds (CI).
    Smoke,
    /// A few GRPO steps on SmolLM2-135M-Instruct (a GGUF path must be given).
    Smollm2,
    /// LoRA GRPO on SmolLM2-135M-Instruct that visibly learns on the CPU in about an hour:
    /// `builtin:arith-small`, rank-16 adapters on every projection.
    #[serde(rename = "smollm2-lora", alias = "smollm2_lora")]
    Smollm2Lora,
    /// Code RL on the CPU: tiny model, warm-up on reference solutions, GRPO with sandbox
    /// rewards on `builtin:pyfunc`.
    Code,
    /// Tool-integrated RL on the CPU: tiny model, warm-up on a mix of direct answers and
    /// code-interpreter traces, GRPO on `builtin:arith` with the interpreter as a tool.
    Tools,
}

impl FromStr for Preset {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "tiny" => Ok(Preset::Tiny),
            "smoke" => Ok(Preset::Smoke),
            "smollm2" => Ok(Preset::Smollm2),
            "smollm2-lora" | "smollm2_lora" => Ok(Preset::Smollm2Lora),
            "code" => Ok(Preset::Code),
            "tools" => Ok(Preset::Tools),
            other => Err(Error::Settings {
                field: "preset".into(),
                message: format!(
                    "unknown preset `{other}` (tiny, smoke, smollm2, smollm2-lora, code or tools)"
                ),
            }),
        }
    }
}

impl TrainConfig {
    /// The config of a preset, before any override.
    pub fn preset(preset: Preset) -> Self {
        match preset {
            Preset::Tiny => tiny(),
            Preset::Smoke => smoke(),
            Preset::Smollm2 => smollm2(),
            Preset::Smollm2Lora => smollm2_lora(),
            Preset::Code => code(),
            Preset::Tools => tools(),
        }
    }
}

/// GRPO with no reference model: β = 0 (as Dr. GRPO and DAPO do), every preset's choice; the
/// clip keeps updates small.
fn grpo_without_reference(max_new_tokens: usize) -> AlgorithmSection {
    let mut algorithm = AlgorithmSection::preset(Algorithm::Grpo, max_new_tokens);
    algorithm.loss.beta = 0.0;
    algorithm
}

/// The built-in CPU run (see the crate README for what it shows and why it is shaped so).
fn tiny() -> TrainConfig {
    let max_new_tokens = 28;
    let mut algorithm = grpo_without_reference(max_new_tokens);
    // DAPO's dynamic sampling: as the policy sharpens, more groups come back all right (or
    // all wrong) and carry no gradient; dropping and refilling them kept the rise going
    // (+22.5 points after 1200 steps, against +17.5 after 900 without).
    algorithm.shaping.filter_zero_variance_groups = true;
    TrainConfig {
        preset: Preset::Tiny,
        seed: 0,
        threads: 0,
        model: ModelSection {
            source: ModelSource::Tiny,
            tiny: TinyModelSpec {
                hidden_size: 64,
                num_hidden_layers: 2,
                num_attention_heads: 4,
                num_key_value_heads: 4,
                intermediate_size: 192,
                max_position_embeddings: 128,
                seed: 0,
                ..TinyModelSpec::default()
            },
            chat_template: false,
            device: DeviceSpec::Cpu,
            dtype: ComputeDtype::F32,
        },
        pack: PackSection {
            source: "builtin:arith-digits".into(),
            // The problem alone on its line (a tiny model needs no instruction); the text is
            // a valid template, pinned by the config tests.
            template: Template::parse("{prompt}\n").ok(),
            train_split: "train".into(),
            eval_split: "eval".into(),
        },
        rewards: RewardsSection {
            accuracy: Some(1.0),
            format: Some(0.1),
            format_mode: FormatMode::Strict,
            credit: Credit::Binary,
            fault_retries: default_fault_retries(),
            group_timeout_s: default_group_timeout_s(),
        },
        sandbox: SandboxSection::default(),
        algorithm,
        sampling: SamplingSection {
            prompts_per_step: 16,
            group_size: 8,
            temperature: 1.0,
            top_p: 1.0,
            top_k: 0,
            max_new_tokens,
            max_batch_rows: 0,
            ignore_eos: false,
        },
        update: UpdateSection {
            iterations: 1,
            minibatches: 1,
            micro_batch_groups: 0,
            max_refill_rounds: 2,
        },
        optimizer: OptimizerSection {
            // 2e-3 (the warm-up's scale) collapses accuracy within ten GRPO steps; 1e-4 and
            // 5e-5 both rise steadily.
            lr: 1e-4,
            beta1: 0.9,
            beta2: 0.99,
            eps: 1e-8,
            weight_decay: 0.0,
            max_grad_norm: 1.0,
        },
        schedule: ScheduleSection {
            kind: ScheduleKind::Constant,
            warmup_steps: 5,
            min_lr_ratio: 0.0,
        },
        budget: BudgetSection {
            steps: 1500,
            max_minutes: 60.0,
        },
        eval: EvalSection {
            every: 100,
            problems: 200,
            max_new_tokens,
            batch_prompts: 200,
        },
        warmup: WarmupSection {
            steps: 400,
            batch_size: 64,
            lr: 1e-2,
            worked_fraction: 0.5,
            problems: 0,
        },
        checkpoint: CheckpointSection {
            every: 25,
            samples_per_step: 4,
        },
        report: ReportSection::default(),
        tools: ToolsSection::default(),
        lora: crate::model::lora::LoraConfig::default(),
    }
}

/// The tiny pipeline shrunk to seconds: for CI and tests.
fn smoke() -> TrainConfig {
    let base = tiny();
    TrainConfig {
        preset: Preset::Smoke,
        model: ModelSection {
            tiny: TinyModelSpec {
                hidden_size: 32,
                num_hidden_layers: 1,
                num_attention_heads: 2,
                num_key_value_heads: 2,
                intermediate_size: 64,
                ..base.model.tiny.clone()
            },
            ..base.model.clone()
        },
        sampling: SamplingSection {
            prompts_per_step: 4,
            group_size: 4,
            max_new_tokens: 24,
            ..base.sampling.clone()
        },
        budget: BudgetSection {
            steps: 4,
            max_minutes: 0.0,
        },
        eval: EvalSection {
            every: 2,
            problems: 200,
            max_new_tokens: 24,
            batch_prompts: 200,
        },
        warmup: WarmupSection {
            steps: 10,
            batch_size: 16,
            ..base.warmup.clone()
        },
        checkpoint: CheckpointSection {
            every: 2,
            samples_per_step: 2,
        },
        ..base
    }
}

/// Code RL on the CPU: the tiny model warmed up on reference solutions of `builtin:pyfunc`,
/// then GRPO with the sandbox's test verdicts as the accuracy reward (see the README for
/// what it shows and why it is shaped so).
fn code() -> TrainConfig {
    let base = tiny();
    // The longest reference with its plan and tags is 67 tokens.
    let max_new_tokens = 72;
    let mut algorithm = grpo_without_reference(max_new_tokens);
    algorithm.shaping.filter_zero_variance_groups = true;
    TrainConfig {
        preset: Preset::Code,
        pack: PackSection {
            source: "builtin:pyfunc".into(),
            ..base.pack.clone()
        },
        algorithm,
        sampling: SamplingSection {
            // 16 completions per prompt: the warmed-up policy is sharp (entropy about 0.05
            // per token), and 8 left most groups tied.
            prompts_per_step: 8,
            group_size: 16,
            max_new_tokens,
            ..base.sampling.clone()
        },
        optimizer: OptimizerSection {
            // 1e-4 stayed flat for 200 steps; 2e-4 rises; 1e-3 fell.
            lr: 2e-4,
            ..base.optimizer.clone()
        },
        budget: BudgetSection {
            // At 450 steps after a 600-step warm-up the gain depended on the draw (+8.5 to
            // +18.5 points); three seeds of this recipe gained +18.5 to +25.5.
            steps: 600,
            max_minutes: 60.0,
        },
        eval: EvalSection {
            every: 50,
            problems: 200,
            max_new_tokens,
            batch_prompts: 200,
        },
        warmup: WarmupSection {
            // Copying the constants from the prompt emerges between 400 steps (7.5% held
            // out) and 1200 (95.5%). 500 steps on the first 500 problems leaves room (29.5
            // to 45.5% on seeds 0 to 2), and leaves GRPO 1500 training problems the warm-up
            // never showed: warmed up on all 2000, GRPO only sharpened what was memorised
            // and held-out accuracy stayed flat.
            steps: 500,
            problems: 500,
            ..base.warmup.clone()
        },
        ..base
    }
}

/// Tool-integrated RL on the CPU (see the README for what it shows): two- and three-term
/// arithmetic with two-digit numbers, where the tiny model guesses (a few percent after its
/// warm-up) unless it calls the interpreter. The warm-up shows both ways of answering, a
/// direct guess and a call whose output it copies; GRPO finds out which one earns reward.
fn tools() -> TrainConfig {
    let base = tiny();
    // The longest trace: <think>, the call (14), the output (6), </think>, the answer (5), EOS.
    let max_new_tokens = 32;
    let mut algorithm = grpo_without_reference(max_new_tokens);
    algorithm.shaping.filter_zero_variance_groups = true;
    TrainConfig {
        preset: Preset::Tools,
        pack: PackSection {
            source: "builtin:arith".into(),
            ..base.pack.clone()
        },
        algorithm,
        sampling: SamplingSection {
            max_new_tokens,
            ..base.sampling.clone()
        },
        budget: BudgetSection {
            steps: 100,
            max_minutes: 60.0,
        },
        eval: EvalSection {
            every: 25,
            problems: 200,
            max_new_tokens,
            batch_prompts: 100,
        },
        warmup: WarmupSection {
            // Half the examples call the tool (and copy its output), half guess, on the
            // first 500 problems: after it the policy calls the tool about half the time.
            steps: 1000,
            worked_fraction: 0.5,
            problems: 500,
            ..base.warmup.clone()
        },
        tools: ToolsSection {
            enabled: true,
            max_calls: 2,
            max_output_tokens: 8,
            time_limit_ms: 1_000,
            memory_mb: 64,
        },
        ..base
    }
}

/// A few GRPO steps on SmolLM2-135M-Instruct (set `model.source` to its GGUF file) on the
/// eight GSM8K-style problems of `grpo-runner/tests/data/gsm8k_mini.jsonl` (paths are relative
/// to the repository root), R1-Zero template inside the model's chat template.
fn smollm2() -> TrainConfig {
    let base = tiny();
    let max_new_tokens = 128;
    let algorithm = grpo_without_reference(max_new_tokens);
    TrainConfig {
        preset: Preset::Smollm2,
        model: ModelSection {
            source: ModelSource::Path("smollm2-135m-instruct.gguf".into()),
            chat_template: true,
            ..base.model.clone()
        },
        pack: PackSection {
            source: "grpo-runner/tests/data/gsm8k_mini.jsonl".into(),
            template: Some(Template::R1Zero),
            train_split: "gsm8k_mini".into(),
            eval_split: "gsm8k_mini".into(),
        },
        algorithm,
        sampling: SamplingSection {
            prompts_per_step: 2,
            group_size: 4,
            max_new_tokens,
            ..base.sampling.clone()
        },
        optimizer: OptimizerSection {
            lr: 1e-6,
            ..base.optimizer.clone()
        },
        schedule: ScheduleSection {
            kind: ScheduleKind::Constant,
            warmup_steps: 0,
            min_lr_ratio: 0.0,
        },
        budget: BudgetSection {
            steps: 3,
            max_minutes: 0.0,
        },
        eval: EvalSection {
            every: 1000,
            problems: 0,
            max_new_tokens,
            batch_prompts: 16,
        },
        warmup: WarmupSection {
            steps: 0,
            ..base.warmup.clone()
        },
        checkpoint: CheckpointSection {
            every: 0,
            samples_per_step: 4,
        },
        ..base
    }
}

/// LoRA GRPO on SmolLM2-135M-Instruct (a GGUF path must be given) on `builtin:arith-small`,
/// where the checkpoint answers 35% greedily and 60% within 8 samples (see the pack's
/// README): the group has a signal on most prompts, and greedy accuracy has room to rise.
fn smollm2_lora() -> TrainConfig {
    let base = smollm2();
    // A direct answer (`12 + 5 = 17`) takes about 10 tokens; a ramble that runs past 24 earns
    // nothing, which is most of what the first steps learn away.
    let max_new_tokens = 24;
    let algorithm = grpo_without_reference(max_new_tokens);
    TrainConfig {
        preset: Preset::Smollm2Lora,
        pack: PackSection {
            source: "builtin:arith-small".into(),
            template: Template::parse("{prompt} Answer with only the number.").ok(),
            train_split: "train".into(),
            eval_split: "eval".into(),
        },
        rewards: RewardsSection {
            // The answer alone: the prompt asks for no tags.
            format: Some(0.0),
            ..base.rewards.clone()
        },
        algorithm,
        sampling: SamplingSection {
            prompts_per_step: 8,
            group_size: 8,
            max_new_tokens,
            ..base.sampling.clone()
        },
        optimizer: OptimizerSection {
            lr: 2e-4,
            ..base.optimizer.clone()
        },
        budget: BudgetSection {
            steps: 40,
            max_minutes: 180.0,
        },
        eval: EvalSection {
            every: 10,
            problems: 200,
            max_new_tokens,
            batch_prompts: 100,
        },
        checkpoint: CheckpointSection {
            every: 10,
            samples_per_step: 4,
        },
        lora: crate::model::lora::LoraConfig {
            enabled: true,
            rank: 16,
            alpha: 32.0,
            ..Default::default()
        },
        ..base
    }
}
