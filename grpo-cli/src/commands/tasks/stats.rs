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
