//! `grpo sample`: Generate one completion for a prompt.

use std::process::ExitCode;

/// Generate one completion for a prompt.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A model directory (HF format) or GGUF file.
    #[arg(long)]
    pub model: std::path::PathBuf,
    /// The prompt text.
    #[arg(long)]
    pub prompt: String,
}

impl Args {
    /// Runs the command.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        anyhow::bail!("`grpo sample` is not built yet")
    }
}
