//! `grpo tasks import`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use grpo_sandbox::{Limits, Sandbox};
use grpo_tasks::import::{Format, Imported, PendingOutputs};
use grpo_tasks::pack::to_jsonl;
use grpo_tasks::{Manifest, Pack, Task};
use serde_json::Value;

use super::*;

pub(super) fn run(
    format: &Format,
    file: &Path,
    out: &Path,
    split: &str,
    license: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let imported = grpo_tasks::import::import_file_all(format, file)?;
    for skipped in &imported.skipped {
        eprintln!(
            "skipped {}:{}: {}",
            file.display(),
            skipped.line,
            skipped.reason
        );
    }
    let skipped = imported.skipped.len();
    let mut tasks = finalize(imported)?;
    // A license given on the command line fills in what the format does not fix.
    if let Some(license) = license {
        for task in &mut tasks {
            if let Some(metadata) = metadata_mut(task) {
                metadata
                    .entry("license")
                    .or_insert_with(|| Value::String(license.to_owned()));
            }
        }
    }
    // The imported tasks must be a valid pack before anything is written.
    if let Err(e) = Pack::from_jsonl_str(&file.display().to_string(), &to_jsonl(&tasks)) {
        bail!("the imported tasks do not form a valid pack: {e}");
    }
    if is_jsonl(out) {
        write(out, &to_jsonl(&tasks))?;
    } else {
        std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
        write(&out.join(format!("{split}.jsonl")), &to_jsonl(&tasks))?;
        let manifest = out.join("pack.toml");
        if !manifest.exists() {
            let mut m = Manifest::named(dir_name(out));
            m.license = format.license().or(license).map(str::to_owned);
            m.description = Some(format!("Imported from {}.", file.display()));
            // Data sets publish limits for native interpreters and compilers: the sandbox
            // scales them by its measured factor per language.
            m.code.time_limits = grpo_tasks::TimeLimits::Native;
            write_manifest(&manifest, &m)?;
        }
    }
    eprintln!(
        "imported {} tasks from {} into {} ({skipped} rows skipped)",
        tasks.len(),
        file.display(),
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn metadata_mut(task: &mut Task) -> Option<&mut grpo_tasks::Metadata> {
    match task {
        Task::Math(t) => t.metadata.as_mut(),
        Task::Code(t) => t.metadata.as_mut(),
        Task::Countdown(t) => t.metadata.as_mut(),
    }
}

/// Fills pending expected outputs (EvalPlus) by running each task's reference once in the
/// sandbox.
fn finalize(imported: Imported) -> anyhow::Result<Vec<Task>> {
    if imported.pending.is_empty() {
        return Ok(imported.tasks);
    }
    eprintln!(
        "running {} reference solutions in the sandbox for their expected outputs",
        imported.pending.len()
    );
    let sandbox = Sandbox::shared().context("starting the sandbox")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    // One run computes every case of a task (HumanEval+ has up to ~1,000 inputs): allow it
    // more time, memory and output than one test would get.
    let limits = Limits {
        time_limit_ms: 60_000,
        memory_mb: 1024,
        output_bytes: 64 << 20,
        ..Limits::default()
    };
    limits.validate().context("the reference runs' limits")?;
    let outputs = runtime.block_on(async {
        let runs = imported
            .pending
            .iter()
            .map(|pending| run_reference(&sandbox, pending, &limits));
        futures::future::join_all(runs).await
    });
    Ok(imported.finalize(outputs)?)
}

async fn run_reference(
    sandbox: &Sandbox,
    pending: &PendingOutputs,
    limits: &Limits,
) -> Result<String, String> {
    let run = sandbox
        .run(&pending.script(), b"", limits)
        .await
        .map_err(|e| e.to_string())?;
    if run.status == grpo_rewards::RunStatus::Ok {
        Ok(run.stdout)
    } else {
        Err(format!(
            "{:?}: {}",
            run.status,
            run.stderr.lines().last().unwrap_or("")
        ))
    }
}
