//! The code judge: run each program against its task's tests in the sandbox
//! ([`CodeReward`], the [`CodeJudge`] the [`Scorer`](grpo_rewards::Scorer) calls for code
//! tasks).

use futures::future::BoxFuture;
use grpo_rewards::code::limits::{Credit, LimitCaps, Limits};
use grpo_rewards::error::{Result, RewardError};
use grpo_rewards::result::{RunResult, RunStatus, TestOutcome, Verdict, VerdictKind};
use grpo_rewards::reward::Score;
use grpo_rewards::{CodeJudge, ScoreOptions};
use grpo_tasks::{CodeTask, CodeTests, Language, StdioCase};

use crate::cc::CompileLimits;
use crate::files::JobFiles;
use crate::harness::{self, Report};
use crate::languages::{CompileStep, RunRequest};
use crate::sandbox::Sandbox;

/// The accuracy of code tasks: each program of a group run against the task's tests.
///
/// All programs of a group (completions × stdio cases) run concurrently on the sandbox; a
/// program that appears more than once in a group (a policy that has converged writes the
/// same code again and again) runs once and its outcome is shared. A sandbox failure is a
/// [`RewardError::Fault`] for the whole group, never a 0. Credit and caps come with each
/// call ([`ScoreOptions`]); the default limits are the judge's.
#[derive(Debug, Clone)]
pub struct CodeReward {
    sandbox: Sandbox,
    limits: Limits,
}

impl CodeReward {
    /// A judge with default limits.
    pub fn new(sandbox: Sandbox) -> Self {
        CodeReward {
            sandbox,
            limits: Limits::default(),
        }
    }

    /// The same judge with other default limits (tasks' own limits still override them).
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The limits one run of `task` gets: the defaults, the task's own limits, then `caps`
    /// (a capped run's wall clock is at most twice its capped CPU time).
    pub fn limits_for(&self, task: &CodeTask, caps: Option<LimitCaps>) -> Limits {
        let mut limits = self.limits.for_task(task);
        if let Some(caps) = caps {
            limits.time_limit_ms = limits.time_limit_ms.min(caps.time_limit_ms);
            limits.memory_mb = limits.memory_mb.min(caps.memory_mb);
            limits.wall_limit_ms = Some(
                limits
                    .wall_limit_ms()
                    .min(caps.time_limit_ms.saturating_mul(2)),
            );
        }
        limits
    }

    /// The sandbox this judge runs programs on.
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// Runs `fut` on the caller's tokio runtime, or on the sandbox's own when the caller has
    /// none (a plain executor, [`Scorer::score_group_blocking`](grpo_rewards::Scorer)).
    fn spawn<F>(&self, fut: F) -> Result<tokio::task::JoinHandle<F::Output>>
    where
        F: std::future::Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => Ok(handle.spawn(fut)),
            Err(_) => crate::sandbox::blocking_runtime()
                .map(|rt| rt.spawn(fut))
                .map_err(|e| RewardError::fault("-", format!("the sandbox failed: {e}"))),
        }
    }

    /// Judges one program per completion, in order (distinct programs run once).
    pub async fn judge_programs(
        &self,
        task: &CodeTask,
        completions: &[String],
        options: &ScoreOptions,
    ) -> Result<Vec<Score>> {
        if task.language != Language::Python {
            return self.score_stdio_source(task, completions, options).await;
        }
        let limits = self.limits_for(task, options.caps);
        // Each distinct program runs once; `slot[i]` is completion i's program.
        let mut programs: Vec<&String> = Vec::new();
        let mut slot = Vec::with_capacity(completions.len());
        for program in completions {
            match programs.iter().position(|p| *p == program) {
                Some(k) => slot.push(k),
                None => {
                    slot.push(programs.len());
                    programs.push(program);
                }
            }
        }
        let mut handles = Vec::new();
        for program in programs {
            let jobs = harness::jobs_for(task, program.clone());
            let mut runs = Vec::with_capacity(jobs.len());
            for (job, stdin) in jobs {
                let sandbox = self.sandbox.clone();
                let limits = limits.clone();
                runs.push(self.spawn(async move { sandbox.execute(&job, &stdin, &limits).await })?);
            }
            handles.push(runs);
        }
        let mut scores = Vec::with_capacity(handles.len());
        for runs in handles {
            let mut outcomes = Vec::new();
            let mut case_index = 0;
            let mut failure: Option<String> = None;
            for (job_index, handle) in runs.into_iter().enumerate() {
                let executed = match handle.await {
                    Ok(Ok(executed)) => executed,
                    Ok(Err(e)) => {
                        failure = Some(e.to_string());
                        break;
                    }
                    Err(e) => {
                        failure = Some(format!("run task failed: {e}"));
                        break;
                    }
                };
                let cases = case_outcomes(
                    task,
                    job_index,
                    &executed.0,
                    executed.1.as_ref(),
                    case_index,
                );
                case_index += cases.len();
                outcomes.extend(cases);
            }
            if let Some(reason) = failure {
                tracing::error!(task = %task.id, %reason, "sandbox failure");
                return Err(RewardError::fault(
                    &task.id,
                    format!("the sandbox failed: {reason}"),
                ));
            }
            scores.push(judge(outcomes, options.credit));
        }
        Ok(slot.into_iter().map(|k| scores[k].clone()).collect())
    }

    /// Scores completions in a language other than Python: stdio tests only, each case a run
    /// of the program (compiled once: the compiler and module caches hold it).
    async fn score_stdio_source(
        &self,
        task: &CodeTask,
        completions: &[String],
        options: &ScoreOptions,
    ) -> Result<Vec<Score>> {
        let CodeTests::Stdio(tests) = &task.tests else {
            return Err(RewardError::fault(
                &task.id,
                format!(
                    "{} tasks take stdio tests only; assert and call tests are Python's",
                    task.language
                ),
            ));
        };
        let limits = self.limits_for(task, options.caps);
        let compile = CompileLimits::default();
        let mut scores: Vec<(String, Score)> = Vec::new();
        let mut out = Vec::with_capacity(completions.len());
        for program in completions {
            if let Some((_, score)) = scores.iter().find(|(p, _)| p == program) {
                out.push(score.clone());
                continue;
            }
            let mut outcomes = Vec::with_capacity(tests.cases.len());
            let runs: Vec<_> = tests
                .cases
                .iter()
                .map(|case| {
                    let sandbox = self.sandbox.clone();
                    let (limits, compile) = (limits.clone(), compile.clone());
                    let (program, stdin) = (program.clone(), case.stdin.clone());
                    let language = task.language;
                    self.spawn(async move {
                        let request = RunRequest {
                            language,
                            source: &program,
                            stdin: stdin.as_bytes(),
                            limits,
                            compile,
                            files: JobFiles::default(),
                        };
                        sandbox.run_program(&request).await
                    })
                })
                .collect::<Result<_>>()?;
            for (index, handle) in runs.into_iter().enumerate() {
                let source_run = match handle.await {
                    Ok(Ok(run)) => run,
                    Ok(Err(e)) => {
                        return Err(RewardError::fault(
                            &task.id,
                            format!("the sandbox failed: {e}"),
                        ));
                    }
                    Err(e) => {
                        return Err(RewardError::fault(
                            &task.id,
                            format!("run task failed: {e}"),
                        ));
                    }
                };
                let run = match (source_run.run, source_run.compile) {
                    (Some(run), _) => run,
                    (None, compile) => {
                        let step = compile.unwrap_or_else(|| CompileStep {
                            return_code: 1,
                            stderr: String::new(),
                            duration_ms: 0.0,
                            cached: false,
                            timed_out: false,
                        });
                        RunResult {
                            status: if step.timed_out {
                                RunStatus::Timeout
                            } else {
                                RunStatus::Error
                            },
                            exit_code: Some(step.return_code),
                            stdout: String::new(),
                            // Verdicts quote stderr's last line: make it say what happened.
                            stderr: format!(
                                "{}\ncompile error (the compiler exited {})",
                                step.stderr.trim_end(),
                                step.return_code
                            ),
                            duration_ms: step.duration_ms,
                            truncated: false,
                        }
                    }
                };
                // No harness runs around a program in these languages: the run itself must
                // end cleanly (`ok`) and its stdout match.
                let (passed, reason) =
                    stdio_verdict(&run, &tests.cases[index], tests.float_tolerance);
                outcomes.push(TestOutcome {
                    index,
                    passed,
                    status: run.status,
                    reason,
                });
            }
            let score = judge(outcomes, options.credit);
            scores.push((program.clone(), score.clone()));
            out.push(score);
        }
        Ok(out)
    }
}

/// The score of a program from its test outcomes.
fn judge(outcomes: Vec<TestOutcome>, credit: Credit) -> Score {
    let total = outcomes.len();
    let passed = outcomes.iter().filter(|o| o.passed).count();
    let (kind, reason) = match outcomes.iter().find(|o| !o.passed) {
        _ if total == 0 => (
            VerdictKind::TestsFailed,
            "the task has no test cases".to_owned(),
        ),
        None => (VerdictKind::Correct, format!("all {total} tests passed")),
        Some(first) => {
            let kind = match first.status {
                RunStatus::Timeout => VerdictKind::Timeout,
                RunStatus::MemoryLimit => VerdictKind::MemoryLimit,
                RunStatus::OutputLimit => VerdictKind::OutputLimit,
                RunStatus::Crash => VerdictKind::Crash,
                RunStatus::Ok | RunStatus::Error => VerdictKind::TestsFailed,
            };
            (
                kind,
                format!(
                    "{passed} of {total} tests passed; test {}: {}",
                    first.index, first.reason
                ),
            )
        }
    };
    let value = match credit {
        _ if total == 0 => 0.0,
        Credit::Binary => f64::from(u8::from(passed == total)),
        Credit::Partial => passed as f64 / total as f64,
    };
    Score {
        value: Some(value),
        verdict: Verdict {
            kind,
            reason,
            tests: Some(outcomes),
        },
    }
}

/// The per-case outcomes of one job's run.
fn case_outcomes(
    task: &CodeTask,
    job_index: usize,
    run: &RunResult,
    report: Option<&Report>,
    first_index: usize,
) -> Vec<TestOutcome> {
    let expected_cases = match &task.tests {
        CodeTests::Assert(_) => 1,
        CodeTests::Call(t) => t.cases.len(),
        CodeTests::Stdio(_) => 1,
    };
    let unfinished = |reason: String| -> Vec<TestOutcome> {
        (0..expected_cases)
            .map(|i| TestOutcome {
                index: first_index + i,
                passed: false,
                status: run.status,
                reason: reason.clone(),
            })
            .collect()
    };
    let Some(report) = report else {
        return unfinished(unfinished_reason(run));
    };
    if let CodeTests::Stdio(t) = &task.tests {
        let Some(case) = t.cases.get(job_index) else {
            return unfinished("no such case".into());
        };
        let (passed, reason) = stdio_verdict(run, case, t.float_tolerance);
        return vec![TestOutcome {
            index: first_index,
            passed,
            status: run.status,
            reason,
        }];
    }
    if report.cases.len() != expected_cases {
        return unfinished(format!(
            "the harness reported {} cases, expected {expected_cases}",
            report.cases.len()
        ));
    }
    report
        .cases
        .iter()
        .enumerate()
        .map(|(i, c)| {
            // A report is only complete when the run itself ended cleanly.
            let passed = c.passed && run.status == RunStatus::Ok;
            let reason = if c.passed && !passed {
                unfinished_reason(run)
            } else {
                c.reason.clone()
            };
            TestOutcome {
                index: first_index + i,
                passed,
                status: run.status,
                reason,
            }
        })
        .collect()
}

fn unfinished_reason(run: &RunResult) -> String {
    match run.status {
        RunStatus::Timeout => "time limit exceeded".into(),
        RunStatus::MemoryLimit => "memory limit exceeded".into(),
        RunStatus::OutputLimit => "output limit exceeded".into(),
        RunStatus::Crash => "the interpreter crashed".into(),
        RunStatus::Ok | RunStatus::Error => match run.exit_code {
            Some(code) => format!("the program exited (code {code}) before the tests finished"),
            None => "the program stopped before the tests finished".into(),
        },
    }
}

/// Judges one stdin/stdout case.
fn stdio_verdict(run: &RunResult, case: &StdioCase, tolerance: Option<f64>) -> (bool, String) {
    match run.status {
        RunStatus::Ok => {}
        RunStatus::Error => {
            let last = run
                .stderr
                .trim_end()
                .lines()
                .last()
                .unwrap_or("")
                .to_owned();
            return (
                false,
                format!("the program failed (exit code {:?}): {last}", run.exit_code),
            );
        }
        _ => return (false, unfinished_reason(run)),
    }
    match first_difference(&run.stdout, &case.stdout, tolerance) {
        None => (true, String::new()),
        Some(diff) => (false, diff),
    }
}

/// Compares outputs as whitespace-normalised lines: each line split into whitespace-separated
/// tokens, trailing empty lines ignored; with a tolerance, tokens that both parse as numbers
/// match when `|got - want| <= tol * max(1, |want|)`. Returns the first difference.
pub fn first_difference(got: &str, want: &str, tolerance: Option<f64>) -> Option<String> {
    fn lines(text: &str) -> Vec<Vec<&str>> {
        let mut lines: Vec<Vec<&str>> = text
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        while lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        lines
    }
    let (got_lines, want_lines) = (lines(got), lines(want));
    for i in 0..got_lines.len().max(want_lines.len()) {
        let (g, w) = (got_lines.get(i), want_lines.get(i));
        let same = match (g, w) {
            (Some(g), Some(w)) => {
                g.len() == w.len()
                    && g.iter()
                        .zip(w.iter())
                        .all(|(a, b)| tokens_match(a, b, tolerance))
            }
            _ => false,
        };
        if !same {
            let show =
                |l: Option<&Vec<&str>>| l.map_or("<end of output>".to_owned(), |l| l.join(" "));
            return Some(format!(
                "line {}: expected {:?}, got {:?}",
                i + 1,
                cut(&show(w), 100),
                cut(&show(g), 100)
            ));
        }
    }
    None
}

fn tokens_match(got: &str, want: &str, tolerance: Option<f64>) -> bool {
    if got == want {
        return true;
    }
    let Some(tol) = tolerance else { return false };
    match (got.parse::<f64>(), want.parse::<f64>()) {
        (Ok(g), Ok(w)) if g.is_finite() && w.is_finite() => (g - w).abs() <= tol * w.abs().max(1.0),
        _ => false,
    }
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        format!("{}…", text.chars().take(max).collect::<String>())
    }
}

impl CodeJudge for CodeReward {
    fn judge<'a>(
        &'a self,
        task: &'a CodeTask,
        programs: &'a [String],
        options: &'a ScoreOptions,
    ) -> BoxFuture<'a, Result<Vec<Score>>> {
        Box::pin(self.judge_programs(task, programs, options))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdio_comparison_table() {
        let cases: &[(&str, &str, Option<f64>, bool)] = &[
            ("1 2\n", "1 2", None, true),
            ("1  2 \n\n\n", "1 2\n", None, true),
            ("  1\t2\r\n", "1 2\n", None, true),
            ("1 2\n3\n", "1 2\n", None, false),
            ("", "0\n", None, false),
            ("\n", "", None, true),
            ("0.3333333\n", "0.333333333\n", Some(1e-6), true),
            ("0.3334\n", "0.333333333\n", Some(1e-6), false),
            ("0.3333333\n", "0.333333333\n", None, false),
            ("nan\n", "nan\n", Some(1e-6), true), // identical tokens match textually
            ("inf\n", "1e308\n", Some(1.0), false),
            ("YES\n", "yes\n", None, false),
        ];
        for (got, want, tol, same) in cases {
            assert_eq!(
                first_difference(got, want, *tol).is_none(),
                *same,
                "{got:?} vs {want:?} tol {tol:?}"
            );
        }
    }

    #[test]
    fn difference_names_the_line() {
        let diff = first_difference("a\nb\n", "a\nc\n", None).unwrap();
        assert_eq!(diff, "line 2: expected \"c\", got \"b\"");
        let diff = first_difference("a\n", "a\nc\n", None).unwrap();
        assert!(diff.contains("<end of output>"), "{diff}");
    }
}
