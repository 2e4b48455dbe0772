//! `grpo tasks stats`.

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::process::ExitCode;

use grpo_tasks::Task;
use serde_json::json;

use super::*;

pub(super) fn run(spec: &str) -> anyhow::Result<ExitCode> {
    let Some(pack) = load_or_report(spec)? else {
        return Ok(ExitCode::from(1));
    };
    let norm = |t: &Task| t.prompt().split_whitespace().collect::<Vec<_>>().join(" ");
    let mut splits = serde_json::Map::new();
    for split in pack.splits() {
        let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
        let mut difficulty: BTreeMap<String, usize> = BTreeMap::new();
        let mut seen: HashSet<String> = HashSet::new();
        let mut duplicates = 0;
        let lengths: Vec<usize> = split
            .tasks
            .iter()
            .map(|t| t.prompt().chars().count())
            .collect();
        for t in &split.tasks {
            *kinds.entry(t.kind_name()).or_default() += 1;
            if let Some(d) = t.metadata().and_then(|m| m.get("difficulty")) {
                let d = d
                    .as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| d.to_string());
                *difficulty.entry(d).or_default() += 1;
            }
            if !seen.insert(norm(t)) {
                duplicates += 1;
            }
        }
        let mean = if lengths.is_empty() {
            0.0
        } else {
            lengths.iter().sum::<usize>() as f64 / lengths.len() as f64
        };
        splits.insert(
            split.name.clone(),
            json!({
                "tasks": split.tasks.len(),
                "kinds": kinds,
                "difficulty": difficulty,
                "prompt_chars": {
                    "min": lengths.iter().min().copied().unwrap_or(0),
                    "mean": (mean * 10.0).round() / 10.0,
                    "max": lengths.iter().max().copied().unwrap_or(0),
                },
                "duplicate_prompts": duplicates,
            }),
        );
    }
    // Train/eval overlap: eval prompts that also appear in train (whitespace-normalised).
    let overlap = match (
        pack.split("train"),
        pack.split("eval").or_else(|| pack.split("test")),
    ) {
        (Some(train), Some(eval)) => {
            let train: HashSet<String> = train.iter().map(norm).collect();
            Some(eval.iter().filter(|t| train.contains(&norm(t))).count())
        }
        _ => None,
    };
    let report = json!({
        "pack": pack.manifest.name,
        "version": pack.manifest.version,
        "license": pack.manifest.license,
        "template": pack.manifest.template.spec(),
        "tasks": pack.len(),
        "splits": splits,
        "train_eval_overlap": overlap,
        "code_time_limits": time_limits(&pack),
    });
    writeln!(std::io::stdout().lock(), "{report}")?;
    eprintln!(
        "{spec}: {} tasks in {} split(s); train/eval overlap: {}",
        pack.len(),
        pack.splits().len(),
        overlap.map_or("n/a".to_owned(), |n| n.to_string())
    );
    Ok(ExitCode::SUCCESS)
}

/// The code tasks' own time limits per language: as the pack gives them, and as the sandbox
/// runs them (a native limit times the runtime's factor, see `grpo_sandbox::judge::native_time`).
fn time_limits(pack: &grpo_tasks::Pack) -> serde_json::Value {
    let native = pack.manifest.code.time_limits == grpo_tasks::TimeLimits::Native;
    let mut by_language: BTreeMap<&str, Vec<(u64, u64)>> = BTreeMap::new();
    for task in pack.tasks() {
        if let Task::Code(code) = task
            && let Some(own) = code.time_limit_ms
        {
            let run = grpo_sandbox::judge::native_time::sandbox_limit_ms(
                own,
                code.language,
                native,
                None,
            );
            by_language
                .entry(code.language.as_str())
                .or_default()
                .push((own, run));
        }
    }
    let languages: serde_json::Map<String, serde_json::Value> = by_language
        .into_iter()
        .map(|(language, limits)| {
            let range = |pick: fn(&(u64, u64)) -> u64| {
                json!({
                    "min": limits.iter().map(pick).min(),
                    "max": limits.iter().map(pick).max(),
                })
            };
            let factor = grpo_tasks::Language::parse(language)
                .filter(|_| native)
                .map(|l| grpo_sandbox::judge::native_time::factor(l).factor);
            (
                language.to_owned(),
                json!({
                    "tasks": limits.len(),
                    "given_ms": range(|l| l.0),
                    "sandbox_cpu_ms": range(|l| l.1),
                    "factor": factor,
                }),
            )
        })
        .collect();
    json!({
        "basis": if native { "native" } else { "sandbox" },
        "languages": languages,
    })
}
