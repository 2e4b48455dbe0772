//! The run directory and what is written to it.
//!
//! ```text
//! DIR/
//!   config.toml        the full resolved config (loads back with TrainConfig::from_toml)
//!   provenance.json    version, git commit (when built in a checkout), seed, host, start time
//!   metrics.jsonl      one StepRecord per GRPO step
//!   eval.jsonl         one EvalRecord per evaluation (`step`, `accuracy`, …)
//!   samples.jsonl      a few completions per step with every reward and the verdict
//!   checkpoints/       step-NNNNNN/ (see crate::run::checkpoint)
//!   final/             the final policy in HF format (config.json, model.safetensors, tokenizer.json)
//!   plot.png           reward (per step) and held-out accuracy (per evaluation)
//!   events.out.tfevents.*.grpo   with `report.to = ["tensorboard"]`: the step and
//!                      evaluation records for TensorBoard (see crate::run::tensorboard)
//! ```

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::config::{ReportTarget, TrainConfig};
use crate::error::{Error, Result};
use crate::eval::EvalSettings;
use crate::model::Model;
use crate::run::records::{EvalRecord, SampleRecord, StepRecord};
use crate::run::tensorboard::{self, EventWriter};
use crate::tokenizer::Tokenizer;

const METRICS: &str = "metrics.jsonl";
const EVAL: &str = "eval.jsonl";
const SAMPLES: &str = "samples.jsonl";

/// An open run directory.
#[derive(Debug)]
pub struct RunDir {
    root: PathBuf,
    metrics: File,
    eval: File,
    samples: File,
    tensorboard: Option<EventWriter>,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn append(path: &Path) -> Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io(path))
}

fn write_line<T: Serialize>(file: &mut File, path: &Path, value: &T) -> Result<()> {
    let line = serde_json::to_string(value).map_err(|source| Error::Json {
        path: path.to_path_buf(),
        source,
    })?;
    // One write per record: a kill leaves at most the last line torn, never two records
    // interleaved, and a torn line is dropped (with a warning) when the run resumes.
    file.write_all(format!("{line}\n").as_bytes())
        .map_err(io(path))
}

/// Writes `contents` to `path` atomically: a sibling temporary file, synced, then renamed
/// over it, so a kill leaves the old file or the new one, never a part.
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".partial");
    let tmp = PathBuf::from(tmp);
    let mut file = File::create(&tmp).map_err(io(&tmp))?;
    file.write_all(contents).map_err(io(&tmp))?;
    file.sync_all().map_err(io(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io(path))
}

/// Reads a JSON-lines file of records (missing file: none).
pub fn read_jsonl<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let file = File::open(path).map_err(io(path))?;
    let mut out = Vec::new();
    for line in BufReader::new(file).lines() {
        let line = line.map_err(io(path))?;
        if line.trim().is_empty() {
            continue;
        }
        out.push(serde_json::from_str(&line).map_err(|source| Error::Json {
            path: path.to_path_buf(),
            source,
        })?);
    }
    Ok(out)
}

/// Keeps only the lines whose `step` is at most `step` (a resumed run rewrites what came
/// after its checkpoint), atomically. A line that is not a JSON record (the torn last line of
/// a killed run) is dropped with a warning.
fn truncate_after(path: &Path, step: u64) -> Result<()> {
    if !path.exists() {
        return Ok(());
    }
    let text = std::fs::read_to_string(path).map_err(io(path))?;
    let mut kept = String::with_capacity(text.len());
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let Ok(record) = serde_json::from_str::<serde_json::Value>(line) else {
            tracing::warn!(
                file = %path.display(),
                line = n + 1,
                "dropping a torn record (the run was killed while writing it)"
            );
            continue;
        };
        if record
            .get("step")
            .and_then(serde_json::Value::as_u64)
            .is_some_and(|s| s <= step)
        {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    if kept.len() == text.len() {
        return Ok(());
    }
    write_atomic(path, kept.as_bytes())
}

/// Provenance of a run: enough to say what produced it.
pub fn provenance(config: &TrainConfig) -> serde_json::Value {
    let git = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let host = std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok());
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    serde_json::json!({
        "name": "grpo-rs",
        "version": env!("CARGO_PKG_VERSION"),
        "git_commit": git,
        "seed": config.seed,
        "preset": config.preset,
        "host": host,
        "os": std::env::consts::OS,
        "arch": std::env::consts::ARCH,
        "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "started_unix": started,
        "args": std::env::args().collect::<Vec<_>>(),
    })
}

impl RunDir {
    /// Creates (or empties the records of) a run directory and writes `config.toml` and
    /// `provenance.json`.
    pub fn create(root: &Path, config: &TrainConfig) -> Result<Self> {
        std::fs::create_dir_all(root).map_err(io(root))?;
        let config_path = root.join("config.toml");
        write_atomic(&config_path, config.to_toml()?.as_bytes())?;
        let prov_path = root.join("provenance.json");
        let prov =
            serde_json::to_string_pretty(&provenance(config)).map_err(|source| Error::Json {
                path: prov_path.clone(),
                source,
            })?;
        write_atomic(&prov_path, prov.as_bytes())?;
        for name in [METRICS, EVAL, SAMPLES] {
            let path = root.join(name);
            File::create(&path).map_err(io(&path))?;
        }
        Self::open(root, config)
    }

    /// Reopens a run directory to continue after the checkpoint of `step`: records of later
    /// steps are dropped first (and the TensorBoard files, when `config` asks for them, are
    /// written again from the records kept).
    pub fn reopen(root: &Path, step: u64, config: &TrainConfig) -> Result<Self> {
        for name in [METRICS, EVAL, SAMPLES] {
            truncate_after(&root.join(name), step)?;
        }
        Self::open(root, config)
    }

    fn open(root: &Path, config: &TrainConfig) -> Result<Self> {
        let mut dir = RunDir {
            root: root.to_path_buf(),
            metrics: append(&root.join(METRICS))?,
            eval: append(&root.join(EVAL))?,
            samples: append(&root.join(SAMPLES))?,
            tensorboard: None,
        };
        // Old event files always go: they may hold steps the JSON records no longer have.
        tensorboard::remove_event_files(root)?;
        if config.report.to.contains(&ReportTarget::Tensorboard) {
            let mut writer = EventWriter::create(root)?;
            let steps: Vec<serde_json::Value> = read_jsonl(&root.join(METRICS))?;
            let evals: Vec<serde_json::Value> = read_jsonl(&root.join(EVAL))?;
            for (prefix, records) in [("", &steps), ("eval/", &evals)] {
                for record in records {
                    let step = record.get("step").and_then(serde_json::Value::as_u64);
                    writer.write_scalars(step.unwrap_or(0), prefix, record)?;
                }
            }
            writer.flush()?;
            dir.tensorboard = Some(writer);
        }
        Ok(dir)
    }

    /// Writes `record` to the TensorBoard file, when there is one.
    fn report<T: Serialize>(&mut self, step: u64, prefix: &str, record: &T) -> Result<()> {
        let Some(writer) = &mut self.tensorboard else {
            return Ok(());
        };
        let value = serde_json::to_value(record).map_err(|source| Error::Json {
            path: writer.path().to_path_buf(),
            source,
        })?;
        writer.write_scalars(step, prefix, &value)?;
        writer.flush()
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where checkpoints go.
    pub fn checkpoints(&self) -> PathBuf {
        self.root.join("checkpoints")
    }

    /// Appends a step record to `metrics.jsonl`.
    pub fn append_step(&mut self, record: &StepRecord) -> Result<()> {
        write_line(&mut self.metrics, &self.root.join(METRICS), record)?;
        self.report(record.step, "", record)
    }

    /// Appends an evaluation to `eval.jsonl`.
    pub fn append_eval(&mut self, record: &EvalRecord) -> Result<()> {
        write_line(&mut self.eval, &self.root.join(EVAL), record)?;
        self.report(record.step, "eval/", record)
    }

    /// Appends samples to `samples.jsonl`.
    pub fn append_samples(&mut self, samples: &[SampleRecord]) -> Result<()> {
        let path = self.root.join(SAMPLES);
        for s in samples {
            write_line(&mut self.samples, &path, s)?;
        }
        Ok(())
    }

    /// Every step record so far.
    pub fn steps(&self) -> Result<Vec<StepRecord>> {
        read_jsonl(&self.root.join(METRICS))
    }

    /// Every evaluation so far.
    pub fn evals(&self) -> Result<Vec<EvalRecord>> {
        read_jsonl(&self.root.join(EVAL))
    }

    /// The step of the latest evaluation, if any.
    pub fn last_eval_step(&self) -> Option<u64> {
        self.evals().ok().and_then(|e| e.last().map(|r| r.step))
    }

    /// Saves the policy in HF format under `final/`, with the run's evaluation settings:
    /// written into `final.partial/`, then renamed, so `final/` is only ever a complete model
    /// (a run killed in between has none and writes it again when resumed). A policy with
    /// LoRA adapters is saved merged, with the adapter in PEFT's layout in `final/adapter/`
    /// (`adapter_config.json` naming `base`, `adapter_model.safetensors`). Not beside the
    /// merged weights: transformers' `from_pretrained` on a directory with an
    /// `adapter_config.json` applies that adapter itself, which on merged weights counts it
    /// twice.
    pub fn write_final(
        &self,
        model: &Model,
        tokenizer: &Tokenizer,
        eval: &EvalSettings,
        base: &str,
    ) -> Result<PathBuf> {
        let dir = self.root.join("final");
        let partial = self.root.join("final.partial");
        if partial.exists() {
            std::fs::remove_dir_all(&partial).map_err(io(&partial))?;
        }
        if model.lora().is_some() {
            // The adapters folded in (what `grpo eval --model` and HF load), and the adapter
            // itself in PEFT's layout on `base` (what `peft` and vLLM load).
            crate::loading::save_hf_dir(&model.merged()?, tokenizer, &partial)?;
            model.save_adapter(&partial.join("adapter"), base)?;
        } else {
            crate::loading::save_hf_dir(model, tokenizer, &partial)?;
        }
        eval.write(&partial)?;
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(io(&dir))?;
        }
        std::fs::rename(&partial, &dir).map_err(io(&dir))?;
        Ok(dir)
    }

    /// Draws `plot.png`: mean reward per step (blue) and held-out accuracy per evaluation
    /// (red, with points), both on a 0–1 scale, over GRPO steps. Axis labels are drawn when a
    /// system font is found.
    pub fn plot(&self) -> Result<PathBuf> {
        let path = self.root.join("plot.png");
        crate::run::plot::draw(&path, &self.steps()?, &self.evals()?)?;
        Ok(path)
    }
}

/// The before/after lines `grpo train` prints.
pub fn summary_text(
    before: Option<&EvalRecord>,
    after: Option<&EvalRecord>,
    steps: u64,
    seconds: f64,
) -> String {
    let mut out = String::new();
    match (before, after) {
        (Some(b), Some(a)) => {
            out.push_str(&format!(
                "held-out accuracy: {:.1}% at step {} → {:.1}% at step {} ({:+.1} points; {} problems, greedy)\n",
                100.0 * b.accuracy,
                b.step,
                100.0 * a.accuracy,
                a.step,
                100.0 * (a.accuracy - b.accuracy),
                a.problems
            ));
            out.push_str(&format!(
                "format kept:       {:.1}% → {:.1}%\n",
                100.0 * b.format_rate,
                100.0 * a.format_rate
            ));
        }
        _ => out.push_str("no evaluation was run\n"),
    }
    out.push_str(&format!("{steps} GRPO steps, {:.0} s in all\n", seconds));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_after_drops_a_torn_last_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.jsonl");
        std::fs::write(&path, "{\"step\":1}\n{\"step\":2}\n{\"step\":3,\"rew").unwrap();
        truncate_after(&path, 5).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"step\":1}\n{\"step\":2}\n"
        );
        assert!(!dir.path().join("m.jsonl.partial").exists());
    }

    #[test]
    fn truncate_after_keeps_earlier_steps_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.jsonl");
        std::fs::write(&path, "{\"step\":1}\n{\"step\":2}\n{\"step\":3}\n\n").unwrap();
        truncate_after(&path, 2).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"step\":1}\n{\"step\":2}\n"
        );
    }

    #[test]
    fn summary_names_both_ends() {
        let rec = |step, accuracy| EvalRecord {
            step,
            accuracy,
            correct: 0,
            problems: 300,
            format_rate: 1.0,
            completion_len_mean: 10.0,
            seconds: 1.0,
            faults: 0,
        };
        let text = summary_text(Some(&rec(0, 0.25)), Some(&rec(150, 0.5)), 150, 500.0);
        assert!(
            text.contains("25.0% at step 0 → 50.0% at step 150 (+25.0 points"),
            "{text}"
        );
    }
}
