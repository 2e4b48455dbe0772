//! `grpo score`: score JSONL completions against a task pack, one scored result per line.
//!
//! Completions are JSONL `{"task_id", "completion"}`; every line is read and matched to a task
//! before anything runs, so a malformed line or an unknown id stops the command (exit 2) with
//! the file and line named. Rewards: the pack's [`grpo_rewards::Scorer`] (its `[rewards]`
//! weights): accuracy (math, countdown, and code in the sandbox) and format, exactly as
//! `grpo train` and `grpo serve` score. The completions of one task are scored as one group
//! (per-group preparation once, identical programs run once), and results are printed in
//! input order; a summary goes to stderr. A fault of a task (the sandbox failed on it, its checker does
//! not compile or does not answer) is never printed as a 0: each of its completions gets a line
//! `{"task_id", "fault"}` instead, the other tasks' results are all printed, and the command then exits 1.

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, bail};
use grpo_tasks::{Pack, Task};
use serde::Deserialize;

/// Score JSONL completions against a task pack, one scored result per line.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The task pack: a .jsonl file, a pack directory, or `builtin:NAME`.
    #[arg(long)]
    pub tasks: String,
    /// JSONL `{"task_id", "completion"}` lines.
    #[arg(long)]
    pub completions: std::path::PathBuf,
    /// Multiply every code task's own time limit by this, instead of the pack's rule (a pack
    /// whose `[code]` table says `time_limits = "native"` gets the sandbox's measured factor
    /// per language; others run their limits as written).
    #[arg(long)]
    pub time_scale: Option<f64>,
}

#[derive(Debug, Deserialize)]
struct Line {
    task_id: String,
    completion: String,
}

impl Args {
    /// Runs the command.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        let pack =
            Pack::load(&self.tasks).with_context(|| format!("loading pack {}", self.tasks))?;
        let path = &self.completions;
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let mut items: Vec<(Task, String)> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let parsed: Line = serde_json::from_str(line).with_context(|| {
                format!(
                    "{}:{}: not a {{\"task_id\", \"completion\"}} object",
                    path.display(),
                    n + 1
                )
            })?;
            let Some(task) = pack.get(&parsed.task_id) else {
                bail!(
                    "{}:{}: field `task_id`: no task {:?} in {}",
                    path.display(),
                    n + 1,
                    parsed.task_id,
                    self.tasks
                );
            };
            items.push((task.clone(), parsed.completion));
        }

        let scorer = super::pack_scorer_scaled(
            &pack.manifest,
            items.iter().map(|(t, _)| t),
            &self.tasks,
            self.time_scale,
        )?;
        let started = Instant::now();
        // One group per task, in order of first appearance; `at[i]` is (group, place) of line i.
        let mut groups: Vec<(&Task, Vec<String>)> = Vec::new();
        let mut at = Vec::with_capacity(items.len());
        for (task, completion) in &items {
            let g = match groups.iter().position(|(t, _)| t.id() == task.id()) {
                Some(g) => g,
                None => {
                    groups.push((task, Vec::new()));
                    groups.len() - 1
                }
            };
            at.push((g, groups[g].1.len()));
            groups[g].1.push(completion.clone());
        }
        let scored: Vec<Result<Vec<grpo_rewards::ScoredResult>, _>> =
            futures::executor::block_on(futures::future::join_all(groups.iter().map(
                |(task, completions)| scorer.score_group(task, completions, scorer.options()),
            )));
        let mut out = std::io::stdout().lock();
        let mut correct = 0;
        let mut faults = 0;
        for &(g, k) in &at {
            let line = match &scored[g] {
                Ok(results) => {
                    let scored = &results[k];
                    correct += usize::from(scored.correct);
                    serde_json::to_string(scored).context("serialising a scored result")?
                }
                Err(fault) => {
                    faults += 1;
                    serde_json::json!({"task_id": groups[g].0.id(), "fault": fault.to_string()})
                        .to_string()
                }
            };
            writeln!(out, "{line}")?;
        }
        let secs = started.elapsed().as_secs_f64();
        eprintln!(
            "scored {} completions in {secs:.2}s ({:.0}/s): {correct} correct",
            items.len(),
            items.len() as f64 / secs.max(1e-9)
        );
        let faulted: Vec<&str> = groups
            .iter()
            .zip(&scored)
            .filter(|(_, s)| s.is_err())
            .map(|((task, _), _)| task.id())
            .collect();
        if faulted.is_empty() {
            return Ok(ExitCode::SUCCESS);
        }
        eprintln!(
            "{faults} completions of {} tasks not scored (a fault of the task): {}",
            faulted.len(),
            faulted.join(", ")
        );
        Ok(ExitCode::FAILURE)
    }
}
