//! `grpo check-math`: judge a predicted math answer against a gold answer.

use std::process::ExitCode;

use std::path::PathBuf;

/// Check one math answer (`--gold G --pred P`) or a JSONL file of `{"gold","pred"}` pairs.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The reference answer.
    #[arg(long, requires = "pred", conflicts_with = "pairs")]
    pub gold: Option<String>,
    /// The model's completion (the answer is extracted from it).
    #[arg(long, requires = "gold")]
    pub pred: Option<String>,
    /// A JSONL file with one `{"gold": …, "pred": …}` object per line.
    #[arg(long)]
    pub pairs: Option<PathBuf>,
}

impl Args {
    /// Runs the command.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        anyhow::bail!("check-math lands with the math verifier")
    }
}
