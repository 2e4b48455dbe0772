//! `grpo tasks check`.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, bail};
use grpo_rewards::code::{CodeReward, Sandbox};
use grpo_rewards::countdown::CountdownReward;
use grpo_rewards::math::MathChecker;
use grpo_tasks::{CodeMode, CodeTask, Task};
use serde_json::json;

use super::*;

/// The outcome of checking one task.
struct Outcome {
    passed: bool,
    reason: String,
}

impl Outcome {
    fn pass(reason: impl Into<String>) -> Self {
        Outcome {
            passed: true,
            reason: reason.into(),
        }
    }
    fn fail(reason: impl Into<String>) -> Self {
        Outcome {
            passed: false,
            reason: reason.into(),
        }
    }
}

pub(super) fn run(spec: &str, only_split: Option<&str>) -> anyhow::Result<ExitCode> {
    let Some(pack) = load_or_report(spec)? else {
        return Ok(ExitCode::from(1));
    };
    if let Some(name) = only_split
        && pack.split(name).is_none()
    {
        bail!(
            "pack `{spec}` has no split `{name}` (splits: {})",
            pack.split_names().join(", ")
        );
    }
    let has_code = pack.tasks().any(|t| matches!(t, Task::Code(_)));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime for the code sandbox")?;
    let code_reward = if has_code {
        let sandbox = Sandbox::shared().context("starting the Python sandbox")?;
        Some(CodeReward::new(sandbox))
    } else {
        None
    };
    let checker = MathChecker::default();
    let countdown = CountdownReward::new();
    let mut out = std::io::stdout().lock();
    let (mut passed, mut failed) = (0usize, 0usize);
    for split in pack.splits() {
        if only_split.is_some_and(|s| s != split.name) {
            continue;
        }
        for task in &split.tasks {
            let outcome = match task {
                Task::Math(m) => check_math(&checker, &m.answer, &m.alternatives),
                Task::Countdown(_) => check_countdown(&countdown, task),
                Task::Code(c) => match &code_reward {
                    Some(reward) => runtime
                        .block_on(check_code(reward, c))
                        .with_context(|| format!("checking task {}", c.id))?,
                    None => Outcome::fail("no sandbox"),
                },
            };
            if outcome.passed {
                passed += 1;
            } else {
                failed += 1;
                eprintln!("FAIL {} ({}): {}", task.id(), split.name, outcome.reason);
            }
            let line = json!({
                "id": task.id(), "split": split.name, "kind": task.kind_name(),
                "passed": outcome.passed, "reason": outcome.reason,
            });
            writeln!(out, "{line}")?;
        }
    }
    eprintln!("{spec}: {passed} passed, {failed} failed");
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The answer as a model would write it, and a wrong one.
fn check_math(checker: &MathChecker, answer: &str, alternatives: &[String]) -> Outcome {
    let gold = checker.prepare(answer, alternatives);
    for written in std::iter::once(answer).chain(alternatives.iter().map(String::as_str)) {
        let completion =
            format!("<think>Working it out.</think> <answer>\\boxed{{{written}}}</answer>");
        let c = checker.check_prepared(&gold, &completion);
        if !c.correct {
            return Outcome::fail(format!(
                "the answer `{written}` written as a model would does not earn full reward: {}",
                c.verdict.reason
            ));
        }
    }
    let wrong = perturb(answer);
    let completion = format!("<think>Working it out.</think> <answer>\\boxed{{{wrong}}}</answer>");
    let c = checker.check_prepared(&gold, &completion);
    if c.correct {
        return Outcome::fail(format!(
            "the perturbed answer `{wrong}` also earns full reward"
        ));
    }
    Outcome::pass(format!("`{answer}` earns full reward; `{wrong}` does not"))
}

/// A nearby wrong answer: an integer plus one, else the expression plus one.
fn perturb(answer: &str) -> String {
    let trimmed = answer.trim();
    match trimmed.parse::<i128>() {
        Ok(n) => (n + 1).to_string(),
        Err(_) => format!("({trimmed})+1"),
    }
}

fn check_countdown(reward: &CountdownReward, task: &Task) -> Outcome {
    let Task::Countdown(c) = task else {
        return Outcome::fail("not a countdown task");
    };
    let (expression, origin) = match &c.reference {
        Some(r) => (r.clone(), "reference"),
        None => match grpo_tasks::expr::solve(&c.numbers, c.target, c.use_all) {
            Some(found) => (found, "solver"),
            None => {
                return Outcome::fail(
                    "unsolvable: no expression over the numbers reaches the target",
                );
            }
        },
    };
    let verdict = reward.check(
        task,
        &format!("<think>Searching.</think> <answer>{expression}</answer>"),
    );
    if verdict.is_correct() {
        Outcome::pass(format!("{origin} `{expression}` earns full reward"))
    } else {
        Outcome::fail(format!(
            "{origin} `{expression}` does not earn full reward: {}",
            verdict.reason
        ))
    }
}

/// The reference passes and an empty body fails; a sandbox fault is an error, not a verdict.
async fn check_code(reward: &CodeReward, task: &CodeTask) -> anyhow::Result<Outcome> {
    let Some(reference) = &task.reference else {
        return Ok(Outcome::fail(
            "no reference solution to prove the tests passable",
        ));
    };
    let score = reward.score_one(task, reference).await?;
    if !score.verdict.is_correct() {
        return Ok(Outcome::fail(format!(
            "the reference fails: {}",
            score.verdict.reason
        )));
    }
    let empty = match task.mode {
        CodeMode::Prefix => "    pass\n",
        CodeMode::Full => "pass\n",
    };
    let score = reward.score_one(task, empty).await?;
    if score.verdict.is_correct() {
        return Ok(Outcome::fail(
            "an empty `pass` body passes the tests: they check nothing",
        ));
    }
    Ok(Outcome::pass(
        "the reference passes every test; an empty body fails",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perturbation_changes_the_value() {
        assert_eq!(perturb("41"), "42");
        assert_eq!(perturb(" -1 "), "0");
        assert_eq!(perturb(r"\frac{1}{2}"), r"(\frac{1}{2})+1");
    }
}
