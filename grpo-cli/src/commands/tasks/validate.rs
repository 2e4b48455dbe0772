//! `grpo tasks validate`.

use std::process::ExitCode;

use super::*;

pub(super) fn run(spec: &str) -> anyhow::Result<ExitCode> {
    let Some(pack) = load_or_report(spec)? else {
        return Ok(ExitCode::from(1));
    };
    let splits: Vec<String> = pack
        .splits()
        .iter()
        .map(|s| format!("{} {}", s.name, s.tasks.len()))
        .collect();
    eprintln!(
        "{spec}: valid, {} tasks ({})",
        pack.len(),
        splits.join(", ")
    );
    Ok(ExitCode::SUCCESS)
}
