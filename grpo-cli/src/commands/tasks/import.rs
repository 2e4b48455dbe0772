//! `grpo tasks import`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use grpo_tasks::import::Format;
use grpo_tasks::pack::to_jsonl;
use grpo_tasks::{Manifest, Pack};

use super::*;

pub(super) fn run(
    format: &Format,
    file: &Path,
    out: &Path,
    split: &str,
) -> anyhow::Result<ExitCode> {
    let tasks = grpo_tasks::import::import_file(format, file)?;
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
            m.license = format.license().map(str::to_owned);
            m.description = Some(format!("Imported from {}.", file.display()));
            write_manifest(&manifest, &m)?;
        }
    }
    eprintln!(
        "imported {} tasks from {} into {}",
        tasks.len(),
        file.display(),
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}
