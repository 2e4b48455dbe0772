//! The SandboxFusion-compatible `POST /run_code`: request and response shapes, and the
//! mapping from our [`RunResult`] to SandboxFusion's conventions.
//!
//! Conventions kept (so verl's client works unchanged):
//! - every execution outcome answers HTTP 200; `status` is `Success` (exit code 0),
//!   `Failed` (non-zero exit, time limit, memory or output limit, crash of the program) or
//!   `SandboxError` (a fault on our side: the only status clients retry);
//! - languages: `python` (the default), `cpp`, `nodejs`, `typescript`, and `c` as our
//!   extension (`javascript`, `js`, `ts`, `c++` also accepted); SandboxFusion's others are a 422
//!   that lists what this server runs;
//! - `compile_result` is null for interpreted languages; for C and C++ it is the compiler's
//!   command result, and a compile error answers `Failed` with `compile_result` `Finished`,
//!   its non-zero return code and the compiler's stderr, and `run_result: null`;
//! - `run_result.status` is `Finished` or `TimeLimitExceeded`; `execution_time` is in
//!   seconds (wall clock), `cpu_time` the program's own CPU time, which its limit is charged
//!   with; `stdout`/`stderr` are always strings, returned raw (never stripped);
//! - limits the program hit without an exit code report the code of a killed process: `-9`
//!   (memory, output), `-11` (the interpreter trapped); a C or C++ program's `abort()` or
//!   failed `assert` is `-6`, a memory fault `-11`, as from a native process;
//! - `compile_timeout` and `run_timeout` may be integers or floats.
//!
//! `files` (path → base64, null values skipped) are written into the run's own directory (the
//! program's `/tmp` and current directory) before it starts, and `fetch_files` are read back
//! into the answer's `files`, base64. A path that is absolute outside `/tmp/` or climbs out
//! with `..` is a 422 and nothing is written; reading back never follows a link.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};

use super::error::ApiError;
use grpo_rewards::code::limits::MIN_MEMORY_MB;
use grpo_rewards::code::{Limits, WALL_FACTOR};
use grpo_rewards::result::{RunResult, RunStatus};
use grpo_sandbox::RunOutput;
use grpo_sandbox::engine::files::{JobFiles, JobPath};
use grpo_sandbox::guest::cc::CompileLimits;
use grpo_tasks::Language;

/// SandboxFusion's languages; those this server does not run are refused with a clear 422.
pub const SANDBOX_FUSION_LANGUAGES: [&str; 29] = [
    "python",
    "cpp",
    "nodejs",
    "go",
    "go_test",
    "java",
    "php",
    "csharp",
    "bash",
    "typescript",
    "sql",
    "rust",
    "cuda",
    "lua",
    "R",
    "perl",
    "D_ut",
    "ruby",
    "scala",
    "julia",
    "pytest",
    "junit",
    "kotlin_script",
    "jest",
    "verilog",
    "python_gpu",
    "lean",
    "swift",
    "racket",
];

/// A `POST /run_code` body (SandboxFusion's `RunCodeRequest`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RunCodeRequest {
    /// The program.
    pub code: String,
    /// The language; `None` means Python.
    #[serde(default)]
    pub language: Option<String>,
    /// Bytes fed to stdin.
    #[serde(default)]
    pub stdin: Option<String>,
    /// Compile timeout in seconds (C and C++; validated for every language).
    #[serde(default = "default_timeout")]
    pub compile_timeout: f64,
    /// Run timeout in seconds (wall clock).
    #[serde(default = "default_timeout")]
    pub run_timeout: f64,
    /// Memory limit in MiB; zero or negative means the server's default.
    #[serde(default = "default_memory", rename = "memory_limit_MB")]
    pub memory_limit_mb: i64,
    /// Files to place in the run's directory before it starts, path → base64 (null values
    /// skipped); relative paths or paths under `/tmp/`, never outside.
    #[serde(default)]
    pub files: BTreeMap<String, Option<String>>,
    /// Files to read back after the run, returned base64 in the answer's `files`.
    #[serde(default)]
    pub fetch_files: Vec<String>,
}

fn default_timeout() -> f64 {
    10.0
}

fn default_memory() -> i64 {
    -1
}

/// SandboxFusion's top-level status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RunCodeStatus {
    /// Every command finished with exit code 0.
    Success,
    /// The program failed: non-zero exit, time limit, or another limit.
    Failed,
    /// A fault on the server's side; clients may retry.
    SandboxError,
}

impl RunCodeStatus {
    /// The name as written in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            RunCodeStatus::Success => "Success",
            RunCodeStatus::Failed => "Failed",
            RunCodeStatus::SandboxError => "SandboxError",
        }
    }
}

/// SandboxFusion's status of one command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CommandRunStatus {
    /// The command ran to its end (any exit code).
    Finished,
    /// The command could not be run (a sandbox fault).
    Error,
    /// The command ran past its time limit.
    TimeLimitExceeded,
}

/// One command's outcome (SandboxFusion's `CommandRunResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandRunResult {
    /// How the command ended.
    pub status: CommandRunStatus,
    /// Wall-clock time in seconds.
    pub execution_time: Option<f64>,
    /// CPU time the program's own thread received, in seconds: what its time limit is
    /// charged with (an addition to SandboxFusion's shape; absent for a compile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_time: Option<f64>,
    /// Exit code; null when the command was stopped for time.
    pub return_code: Option<i32>,
    /// Standard output (lossy UTF-8).
    pub stdout: String,
    /// Standard error (lossy UTF-8).
    pub stderr: String,
}

/// A `POST /run_code` answer (SandboxFusion's `RunCodeResponse`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunCodeResponse {
    /// The overall status.
    pub status: RunCodeStatus,
    /// Empty on success; otherwise what went wrong, in a sentence.
    pub message: String,
    /// Always null for Python.
    pub compile_result: Option<CommandRunResult>,
    /// The run; null only on a sandbox fault.
    pub run_result: Option<CommandRunResult>,
    /// Which server answered (SandboxFusion's pod name); the host name when known.
    pub executor_pod_name: Option<String>,
    /// Fetched files, path → base64 (the `fetch_files` that exist as regular files after the
    /// run).
    pub files: BTreeMap<String, String>,
}

impl RunCodeRequest {
    /// The files to place (`files`: path → base64, null values skipped) and to read back
    /// (`fetch_files`), each path checked to stay inside the run's own directory.
    pub fn job_files(&self) -> Result<JobFiles, ApiError> {
        let mut files = JobFiles::default();
        for (path, content) in &self.files {
            let Some(content) = content else { continue };
            let at = JobPath::parse(path)
                .map_err(|e| ApiError::invalid(format!("`files[{path:?}]`: {e}")))?;
            let bytes = BASE64
                .decode(content.trim())
                .map_err(|e| ApiError::invalid(format!("`files[{path:?}]`: not base64: {e}")))?;
            files.put.push((at, bytes));
        }
        for (i, path) in self.fetch_files.iter().enumerate() {
            let at = JobPath::parse(path)
                .map_err(|e| ApiError::invalid(format!("`fetch_files[{i}]`: {e}")))?;
            files.fetch.push(at);
        }
        Ok(files)
    }

    /// Checks the request and turns it into limits: `run_timeout` becomes the CPU limit
    /// (capped at `max_run_timeout_s`; the wall clock is the default net for it, see
    /// [`Limits::capped`], so a loaded machine does not time out a program within its
    /// limit), `memory_limit_MB` the memory cap (capped at `max_memory_mb`; the server default
    /// when not positive).
    pub fn limits(
        &self,
        defaults: &Limits,
        max_run_timeout_s: f64,
        max_memory_mb: u64,
    ) -> Result<Limits, ApiError> {
        self.language()?;
        for (field, value) in [
            ("run_timeout", self.run_timeout),
            ("compile_timeout", self.compile_timeout),
        ] {
            if !value.is_finite() || value <= 0.0 {
                return Err(ApiError::invalid(format!(
                    "`{field}` must be a positive number of seconds, got {value}"
                )));
            }
        }
        let run_ms = (self.run_timeout.min(max_run_timeout_s) * 1000.0)
            .ceil()
            .max(1.0) as u64;
        let memory_mb = match self.memory_limit_mb {
            m if m <= 0 => defaults.memory_mb,
            m => (m as u64).min(max_memory_mb),
        };
        if memory_mb < MIN_MEMORY_MB {
            return Err(ApiError::invalid(format!(
                "`memory_limit_MB` of {memory_mb} is below the interpreter's minimum of {MIN_MEMORY_MB}"
            )));
        }
        Ok(Limits {
            time_limit_ms: run_ms,
            wall_limit_ms: None,
            memory_mb,
            ..defaults.clone()
        })
    }

    /// The language asked for (`python` when absent).
    pub fn language(&self) -> Result<Language, ApiError> {
        let name = self.language.as_deref().unwrap_or("python");
        Language::parse(name).ok_or_else(|| ApiError::UnsupportedLanguage {
            language: name.to_owned(),
        })
    }

    /// The compile limits: `compile_timeout` (capped at `max_compile_timeout_s`) as the
    /// compiler's CPU time, and the wall clock [`WALL_FACTOR`] times that, as for a run.
    pub fn compile_limits(&self, max_compile_timeout_s: f64) -> CompileLimits {
        let seconds = self.compile_timeout.min(max_compile_timeout_s).max(0.001);
        let ms = (seconds * 1000.0).ceil() as u64;
        CompileLimits {
            cpu_s: seconds.ceil() as u64,
            wall_ms: ms.saturating_mul(WALL_FACTOR),
            ..CompileLimits::default()
        }
    }

    /// How long the request may wait for admission: at least its own run timeout.
    pub fn queue_wait(&self, floor: std::time::Duration) -> std::time::Duration {
        let own = if self.run_timeout.is_finite() && self.run_timeout > 0.0 {
            std::time::Duration::from_secs_f64(self.run_timeout.min(3600.0))
        } else {
            floor
        };
        own.max(floor)
    }
}

impl RunCodeResponse {
    /// The answer for one finished run.
    pub fn from_run(run: RunResult, executor: Option<String>) -> Self {
        let (status, command_status, return_code, message) = match run.status {
            RunStatus::Ok => (
                RunCodeStatus::Success,
                CommandRunStatus::Finished,
                Some(0),
                String::new(),
            ),
            RunStatus::Error => (
                RunCodeStatus::Failed,
                CommandRunStatus::Finished,
                Some(run.exit_code.filter(|&c| c != 0).unwrap_or(1)),
                String::new(),
            ),
            RunStatus::Timeout => (
                RunCodeStatus::Failed,
                CommandRunStatus::TimeLimitExceeded,
                None,
                "time limit exceeded".into(),
            ),
            RunStatus::MemoryLimit => (
                RunCodeStatus::Failed,
                CommandRunStatus::Finished,
                Some(run.exit_code.filter(|&c| c != 0).unwrap_or(-9)),
                "memory limit exceeded".into(),
            ),
            RunStatus::OutputLimit => (
                RunCodeStatus::Failed,
                CommandRunStatus::Finished,
                Some(run.exit_code.filter(|&c| c != 0).unwrap_or(-9)),
                "output or file limit exceeded; output truncated".into(),
            ),
            RunStatus::Crash => (
                RunCodeStatus::Failed,
                CommandRunStatus::Finished,
                Some(run.exit_code.filter(|&c| c != 0).unwrap_or(-11)),
                "the program crashed".into(),
            ),
        };
        RunCodeResponse {
            status,
            message,
            compile_result: None,
            run_result: Some(CommandRunResult {
                status: command_status,
                execution_time: Some(run.duration_ms / 1000.0),
                cpu_time: Some(run.cpu_ms / 1000.0),
                return_code,
                stdout: run.stdout,
                stderr: run.stderr,
            }),
            executor_pod_name: executor,
            files: BTreeMap::new(),
        }
    }

    /// The answer for a program in any language: a compile error is `Failed` with the
    /// compiler's result and no run.
    pub fn from_source(run: RunOutput, executor: Option<String>) -> Self {
        let compile_result = run.compile.as_ref().map(|step| CommandRunResult {
            status: if step.timed_out {
                CommandRunStatus::TimeLimitExceeded
            } else {
                CommandRunStatus::Finished
            },
            execution_time: Some(step.duration_ms / 1000.0),
            cpu_time: None,
            return_code: if step.timed_out {
                None
            } else {
                Some(step.return_code)
            },
            stdout: String::new(),
            stderr: step.stderr.clone(),
        });
        let mut response = match run.run {
            Some(result) => RunCodeResponse::from_run(result, executor),
            None => RunCodeResponse {
                status: RunCodeStatus::Failed,
                message: "compilation failed".into(),
                compile_result: None,
                run_result: None,
                executor_pod_name: executor,
                files: BTreeMap::new(),
            },
        };
        response.compile_result = compile_result;
        response.files = run
            .files
            .into_iter()
            .map(|(path, bytes)| (path, BASE64.encode(bytes)))
            .collect();
        response
    }

    /// The answer when the sandbox itself failed.
    pub fn sandbox_error(message: String, executor: Option<String>) -> Self {
        RunCodeResponse {
            status: RunCodeStatus::SandboxError,
            message,
            compile_result: None,
            run_result: None,
            executor_pod_name: executor,
            files: BTreeMap::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(json: &str) -> RunCodeRequest {
        serde_json::from_str(json).unwrap()
    }

    fn run(status: RunStatus, exit_code: Option<i32>) -> RunResult {
        RunResult {
            status,
            exit_code,
            stdout: "o".into(),
            stderr: String::new(),
            duration_ms: 1500.0,
            cpu_ms: 500.0,
            truncated: false,
        }
    }

    #[test]
    fn verl_payload_maps_to_limits() {
        // The body verl's `call_sandbox_api` sends (timeout 10, memory 1024).
        let r = request(
            r#"{"compile_timeout": 10, "run_timeout": 10, "code": "print(1)", "stdin": null,
                "memory_limit_MB": 1024, "language": "python", "files": {}, "fetch_files": []}"#,
        );
        let l = r.limits(&Limits::default(), 60.0, 512).unwrap();
        assert_eq!(
            (l.time_limit_ms, l.wall_limit_ms(), l.memory_mb),
            (10_000, 30_000, 512)
        );
        // Only `code` is required: the defaults of SandboxFusion apply.
        let r = request(r#"{"code": "print(1)"}"#);
        let l = r.limits(&Limits::default(), 5.0, 1024).unwrap();
        assert_eq!(
            (l.time_limit_ms, l.memory_mb),
            (5_000, Limits::default().memory_mb)
        );
        // Sub-millisecond timeouts round up to one millisecond.
        let l = request(r#"{"code": "", "run_timeout": 0.0001}"#)
            .limits(&Limits::default(), 5.0, 1024)
            .unwrap();
        assert_eq!(l.time_limit_ms, 1);
    }

    #[test]
    fn bad_requests_are_refused_with_reasons() {
        let cases = [
            (
                r#"{"code": "", "language": "go"}"#,
                "\"go\" is not supported",
            ),
            (
                r#"{"code": "", "language": "cobol"}"#,
                "\"cobol\" is not supported",
            ),
            (
                r#"{"code": "", "run_timeout": -1}"#,
                "`run_timeout` must be a positive",
            ),
            (
                r#"{"code": "", "compile_timeout": 0}"#,
                "`compile_timeout` must be a positive",
            ),
            (
                r#"{"code": "", "memory_limit_MB": 8}"#,
                "below the interpreter's minimum",
            ),
        ];
        for (json, needle) in cases {
            let err = request(json)
                .limits(&Limits::default(), 60.0, 1024)
                .unwrap_err();
            assert_eq!(
                err.status(),
                axum::http::StatusCode::UNPROCESSABLE_ENTITY,
                "{json}"
            );
            assert!(err.to_string().contains(needle), "{json}: {err}");
        }
    }

    #[test]
    fn files_are_decoded_and_paths_kept_inside_the_run() {
        let files = request(
            r#"{"code": "", "files": {"a.txt": "aGk=", "/tmp/d/b": "", "skip": null},
                "fetch_files": ["out.txt"]}"#,
        )
        .job_files()
        .unwrap();
        let put: Vec<(&str, &[u8])> = files
            .put
            .iter()
            .map(|(p, b)| (p.name(), b.as_slice()))
            .collect();
        assert_eq!(put, [("/tmp/d/b", &b""[..]), ("a.txt", &b"hi"[..])]);
        assert_eq!(files.fetch[0].name(), "out.txt");
        for (json, needle) in [
            (
                r#"{"code": "", "files": {"../x": "aGk="}}"#,
                "`files[\"../x\"]`",
            ),
            (
                r#"{"code": "", "files": {"/etc/x": "aGk="}}"#,
                "outside the run",
            ),
            (
                r#"{"code": "", "files": {"a": "not base64!"}}"#,
                "not base64",
            ),
            (
                r#"{"code": "", "fetch_files": ["ok", "/etc/passwd"]}"#,
                "`fetch_files[1]`",
            ),
        ] {
            let err = request(json).job_files().unwrap_err();
            assert_eq!(
                err.status(),
                axum::http::StatusCode::UNPROCESSABLE_ENTITY,
                "{json}"
            );
            assert!(err.to_string().contains(needle), "{json}: {err}");
        }
    }

    #[test]
    fn outcomes_follow_sandbox_fusion_conventions() {
        use CommandRunStatus::*;
        use RunCodeStatus::*;
        let table = [
            (RunStatus::Ok, Some(0), Success, Finished, Some(0)),
            (RunStatus::Error, Some(3), Failed, Finished, Some(3)),
            (RunStatus::Error, None, Failed, Finished, Some(1)),
            (RunStatus::Timeout, None, Failed, TimeLimitExceeded, None),
            (RunStatus::MemoryLimit, Some(1), Failed, Finished, Some(1)),
            (RunStatus::MemoryLimit, None, Failed, Finished, Some(-9)),
            // A file quota hit after a clean exit must still not read as success.
            (RunStatus::OutputLimit, Some(0), Failed, Finished, Some(-9)),
            (RunStatus::Crash, None, Failed, Finished, Some(-11)),
        ];
        for (status, exit, top, command, code) in table {
            let r = RunCodeResponse::from_run(run(status, exit), None);
            let rr = r.run_result.as_ref().unwrap();
            assert_eq!(
                (r.status, rr.status, rr.return_code),
                (top, command, code),
                "{status:?}"
            );
            assert_eq!(rr.execution_time, Some(1.5));
            assert_eq!(rr.cpu_time, Some(0.5));
            assert!(r.compile_result.is_none());
        }
    }

    #[test]
    fn json_shape_matches_sandbox_fusion() {
        let v = serde_json::to_value(RunCodeResponse::from_run(run(RunStatus::Ok, Some(0)), None))
            .unwrap();
        assert_eq!(v["status"], "Success");
        assert_eq!(v["message"], "");
        assert!(v["compile_result"].is_null());
        assert_eq!(v["run_result"]["status"], "Finished");
        assert_eq!(v["run_result"]["return_code"], 0);
        assert_eq!(v["run_result"]["stdout"], "o");
        assert_eq!(v["run_result"]["stderr"], "");
        assert_eq!(v["files"], serde_json::json!({}));
        let v = serde_json::to_value(RunCodeResponse::sandbox_error("x".into(), None)).unwrap();
        assert_eq!(v["status"], "SandboxError");
        assert!(v["run_result"].is_null());
    }

    #[test]
    fn queue_wait_is_at_least_the_run_timeout() {
        use std::time::Duration;
        let floor = Duration::from_secs(5);
        assert_eq!(
            request(r#"{"code": "", "run_timeout": 30}"#).queue_wait(floor),
            Duration::from_secs(30)
        );
        assert_eq!(
            request(r#"{"code": "", "run_timeout": 1}"#).queue_wait(floor),
            floor
        );
        assert_eq!(
            request(r#"{"code": "", "run_timeout": -1}"#).queue_wait(floor),
            floor
        );
    }
}
