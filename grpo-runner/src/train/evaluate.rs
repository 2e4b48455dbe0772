//! The evaluate phase: held-out evaluation inside a run, the one evaluation path
//! ([`crate::eval::evaluate`]) with the run's prompt encoding, token limit and batch, judged by
//! the run's reward set.

use std::sync::Arc;
use std::time::Instant;

use grpo_tasks::Task;

use super::rollout::score_with_retries;
use super::{Parts, Trainer};
use crate::error::Result;
use crate::eval::{EvalConfig, EvalSettings};
use crate::rollout::sampler::ToolDriver;
use crate::rollout::tools::CodeTool;
use crate::run::records::{EvalRecord, mean_std};

impl Trainer {
    /// Greedy accuracy on the first `eval.problems` problems of the eval split, from the
    /// accuracy verdict alone, through the one evaluation path ([`crate::eval::evaluate`]).
    /// A problem whose scoring faults on every try is left out and counted.
    pub fn evaluate(&mut self) -> Result<EvalRecord> {
        evaluate(&self.parts(), &self.eval_tasks)
    }
}

/// Greedy accuracy of `parts.policy` on the first `eval.problems` problems of `eval_tasks`
/// (see [`Trainer::evaluate`]), recorded at step `parts.step`.
pub(super) fn evaluate(parts: &Parts<'_>, eval_tasks: &[Task]) -> Result<EvalRecord> {
    let start = Instant::now();
    let n = match parts.config.eval.problems {
        0 => eval_tasks.len(),
        n => n.min(eval_tasks.len()),
    };
    let tasks: Vec<Task> = eval_tasks[..n].to_vec();
    let prompts: Vec<Vec<u32>> = tasks
        .iter()
        .map(|t| parts.encode_prompt(t).map(|p| p.1))
        .collect::<Result<_>>()?;
    let config = EvalConfig {
        max_new_tokens: parts.config.eval.max_new_tokens,
        samples: 0,
        batch_prompts: parts.config.eval.batch_prompts.max(1),
        ..EvalConfig::default()
    };
    let (mut formatted, mut faults) = (0usize, 0usize);
    let retries = parts.config.rewards.fault_retries;
    let timeout = parts.config.rewards.group_timeout();
    let rewards = Arc::clone(parts.scorer);
    let runtime = parts.runtime;
    let (tokenizer, settings) = (parts.tokenizer, &parts.config.tools);
    let mut make_tool = parts.tool_sandbox.cloned().map(|sandbox| {
        move || -> Box<dyn ToolDriver + '_> {
            Box::new(CodeTool::new(sandbox.clone(), runtime, tokenizer, settings))
        }
    });
    let report = crate::eval::evaluate_with_tools(
        parts.policy,
        parts.tokenizer,
        &prompts,
        &config,
        make_tool
            .as_mut()
            .map(|m| m as &mut crate::eval::ToolFactory<'_>),
        |i, completions| {
            let job = vec![(tasks[i].clone(), completions.to_vec())];
            let scored =
                runtime.block_on(score_with_retries(&rewards, &job, retries, timeout, None));
            Ok(match scored.into_iter().next().flatten() {
                Some(scores) => {
                    formatted += scores
                        .iter()
                        .filter(|s| s.components.format.is_some_and(|v| v >= 1.0))
                        .count();
                    scores.iter().map(|s| s.correct).collect()
                }
                None => {
                    faults += 1;
                    vec![false; completions.len()]
                }
            })
        },
    )?;
    let scored = n - faults;
    let correct = report.greedy_correct;
    let lengths: Vec<f64> = report
        .results
        .iter()
        .map(|r| r.greedy_tokens as f64)
        .collect();
    let frac = |a: usize| {
        if scored == 0 {
            0.0
        } else {
            a as f64 / scored as f64
        }
    };
    let record = EvalRecord {
        step: parts.step,
        accuracy: frac(correct),
        correct,
        problems: scored,
        format_rate: frac(formatted),
        completion_len_mean: mean_std(&lengths).0,
        seconds: start.elapsed().as_secs_f64(),
        faults,
    };
    tracing::info!(step = record.step, accuracy = record.accuracy, "evaluated");
    Ok(record)
}

impl Trainer {
    /// The run's evaluation settings, saved beside the final model for `grpo eval`.
    pub fn eval_settings(&self) -> EvalSettings {
        EvalSettings {
            pack: self.config.pack.source.clone(),
            split: self.config.pack.eval_split.clone(),
            problems: self.config.eval.problems,
            template: self.template.spec().to_owned(),
            chat_template: self.config.model.chat_template,
            max_new_tokens: self.config.eval.max_new_tokens,
            batch_prompts: self.config.eval.batch_prompts.max(1),
            accuracy_weight: self.rewards.weights().accuracy,
            format_weight: self.rewards.weights().format,
            tools: self.config.tools.enabled.then(|| self.config.tools.clone()),
        }
    }
}
