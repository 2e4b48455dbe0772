//! The supervised warm-up: a short SFT on generated solutions so a model trained from scratch
//! writes `<think>…</think><answer>…</answer>` before reinforcement learning starts (the small
//! "cold start" of the R1 recipe).
//!
//! Solutions come from the worked solution a generated math task carries in its metadata
//! (`grpo tasks generate arith` stores it; imported tasks have none and are left out). For a
//! problem such as `What is 47 - 12 + 8?` there are two styles:
//!
//! - *worked*: one step at a time, `<think>47-12=35,35+8=43</think><answer>43</answer>`;
//! - *direct*: the whole chain at once, `<think>47-12+8=43</think><answer>43</answer>`.
//!
//! A one-step problem reads the same in both styles. The warm-up mixes them
//! ([`crate::config::WarmupSection::worked_fraction`]): both are correct, both keep the format,
//! and the warmed-up model has seen both ways of answering. Which one earns more reward on
//! two-step problems is left for reinforcement learning to find out.
//!
//! The tiny tokenizer ([`format_tokenizer`]) is character-level, with the four format tags as
//! single tokens so a completion is mostly its content.

use std::time::Instant;

use candle_core::Device;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tokenizers::AddedToken;

use crate::config::WarmupSection;
use crate::error::{Error, Result};
use crate::model::Model;
use crate::optim::{AdamW, AdamWConfig};
use crate::rollout::batch::PackedBatch;
use crate::schedule::{Schedule, ScheduleKind};
use crate::tokenizer::{CHAR_EOS, Tokenizer};
use grpo_tasks::{CodeTask, MathTask};

/// The tags of the R1-Zero answer format, single tokens in [`format_tokenizer`]: the default
/// [`AnswerFormat`](grpo_rewards::AnswerFormat)'s (a test keeps them equal), which the rewards
/// read.
pub const FORMAT_TAGS: [&str; 4] = ["<think>", "</think>", "<answer>", "</answer>"];

/// A character-level tokenizer over every character of `texts` (plus digits and the
/// arithmetic signs), with the [`FORMAT_TAGS`] as whole tokens.
///
/// ```
/// use grpo_runner::train::sft::format_tokenizer;
/// let tok = format_tokenizer(&["What is 2 + 3?"])?;
/// let ids = tok.encode("<think>2+3=5</think><answer>5</answer>")?;
/// // <think> 2 + 3 = 5 </think> <answer> 5 </answer>: the tags are one token each
/// assert_eq!(ids.len(), 10);
/// assert_eq!(tok.decode(&ids)?, "<think>2+3=5</think><answer>5</answer>");
/// # Ok::<(), grpo_runner::Error>(())
/// ```
pub fn format_tokenizer(texts: &[&str]) -> Result<Tokenizer> {
    tokenizer_with_tags(texts, &FORMAT_TAGS)
}

/// [`format_tokenizer`] for runs whose policy calls the code interpreter: every printable
/// ASCII character too (what code and its output are written in), and the tool's fences
/// ([`crate::rollout::tools::TOOL_TAGS`]) as whole tokens.
///
/// ```
/// use grpo_runner::train::sft::tool_tokenizer;
/// let tok = tool_tokenizer(&["What is 2 + 3?"])?;
/// let text = "<think>```python\n2+3\n```\n```output\n5\n```\n</think><answer>5</answer>";
/// let ids = tok.encode(text)?;
/// // <think> fence 2 + 3 fence fence 5 fence </think> <answer> 5 </answer>
/// assert_eq!(ids.len(), 13);
/// assert_eq!(tok.decode(&ids)?, text);
/// # Ok::<(), grpo_runner::Error>(())
/// ```
pub fn tool_tokenizer(texts: &[&str]) -> Result<Tokenizer> {
    let printable: String = (b' '..=b'~').map(char::from).chain(['\n']).collect();
    let mut all = texts.to_vec();
    all.push(&printable);
    let tags: Vec<&str> = FORMAT_TAGS
        .iter()
        .chain(crate::rollout::tools::TOOL_TAGS.iter())
        .copied()
        .collect();
    tokenizer_with_tags(&all, &tags)
}

fn tokenizer_with_tags(texts: &[&str], tags: &[&str]) -> Result<Tokenizer> {
    let mut vocab = String::from("0123456789+-*/()=,.? \n");
    for t in texts {
        vocab.push_str(t);
    }
    for tag in FORMAT_TAGS {
        vocab.push_str(tag);
    }
    let chars = Tokenizer::train_chars(&vocab)?;
    let mut inner = chars.inner().clone();
    inner
        .add_tokens(tags.iter().map(|t| AddedToken::from(*t, false)))
        .map_err(|e| Error::Tokenizer {
            message: e.to_string(),
        })?;
    Tokenizer::new(inner, Some(CHAR_EOS.into()), None, None)
}

/// A math task's warm-up solution in the answer format, worked step by step or direct (see
/// the module docs), from the solution its generator stored in the metadata (`work` and
/// `expression`, as `grpo tasks generate arith` writes them); `None` for a task without one,
/// or whose stored work does not end at its reference answer.
///
/// ```
/// use grpo_runner::train::sft::solution;
/// use grpo_tasks::MathTask;
/// let task: MathTask = serde_json::from_str(r#"{"id":"a","prompt":"What is 47 - 12 + 8?",
///     "answer":"43","metadata":{"expression":"47-12+8","work":["47-12=35","35+8=43"]}}"#)?;
/// assert_eq!(
///     solution(&task, true).as_deref(),
///     Some("<think>47-12=35,35+8=43</think><answer>43</answer>")
/// );
/// assert_eq!(
///     solution(&task, false).as_deref(),
///     Some("<think>47-12+8=43</think><answer>43</answer>")
/// );
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn solution(task: &MathTask, worked: bool) -> Option<String> {
    let metadata = task.metadata.as_ref()?;
    let answer = task.answer.trim();
    let work: Vec<&str> = metadata
        .get("work")?
        .as_array()?
        .iter()
        .map(serde_json::Value::as_str)
        .collect::<Option<_>>()?;
    let (_, value) = work.last()?.rsplit_once('=')?;
    if value != answer {
        return None;
    }
    let think = if worked {
        work.join(",")
    } else {
        format!("{}={answer}", metadata.get("expression")?.as_str()?)
    };
    Some(format!("<think>{think}</think><answer>{answer}</answer>"))
}

/// A math task's warm-up solution that calls the code interpreter on the task's expression
/// and copies its output into the answer ([`crate::rollout::tools`] has the block format); `None`
/// without a stored expression.
///
/// ```
/// use grpo_runner::train::sft::tool_solution;
/// use grpo_tasks::MathTask;
/// let task: MathTask = serde_json::from_str(r#"{"id":"a","prompt":"What is 47 - 12 + 8?",
///     "answer":"43","metadata":{"expression":"47-12+8"}}"#)?;
/// assert_eq!(
///     tool_solution(&task).as_deref(),
///     Some("<think>```python\n47-12+8\n```\n```output\n43\n```\n</think><answer>43</answer>")
/// );
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn tool_solution(task: &MathTask) -> Option<String> {
    use crate::rollout::tools::{BLOCK_CLOSE, CALL_OPEN, OUTPUT_OPEN};
    let expression = task.metadata.as_ref()?.get("expression")?.as_str()?;
    let answer = task.answer.trim();
    Some(format!(
        "<think>{CALL_OPEN}{expression}{BLOCK_CLOSE}{OUTPUT_OPEN}{answer}{BLOCK_CLOSE}</think><answer>{answer}</answer>"
    ))
}

/// The short plan a code task's warm-up solution thinks with: the task's `metadata.plan`
/// (generated packs write one), else none.
pub fn code_plan(task: &CodeTask) -> Option<String> {
    task.metadata
        .as_ref()?
        .get("plan")?
        .as_str()
        .map(str::to_owned)
}

/// A code task's warm-up solution in the answer format: the plan (or `code` when the task has
/// none) as the reasoning, the reference solution as the answer; `None` without a reference.
///
/// ```
/// use grpo_runner::train::sft::code_solution;
/// let task: grpo_tasks::CodeTask = serde_json::from_str(
///     r#"{"id":"c","prompt":"Write f(x) that returns x plus 1.","language":"python","mode":"full",
///         "tests":{"type":"call","entry_point":"f","cases":[{"args":[1],"expected":2}]},
///         "reference":"def f(x): return x+1","metadata":{"plan":"x+1"}}"#).unwrap();
/// assert_eq!(
///     code_solution(&task).as_deref(),
///     Some("<think>x+1</think><answer>def f(x): return x+1</answer>")
/// );
/// ```
pub fn code_solution(task: &CodeTask) -> Option<String> {
    let reference = task.reference.as_deref()?.trim_end();
    let plan = code_plan(task).unwrap_or_else(|| "code".to_owned());
    Some(if reference.contains('\n') {
        format!("<think>{plan}</think><answer>\n{reference}\n</answer>")
    } else {
        format!("<think>{plan}</think><answer>{reference}</answer>")
    })
}

/// One warm-up problem: the rendered prompt and its two solutions.
#[derive(Debug, Clone, PartialEq)]
pub struct WarmupProblem {
    /// The prompt as the model sees it (template applied).
    pub prompt: String,
    /// The step-by-step solution.
    pub worked: String,
    /// The all-at-once solution.
    pub direct: String,
}

/// What the warm-up did.
#[derive(Debug, Clone, PartialEq)]
pub struct WarmupReport {
    /// Optimiser steps taken.
    pub steps: u64,
    /// Mean token cross-entropy of the first step.
    pub first_loss: f64,
    /// Mean token cross-entropy of the last step.
    pub last_loss: f64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// Trains `model` on `problems` for `config.steps` steps: each step draws `batch_size`
/// problems (with replacement) and, for each, the worked solution with probability
/// `worked_fraction`, and minimises the mean cross-entropy of the completion tokens (EOS
/// included). AdamW, linear warm-up over 5% of the steps, cosine decay to 10%.
/// `on_step(step, loss)` is called after every step.
pub fn warm_up(
    model: &Model,
    tokenizer: &Tokenizer,
    problems: &[WarmupProblem],
    config: &WarmupSection,
    seed: u64,
    mut on_step: impl FnMut(u64, f64),
) -> Result<WarmupReport> {
    let start = Instant::now();
    if config.steps == 0 {
        return Ok(WarmupReport {
            steps: 0,
            first_loss: f64::NAN,
            last_loss: f64::NAN,
            seconds: 0.0,
        });
    }
    if problems.is_empty() {
        return Err(Error::invalid(
            "the warm-up has no problem it can write a solution for",
        ));
    }
    let eos = tokenizer.eos_id()?;
    let encode = |text: &str, end: bool| -> Result<Vec<u32>> {
        let mut ids = tokenizer.encode(text)?;
        if end {
            ids.push(eos);
        }
        Ok(ids)
    };
    let encoded: Vec<(Vec<u32>, Vec<u32>, Vec<u32>)> = problems
        .iter()
        .map(|p| {
            Ok((
                encode(&p.prompt, false)?,
                encode(&p.worked, true)?,
                encode(&p.direct, true)?,
            ))
        })
        .collect::<Result<_>>()?;
    let mut optimizer = AdamW::new(
        model.named_vars(),
        AdamWConfig {
            beta2: 0.99,
            max_grad_norm: Some(1.0),
            ..AdamWConfig::default()
        },
    )?;
    let schedule = Schedule {
        lr: config.lr,
        kind: ScheduleKind::Cosine,
        warmup_steps: (config.steps / 20).max(1),
        min_lr_ratio: 0.1,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5f7_0000_0001);
    let device: Device = model.device().clone();
    let (mut first_loss, mut last_loss) = (f64::NAN, f64::NAN);
    for step in 0..config.steps {
        let rows: Vec<(&[u32], &[u32])> = (0..config.batch_size)
            .map(|_| {
                let (prompt, worked, direct) = &encoded[rng.gen_range(0..encoded.len())];
                let completion = if rng.gen_bool(config.worked_fraction) {
                    worked
                } else {
                    direct
                };
                (&prompt[..], &completion[..])
            })
            .collect();
        let batch = PackedBatch::pack(&rows, eos, &device)?;
        let logits = model.forward(&batch.inputs, &batch.left_pad(), None)?;
        let logp = grpo_core::token_logprobs(&logits, &batch.targets)?;
        let tokens = batch.mask.sum_all()?;
        let loss = (logp.mul(&batch.mask)?.sum_all()?.neg()? / tokens)?;
        let value = f64::from(loss.to_dtype(candle_core::DType::F32)?.to_scalar::<f32>()?);
        optimizer.accumulate(&loss.backward()?)?;
        optimizer.step(schedule.lr_at(step, config.steps))?;
        if step == 0 {
            first_loss = value;
        }
        last_loss = value;
        on_step(step, value);
    }
    Ok(WarmupReport {
        steps: config.steps,
        first_loss,
        last_loss,
        seconds: start.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tokenizer_tags_are_the_rewards_tags() {
        assert_eq!(FORMAT_TAGS, grpo_rewards::AnswerFormat::default().tags());
    }

    /// A math task carrying the solution the generator would store for `expression`.
    fn generated(expression: &str, answer: &str) -> MathTask {
        let expr = grpo_tasks::expr::Expr::parse(expression).unwrap();
        let compact: String = expression.chars().filter(|c| !c.is_whitespace()).collect();
        serde_json::from_value(serde_json::json!({
            "id": "t", "prompt": format!("What is {expression}?"), "answer": answer,
            "metadata": {"expression": compact, "work": expr.work().unwrap()},
        }))
        .unwrap()
    }

    #[test]
    fn solutions_for_a_table_of_problems() {
        let cases: &[(&str, &str, bool, Option<&str>)] = &[
            (
                "5 + 7",
                "12",
                true,
                Some("<think>5+7=12</think><answer>12</answer>"),
            ),
            (
                "5 + 7",
                "12",
                false,
                Some("<think>5+7=12</think><answer>12</answer>"),
            ),
            (
                "90 - 45 - 45",
                "0",
                true,
                Some("<think>90-45=45,45-45=0</think><answer>0</answer>"),
            ),
            (
                "3 - 5 + 9",
                "7",
                true,
                Some("<think>3-5=-2,-2+9=7</think><answer>7</answer>"),
            ),
            (
                "3 - 5 + 9",
                "7",
                false,
                Some("<think>3-5+9=7</think><answer>7</answer>"),
            ),
            (
                "35 - 7 * 9",
                "-28",
                true,
                Some("<think>7*9=63,35-63=-28</think><answer>-28</answer>"),
            ),
            // A wrong reference answer: no solution rather than a false one.
            ("5 + 7", "13", true, None),
        ];
        for &(expression, answer, worked, want) in cases {
            let task = generated(expression, answer);
            assert_eq!(
                solution(&task, worked).as_deref(),
                want,
                "{expression} {worked}"
            );
        }
        // Tasks without a stored solution, or with a malformed one, get none.
        let mut bare = generated("5 + 7", "12");
        bare.metadata = None;
        assert_eq!(solution(&bare, true), None);
        let mut broken = generated("5 + 7", "12");
        broken.metadata.as_mut().unwrap()["work"] = serde_json::json!([1, 2]);
        assert_eq!(solution(&broken, true), None);
    }

    #[test]
    fn every_builtin_arith_task_has_its_solution() {
        for name in ["arith", "arith-digits"] {
            let pack = grpo_tasks::Pack::load(&format!("builtin:{name}")).unwrap();
            for task in pack.tasks() {
                let grpo_tasks::Task::Math(m) = task else {
                    panic!("{name}: {} is not math", task.id());
                };
                let worked = solution(m, true).unwrap_or_else(|| panic!("{name}: {}", m.id));
                assert!(worked.ends_with(&format!("<answer>{}</answer>", m.answer)));
                assert!(solution(m, false).is_some(), "{name}: {}", m.id);
            }
        }
    }

    #[test]
    fn tags_are_single_tokens_and_text_round_trips() {
        let tok = format_tokenizer(&["What is 12 - 3?"]).unwrap();
        for tag in FORMAT_TAGS {
            assert_eq!(tok.encode(tag).unwrap().len(), 1, "{tag}");
        }
        let text = "<think>12-3=9</think><answer>9</answer>";
        let ids = tok.encode(text).unwrap();
        assert_eq!(ids.len(), 4 + 6 + 1);
        assert_eq!(tok.decode(&ids).unwrap(), text);
        // Characters of the prompts are in the vocabulary, EOS is id 0.
        assert!(tok.encode("What").unwrap().iter().all(|&id| id > 1));
        assert_eq!(tok.eos_token_ids(), [0]);
    }
}
