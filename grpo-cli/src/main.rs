//! `grpo`: one command line for training, evaluation, verification and pack authoring.

use std::process::ExitCode;

use clap::Parser;

mod commands;

/// GRPO training and verifiable rewards for math and code.
#[derive(Debug, Parser)]
#[command(name = "grpo", version, about, long_about = None)]
struct Cli {
    /// Log level filter for stderr logs (e.g. `info`, `grpo_runner=debug`).
    #[arg(long, global = true, default_value = "warn", env = "GRPO_LOG")]
    log: String,
    /// Write logs as JSON lines (for machines) instead of text.
    #[arg(long, global = true)]
    log_json: bool,
    #[command(subcommand)]
    command: commands::Command,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(&cli.log, cli.log_json);
    match cli.command.execute() {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}

fn init_logging(filter: &str, json: bool) {
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if json {
        builder.json().init();
    } else {
        builder.init();
    }
}
