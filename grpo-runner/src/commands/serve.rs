//! `grpo serve`: Serve the verifiers over HTTP (SandboxFusion-compatible subset and a batch API).

use std::process::ExitCode;

/// Serve the verifiers over HTTP (SandboxFusion-compatible subset and a batch API).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: String,
    /// Sandbox worker count.
    #[arg(long)]
    pub workers: Option<usize>,
    /// Requests admitted at once before queueing.
    #[arg(long)]
    pub max_inflight: Option<usize>,
}

impl Args {
    /// Runs the command.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        anyhow::bail!("`grpo serve` is not built yet")
    }
}
