//! `grpo tasks check`: every task's reference, written as a model would write it, earns full
//! reward through the pack's [`Scorer`] (the scoring every other command uses), and a nearby
//! wrong answer does not.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, bail};
use grpo_rewards::{ScoredResult, Scorer};
use grpo_tasks::{CodeMode, CodeTask, CodeTests, CountdownTask, MathTask, Task};
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
    let scorer = super::super::pack_scorer(&pack.manifest, pack.tasks(), spec)?;
    let mut out = std::io::stdout().lock();
    let (mut passed, mut failed, mut unreferenced) = (0usize, 0usize, 0usize);
    for split in pack.splits() {
        if only_split.is_some_and(|s| s != split.name) {
            continue;
        }
        for task in &split.tasks {
            let outcome = match task {
                Task::Math(m) => check_math(&scorer, task, m),
                Task::Countdown(c) => check_countdown(&scorer, task, c),
                Task::Code(c) => check_code(&scorer, task, c),
            }
            .with_context(|| format!("checking task {}", task.id()))?;
            if outcome.passed {
                passed += 1;
                unreferenced += usize::from(matches!(task, Task::Code(c) if c.reference.is_none()));
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
    if unreferenced > 0 {
        eprintln!(
            "{spec}: {unreferenced} code tasks carry no reference solution: their tests (and \
             checkers) were validated, but nothing proved them passable"
        );
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Scores one group through the scorer (a fault is an error, never a verdict).
fn score(
    scorer: &Scorer,
    task: &Task,
    completions: Vec<String>,
) -> anyhow::Result<Vec<ScoredResult>> {
    Ok(scorer.score_group_blocking(task, &completions, scorer.options())?)
}

/// The answer (and each alternative) as a model would write it, and a wrong one.
fn check_math(scorer: &Scorer, task: &Task, m: &MathTask) -> anyhow::Result<Outcome> {
    let written = |answer: &str| {
        format!("<think>Working it out.</think> <answer>\\boxed{{{answer}}}</answer>")
    };
    let answers: Vec<&str> = std::iter::once(m.answer.as_str())
        .chain(m.alternatives.iter().map(String::as_str))
        .collect();
    let wrong = perturb(&m.answer);
    let completions = answers
        .iter()
        .map(|a| written(a))
        .chain(std::iter::once(written(&wrong)))
        .collect();
    let scored = score(scorer, task, completions)?;
    for (answer, s) in answers.iter().zip(&scored) {
        if !s.correct {
            return Ok(Outcome::fail(format!(
                "the answer `{answer}` written as a model would does not earn full reward: {}",
                s.verdict.reason
            )));
        }
    }
    if scored.last().is_some_and(|s| s.correct) {
        return Ok(Outcome::fail(format!(
            "the perturbed answer `{wrong}` also earns full reward"
        )));
    }
    Ok(Outcome::pass(format!(
        "`{}` earns full reward; `{wrong}` does not",
        m.answer
    )))
}

/// A nearby wrong answer: an integer plus one, else the expression plus one.
fn perturb(answer: &str) -> String {
    let trimmed = answer.trim();
    match trimmed.parse::<i128>() {
        Ok(n) => (n + 1).to_string(),
        Err(_) => format!("({trimmed})+1"),
    }
}

fn check_countdown(scorer: &Scorer, task: &Task, c: &CountdownTask) -> anyhow::Result<Outcome> {
    let (expression, origin) = match &c.reference {
        Some(r) => (r.clone(), "reference"),
        None => match grpo_tasks::expr::solve(&c.numbers, c.target, c.use_all) {
            Some(found) => (found, "solver"),
            None => {
                return Ok(Outcome::fail(
                    "unsolvable: no expression over the numbers reaches the target",
                ));
            }
        },
    };
    let completion = format!("<think>Searching.</think> <answer>{expression}</answer>");
    let scored = score(scorer, task, vec![completion])?;
    Ok(match scored.first() {
        Some(s) if s.correct => Outcome::pass(format!("{origin} `{expression}` earns full reward")),
        Some(s) => Outcome::fail(format!(
            "{origin} `{expression}` does not earn full reward: {}",
            s.verdict.reason
        )),
        None => Outcome::fail("no score"),
    })
}

/// The reference passes and an empty body fails (one group: both run at once); a sandbox
/// fault is an error, not a verdict.
fn check_code(scorer: &Scorer, task: &Task, c: &CodeTask) -> anyhow::Result<Outcome> {
    // A checker must accept each test's own expected output (a right answer).
    let checked = match &c.tests {
        CodeTests::Stdio(tests) if tests.checker.is_some() => {
            let sandbox = grpo_sandbox::Sandbox::shared().context("starting the sandbox")?;
            if let Some(problem) =
                grpo_sandbox::judge::checker::rejects_expected_blocking(&sandbox, tests)?
            {
                return Ok(Outcome::fail(problem));
            }
            "; the checker accepts every expected output"
        }
        _ => "",
    };
    let Some(reference) = &c.reference else {
        // Data such as LiveCodeBench and Codeforces ships tests without a solution: what can
        // be proved is that the tests are well formed (and the checker sound, above).
        let absent = "no reference solution to run (the data ships none)";
        return Ok(match &c.tests {
            CodeTests::Stdio(_) | CodeTests::Call(_) => {
                Outcome::pass(format!("{absent}; the cases are well formed{checked}"))
            }
            CodeTests::Assert(tests) => match tests_compile(&tests.code)? {
                None => Outcome::pass(format!("{absent}; the test code compiles")),
                Some(error) => Outcome::fail(format!("the test code does not compile: {error}")),
            },
        });
    };
    let empty = match c.mode {
        CodeMode::Prefix => "    pass\n",
        CodeMode::Full => "pass\n",
    };
    let scored = score(scorer, task, vec![reference.clone(), empty.to_owned()])?;
    let (Some(reference), Some(empty)) = (scored.first(), scored.get(1)) else {
        return Ok(Outcome::fail("no score"));
    };
    if !reference.correct {
        return Ok(Outcome::fail(format!(
            "the reference fails: {}",
            reference.verdict.reason
        )));
    }
    if empty.correct {
        return Ok(Outcome::fail(
            "an empty `pass` body passes the tests: they check nothing",
        ));
    }
    Ok(Outcome::pass(format!(
        "the reference passes every test; an empty body fails{checked}"
    )))
}

/// Whether Python test code compiles (in the sandbox's own interpreter): `None`, or the error.
fn tests_compile(code: &str) -> anyhow::Result<Option<String>> {
    let sandbox = grpo_sandbox::Sandbox::shared().context("starting the sandbox")?;
    let program = "import sys\ncompile(sys.stdin.read(), '<tests>', 'exec')\n";
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let run = runtime
        .block_on(sandbox.run(program, code.as_bytes(), &grpo_sandbox::Limits::default()))
        .context("compiling the test code in the sandbox")?;
    Ok(match run.status {
        grpo_rewards::RunStatus::Ok => None,
        _ => Some(
            run.stderr
                .trim_end()
                .lines()
                .last()
                .unwrap_or("")
                .to_owned(),
        ),
    })
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
