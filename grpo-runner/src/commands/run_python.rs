//! `grpo run-python`: Run one Python program in the sandbox and print its run result.

use std::process::ExitCode;

/// Run one Python program in the sandbox and print its run result.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The Python source file.
    pub file: std::path::PathBuf,
    /// A file fed to the program on stdin.
    #[arg(long)]
    pub stdin: Option<std::path::PathBuf>,
    /// Wall-clock and CPU limit in milliseconds.
    #[arg(long)]
    pub timeout_ms: Option<u64>,
    /// Memory cap in MiB.
    #[arg(long)]
    pub memory_mb: Option<u64>,
}

impl Args {
    /// Runs the command.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        anyhow::bail!("`grpo run-python` is not built yet")
    }
}
