//! `grpo run-code`: run one program in the sandbox and print its run result (`run-python` is
//! an alias).
//!
//! The language comes from `--language` or the file's extension (`.py`, `.js`/`.mjs`, `.ts`,
//! `.c`, `.cpp`/`.cc`/`.cxx`). The result is one JSON object on stdout: the run result
//! (DESIGN.md "Shared result shapes"), with a `compile` object added for C and C++; a program
//! that does not compile prints `{"compile": {...}, "run": null}`. The exit code is 0 whatever
//! the program did (a failing program is a successful check), 2 when the file cannot be read,
//! a limit is invalid or the C/C++ toolchain is missing.

use std::process::ExitCode;

use anyhow::Context;
use grpo_rewards::code::Limits;
use grpo_sandbox::{RunRequest, Sandbox};
use grpo_tasks::Language;

/// Run one program in the sandbox and print its run result.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The source file.
    pub file: std::path::PathBuf,
    /// `python`, `c`, `cpp`, `javascript` (`nodejs`, `js`) or `typescript` (`ts`); default:
    /// from the file's extension, else Python.
    #[arg(long, short = 'l')]
    pub language: Option<String>,
    /// A file fed to the program on stdin.
    #[arg(long)]
    pub stdin: Option<std::path::PathBuf>,
    /// CPU time limit in milliseconds (the wall-clock limit, a net for waiting, is three
    /// times this).
    #[arg(long)]
    pub timeout_ms: Option<u64>,
    /// Memory cap in MiB.
    #[arg(long)]
    pub memory_mb: Option<u64>,
}

impl Args {
    /// Runs the command.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        let language = match &self.language {
            Some(name) => Language::parse(name).with_context(|| {
                format!("--language {name:?}: expected python, c, cpp, javascript or typescript")
            })?,
            None => language_of(&self.file),
        };
        let program = std::fs::read_to_string(&self.file)
            .with_context(|| format!("reading {}", self.file.display()))?;
        let stdin = match &self.stdin {
            Some(path) => {
                std::fs::read(path).with_context(|| format!("reading {}", path.display()))?
            }
            None => Vec::new(),
        };
        let defaults = Limits::default();
        let limits = Limits {
            time_limit_ms: self.timeout_ms.unwrap_or(defaults.time_limit_ms),
            memory_mb: self.memory_mb.unwrap_or(defaults.memory_mb),
            ..defaults
        };
        limits.validate().context("invalid limits")?;
        let sandbox = Sandbox::shared().context("starting the sandbox")?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .context("starting the async runtime")?;
        let request = RunRequest::new(language, &program)
            .with_stdin(&stdin)
            .with_limits(limits);
        let run = runtime
            .block_on(sandbox.run_program(&request))
            .with_context(|| format!("running the {language} program"))?;
        let compile = run.compile.as_ref().map(|step| {
            serde_json::json!({
                "return_code": step.return_code,
                "stderr": step.stderr,
                "duration_ms": step.duration_ms,
                "cached": step.cached,
                "timed_out": step.timed_out,
            })
        });
        let printed = match (run.run, compile) {
            (Some(result), None) => serde_json::to_value(&result)?,
            (Some(result), Some(compile)) => {
                let mut value = serde_json::to_value(&result)?;
                if let Some(object) = value.as_object_mut() {
                    object.insert("compile".into(), compile);
                }
                value
            }
            (None, compile) => serde_json::json!({ "compile": compile, "run": null }),
        };
        println!(
            "{}",
            serde_json::to_string(&printed).context("serialising the run result")?
        );
        Ok(ExitCode::SUCCESS)
    }
}

/// The language a file's extension names; Python when it names none.
fn language_of(file: &std::path::Path) -> Language {
    match file.extension().and_then(|e| e.to_str()) {
        Some("js" | "mjs" | "cjs") => Language::Javascript,
        Some("ts" | "mts") => Language::Typescript,
        Some("c") => Language::C,
        Some("cpp" | "cc" | "cxx" | "c++") => Language::Cpp,
        _ => Language::Python,
    }
}
