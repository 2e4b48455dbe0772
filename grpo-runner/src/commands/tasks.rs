//! `grpo tasks`: tools for task-pack authors.

use std::process::ExitCode;

/// Validate, check, inspect, generate and import task packs.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: TasksCommand,
}

#[derive(Debug, clap::Subcommand)]
enum TasksCommand {
    /// List every schema error of a pack (nonzero exit when any).
    Validate {
        /// The pack: a .jsonl file, a pack directory, or `builtin:NAME`.
        pack: String,
    },
}

impl Args {
    /// Runs the command.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        match self.command {
            TasksCommand::Validate { .. } => anyhow::bail!("`grpo tasks` is not built yet"),
        }
    }
}
