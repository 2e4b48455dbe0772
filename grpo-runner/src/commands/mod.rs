//! One file per subcommand; each has an `Args` struct and `execute(self)`.
//!
//! Exit codes: 0 when the command did its job, 1 when `tasks check`/`tasks validate` find a
//! failing task, 2 on bad input (returned as `Err`, printed by `main`).

use std::process::ExitCode;

use clap::Subcommand;

pub mod check_math;
pub mod eval;
pub mod run_code;
pub mod sample;
pub mod score;
pub mod serve;
pub mod tasks;
pub mod toolchain;
pub mod train;

/// Every `grpo` subcommand.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Train a policy with GRPO (the built-in tiny CPU preset when given no arguments).
    Train(train::Args),
    /// Greedy accuracy and pass@k of a model on a task pack.
    Eval(eval::Args),
    /// Generate one completion for a prompt.
    Sample(sample::Args),
    /// Check one math answer or a JSONL file of pairs.
    CheckMath(check_math::Args),
    /// Score JSONL completions against a task pack.
    Score(score::Args),
    /// Run one program (Python, C, C++, JavaScript, TypeScript) in the sandbox.
    #[command(alias = "run-python")]
    RunCode(run_code::Args),
    /// Task-pack authoring tools.
    Tasks(tasks::Args),
    /// Serve the verifiers over HTTP.
    Serve(serve::Args),
    /// Install or inspect the pinned C/C++ toolchain.
    Toolchain(toolchain::Args),
}

impl Command {
    /// Runs the command.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        match self {
            Command::Train(args) => args.execute(),
            Command::Eval(args) => args.execute(),
            Command::Sample(args) => args.execute(),
            Command::CheckMath(args) => args.execute(),
            Command::Score(args) => args.execute(),
            Command::RunCode(args) => args.execute(),
            Command::Tasks(args) => args.execute(),
            Command::Serve(args) => args.execute(),
            Command::Toolchain(args) => args.execute(),
        }
    }
}
