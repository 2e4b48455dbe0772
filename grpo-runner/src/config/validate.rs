//! Every setting checked once, before any work starts; the first problem names its field.

use grpo_tasks::{Language, Task};

use super::TrainConfig;
use crate::error::{Error, Result};

impl TrainConfig {
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
        finite_nonneg("rewards.group_timeout_s", self.rewards.group_timeout_s)?;
        if self.lora.enabled {
            self.lora.validate()?;
        }
        self.algorithm
            .grpo()
            .validate()
            .map_err(|e| bad("algorithm", e.to_string()))?;
        if self.model.source == super::ModelSource::Tiny {
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
        let a = &self.algorithm;
        let groups_of_one = a.advantage.group_of_one == grpo_core::GroupOfOne::RawScore
            && !a.shaping.filter_zero_variance_groups;
        if s.group_size < 2 && !(s.group_size == 1 && groups_of_one) {
            return Err(bad(
                "sampling.group_size",
                "GRPO needs at least 2 completions per prompt (1 only with \
                 algorithm.advantage.group_of_one = \"raw_score\", as under conventions = \
                 \"verl\", and without dynamic sampling)",
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
    /// Checks the settings against the run's tasks: the interpreter tool's call fence
    /// (```` ```python ````) must not also be a task's program fence. A Python code task's
    /// program is the completion's last ```` ```python ```` block, so with the tool on every
    /// call would be read as the program and every program run as a call.
    pub fn validate_for_tasks<'a>(&self, tasks: impl IntoIterator<Item = &'a Task>) -> Result<()> {
        if !self.tools.enabled {
            return Ok(());
        }
        if let Some(task) = tasks.into_iter().find_map(|t| match t {
            Task::Code(code) if code.language == Language::Python => Some(code),
            _ => None,
        }) {
            return Err(Error::Settings {
                field: "tools.enabled".into(),
                message: format!(
                    "the pack has Python code tasks (first: {:?}), whose program is the \
                     completion's ```python block, which the interpreter tool reads as a call; \
                     turn the tool off for code packs",
                    task.id
                ),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod task_tests {
    use super::*;

    fn task(line: &str) -> Task {
        serde_json::from_str(line).expect("a task")
    }

    #[test]
    fn the_tool_is_refused_with_python_code_tasks_only() {
        let python = task(
            r#"{"kind":"code","id":"p","prompt":"","language":"python","mode":"full","tests":{"type":"stdio","cases":[]}}"#,
        );
        let cpp = task(
            r#"{"kind":"code","id":"c","prompt":"","language":"cpp","mode":"full","tests":{"type":"stdio","cases":[]}}"#,
        );
        let math = task(r#"{"kind":"math","id":"m","prompt":"1+1","answer":"2"}"#);
        let mut config = TrainConfig::preset(crate::config::Preset::Tools);
        assert!(config.tools.enabled);
        let err = config
            .validate_for_tasks([&math, &cpp, &python])
            .expect_err("a Python code task with the tool on");
        assert!(err.to_string().contains("tools.enabled"), "{err}");
        assert!(err.to_string().contains("\"p\""), "{err}");
        assert!(config.validate_for_tasks([&math, &cpp]).is_ok());
        config.tools.enabled = false;
        assert!(config.validate_for_tasks([&math, &cpp, &python]).is_ok());
    }
}
