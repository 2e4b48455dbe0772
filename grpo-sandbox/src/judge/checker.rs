//! Checker programs (special judges): a task's own program decides whether a candidate's
//! output is right for one test.
//!
//! The checker runs in the sandbox like any program, in a directory of its own holding
//! `input.txt` (the test's input), `output.txt` (the candidate's output) and `answer.txt` (the
//! expected output), with the arguments its [`CheckerProtocol`] names and its own limits. It
//! never shares a directory with the candidate: a candidate that prints a path, or tries to
//! read the answer, finds nothing. What the checker says is read strictly: anything outside
//! its protocol (a crash, a time-out, testlib's `FAIL`, a score out of range) is a
//! [`CheckerFault`], which the judge turns into a fault of the task, never into a reward.

use grpo_rewards::code::limits::{LimitCaps, Limits};
use grpo_rewards::result::{RunResult, RunStatus};
use grpo_tasks::StdioTests;
use grpo_tasks::judging::{Checker, CheckerProtocol};

use crate::engine::files::{JobFiles, JobPath};
use crate::guest::cc::CompileLimits;
use crate::judge::compare::cut;
use crate::run_program::RunRequest;
use crate::sandbox::Sandbox;

/// Default CPU time of one checker run.
pub const CHECKER_TIME_LIMIT_MS: u64 = 10_000;
/// Default memory of one checker run.
pub const CHECKER_MEMORY_MB: u64 = 512;

/// The compile of a C or C++ checker: more generous than a candidate's (a checker with testlib
/// in it is 200 KB of C++ and takes seconds, more on a loaded machine), and kept on disk by
/// its content, so that it is compiled once per machine, not once per process.
pub fn checker_compile_limits() -> CompileLimits {
    CompileLimits {
        cpu_s: 120,
        wall_ms: 600_000,
        memory_mb: 4096,
        keep_on_disk: true,
        ..CompileLimits::default()
    }
}

/// What a checker decided for one test.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckerVerdict {
    /// The test's score in `[0, 1]`: 1 accepted, 0 rejected, between for partial points.
    pub points: f64,
    /// What the checker said (its last line of output), for the verdict's reason.
    pub message: String,
}

/// A checker that did not answer within its protocol: a fault of the task.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the checker failed: {0}")]
pub struct CheckerFault(pub String);

/// Runs `checker` on one test: the `input` given to the candidate, its `output`, and the
/// expected `answer`, under the checker's own limits clamped to `caps` (a service's maxima
/// bind a task's checker as they bind its program). `Err` of the outer result is a failure of
/// the sandbox itself.
pub async fn run_checker(
    sandbox: &Sandbox,
    checker: &Checker,
    (input, output, answer): (&str, &str, &str),
    caps: Option<LimitCaps>,
) -> crate::error::Result<Result<CheckerVerdict, CheckerFault>> {
    let path = |name: &str| JobPath::parse(name).map_err(CheckerFault);
    let files = match (path("input.txt"), path("output.txt"), path("answer.txt")) {
        (Ok(i), Ok(o), Ok(a)) => JobFiles {
            put: vec![
                (i, input.as_bytes().to_vec()),
                (o, output.as_bytes().to_vec()),
                (a, answer.as_bytes().to_vec()),
            ],
            fetch: Vec::new(),
        },
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return Ok(Err(e)),
    };
    let base = Limits::default();
    let own = Limits {
        time_limit_ms: checker.time_limit_ms.unwrap_or(CHECKER_TIME_LIMIT_MS),
        memory_mb: checker.memory_mb.unwrap_or(CHECKER_MEMORY_MB),
        // The three files are placed before it runs: they do not count against what the
        // checker itself may write.
        file_quota_bytes: base.file_quota_bytes + files.put_bytes(),
        ..base
    };
    let limits = match caps {
        Some(caps) => own.capped(caps),
        None => own,
    };
    let args = match checker.protocol {
        CheckerProtocol::Testlib => ["input.txt", "output.txt", "answer.txt"],
        CheckerProtocol::Codeforces => ["input.txt", "answer.txt", "output.txt"],
    }
    .map(str::to_owned)
    .to_vec();
    let request = RunRequest::new(checker.language, &checker.source)
        .with_limits(limits)
        .with_compile(checker_compile_limits())
        .with_files(files)
        .with_args(args);
    let ran = sandbox.run_program(&request).await?;
    let run = match (ran.compile, ran.run) {
        (_, Some(run)) => run,
        (Some(step), None) => {
            let first_error = step
                .stderr
                .lines()
                .find(|l| l.contains("error"))
                .map_or_else(|| last_line(&step.stderr), |l| cut(l.trim(), 200));
            return Ok(Err(CheckerFault(format!(
                "it did not compile (exit {}): {first_error}",
                step.return_code
            ))));
        }
        (None, None) => return Ok(Err(CheckerFault("it did not run".into()))),
    };
    Ok(read_verdict(checker.protocol, &run))
}

/// The first case of `tests` whose own expected output its checker does not accept (or on
/// which it faults), as a sentence; `None` when it accepts them all or there is no checker.
/// The expected output is a right answer, so a checker that rejects it is broken: this is
/// how `grpo tasks check` proves a checker on data that ships no reference solution.
pub async fn rejects_expected(
    sandbox: &Sandbox,
    tests: &StdioTests,
) -> crate::error::Result<Option<String>> {
    let Some(checker) = &tests.checker else {
        return Ok(None);
    };
    let mut runs = Vec::with_capacity(tests.cases.len());
    for case in &tests.cases {
        let (sandbox, checker, case) = (sandbox.clone(), checker.clone(), case.clone());
        runs.push(spawn(async move {
            run_checker(
                &sandbox,
                &checker,
                (&case.stdin, &case.stdout, &case.stdout),
                None,
            )
            .await
        })?);
    }
    for (index, run) in runs.into_iter().enumerate() {
        let verdict = run.await.map_err(|e| crate::error::SandboxError::Engine {
            reason: format!("checker task failed: {e}"),
        })??;
        match verdict {
            Ok(v) if v.points >= 1.0 => {}
            Ok(v) => {
                return Ok(Some(format!(
                    "test {index}: the checker rejects the expected output ({})",
                    v.message
                )));
            }
            Err(fault) => return Ok(Some(format!("test {index}: {fault}"))),
        }
    }
    Ok(None)
}

/// [`rejects_expected`] for callers without an async runtime.
pub fn rejects_expected_blocking(
    sandbox: &Sandbox,
    tests: &StdioTests,
) -> crate::error::Result<Option<String>> {
    crate::sandbox::blocking_runtime()?.block_on(rejects_expected(sandbox, tests))
}

fn spawn<F>(fut: F) -> crate::error::Result<tokio::task::JoinHandle<F::Output>>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => Ok(handle.spawn(fut)),
        Err(_) => Ok(crate::sandbox::blocking_runtime()?.spawn(fut)),
    }
}

/// Reads a finished checker run under `protocol`.
pub fn read_verdict(
    protocol: CheckerProtocol,
    run: &RunResult,
) -> Result<CheckerVerdict, CheckerFault> {
    let said = || {
        let out = last_line(&run.stdout);
        if out.is_empty() {
            last_line(&run.stderr)
        } else {
            out
        }
    };
    match run.status {
        RunStatus::Ok | RunStatus::Error => {}
        RunStatus::Timeout => return Err(CheckerFault("it ran out of time".into())),
        RunStatus::MemoryLimit => return Err(CheckerFault("it ran out of memory".into())),
        RunStatus::OutputLimit => return Err(CheckerFault("its output was cut".into())),
        RunStatus::Crash => {
            return Err(CheckerFault(format!(
                "it crashed: {}",
                last_line(&run.stderr)
            )));
        }
    }
    let code = run
        .exit_code
        .unwrap_or(if run.status == RunStatus::Ok { 0 } else { 1 });
    match protocol {
        CheckerProtocol::Testlib => testlib_verdict(code, run, said()),
        CheckerProtocol::Codeforces => {
            if code != 0 {
                return Err(CheckerFault(format!(
                    "it exited {code}: {}",
                    last_line(&run.stderr)
                )));
            }
            let last = run.stdout.split_whitespace().last().unwrap_or("");
            match last.parse::<f64>() {
                Ok(points) if (0.0..=1.0).contains(&points) => Ok(CheckerVerdict {
                    points,
                    message: if points >= 1.0 {
                        "accepted by the checker".into()
                    } else {
                        format!("the checker scored it {points}")
                    },
                }),
                _ => Err(CheckerFault(format!(
                    "its last output {:?} is not a score between 0 and 1",
                    cut(last, 40)
                ))),
            }
        }
    }
}

/// testlib's exit codes: 0 OK, 1 WA, 2 PE, 3 FAIL, 4 dirt, 7 points, 8 unexpected EOF,
/// 50 + n partially correct.
fn testlib_verdict(
    code: i32,
    run: &RunResult,
    said: String,
) -> Result<CheckerVerdict, CheckerFault> {
    let verdict = |points: f64, what: &str| {
        Ok(CheckerVerdict {
            points,
            message: if said.is_empty() {
                what.to_owned()
            } else {
                format!("{what}: {}", cut(&said, 200))
            },
        })
    };
    match code {
        0 => verdict(1.0, "accepted by the checker"),
        1 => verdict(0.0, "wrong answer"),
        2 => verdict(0.0, "presentation error"),
        4 => verdict(0.0, "wrong answer (extra output)"),
        8 => verdict(0.0, "wrong answer (unexpected end of output)"),
        3 => Err(CheckerFault(format!(
            "it reported FAIL: {}",
            cut(&said, 200)
        ))),
        7 => {
            // `points X ...` in whichever stream the checker wrote its result to.
            let points = [run.stdout.as_str(), run.stderr.as_str()]
                .into_iter()
                .find_map(|text| {
                    let mut words = text.split_whitespace();
                    while let Some(word) = words.next() {
                        if word.eq_ignore_ascii_case("points") {
                            return words.next().and_then(|p| p.parse::<f64>().ok());
                        }
                    }
                    None
                });
            match points {
                Some(p) if (0.0..=1.0).contains(&p) => verdict(p, "partial points"),
                Some(p) => Err(CheckerFault(format!(
                    "it gave {p} points; a score must lie between 0 and 1"
                ))),
                None => Err(CheckerFault(
                    "it exited with testlib's points code but printed no `points X`".into(),
                )),
            }
        }
        50..=150 => verdict(f64::from(code - 50) / 100.0, "partially correct"),
        other => Err(CheckerFault(format!(
            "it exited {other}, which is no testlib verdict: {}",
            cut(&said, 200)
        ))),
    }
}

fn last_line(text: &str) -> String {
    cut(text.trim_end().lines().last().unwrap_or("").trim(), 200)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(status: RunStatus, code: Option<i32>, stdout: &str, stderr: &str) -> RunResult {
        RunResult {
            status,
            exit_code: code,
            stdout: stdout.into(),
            stderr: stderr.into(),
            duration_ms: 1.0,
            cpu_ms: 0.0,
            truncated: false,
        }
    }

    #[test]
    fn testlib_exit_codes() {
        let p = CheckerProtocol::Testlib;
        let ok = |code, out: &str| read_verdict(p, &run(RunStatus::Error, Some(code), "", out));
        assert_eq!(
            read_verdict(p, &run(RunStatus::Ok, Some(0), "", "ok 3 numbers")).unwrap(),
            CheckerVerdict {
                points: 1.0,
                message: "accepted by the checker: ok 3 numbers".into()
            }
        );
        assert_eq!(ok(1, "wrong answer 2nd differs").unwrap().points, 0.0);
        assert_eq!(ok(2, "").unwrap().points, 0.0);
        assert_eq!(ok(4, "").unwrap().points, 0.0);
        assert_eq!(ok(8, "").unwrap().points, 0.0);
        assert!(ok(3, "FAIL answer file is broken").is_err());
        assert_eq!(ok(7, "points 0.25 two of eight").unwrap().points, 0.25);
        assert!(
            ok(7, "points 40").is_err(),
            "points out of range are a fault"
        );
        assert!(ok(7, "no number").is_err());
        assert_eq!(ok(75, "").unwrap().points, 0.25);
        assert!(ok(5, "").is_err());
        assert!(ok(-1, "").is_err());
    }

    #[test]
    fn codeforces_protocol_reads_the_last_score() {
        let p = CheckerProtocol::Codeforces;
        let v = |stdout: &str| read_verdict(p, &run(RunStatus::Ok, Some(0), stdout, ""));
        assert_eq!(v("checking...\n1\n").unwrap().points, 1.0);
        assert_eq!(v("0").unwrap().points, 0.0);
        assert_eq!(v("0.5\n").unwrap().points, 0.5);
        assert!(v("").is_err());
        assert!(v("yes").is_err());
        assert!(v("2").is_err());
        assert!(v("nan").is_err());
        assert!(read_verdict(p, &run(RunStatus::Error, Some(1), "1", "Traceback")).is_err());
    }

    #[test]
    fn a_checker_that_did_not_finish_is_a_fault() {
        for status in [
            RunStatus::Timeout,
            RunStatus::MemoryLimit,
            RunStatus::OutputLimit,
            RunStatus::Crash,
        ] {
            for p in [CheckerProtocol::Testlib, CheckerProtocol::Codeforces] {
                assert!(read_verdict(p, &run(status, None, "1", "")).is_err());
            }
        }
    }
}
