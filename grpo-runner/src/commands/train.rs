//! `grpo train`: Train a policy with GRPO (the built-in tiny CPU preset when given no arguments).

use std::process::ExitCode;

/// Train a policy with GRPO (the built-in tiny CPU preset when given no arguments).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A TOML run config.
    #[arg(long)]
    pub config: Option<std::path::PathBuf>,
    /// A named run preset.
    #[arg(long)]
    pub preset: Option<String>,
    /// The run directory.
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
    /// Config overrides, `key=value`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
}

impl Args {
    /// Runs the command.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        anyhow::bail!("`grpo train` is not built yet")
    }
}
