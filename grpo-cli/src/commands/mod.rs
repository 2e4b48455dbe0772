//! One file per subcommand; each has an `Args` struct and `execute(self)`.
//!
//! Exit codes: 0 when the command did its job, 1 when `tasks check`/`tasks validate` find a
//! failing task, 2 on bad input (returned as `Err`, printed by `main`).

use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;
use grpo_rewards::{Scorer, ScoringConfig};
use grpo_tasks::{Manifest, Task};

pub mod bench;
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
    /// Load-test a verifier service (ours or SandboxFusion): a concurrency sweep.
    Bench(bench::Args),
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
            Command::Bench(args) => args.execute(),
        }
    }
}

/// The scorer of a pack (its `[rewards]` weights, default everything else), with the shared
/// sandbox as its code judge when any of `tasks` is a code task. `what` names the pack in
/// errors.
pub fn pack_scorer<'a>(
    manifest: &Manifest,
    tasks: impl IntoIterator<Item = &'a Task>,
    what: &str,
) -> anyhow::Result<Scorer> {
    pack_scorer_scaled(manifest, tasks, what, None)
}

/// [`pack_scorer`], with every code task's own time limit multiplied by `time_scale` when one
/// is given (instead of the pack's `[code] time_limits` rule).
pub fn pack_scorer_scaled<'a>(
    manifest: &Manifest,
    tasks: impl IntoIterator<Item = &'a Task>,
    what: &str,
    time_scale: Option<f64>,
) -> anyhow::Result<Scorer> {
    let config = ScoringConfig {
        time_scale,
        ..ScoringConfig::for_pack(manifest).with_context(|| format!("the rewards of {what}"))?
    };
    config
        .validate()
        .with_context(|| format!("the rewards of {what}"))?;
    let sandbox = if Scorer::needs_code(tasks) {
        Some(grpo_sandbox::Sandbox::shared().context("starting the sandbox")?)
    } else {
        None
    };
    grpo_sandbox::scorer(&config, sandbox).with_context(|| format!("the rewards of {what}"))
}
