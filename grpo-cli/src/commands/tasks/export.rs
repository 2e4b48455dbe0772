//! `grpo tasks export`.

use std::path::Path;
use std::process::ExitCode;

use grpo_tasks::import::parquet::write_verl;

use super::*;

/// Writes the pack as verl's Parquet rows; tasks verl cannot hold are listed and left out.
pub(super) fn verl_parquet(spec: &str, out: &Path) -> anyhow::Result<ExitCode> {
    let Some(pack) = load_or_report(spec)? else {
        return Ok(ExitCode::from(1));
    };
    let export = write_verl(&pack, out)?;
    for (id, reason) in &export.skipped {
        eprintln!("skipped task {id}: {reason}");
    }
    eprintln!(
        "wrote {} rows to {} ({} tasks skipped)",
        export.rows,
        out.display(),
        export.skipped.len()
    );
    Ok(ExitCode::SUCCESS)
}
