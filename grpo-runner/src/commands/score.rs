//! `grpo score`: Score JSONL completions against a task pack, one scored result per line.

use std::process::ExitCode;

/// Score JSONL completions against a task pack, one scored result per line.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The task pack: a .jsonl file, a pack directory, or `builtin:NAME`.
    #[arg(long)]
    pub tasks: String,
    /// JSONL `{"task_id", "completion"}` lines.
    #[arg(long)]
    pub completions: std::path::PathBuf,
}

impl Args {
    /// Runs the command.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        anyhow::bail!("`grpo score` is not built yet")
    }
}
