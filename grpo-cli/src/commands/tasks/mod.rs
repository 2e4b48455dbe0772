//! `grpo tasks`: tools for task-pack authors.
//!
//! - `validate PACK`: every problem (per line the first schema problem and every
//!   rule broken), one JSON line each on stdout (file, line, field,
//!   message) and readable on stderr; exit 1 when any.
//! - `check PACK`: proves each task checkable, one JSON line per task with `id` and `passed`
//!   (+ `reason`); exit 1 when any fails. Math: the answer written as a model would
//!   (`<answer>\boxed{…}</answer>`) earns full reward and a perturbed answer does not.
//!   Countdown: the reference (or the solver's expression) earns full reward. Code: the
//!   reference passes every test in the sandbox, and an empty (`pass`) body fails them.
//! - `stats PACK`: one JSON object: counts, kinds, prompt lengths, duplicates, train/eval
//!   overlap.
//! - `generate KIND --n N --seed S -o OUT`: a seeded generated pack (a `.jsonl` file, or a
//!   directory with `train.jsonl` and, with `--eval-n`, `eval.jsonl`).
//! - `import FORMAT FILE -o OUT`: HumanEval, MBPP, GSM8K, MATH-style, mapped JSONL, the
//!   code-RL data sets (TACO, APPS, CodeContests, LiveCodeBench, Codeforces, PrimeIntellect,
//!   KodCode, EvalPlus) or verl's rows; JSONL, JSON or Parquet input. EvalPlus runs each
//!   reference once in the sandbox for the expected outputs.
//! - `export --format verl-parquet PACK -o FILE`: the pack as verl's training rows.
//!
//! One file per subcommand; the arguments, the dispatch and what they share are here.

mod check;
mod export;
mod generate;
mod import;
mod stats;
mod validate;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use grpo_tasks::import::{FieldMap, Format};
use grpo_tasks::{Manifest, Pack, PackError};
use serde_json::json;

/// Validate, check, inspect, generate and import task packs.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: TasksCommand,
}

#[derive(Debug, clap::Subcommand)]
pub(super) enum TasksCommand {
    /// List every schema error of a pack (exit 1 when any).
    Validate {
        /// The pack: a .jsonl file, a pack directory, or `builtin:NAME`.
        pack: String,
    },
    /// Prove every task can be scored: references earn full reward, wrong answers do not
    /// (one JSON line per task; exit 1 when any fails).
    Check {
        /// The pack: a .jsonl file, a pack directory, or `builtin:NAME`.
        pack: String,
        /// Check only this split.
        #[arg(long)]
        split: Option<String>,
    },
    /// Counts, kinds, prompt lengths, duplicates and train/eval overlap, as one JSON object.
    Stats {
        /// The pack: a .jsonl file, a pack directory, or `builtin:NAME`.
        pack: String,
    },
    /// Generate problems with a seeded generator.
    Generate {
        /// The generator.
        kind: GeneratorKind,
        /// Number of (train) problems.
        #[arg(long)]
        n: usize,
        /// The seed; the same seed writes the same files.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Difficulty preset.
        #[arg(long, default_value = "easy")]
        difficulty: String,
        /// Held-out eval problems (needs a directory output).
        #[arg(long, default_value_t = 0)]
        eval_n: usize,
        /// Countdown: each number at most once instead of exactly once.
        #[arg(long)]
        at_most_once: bool,
        /// Arith: the largest operand (default 99; 9 gives single-digit problems).
        #[arg(long)]
        max_operand: Option<i64>,
        /// Arith: operations per problem, 1 to 4 (default: drawn by the difficulty).
        #[arg(long)]
        steps: Option<usize>,
        /// Output: a `.jsonl` file, or a pack directory.
        #[arg(short, long)]
        out: PathBuf,
    },
    /// Import a public benchmark file as a pack.
    Import {
        /// The input format.
        format: ImportFormat,
        /// The input file (JSONL or a JSON array, optionally gzip-compressed; or Parquet).
        file: PathBuf,
        /// Output: a `.jsonl` file, or a pack directory.
        #[arg(short, long)]
        out: PathBuf,
        /// The split file written in a pack directory.
        #[arg(long, default_value = "train")]
        split: String,
        /// `jsonl` only: the kind of tasks (math or countdown).
        #[arg(long, default_value = "math")]
        kind: String,
        /// `jsonl` only: `task_field=input_field` pairs, comma-separated.
        #[arg(long, default_value = "")]
        map: String,
        /// The license of the data: for `jsonl`, and for formats whose license is not fixed
        /// (written where the task has none).
        #[arg(long)]
        license: Option<String>,
        /// `jsonl` only: the source name written to metadata.
        #[arg(long)]
        source: Option<String>,
    },
    /// Write a pack in another project's format.
    Export {
        /// The output format.
        #[arg(long)]
        format: ExportFormat,
        /// The pack: a .jsonl file, a pack directory, or `builtin:NAME`.
        pack: String,
        /// The output file.
        #[arg(short, long)]
        out: PathBuf,
    },
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(super) enum ExportFormat {
    /// verl's training rows (data_source, prompt, ability, reward_model, extra_info).
    VerlParquet,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(super) enum GeneratorKind {
    Arith,
    Countdown,
    /// Small Python function-writing problems (call and stdio tests).
    Code,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(super) enum ImportFormat {
    Humaneval,
    Mbpp,
    Gsm8k,
    Math,
    Jsonl,
    Taco,
    Apps,
    Codecontests,
    Livecodebench,
    Codeforces,
    Primeintellect,
    Kodcode,
    Evalplus,
    /// verl's rows (`data_source`, `prompt`, `reward_model`, `extra_info`).
    Parquet,
}

impl Args {
    /// Runs the command.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        match self.command {
            TasksCommand::Validate { pack } => validate::run(&pack),
            TasksCommand::Check { pack, split } => check::run(&pack, split.as_deref()),
            TasksCommand::Stats { pack } => stats::run(&pack),
            TasksCommand::Generate {
                kind,
                n,
                seed,
                difficulty,
                eval_n,
                at_most_once,
                max_operand,
                steps,
                out,
            } => generate::run(
                kind,
                n,
                seed,
                &difficulty,
                eval_n,
                at_most_once,
                generate::ArithFlags { max_operand, steps },
                &out,
            ),
            TasksCommand::Import {
                format,
                file,
                out,
                split,
                kind,
                map,
                license,
                source,
            } => {
                let format = match format {
                    ImportFormat::Humaneval => Format::HumanEval,
                    ImportFormat::Mbpp => Format::Mbpp,
                    ImportFormat::Gsm8k => Format::Gsm8k,
                    ImportFormat::Math => Format::Math,
                    ImportFormat::Jsonl => {
                        let mut m = FieldMap::parse(&kind, &map)?;
                        m.license = license.clone();
                        m.source = source;
                        Format::Jsonl(m)
                    }
                    ImportFormat::Taco => Format::Taco,
                    ImportFormat::Apps => Format::Apps,
                    ImportFormat::Codecontests => Format::CodeContests,
                    ImportFormat::Livecodebench => Format::LiveCodeBench,
                    ImportFormat::Codeforces => Format::Codeforces,
                    ImportFormat::Primeintellect => Format::PrimeIntellect,
                    ImportFormat::Kodcode => Format::KodCode,
                    ImportFormat::Evalplus => Format::EvalPlus,
                    ImportFormat::Parquet => Format::Verl,
                };
                import::run(&format, &file, &out, &split, license.as_deref())
            }
            TasksCommand::Export { format, pack, out } => match format {
                ExportFormat::VerlParquet => export::verl_parquet(&pack, &out),
            },
        }
    }
}

/// Loads a pack; an invalid pack prints its problems and yields `Ok(None)` (exit 1), a
/// missing or unreadable one is an error (exit 2).
pub(super) fn load_or_report(spec: &str) -> anyhow::Result<Option<Pack>> {
    match Pack::load(spec) {
        Ok(pack) => Ok(Some(pack)),
        Err(PackError::Invalid { problems }) => {
            let mut out = std::io::stdout().lock();
            for p in &problems {
                let line = json!({
                    "file": p.file, "line": p.line, "field": p.field, "task_id": p.task_id,
                    "message": p.message,
                });
                writeln!(out, "{line}")?;
                eprintln!("{p}");
            }
            eprintln!("{spec}: {} problem(s)", problems.len());
            Ok(None)
        }
        Err(e) => Err(e).with_context(|| format!("loading task pack `{spec}`")),
    }
}

pub(super) fn write_manifest(path: &Path, manifest: &Manifest) -> anyhow::Result<()> {
    let mut text = toml::to_string(manifest).context("writing pack.toml")?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    write(path, &text)
}

pub(super) fn is_jsonl(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "jsonl")
}

pub(super) fn dir_name(path: &Path) -> String {
    path.file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("pack")
        .to_owned()
}

pub(super) fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}
