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

mod layers;
mod presets;
mod schema;
#[cfg(test)]
mod tests;
mod validate;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::schedule::Schedule;

pub use presets::Preset;
pub use schema::*;

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
    /// Extra metrics writers (TensorBoard).
    #[serde(default)]
    pub report: ReportSection,
    /// A code-interpreter tool for the policy.
    #[serde(default)]
    pub tools: ToolsSection,
    /// LoRA: train low-rank adapters on the frozen model instead of the full model.
    #[serde(default)]
    pub lora: crate::model::lora::LoraConfig,
}

impl TrainConfig {
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
            self.pack.template = Some(manifest.template.clone());
        }
        let weights = grpo_rewards::Weights::resolve(&self.rewards.weights(), &manifest.rewards);
        self.rewards.accuracy = Some(weights.accuracy);
        self.rewards.format = Some(weights.format);
    }

    /// The prompt template (the pack's when the config names none).
    pub fn template(&self, manifest: &grpo_tasks::Manifest) -> grpo_tasks::Template {
        self.pack
            .template
            .clone()
            .unwrap_or_else(|| manifest.template.clone())
    }

    /// The scoring contract of this run: weights over the pack's, format mode, credit and
    /// sandbox limits.
    pub fn scoring(&self, manifest: &grpo_tasks::Manifest) -> Result<grpo_rewards::ScoringConfig> {
        let mut scoring =
            grpo_rewards::ScoringConfig::with_weights(&self.rewards.weights(), &manifest.rewards)
                .map_err(|e| Error::Settings {
                field: "rewards".into(),
                message: e.to_string(),
            })?;
        scoring.format_mode = self.rewards.format_mode;
        scoring.evaluated_numbers = manifest.math.evaluated_numbers;
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
        match &self.model.source {
            ModelSource::Tiny => None,
            ModelSource::Path(path) => Some(path.clone()),
        }
    }
}
