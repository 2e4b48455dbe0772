//! `grpo run-python`: run one Python program in the sandbox and print its run result.
//!
//! The result is one JSON object on stdout (DESIGN.md "Shared result shapes"); the exit code
//! is 0 whatever the program did (a failing program is a successful check), 2 when the file
//! cannot be read or a limit is invalid.

use std::process::ExitCode;

use anyhow::Context;
use grpo_rewards::code::{Limits, Sandbox};

/// Run one Python program in the sandbox and print its run result.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The Python source file.
    pub file: std::path::PathBuf,
    /// A file fed to the program on stdin.
    #[arg(long)]
    pub stdin: Option<std::path::PathBuf>,
    /// Time limit in milliseconds (the wall-clock limit is twice this).
    #[arg(long)]
    pub timeout_ms: Option<u64>,
    /// Memory cap in MiB.
    #[arg(long)]
    pub memory_mb: Option<u64>,
}

impl Args {
    /// Runs the command.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
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
        let sandbox = Sandbox::shared().context("starting the Python sandbox")?;
        let result = sandbox
            .run_blocking(&program, &stdin, &limits)
            .context("running the program")?;
        println!(
            "{}",
            serde_json::to_string(&result).context("serialising the run result")?
        );
        Ok(ExitCode::SUCCESS)
    }
}
