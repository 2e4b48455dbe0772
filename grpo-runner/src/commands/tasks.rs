//! `grpo tasks`: tools for task-pack authors.
//!
//! - `validate PACK`: every schema problem, one JSON line each on stdout (file, line, field,
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
//! - `import FORMAT FILE -o OUT`: HumanEval, MBPP, GSM8K, MATH-style or mapped JSONL.

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use grpo_rewards::code::{CodeReward, Sandbox};
use grpo_rewards::countdown::CountdownReward;
use grpo_rewards::math::MathChecker;
use grpo_tasks::generate::{
    self, ArithSettings, CodeSettings, CountdownSettings, Difficulty, Generator,
};
use grpo_tasks::import::{self, FieldMap, Format};
use grpo_tasks::pack::to_jsonl;
use grpo_tasks::{CodeMode, CodeTask, Manifest, Pack, PackError, Task};
use serde_json::json;

/// Validate, check, inspect, generate and import task packs.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: TasksCommand,
}

#[derive(Debug, clap::Subcommand)]
enum TasksCommand {
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
        /// Output: a `.jsonl` file, or a pack directory.
        #[arg(short, long)]
        out: PathBuf,
    },
    /// Import a public benchmark file as a pack.
    Import {
        /// The input format.
        format: ImportFormat,
        /// The input file (JSONL, JSON array, optionally gzip-compressed).
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
        /// `jsonl` only: the license of the data.
        #[arg(long)]
        license: Option<String>,
        /// `jsonl` only: the source name written to metadata.
        #[arg(long)]
        source: Option<String>,
    },
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum GeneratorKind {
    Arith,
    Countdown,
    /// Small Python function-writing problems (call and stdio tests).
    Code,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ImportFormat {
    Humaneval,
    Mbpp,
    Gsm8k,
    Math,
    Jsonl,
}

impl Args {
    /// Runs the command.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        match self.command {
            TasksCommand::Validate { pack } => validate(&pack),
            TasksCommand::Check { pack, split } => check(&pack, split.as_deref()),
            TasksCommand::Stats { pack } => stats(&pack),
            TasksCommand::Generate {
                kind,
                n,
                seed,
                difficulty,
                eval_n,
                at_most_once,
                max_operand,
                out,
            } => generate_cmd(
                kind,
                n,
                seed,
                &difficulty,
                eval_n,
                at_most_once,
                max_operand,
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
                        m.license = license;
                        m.source = source;
                        Format::Jsonl(m)
                    }
                };
                import_cmd(&format, &file, &out, &split)
            }
        }
    }
}

/// Loads a pack; an invalid pack prints its problems and yields `Ok(None)` (exit 1), a
/// missing or unreadable one is an error (exit 2).
fn load_or_report(spec: &str) -> anyhow::Result<Option<Pack>> {
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

fn validate(spec: &str) -> anyhow::Result<ExitCode> {
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

/// The outcome of checking one task.
struct Outcome {
    passed: bool,
    reason: String,
}

impl Outcome {
    fn pass(reason: impl Into<String>) -> Self {
        Outcome {
            passed: true,
            reason: reason.into(),
        }
    }
    fn fail(reason: impl Into<String>) -> Self {
        Outcome {
            passed: false,
            reason: reason.into(),
        }
    }
}

fn check(spec: &str, only_split: Option<&str>) -> anyhow::Result<ExitCode> {
    let Some(pack) = load_or_report(spec)? else {
        return Ok(ExitCode::from(1));
    };
    if let Some(name) = only_split
        && pack.split(name).is_none()
    {
        bail!(
            "pack `{spec}` has no split `{name}` (splits: {})",
            pack.split_names().join(", ")
        );
    }
    let has_code = pack.tasks().any(|t| matches!(t, Task::Code(_)));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime for the code sandbox")?;
    let code_reward = if has_code {
        let sandbox = Sandbox::shared().context("starting the Python sandbox")?;
        Some(CodeReward::new(sandbox))
    } else {
        None
    };
    let checker = MathChecker::default();
    let countdown = CountdownReward::new();
    let mut out = std::io::stdout().lock();
    let (mut passed, mut failed) = (0usize, 0usize);
    for split in pack.splits() {
        if only_split.is_some_and(|s| s != split.name) {
            continue;
        }
        for task in &split.tasks {
            let outcome = match task {
                Task::Math(m) => check_math(&checker, &m.answer, &m.alternatives),
                Task::Countdown(_) => check_countdown(&countdown, task),
                Task::Code(c) => match &code_reward {
                    Some(reward) => runtime
                        .block_on(check_code(reward, c))
                        .with_context(|| format!("checking task {}", c.id))?,
                    None => Outcome::fail("no sandbox"),
                },
            };
            if outcome.passed {
                passed += 1;
            } else {
                failed += 1;
                eprintln!("FAIL {} ({}): {}", task.id(), split.name, outcome.reason);
            }
            let line = json!({
                "id": task.id(), "split": split.name, "kind": task.kind_name(),
                "passed": outcome.passed, "reason": outcome.reason,
            });
            writeln!(out, "{line}")?;
        }
    }
    eprintln!("{spec}: {passed} passed, {failed} failed");
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The answer as a model would write it, and a wrong one.
fn check_math(checker: &MathChecker, answer: &str, alternatives: &[String]) -> Outcome {
    let gold = checker.prepare(answer, alternatives);
    for written in std::iter::once(answer).chain(alternatives.iter().map(String::as_str)) {
        let completion =
            format!("<think>Working it out.</think> <answer>\\boxed{{{written}}}</answer>");
        let c = checker.check_prepared(&gold, &completion);
        if !c.correct {
            return Outcome::fail(format!(
                "the answer `{written}` written as a model would does not earn full reward: {}",
                c.verdict.reason
            ));
        }
    }
    let wrong = perturb(answer);
    let completion = format!("<think>Working it out.</think> <answer>\\boxed{{{wrong}}}</answer>");
    let c = checker.check_prepared(&gold, &completion);
    if c.correct {
        return Outcome::fail(format!(
            "the perturbed answer `{wrong}` also earns full reward"
        ));
    }
    Outcome::pass(format!("`{answer}` earns full reward; `{wrong}` does not"))
}

/// A nearby wrong answer: an integer plus one, else the expression plus one.
fn perturb(answer: &str) -> String {
    let trimmed = answer.trim();
    match trimmed.parse::<i128>() {
        Ok(n) => (n + 1).to_string(),
        Err(_) => format!("({trimmed})+1"),
    }
}

fn check_countdown(reward: &CountdownReward, task: &Task) -> Outcome {
    let Task::Countdown(c) = task else {
        return Outcome::fail("not a countdown task");
    };
    let (expression, origin) = match &c.reference {
        Some(r) => (r.clone(), "reference"),
        None => match grpo_tasks::expr::solve(&c.numbers, c.target, c.use_all) {
            Some(found) => (found, "solver"),
            None => {
                return Outcome::fail(
                    "unsolvable: no expression over the numbers reaches the target",
                );
            }
        },
    };
    let verdict = reward.check(
        task,
        &format!("<think>Searching.</think> <answer>{expression}</answer>"),
    );
    if verdict.is_correct() {
        Outcome::pass(format!("{origin} `{expression}` earns full reward"))
    } else {
        Outcome::fail(format!(
            "{origin} `{expression}` does not earn full reward: {}",
            verdict.reason
        ))
    }
}

/// The reference passes and an empty body fails; a sandbox fault is an error, not a verdict.
async fn check_code(reward: &CodeReward, task: &CodeTask) -> anyhow::Result<Outcome> {
    let Some(reference) = &task.reference else {
        return Ok(Outcome::fail(
            "no reference solution to prove the tests passable",
        ));
    };
    let score = reward.score_one(task, reference).await?;
    if !score.verdict.is_correct() {
        return Ok(Outcome::fail(format!(
            "the reference fails: {}",
            score.verdict.reason
        )));
    }
    let empty = match task.mode {
        CodeMode::Prefix => "    pass\n",
        CodeMode::Full => "pass\n",
    };
    let score = reward.score_one(task, empty).await?;
    if score.verdict.is_correct() {
        return Ok(Outcome::fail(
            "an empty `pass` body passes the tests: they check nothing",
        ));
    }
    Ok(Outcome::pass(
        "the reference passes every test; an empty body fails",
    ))
}

fn stats(spec: &str) -> anyhow::Result<ExitCode> {
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

#[allow(clippy::too_many_arguments)] // one per command-line flag
fn generate_cmd(
    kind: GeneratorKind,
    n: usize,
    seed: u64,
    difficulty: &str,
    eval_n: usize,
    at_most_once: bool,
    max_operand: Option<i64>,
    out: &Path,
) -> anyhow::Result<ExitCode> {
    let difficulty: Difficulty = difficulty.parse()?;
    let generator = match kind {
        GeneratorKind::Arith => {
            if at_most_once {
                bail!("--at-most-once applies to countdown only");
            }
            let defaults = ArithSettings::default();
            Generator::Arith(ArithSettings {
                difficulty,
                max_operand: max_operand.unwrap_or(defaults.max_operand),
            })
        }
        GeneratorKind::Countdown if max_operand.is_some() => {
            bail!("--max-operand applies to arith only")
        }
        GeneratorKind::Countdown => Generator::Countdown(CountdownSettings {
            use_all: !at_most_once,
            ..CountdownSettings::for_difficulty(difficulty)
        }),
        GeneratorKind::Code => {
            if at_most_once || max_operand.is_some() {
                bail!("--at-most-once and --max-operand do not apply to code");
            }
            Generator::Code(CodeSettings::default())
        }
    };
    let (train, eval) = generate::generate_split(&generator, n, eval_n, seed)?;
    if is_jsonl(out) {
        if eval_n > 0 {
            bail!(
                "--eval-n needs a pack directory for -o, not the file {}",
                out.display()
            );
        }
        write(out, &to_jsonl(&train))?;
        eprintln!(
            "wrote {} {} problems to {}",
            train.len(),
            generator.name(),
            out.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    write(&out.join("train.jsonl"), &to_jsonl(&train))?;
    if !eval.is_empty() {
        write(&out.join("eval.jsonl"), &to_jsonl(&eval))?;
    }
    let manifest = out.join("pack.toml");
    if !manifest.exists() {
        let mut m = Manifest::named(dir_name(out));
        m.license = Some("Apache-2.0".into());
        m.description = Some(format!(
            "Generated by `grpo tasks generate {} --difficulty {difficulty} --n {n} --eval-n {eval_n} --seed {seed}`.",
            generator.name()
        ));
        write_manifest(&manifest, &m)?;
    }
    eprintln!(
        "wrote {} train and {} eval {} problems to {}",
        train.len(),
        eval.len(),
        generator.name(),
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn import_cmd(format: &Format, file: &Path, out: &Path, split: &str) -> anyhow::Result<ExitCode> {
    let tasks = import::import_file(format, file)?;
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

fn write_manifest(path: &Path, manifest: &Manifest) -> anyhow::Result<()> {
    let mut text = toml::to_string(manifest).context("writing pack.toml")?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    write(path, &text)
}

fn is_jsonl(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "jsonl")
}

fn dir_name(path: &Path) -> String {
    path.file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("pack")
        .to_owned()
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perturbation_changes_the_value() {
        assert_eq!(perturb("41"), "42");
        assert_eq!(perturb(" -1 "), "0");
        assert_eq!(perturb(r"\frac{1}{2}"), r"(\frac{1}{2})+1");
    }
}
