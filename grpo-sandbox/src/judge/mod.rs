//! The code judge: run each program against its task's tests in the sandbox
//! ([`CodeReward`], the [`CodeJudge`] the [`Scorer`](grpo_rewards::Scorer) calls for code
//! tasks).

pub mod checker;
pub mod compare;
pub mod native_time;

use std::collections::HashMap;
use std::sync::Arc;

use futures::future::BoxFuture;
use grpo_rewards::code::limits::{Credit, LimitCaps, Limits};
use grpo_rewards::error::{Result, RewardError};
use grpo_rewards::result::{RunResult, RunStatus, TestOutcome, Verdict, VerdictKind};
use grpo_rewards::reward::Score;
use grpo_rewards::{CodeJudge, ScoreOptions};
use grpo_tasks::judging::{Compare, select_tests};
use grpo_tasks::{CallCase, CodeTask, CodeTests, Language, StdioTests, TimeLimits};

use crate::guest::python::harness::{Job, Report};
use crate::judge::checker::run_checker;
use crate::judge::compare::first_difference;
use crate::run_program::{CompileStep, RunRequest};
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
    time_limits: TimeLimits,
    time_scale: Option<f64>,
}

impl CodeReward {
    /// A judge with default limits.
    pub fn new(sandbox: Sandbox) -> Self {
        CodeReward {
            sandbox,
            limits: Limits::default(),
            time_limits: TimeLimits::Sandbox,
            time_scale: None,
        }
    }

    /// The same judge with other default limits (tasks' own limits still override them).
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The same judge reading tasks' own time limits as set for `time_limits`, or scaled by
    /// `time_scale` when one is given ([`crate::judge::native_time`]).
    pub fn with_time_limits(mut self, time_limits: TimeLimits, time_scale: Option<f64>) -> Self {
        self.time_limits = time_limits;
        self.time_scale = time_scale;
        self
    }

    /// The limits one run of `task` gets: the defaults, the task's own limits (a native one
    /// made the sandbox's, [`native_time::sandbox_limit_ms`]), then `caps`
    /// ([`Limits::capped`]).
    pub fn limits_for(&self, task: &CodeTask, caps: Option<LimitCaps>) -> Limits {
        let mut limits = self.limits.for_task(task);
        if let Some(own) = task.time_limit_ms {
            limits.time_limit_ms = native_time::sandbox_limit_ms(
                own,
                task.language,
                self.time_limits == TimeLimits::Native,
                self.time_scale,
            );
        }
        match caps {
            Some(caps) => limits.capped(caps),
            None => limits,
        }
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

    /// Judges one program per completion, in order. Each distinct program is judged once
    /// (a policy that has converged writes the same code again and again) and its score
    /// shared; programs, and the tests of each program, run concurrently.
    pub async fn judge_programs(
        &self,
        task: &CodeTask,
        completions: &[String],
        options: &ScoreOptions,
    ) -> Result<Vec<Score>> {
        if task.language != Language::Python && !matches!(task.tests, CodeTests::Stdio(_)) {
            return Err(RewardError::fault(
                &task.id,
                format!(
                    "{} tasks take stdio tests only; assert and call tests are Python's",
                    task.language
                ),
            ));
        }
        let limits = self.limits_for(task, options.caps);
        let mut seen: HashMap<&str, usize> = HashMap::with_capacity(completions.len());
        let mut programs = Vec::new();
        let mut slot = Vec::with_capacity(completions.len());
        for program in completions {
            let k = *seen.entry(program.as_str()).or_insert_with(|| {
                programs.push(program.clone());
                programs.len() - 1
            });
            slot.push(k);
        }
        // One copy of the task per call, shared by every run.
        let task = Arc::new(task.clone());
        let mut handles = Vec::with_capacity(programs.len());
        for program in programs {
            let (judge, task, limits) = (self.clone(), Arc::clone(&task), limits.clone());
            let options = *options;
            handles.push(self.spawn(async move {
                let outcomes = judge.test_program(&task, program, &limits, options).await?;
                Ok::<_, RewardError>(judge_outcomes(outcomes, options.credit))
            })?);
        }
        let mut scores = Vec::with_capacity(handles.len());
        for handle in handles {
            scores.push(
                handle
                    .await
                    .map_err(|e| RewardError::fault(&task.id, format!("run task failed: {e}")))??,
            );
        }
        Ok(slot.into_iter().map(|k| scores[k].clone()).collect())
    }

    /// Runs `program` against the tests of `task` its plan selects; the outcomes carry the
    /// cases' own indices.
    async fn test_program(
        &self,
        task: &Arc<CodeTask>,
        program: String,
        limits: &Limits,
        options: ScoreOptions,
    ) -> Result<Vec<TestOutcome>> {
        let seed = options.test_seed;
        let fault = |e: &dyn std::fmt::Display| {
            tracing::error!(task = %task.id, reason = %e, "sandbox failure");
            RewardError::fault(&task.id, format!("the sandbox failed: {e}"))
        };
        let (job, indices) = match &task.tests {
            CodeTests::Stdio(tests) => {
                return self.test_stdio(task, tests, program, limits, options).await;
            }
            CodeTests::Assert(t) => (
                Job::assert(program, &t.code, t.entry_point.as_deref()),
                vec![0],
            ),
            CodeTests::Call(t) => {
                let public: Vec<bool> = t.cases.iter().map(|c| c.public).collect();
                let indices = select_tests(&t.plan, &public, |i| t.cases[i].args.len(), seed);
                let cases: Vec<CallCase> = indices.iter().map(|&i| t.cases[i].clone()).collect();
                (
                    Job::call(program, &t.entry_point, &cases, t.float_tolerance),
                    indices,
                )
            }
        };
        let (run, report) = self
            .sandbox
            .execute(&job, b"", limits)
            .await
            .map_err(|e| fault(&e))?;
        Ok(case_outcomes(&indices, &run, report.as_ref()))
    }

    /// Runs the selected stdio cases: all at once, or, under `stop_at_first_failure`, in
    /// order, as many at a time as the sandbox runs, stopping after the first failure.
    async fn test_stdio(
        &self,
        task: &Arc<CodeTask>,
        tests: &StdioTests,
        program: String,
        limits: &Limits,
        options: ScoreOptions,
    ) -> Result<Vec<TestOutcome>> {
        let public: Vec<bool> = tests.cases.iter().map(|c| c.public).collect();
        let seed = options.test_seed;
        let selected = select_tests(&tests.plan, &public, |i| tests.cases[i].stdin.len(), seed);
        let wave = if tests.plan.stop_at_first_failure {
            self.sandbox.concurrency().max(1)
        } else {
            selected.len().max(1)
        };
        let compare = Arc::new(tests.comparison());
        let program = Arc::new(program);
        let mut outcomes = Vec::with_capacity(selected.len());
        let mut failed_at = None;
        for chunk in selected.chunks(wave) {
            if let Some(first) = failed_at {
                outcomes.extend(chunk.iter().map(|&index| TestOutcome {
                    index,
                    passed: false,
                    status: RunStatus::Ok,
                    reason: format!("not run: test {first} failed first"),
                    points: None,
                }));
                continue;
            }
            let mut handles = Vec::with_capacity(chunk.len());
            for &index in chunk {
                let (judge, task, program) = (self.clone(), Arc::clone(task), Arc::clone(&program));
                let (limits, compare) = (limits.clone(), Arc::clone(&compare));
                let caps = options.caps;
                handles.push(self.spawn(async move {
                    judge
                        .test_case(&task, &program, index, &limits, &compare, caps)
                        .await
                })?);
            }
            for handle in handles {
                let outcome = handle
                    .await
                    .map_err(|e| RewardError::fault(&task.id, format!("run task failed: {e}")))??;
                if !outcome.passed && failed_at.is_none() {
                    failed_at = Some(outcome.index);
                }
                outcomes.push(outcome);
            }
            if !tests.plan.stop_at_first_failure {
                failed_at = None;
            }
        }
        Ok(outcomes)
    }

    /// Runs `program` on stdio case `index` and judges its output (by the task's comparison,
    /// or its checker).
    async fn test_case(
        &self,
        task: &CodeTask,
        program: &str,
        index: usize,
        limits: &Limits,
        compare: &Compare,
        caps: Option<LimitCaps>,
    ) -> Result<TestOutcome> {
        let CodeTests::Stdio(tests) = &task.tests else {
            return Err(RewardError::fault(&task.id, "not a stdio task"));
        };
        let case = &tests.cases[index];
        let fault = |e: &dyn std::fmt::Display| {
            tracing::error!(task = %task.id, reason = %e, "sandbox failure");
            RewardError::fault(&task.id, format!("the sandbox failed: {e}"))
        };
        let run = if task.language == Language::Python {
            // The harness wraps the script: a run without its report did not end cleanly.
            let (run, report) = self
                .sandbox
                .execute(&Job::script(program), case.stdin.as_bytes(), limits)
                .await
                .map_err(|e| fault(&e))?;
            if report.is_none() && run.status == RunStatus::Ok {
                let reason = unfinished_reason(&run);
                return Ok(outcome(index, &run, false, reason));
            }
            run
        } else {
            let request = RunRequest::new(task.language, program)
                .with_stdin(case.stdin.as_bytes())
                .with_limits(limits.clone());
            let ran = self
                .sandbox
                .run_program(&request)
                .await
                .map_err(|e| fault(&e))?;
            match (ran.run, ran.compile) {
                (Some(run), _) => run,
                (None, step) => compile_failure(step),
            }
        };
        if run.status != RunStatus::Ok {
            let reason = match run.status {
                RunStatus::Error => format!(
                    "the program failed (exit code {:?}): {}",
                    run.exit_code,
                    run.stderr.trim_end().lines().last().unwrap_or("")
                ),
                _ => unfinished_reason(&run),
            };
            return Ok(outcome(index, &run, false, reason));
        }
        let Some(checker) = &tests.checker else {
            return Ok(match first_difference(&run.stdout, &case.stdout, compare) {
                None => outcome(index, &run, true, String::new()),
                Some(diff) => outcome(index, &run, false, diff),
            });
        };
        let verdict = run_checker(
            &self.sandbox,
            checker,
            (&case.stdin, &run.stdout, &case.stdout),
            caps,
        )
        .await
        .map_err(|e| fault(&e))?
        .map_err(|e| {
            tracing::warn!(task = %task.id, test = index, reason = %e, "checker fault");
            RewardError::fault(&task.id, format!("test {index}: {e}"))
        })?;
        let passed = verdict.points >= 1.0;
        Ok(TestOutcome {
            points: (!passed && verdict.points > 0.0).then_some(verdict.points),
            ..outcome(
                index,
                &run,
                passed,
                if passed {
                    String::new()
                } else {
                    verdict.message
                },
            )
        })
    }
}

fn outcome(index: usize, run: &RunResult, passed: bool, reason: String) -> TestOutcome {
    TestOutcome {
        index,
        passed,
        status: run.status,
        reason,
        points: None,
    }
}

/// A compile that failed, as the run result a verdict quotes.
fn compile_failure(step: Option<CompileStep>) -> RunResult {
    let step = step.unwrap_or(CompileStep {
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
        cpu_ms: 0.0,
        truncated: false,
    }
}

/// The score of a program from its test outcomes (a case a checker gave partial points
/// counts for them under partial credit).
fn judge_outcomes(outcomes: Vec<TestOutcome>, credit: Credit) -> Score {
    let total = outcomes.len();
    let passed = outcomes.iter().filter(|o| o.passed).count();
    let points: f64 = outcomes
        .iter()
        .map(|o| {
            if o.passed {
                1.0
            } else {
                o.points.unwrap_or(0.0)
            }
        })
        .sum();
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
        Credit::Partial => points / total as f64,
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

/// The per-case outcomes of one assert or call job's run; `indices` are the task's indices
/// of the cases the job ran, in order.
fn case_outcomes(indices: &[usize], run: &RunResult, report: Option<&Report>) -> Vec<TestOutcome> {
    let unfinished = |reason: String| -> Vec<TestOutcome> {
        indices
            .iter()
            .map(|&index| outcome(index, run, false, reason.clone()))
            .collect()
    };
    let Some(report) = report else {
        return unfinished(unfinished_reason(run));
    };
    if report.cases.len() != indices.len() {
        return unfinished(format!(
            "the harness reported {} cases, expected {}",
            report.cases.len(),
            indices.len()
        ));
    }
    report
        .cases
        .iter()
        .zip(indices)
        .map(|(c, &index)| {
            // A report is only complete when the run itself ended cleanly.
            let passed = c.passed && run.status == RunStatus::Ok;
            let reason = if c.passed && !passed {
                unfinished_reason(run)
            } else {
                c.reason.clone()
            };
            outcome(index, run, passed, reason)
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
