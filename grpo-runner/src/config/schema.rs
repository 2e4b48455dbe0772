//! The config's sections, one struct per TOML table; every struct denies unknown fields.

use std::path::PathBuf;

use grpo_core::{Algorithm, Conventions, GrpoConfig};
use grpo_rewards::FormatMode;
use grpo_rewards::code::Credit;
use grpo_tasks::Template;
use serde::{Deserialize, Serialize};

use crate::device::{ComputeDtype, DeviceSpec};
use crate::optim::AdamWConfig;
use crate::schedule::ScheduleKind;
use crate::tiny::TinyModelSpec;

/// Where the policy comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSection {
    /// `tiny` (a fresh tiny model and character tokenizer), or the path of an HF directory
    /// or a `.gguf` file.
    pub source: ModelSource,
    /// The tiny model's dimensions (used when `source = "tiny"`).
    pub tiny: TinyModelSpec,
    /// Start from the checkpoint's own chat template when it has one (real models).
    pub chat_template: bool,
    /// Where the model runs: `cpu` (default), `cuda:N` (`cuda` is `cuda:0`) or `metal`.
    /// CUDA and Metal need the binary built with `--features cuda` / `--features metal`.
    #[serde(default)]
    pub device: DeviceSpec,
    /// The dtype of forward passes (training and sampling): `f32` (default), `bf16` or
    /// `f16`. The weights and the optimiser state stay f32; log-softmax, RMSNorm and the
    /// loss stay in f32 (see [`crate::model`]).
    #[serde(default)]
    pub dtype: ComputeDtype,
}

/// Where the policy's weights come from; written in TOML as `"tiny"` or a path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum ModelSource {
    /// A fresh tiny model and character tokenizer, shaped by `model.tiny`.
    Tiny,
    /// An HF directory (`config.json`, `model.safetensors`, `tokenizer.json`) or a `.gguf`
    /// file.
    Path(PathBuf),
}

impl TryFrom<String> for ModelSource {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        match text.as_str() {
            "tiny" => Ok(ModelSource::Tiny),
            "" => Err("`model.source` must be `tiny` or a path".into()),
            _ => Ok(ModelSource::Path(PathBuf::from(text))),
        }
    }
}

impl From<ModelSource> for String {
    fn from(source: ModelSource) -> String {
        match source {
            ModelSource::Tiny => "tiny".into(),
            ModelSource::Path(path) => path.display().to_string(),
        }
    }
}

/// The task pack and how prompts are rendered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackSection {
    /// A `.jsonl` file, a pack directory, or `builtin:NAME`.
    pub source: String,
    /// Prompt template: `r1_zero`, `compact`, `plain`, or a custom text with `{prompt}`;
    /// absent: the pack's (the run's `config.toml` records the one used).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<Template>,
    /// The split trained on.
    pub train_split: String,
    /// The held-out split evaluated on.
    pub eval_split: String,
}

/// The reward functions and their weights (the scoring contract, [`grpo_rewards::Scoring`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RewardsSection {
    /// Weight of the accuracy reward (1 when the answer is right); absent: the pack's
    /// `[rewards]` weight, else 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<f64>,
    /// Weight of the format reward (1 when `<think>…</think><answer>…</answer>` is kept);
    /// absent: the pack's, else 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<f64>,
    /// How strictly the format is judged.
    pub format_mode: FormatMode,
    /// Code tests: `binary` (1 when every test passes) or `partial` (the fraction passed).
    #[serde(default)]
    pub credit: Credit,
    /// Times a group whose scoring failed on our side (a sandbox fault) is scored again
    /// before it is left out of the update (and counted in `metrics.jsonl`).
    #[serde(default = "default_fault_retries")]
    pub fault_retries: usize,
    /// Seconds one group's scoring may take before it counts as a fault (a reward that
    /// hangs), retried and then left out like any fault. A safety net far above any sandbox
    /// limit, so a healthy run never depends on machine speed; 0 turns it off.
    #[serde(default = "default_group_timeout_s")]
    pub group_timeout_s: f64,
}

impl RewardsSection {
    /// How long one group's scoring may take (`None`: no limit).
    pub fn group_timeout(&self) -> Option<std::time::Duration> {
        (self.group_timeout_s > 0.0)
            .then(|| std::time::Duration::try_from_secs_f64(self.group_timeout_s).ok())
            .flatten()
    }

    /// The weights this section sets (absent ones are left to the pack).
    pub fn weights(&self) -> grpo_tasks::RewardWeights {
        grpo_tasks::RewardWeights {
            accuracy: self.accuracy,
            format: self.format,
        }
    }
}

pub(super) fn default_fault_retries() -> usize {
    2
}

pub(super) fn default_group_timeout_s() -> f64 {
    600.0
}

/// The code sandbox: where and how generated programs run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SandboxSection {
    /// Programs run at once (0: one per core).
    pub concurrency: usize,
    /// CPU time of one run, in milliseconds (a task's own `time_limit_ms` overrides it).
    pub time_limit_ms: u64,
    /// Memory of one run, in MiB (a task's own `memory_mb` overrides it).
    pub memory_mb: u64,
    /// Where each run's empty `/tmp` is created (absent: the system's temporary directory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temp_dir: Option<PathBuf>,
}

impl Default for SandboxSection {
    fn default() -> Self {
        let limits = grpo_rewards::code::Limits::default();
        SandboxSection {
            concurrency: 0,
            time_limit_ms: limits.time_limit_ms,
            memory_mb: limits.memory_mb,
            temp_dir: None,
        }
    }
}

/// A code-interpreter tool for the policy (multi-turn rollouts; see [`crate::rollout::tools`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ToolsSection {
    /// Give the policy the Python interpreter: a ```` ```python ```` block it closes runs in
    /// the completion's own interpreter session, and the output comes back as context.
    pub enabled: bool,
    /// Most calls per completion (a block after that is plain text).
    pub max_calls: usize,
    /// Most tokens of one call's output block (the output is cut to fit).
    pub max_output_tokens: usize,
    /// CPU time of one call, in milliseconds.
    pub time_limit_ms: u64,
    /// Memory of one completion's interpreter, in MiB.
    pub memory_mb: u64,
}

impl Default for ToolsSection {
    fn default() -> Self {
        ToolsSection {
            enabled: false,
            max_calls: 2,
            max_output_tokens: 24,
            time_limit_ms: 2_000,
            memory_mb: 128,
        }
    }
}

/// The algorithm: a preset name, whose numeric conventions to follow, and the full grpo-core
/// configuration they resolved to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlgorithmSection {
    /// The preset this section started from (`grpo`, `dr_grpo`, `dapo`, `gspo`).
    pub name: Algorithm,
    /// Whose numerics the options below follow where trainers differ: `grpo-rs` (default),
    /// `verl` or `trl` (see [`grpo_core::Conventions`]). Setting it in a layer sets the
    /// options it decides before that layer's other `algorithm.*` keys apply.
    #[serde(default)]
    pub conventions: Conventions,
    /// How rewards become advantages.
    pub advantage: grpo_core::AdvantageConfig,
    /// How the loss is built and reduced.
    pub loss: grpo_core::LossConfig,
    /// Reward shaping (overlong punishment, dynamic sampling).
    pub shaping: grpo_core::ShapingConfig,
}

impl AlgorithmSection {
    /// The section of a named algorithm for completions of at most `max_completion_len` tokens.
    pub fn preset(name: Algorithm, max_completion_len: usize) -> Self {
        let GrpoConfig {
            advantage,
            loss,
            shaping,
        } = name.config(max_completion_len);
        AlgorithmSection {
            name,
            conventions: Conventions::GrpoRs,
            advantage,
            loss,
            shaping,
        }
    }

    /// Records `conventions` and sets the grpo-core options it decides.
    pub fn apply_conventions(&mut self, conventions: Conventions) {
        self.conventions = conventions;
        conventions.apply(&mut self.advantage, &mut self.loss);
    }

    /// The grpo-core configuration.
    pub fn grpo(&self) -> GrpoConfig {
        GrpoConfig {
            advantage: self.advantage.clone(),
            loss: self.loss.clone(),
            shaping: self.shaping.clone(),
        }
    }
}

/// Rollouts: how many, and how tokens are drawn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SamplingSection {
    /// Prompts per step.
    pub prompts_per_step: usize,
    /// Completions per prompt (G).
    pub group_size: usize,
    /// Softmax temperature (> 0 for training).
    pub temperature: f64,
    /// Nucleus sampling mass (1 keeps all).
    pub top_p: f64,
    /// Keep only the k most likely tokens (0 keeps all).
    pub top_k: usize,
    /// Most tokens per completion, EOS included.
    pub max_new_tokens: usize,
    /// Most rows decoded in one forward pass (0: no limit).
    pub max_batch_rows: usize,
    /// Never draw an end-of-sequence token, so every completion runs to `max_new_tokens`
    /// (for timing against other trainers with the same token count; see
    /// [`SamplingConfig::ignore_eos`](crate::rollout::sampler::SamplingConfig::ignore_eos)).
    #[serde(default)]
    pub ignore_eos: bool,
}

/// The policy update of one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdateSection {
    /// μ: passes over the step's rollouts (1 is on-policy; > 1 reuses them with the ratio).
    pub iterations: usize,
    /// Optimiser steps per pass; each takes whole groups.
    pub minibatches: usize,
    /// Groups per forward/backward pass inside a minibatch (gradient accumulation; 0: the
    /// whole minibatch at once).
    pub micro_batch_groups: usize,
    /// With dynamic sampling, most extra sampling rounds to refill dropped groups.
    pub max_refill_rounds: usize,
}

/// AdamW settings and the peak learning rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OptimizerSection {
    /// Peak learning rate.
    pub lr: f64,
    /// First-moment decay.
    pub beta1: f64,
    /// Second-moment decay.
    pub beta2: f64,
    /// Denominator epsilon.
    pub eps: f64,
    /// Decoupled weight decay.
    pub weight_decay: f64,
    /// Global grad-norm clip (0 disables).
    pub max_grad_norm: f64,
}

impl OptimizerSection {
    /// The optimiser's hyper-parameters.
    pub fn adamw(&self) -> AdamWConfig {
        AdamWConfig {
            beta1: self.beta1,
            beta2: self.beta2,
            eps: self.eps,
            weight_decay: self.weight_decay,
            max_grad_norm: (self.max_grad_norm > 0.0).then_some(self.max_grad_norm),
        }
    }
}

/// The learning-rate schedule (the peak is `optimizer.lr`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduleSection {
    /// Constant, cosine or linear after warm-up.
    pub kind: ScheduleKind,
    /// Steps of linear warm-up.
    pub warmup_steps: u64,
    /// Floor as a fraction of the peak.
    pub min_lr_ratio: f64,
}

/// How long the run lasts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetSection {
    /// GRPO steps.
    pub steps: u64,
    /// Stop early (after a final evaluation) once this much wall-clock time has passed
    /// (0: no limit).
    pub max_minutes: f64,
}

/// Held-out evaluation: greedy decoding, accuracy verdict only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvalSection {
    /// Evaluate every this many steps (and always before the first and after the last).
    pub every: u64,
    /// Problems from the eval split (the first N; 0: all).
    pub problems: usize,
    /// Most tokens per greedy completion.
    pub max_new_tokens: usize,
    /// Prompts decoded together.
    pub batch_prompts: usize,
}

/// The supervised warm-up that teaches the answer format before RL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WarmupSection {
    /// Optimiser steps (0 skips the warm-up).
    pub steps: u64,
    /// Examples per step.
    pub batch_size: usize,
    /// Peak learning rate (cosine decay to 10%).
    pub lr: f64,
    /// Fraction of examples solved step by step (the rest jump to the result); see
    /// [`crate::train::sft`].
    pub worked_fraction: f64,
    /// Train only on the first this many training problems (0: all of them), so that GRPO
    /// then meets problems the warm-up never showed and the rise measures what RL adds
    /// rather than what the warm-up memorised.
    #[serde(default)]
    pub problems: usize,
}

/// Checkpoints in the run directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointSection {
    /// Write a checkpoint every this many steps (0: only the final model).
    pub every: u64,
    /// Completions per step written to `samples.jsonl`.
    pub samples_per_step: usize,
}

/// Where a run's metrics go besides `metrics.jsonl` and `eval.jsonl`, which are always
/// written and stay the source of truth.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportSection {
    /// Extra writers: `["tensorboard"]` writes TensorBoard event files into the run
    /// directory, every scalar of each step record (nested keys as `parent/key`) and each
    /// evaluation (as `eval/key`). `--set report.to=tensorboard` gives one.
    #[serde(default, deserialize_with = "one_or_many")]
    pub to: Vec<ReportTarget>,
}

/// An extra metrics writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReportTarget {
    /// TensorBoard event files (`events.out.tfevents.*`) in the run directory.
    Tensorboard,
}

/// A list, or one item on its own (`--set report.to=tensorboard`).
fn one_or_many<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> std::result::Result<Vec<ReportTarget>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(ReportTarget),
        Many(Vec<ReportTarget>),
    }
    Ok(match OneOrMany::deserialize(deserializer)? {
        OneOrMany::One(one) => vec![one],
        OneOrMany::Many(many) => many,
    })
}
