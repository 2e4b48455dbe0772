//! `grpo eval`: Greedy accuracy and pass@k of a model on a task pack.

use std::process::ExitCode;

/// Greedy accuracy and pass@k of a model on a task pack.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A model directory (HF format) or GGUF file.
    #[arg(long)]
    pub model: std::path::PathBuf,
    /// The task pack: a .jsonl file, a pack directory, or `builtin:NAME`.
    #[arg(long)]
    pub tasks: String,
    /// Samples per task for pass@k.
    #[arg(long)]
    pub samples: Option<usize>,
}

impl Args {
    /// Runs the command.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        anyhow::bail!("`grpo eval` is not built yet")
    }
}
