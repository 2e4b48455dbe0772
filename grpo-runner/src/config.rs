//! The training run configuration: typed TOML, run presets, `--set key=value` overrides, and
//! validation before any work starts.
//!
//! A run is described by one [`TrainConfig`]. It is resolved in layers on the TOML tree:
//!
//! 1. a named preset ([`Preset`]: `tiny`, the default; `smoke`, seconds-long for CI;
//!    `smollm2`, a few steps on a real checkpoint; `code`, code RL with sandbox rewards);
//! 2. a TOML file (`--config`), merged table by table over the preset;
//! 3. `--set key=value` overrides (`sampling.group_size=16`, `optimizer.lr=0`), in order.
//!
//! Setting `algorithm.name` in a layer replaces the whole `[algorithm]` table with that
//! algorithm's preset before the layer's other `algorithm.*` keys apply, so
//! `--set algorithm.name=dapo` gives DAPO's clip-higher, token mean and dynamic sampling.
//! Every struct denies unknown fields, so a misspelt key is an error naming it. The resolved
//! config is saved as `config.toml` in the run directory and loads back to the same value.
//!
//! ```
//! use grpo_runner::config::{Preset, TrainConfig};
//! let config = TrainConfig::resolve(Preset::Smoke, None, &["sampling.group_size=4".into()])?;
//! assert_eq!(config.sampling.group_size, 4);
//! let text = config.to_toml()?;
//! assert_eq!(TrainConfig::from_toml(&text)?, config);
//! # Ok::<(), grpo_runner::Error>(())
//! ```

use std::path::{Path, PathBuf};
use std::str::FromStr;

use grpo_core::{Algorithm, GrpoConfig};
use grpo_rewards::FormatMode;
use grpo_rewards::code::Credit;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::optim::AdamWConfig;
use crate::schedule::{Schedule, ScheduleKind};
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
    /// Code RL on the CPU: tiny model, warm-up on reference solutions, GRPO with sandbox
    /// rewards on `builtin:pyfunc`.
    Code,
}

impl FromStr for Preset {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "tiny" => Ok(Preset::Tiny),
            "smoke" => Ok(Preset::Smoke),
            "smollm2" => Ok(Preset::Smollm2),
            "code" => Ok(Preset::Code),
            other => Err(Error::Settings {
                field: "preset".into(),
                message: format!("unknown preset `{other}` (tiny, smoke, smollm2 or code)"),
            }),
        }
    }
}

/// Where the policy comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSection {
    /// `tiny` (a fresh tiny model and character tokenizer), or the path of an HF directory
    /// or a `.gguf` file.
    pub source: String,
    /// The tiny model's dimensions (used when `source = "tiny"`).
    pub tiny: TinyModelSpec,
    /// Start from the checkpoint's own chat template when it has one (real models).
    pub chat_template: bool,
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
    pub template: Option<String>,
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
}

impl RewardsSection {
    /// The weights this section sets (absent ones are left to the pack).
    pub fn weights(&self) -> grpo_tasks::RewardWeights {
        grpo_tasks::RewardWeights {
            accuracy: self.accuracy,
            format: self.format,
        }
    }
}

fn default_fault_retries() -> usize {
    2
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

/// The algorithm: a preset name and the full grpo-core configuration it resolved to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlgorithmSection {
    /// The preset this section started from (`grpo`, `dr_grpo`, `dapo`, `gspo`).
    pub name: Algorithm,
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
            advantage,
            loss,
            shaping,
        }
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
    /// [`crate::sft`].
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

/// Everything a training run needs; see the module docs for how it is resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainConfig {
    /// The preset this config started from.
    pub preset: Preset,
    /// Seed of every random choice (initialisation, prompts, sampling).
    pub seed: u64,
    /// CPU threads for tensor kernels (0: candle's default, all cores); `grpo train` applies
    /// it through `RAYON_NUM_THREADS` before any tensor work. Resumed runs reproduce an
    /// uninterrupted one only with the same thread count.
    pub threads: usize,
    /// The policy.
    pub model: ModelSection,
    /// The tasks.
    pub pack: PackSection,
    /// The rewards.
    pub rewards: RewardsSection,
    /// The code sandbox (used when the pack has code tasks).
    #[serde(default)]
    pub sandbox: SandboxSection,
    /// The GRPO variant.
    pub algorithm: AlgorithmSection,
    /// Rollouts.
    pub sampling: SamplingSection,
    /// The policy update.
    pub update: UpdateSection,
    /// AdamW.
    pub optimizer: OptimizerSection,
    /// Learning-rate schedule.
    pub schedule: ScheduleSection,
    /// Run length.
    pub budget: BudgetSection,
    /// Held-out evaluation.
    pub eval: EvalSection,
    /// Supervised warm-up.
    pub warmup: WarmupSection,
    /// Checkpoints and samples.
    pub checkpoint: CheckpointSection,
}

impl TrainConfig {
    /// The config of a preset, before any override.
    pub fn preset(preset: Preset) -> Self {
        match preset {
            Preset::Tiny => tiny(),
            Preset::Smoke => smoke(),
            Preset::Smollm2 => smollm2(),
            Preset::Code => code(),
        }
    }

    /// Resolves a preset, an optional TOML file and `key=value` overrides into a validated
    /// config (see the module docs).
    pub fn resolve(preset: Preset, file: Option<&Path>, overrides: &[String]) -> Result<Self> {
        let mut layers: Vec<(String, toml::Table)> = Vec::new();
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
                path: path.to_path_buf(),
                source,
            })?;
            let table: toml::Table = toml::from_str(&text).map_err(|e| Error::Settings {
                field: path.display().to_string(),
                message: e.to_string(),
            })?;
            layers.push((path.display().to_string(), table));
        }
        for item in overrides {
            layers.push((format!("--set {item}"), set_table(item)?));
        }
        // A layer may change the preset itself.
        let mut preset = preset;
        for (_, layer) in &layers {
            if let Some(toml::Value::String(name)) = layer.get("preset") {
                preset = name.parse()?;
            }
        }
        let mut tree = to_table(&Self::preset(preset))?;
        for (origin, layer) in layers {
            if let Some(toml::Value::Table(algorithm)) = layer.get("algorithm")
                && let Some(name) = algorithm.get("name")
            {
                let name: Algorithm =
                    name.clone()
                        .try_into()
                        .map_err(|e: toml::de::Error| Error::Settings {
                            field: "algorithm.name".into(),
                            message: format!("{origin}: {e}"),
                        })?;
                let max_len = tree
                    .get("sampling")
                    .and_then(|s| s.get("max_new_tokens"))
                    .and_then(toml::Value::as_integer)
                    .unwrap_or(1024)
                    .max(1) as usize;
                let section = AlgorithmSection::preset(name, max_len);
                tree.insert("algorithm".into(), toml::Value::Table(to_table(&section)?));
            }
            merge(&mut tree, layer);
        }
        let config: TrainConfig =
            toml::Value::Table(tree)
                .try_into()
                .map_err(|e: toml::de::Error| Error::Settings {
                    field: "config".into(),
                    message: e.to_string(),
                })?;
        config.validate()?;
        Ok(config)
    }

    /// Parses a complete config (as written by [`TrainConfig::to_toml`]) and validates it.
    pub fn from_toml(text: &str) -> Result<Self> {
        let config: TrainConfig = toml::from_str(text).map_err(|e| Error::Settings {
            field: "config".into(),
            message: e.to_string(),
        })?;
        config.validate()?;
        Ok(config)
    }

    /// The full config as TOML.
    pub fn to_toml(&self) -> Result<String> {
        toml::to_string_pretty(self).map_err(|e| Error::Settings {
            field: "config".into(),
            message: e.to_string(),
        })
    }

    /// The learning-rate schedule of the GRPO phase.
    pub fn schedule(&self) -> Schedule {
        Schedule {
            lr: self.optimizer.lr,
            kind: self.schedule.kind,
            warmup_steps: self.schedule.warmup_steps,
            min_lr_ratio: self.schedule.min_lr_ratio,
        }
    }

    /// Fills what the config leaves to the pack (`pack.template`, `rewards.accuracy`,
    /// `rewards.format`) from the pack's manifest, so the saved `config.toml` says what ran.
    pub fn resolve_from_pack(&mut self, manifest: &grpo_tasks::Manifest) {
        if self.pack.template.is_none() {
            self.pack.template = Some(manifest.template.spec().to_owned());
        }
        let weights = grpo_rewards::Weights::resolve(&self.rewards.weights(), &manifest.rewards);
        self.rewards.accuracy = Some(weights.accuracy);
        self.rewards.format = Some(weights.format);
    }

    /// The prompt template (the pack's when the config names none).
    pub fn template(&self, manifest: &grpo_tasks::Manifest) -> Result<grpo_tasks::Template> {
        match &self.pack.template {
            Some(spec) => grpo_tasks::Template::parse(spec).map_err(|e| Error::Settings {
                field: "pack.template".into(),
                message: e.to_string(),
            }),
            None => Ok(manifest.template.clone()),
        }
    }

    /// The scoring contract of this run: weights over the pack's, format mode, credit and
    /// sandbox limits.
    pub fn scoring(&self, manifest: &grpo_tasks::Manifest) -> Result<grpo_rewards::Scoring> {
        let mut scoring =
            grpo_rewards::Scoring::with_weights(&self.rewards.weights(), &manifest.rewards)
                .map_err(|e| Error::Settings {
                    field: "rewards".into(),
                    message: e.to_string(),
                })?;
        scoring.format_mode = self.rewards.format_mode;
        scoring.credit = self.rewards.credit;
        scoring.limits = grpo_rewards::code::Limits {
            time_limit_ms: self.sandbox.time_limit_ms,
            memory_mb: self.sandbox.memory_mb,
            ..grpo_rewards::code::Limits::default()
        };
        Ok(scoring)
    }

    /// The model path when the source is not the tiny factory.
    pub fn model_path(&self) -> Option<PathBuf> {
        (self.model.source != "tiny").then(|| PathBuf::from(&self.model.source))
    }

    /// Checks every field; the first problem is returned with its dotted name.
    pub fn validate(&self) -> Result<()> {
        fn bad(field: &str, message: impl Into<String>) -> Error {
            Error::Settings {
                field: field.into(),
                message: message.into(),
            }
        }
        fn finite_nonneg(field: &str, v: f64) -> Result<()> {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(bad(field, format!("{v} must be finite and ≥ 0")))
            }
        }
        fn positive(field: &str, v: u64) -> Result<()> {
            if v > 0 {
                Ok(())
            } else {
                Err(bad(field, "must be positive"))
            }
        }
        self.algorithm
            .grpo()
            .validate()
            .map_err(|e| bad("algorithm", e.to_string()))?;
        if self.model.source.is_empty() {
            return Err(bad("model.source", "must be `tiny` or a path"));
        }
        if self.model.source == "tiny" {
            let t = &self.model.tiny;
            positive("model.tiny.hidden_size", t.hidden_size as u64)?;
            positive("model.tiny.num_hidden_layers", t.num_hidden_layers as u64)?;
            positive(
                "model.tiny.num_attention_heads",
                t.num_attention_heads as u64,
            )?;
            positive(
                "model.tiny.num_key_value_heads",
                t.num_key_value_heads as u64,
            )?;
            if !t.hidden_size.is_multiple_of(t.num_attention_heads)
                || !(t.hidden_size / t.num_attention_heads).is_multiple_of(2)
            {
                return Err(bad(
                    "model.tiny.hidden_size",
                    "must split into heads of even width",
                ));
            }
            if !t.num_attention_heads.is_multiple_of(t.num_key_value_heads) {
                return Err(bad(
                    "model.tiny.num_key_value_heads",
                    "must divide num_attention_heads",
                ));
            }
            positive("model.tiny.intermediate_size", t.intermediate_size as u64)?;
            positive(
                "model.tiny.max_position_embeddings",
                t.max_position_embeddings as u64,
            )?;
        }
        if self.pack.source.is_empty() {
            return Err(bad("pack.source", "must name a pack"));
        }
        if let Some(template) = &self.pack.template {
            grpo_tasks::Template::parse(template)
                .map_err(|e| bad("pack.template", e.to_string()))?;
        }
        // The scoring contract's own rules, on the weights given here (the pack's fill in
        // the rest when the run starts).
        grpo_rewards::Weights::resolve(&self.rewards.weights(), &Default::default())
            .validate()
            .map_err(|e| match e {
                grpo_rewards::RewardError::InvalidConfig { field, reason } => bad(&field, reason),
                other => bad("rewards", other.to_string()),
            })?;
        positive("sandbox.time_limit_ms", self.sandbox.time_limit_ms)?;
        if self.sandbox.memory_mb < grpo_tasks::MIN_MEMORY_MB {
            return Err(bad(
                "sandbox.memory_mb",
                format!(
                    "{} MiB is below the interpreter's minimum of {} MiB",
                    self.sandbox.memory_mb,
                    grpo_tasks::MIN_MEMORY_MB
                ),
            ));
        }
        let s = &self.sampling;
        positive("sampling.prompts_per_step", s.prompts_per_step as u64)?;
        if s.group_size < 2 {
            return Err(bad(
                "sampling.group_size",
                "GRPO needs at least 2 completions per prompt",
            ));
        }
        if !(s.temperature.is_finite() && s.temperature > 0.0) {
            return Err(bad("sampling.temperature", "must be > 0 for training"));
        }
        if !(s.top_p > 0.0 && s.top_p <= 1.0) {
            return Err(bad("sampling.top_p", "must be in (0, 1]"));
        }
        positive("sampling.max_new_tokens", s.max_new_tokens as u64)?;
        let u = &self.update;
        positive("update.iterations", u.iterations as u64)?;
        positive("update.minibatches", u.minibatches as u64)?;
        if u.minibatches > s.prompts_per_step {
            return Err(bad(
                "update.minibatches",
                "cannot exceed sampling.prompts_per_step (groups stay whole)",
            ));
        }
        let o = &self.optimizer;
        finite_nonneg("optimizer.lr", o.lr)?;
        for (field, v) in [("optimizer.beta1", o.beta1), ("optimizer.beta2", o.beta2)] {
            if !(0.0..1.0).contains(&v) {
                return Err(bad(field, format!("{v} must be in [0, 1)")));
            }
        }
        if !(o.eps.is_finite() && o.eps > 0.0) {
            return Err(bad("optimizer.eps", "must be > 0"));
        }
        finite_nonneg("optimizer.weight_decay", o.weight_decay)?;
        finite_nonneg("optimizer.max_grad_norm", o.max_grad_norm)?;
        if !(0.0..=1.0).contains(&self.schedule.min_lr_ratio) {
            return Err(bad("schedule.min_lr_ratio", "must be in [0, 1]"));
        }
        finite_nonneg("budget.max_minutes", self.budget.max_minutes)?;
        positive("eval.every", self.eval.every)?;
        positive("eval.max_new_tokens", self.eval.max_new_tokens as u64)?;
        positive("eval.batch_prompts", self.eval.batch_prompts as u64)?;
        let w = &self.warmup;
        if w.steps > 0 {
            positive("warmup.batch_size", w.batch_size as u64)?;
            finite_nonneg("warmup.lr", w.lr)?;
        }
        if !(0.0..=1.0).contains(&w.worked_fraction) {
            return Err(bad("warmup.worked_fraction", "must be in [0, 1]"));
        }
        Ok(())
    }
}

/// Parses `a.b.c=value` into a nested table; the value is read as TOML (`3`, `0.5`, `true`,
/// `"text"`, `[1, 2]`) and, when that fails, taken as a plain string.
fn set_table(item: &str) -> Result<toml::Table> {
    let Some((key, value)) = item.split_once('=') else {
        return Err(Error::Settings {
            field: item.into(),
            message: "expected key=value".into(),
        });
    };
    let key = key.trim();
    if key.is_empty() || key.split('.').any(str::is_empty) {
        return Err(Error::Settings {
            field: key.into(),
            message: "empty key segment".into(),
        });
    }
    let value = value.trim();
    let parsed = toml::from_str::<toml::Table>(&format!("v = {value}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(value.to_string()));
    let mut nested = parsed;
    for part in key.split('.').rev() {
        let mut table = toml::Table::new();
        table.insert(part.to_string(), nested);
        nested = toml::Value::Table(table);
    }
    match nested {
        toml::Value::Table(table) => Ok(table),
        _ => Err(Error::Settings {
            field: key.into(),
            message: "expected key=value".into(),
        }),
    }
}

/// Merges `layer` into `base`: tables recursively, anything else replaces.
fn merge(base: &mut toml::Table, layer: toml::Table) {
    for (key, value) in layer {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(l)) => merge(b, l),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

fn to_table<T: Serialize>(value: &T) -> Result<toml::Table> {
    toml::Table::try_from(value).map_err(|e| Error::Settings {
        field: "config".into(),
        message: e.to_string(),
    })
}

/// The built-in CPU run (see the crate README for what it shows and why it is shaped so).
fn tiny() -> TrainConfig {
    let max_new_tokens = 28;
    let mut algorithm = AlgorithmSection::preset(Algorithm::Grpo, max_new_tokens);
    // No reference model: β = 0 (as Dr. GRPO and DAPO do); the clip keeps updates small.
    algorithm.loss.beta = 0.0;
    // DAPO's dynamic sampling: as the policy sharpens, more groups come back all right (or
    // all wrong) and carry no gradient; dropping and refilling them kept the rise going
    // (+22.5 points after 1200 steps, against +17.5 after 900 without).
    algorithm.shaping.filter_zero_variance_groups = true;
    TrainConfig {
        preset: Preset::Tiny,
        seed: 0,
        threads: 0,
        model: ModelSection {
            source: "tiny".into(),
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
        },
        pack: PackSection {
            source: "builtin:arith-digits".into(),
            template: Some("{prompt}\n".into()),
            train_split: "train".into(),
            eval_split: "eval".into(),
        },
        rewards: RewardsSection {
            accuracy: Some(1.0),
            format: Some(0.1),
            format_mode: FormatMode::Strict,
            credit: Credit::Binary,
            fault_retries: default_fault_retries(),
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
    let mut algorithm = AlgorithmSection::preset(Algorithm::Grpo, max_new_tokens);
    algorithm.loss.beta = 0.0;
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
            steps: 450,
            max_minutes: 30.0,
        },
        eval: EvalSection {
            every: 50,
            problems: 200,
            max_new_tokens,
            batch_prompts: 200,
        },
        warmup: WarmupSection {
            // Copying the constants from the prompt emerges between 400 steps (7.5% held
            // out) and 1200 (95.5%). 600 steps on the first 500 problems leaves room (57%),
            // and leaves GRPO 1500 training problems the warm-up never showed: warmed up on
            // all 2000, GRPO only sharpened what was memorised and held-out accuracy stayed
            // flat.
            steps: 600,
            problems: 500,
            ..base.warmup.clone()
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
    let mut algorithm = AlgorithmSection::preset(Algorithm::Grpo, max_new_tokens);
    algorithm.loss.beta = 0.0;
    TrainConfig {
        preset: Preset::Smollm2,
        model: ModelSection {
            source: "smollm2-135m-instruct.gguf".into(),
            chat_template: true,
            ..base.model.clone()
        },
        pack: PackSection {
            source: "grpo-runner/tests/data/gsm8k_mini.jsonl".into(),
            template: Some("r1_zero".into()),
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_validates_and_round_trips() {
        for preset in [Preset::Tiny, Preset::Smoke, Preset::Smollm2, Preset::Code] {
            let config = TrainConfig::preset(preset);
            config.validate().unwrap();
            let text = config.to_toml().unwrap();
            assert_eq!(TrainConfig::from_toml(&text).unwrap(), config, "{preset:?}");
        }
    }

    #[test]
    fn overrides_apply_in_order_and_parse_toml_values() {
        let sets = [
            "sampling.group_size=4",
            "optimizer.lr=0",
            "pack.template=plain",
            "algorithm.loss.beta=0.04",
            "sampling.group_size=6",
            "schedule.kind=\"cosine\"",
            "warmup.problems=300",
        ]
        .map(String::from);
        let c = TrainConfig::resolve(Preset::Tiny, None, &sets).unwrap();
        assert_eq!(c.sampling.group_size, 6);
        assert_eq!(c.warmup.problems, 300);
        assert_eq!(c.optimizer.lr, 0.0);
        assert_eq!(c.pack.template.as_deref(), Some("plain"));
        assert_eq!(c.algorithm.loss.beta, 0.04);
        assert_eq!(c.schedule.kind, ScheduleKind::Cosine);
    }

    #[test]
    fn algorithm_name_resets_the_section_before_other_keys() {
        let sets = ["algorithm.name=dapo", "algorithm.loss.epsilon_high=0.3"].map(String::from);
        let c = TrainConfig::resolve(Preset::Tiny, None, &sets).unwrap();
        assert_eq!(c.algorithm.name, Algorithm::Dapo);
        assert!(c.algorithm.shaping.filter_zero_variance_groups);
        assert_eq!(c.algorithm.loss.reduction, grpo_core::LossReduction::Token);
        // Applied after the preset, within the same layer.
        assert_eq!(c.algorithm.loss.epsilon_high, 0.3);
        // Dr. GRPO's constant normaliser takes the configured completion length.
        let sets = ["sampling.max_new_tokens=64", "algorithm.name=dr_grpo"].map(String::from);
        let c = TrainConfig::resolve(Preset::Tiny, None, &sets).unwrap();
        assert_eq!(
            c.algorithm.loss.reduction,
            grpo_core::LossReduction::Constant { max_len: 64 }
        );
    }

    #[test]
    fn a_file_layer_merges_over_the_preset() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.toml");
        std::fs::write(
            &path,
            "seed = 7\n[sampling]\ngroup_size = 3\n[budget]\nsteps = 9\n",
        )
        .unwrap();
        let c =
            TrainConfig::resolve(Preset::Smoke, Some(&path), &["budget.steps=11".into()]).unwrap();
        assert_eq!((c.seed, c.sampling.group_size, c.budget.steps), (7, 3, 11));
        // Untouched fields keep the preset's values.
        assert_eq!(
            c.sampling.prompts_per_step,
            TrainConfig::preset(Preset::Smoke).sampling.prompts_per_step
        );
        // The preset can be chosen by a layer.
        let c = TrainConfig::resolve(Preset::Tiny, None, &["preset=smoke".into()]).unwrap();
        assert_eq!(c.preset, Preset::Smoke);
    }

    #[test]
    fn unknown_and_mistyped_keys_are_errors_naming_them() {
        for (set, needle) in [
            ("sampling.group_sise=4", "group_sise"),
            ("nonsense=1", "nonsense"),
            ("sampling.group_size=\"many\"", "group_size"),
            ("algorithm.name=ppo", "algorithm.name"),
            ("preset=huge", "huge"),
            ("no_equals_sign", "key=value"),
        ] {
            let err = TrainConfig::resolve(Preset::Tiny, None, &[set.into()])
                .unwrap_err()
                .to_string();
            assert!(err.contains(needle), "{set}: {err}");
        }
    }

    #[test]
    fn validation_names_the_field() {
        for (set, field) in [
            ("sampling.group_size=1", "sampling.group_size"),
            ("sampling.temperature=0", "sampling.temperature"),
            ("sampling.top_p=1.5", "sampling.top_p"),
            ("optimizer.lr=-1", "optimizer.lr"),
            ("optimizer.beta2=1", "optimizer.beta2"),
            ("update.minibatches=0", "update.minibatches"),
            ("update.minibatches=99", "update.minibatches"),
            ("eval.every=0", "eval.every"),
            ("warmup.worked_fraction=1.5", "warmup.worked_fraction"),
            ("pack.template=\"no placeholder\"", "pack.template"),
            ("model.tiny.num_attention_heads=3", "model.tiny.hidden_size"),
            ("algorithm.loss.epsilon_low=2", "algorithm"),
            ("rewards.format=nan", "rewards.format"),
        ] {
            let err = TrainConfig::resolve(Preset::Tiny, None, &[set.into()])
                .unwrap_err()
                .to_string();
            assert!(err.contains(field), "{set}: {err}");
        }
    }
}
