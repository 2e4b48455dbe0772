//! `grpo check-math`: judge a predicted math answer against a gold answer.
//!
//! `--gold G --pred P` prints one JSON object; `--pairs FILE` reads JSONL `{"gold", "pred"}`
//! objects and prints one JSON line per non-blank input line, in order. Every line is read
//! and validated before any is checked, so a malformed line stops the command (exit 2) with
//! the file and line named and nothing printed. A summary with the checking throughput goes
//! to stderr.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, bail};
use grpo_rewards::math::{MathCheck, MathChecker};
use serde::{Deserialize, Serialize};

/// Check one math answer (`--gold G --pred P`) or a JSONL file of `{"gold","pred"}` pairs.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The reference answer.
    #[arg(long, requires = "pred", conflicts_with = "pairs")]
    pub gold: Option<String>,
    /// The model's completion (the answer is extracted from it).
    #[arg(long, requires = "gold")]
    pub pred: Option<String>,
    /// A JSONL file with one `{"gold": …, "pred": …}` object per line.
    #[arg(long)]
    pub pairs: Option<PathBuf>,
}

/// One line of a pairs file; other fields (an id, a category, an expected verdict) are
/// ignored.
#[derive(Debug, Deserialize)]
struct Pair {
    gold: String,
    pred: String,
    /// Optional alternatives to the gold answer.
    #[serde(default)]
    alternatives: Vec<String>,
}

#[derive(Debug, Serialize)]
struct Output<'a> {
    correct: bool,
    extracted: Option<&'a str>,
    kind: &'static str,
    reason: &'a str,
}

fn output(check: &MathCheck) -> Output<'_> {
    Output {
        correct: check.correct,
        extracted: check.extracted.as_deref(),
        kind: check.verdict.kind.as_str(),
        reason: &check.verdict.reason,
    }
}

impl Args {
    /// Runs the command.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        let checker = MathChecker::default();
        match (self.gold, self.pred, self.pairs) {
            (Some(gold), Some(pred), None) => {
                let check = checker.check(&gold, &pred);
                println!("{}", serde_json::to_string(&output(&check))?);
                Ok(ExitCode::SUCCESS)
            }
            (None, None, Some(path)) => check_pairs(&checker, &path),
            _ => bail!("give either --gold and --pred, or --pairs FILE"),
        }
    }
}

fn check_pairs(checker: &MathChecker, path: &PathBuf) -> anyhow::Result<ExitCode> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut pairs = Vec::new();
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line =
            line.with_context(|| format!("{}:{}: cannot read line", path.display(), i + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        let pair: Pair = serde_json::from_str(&line).with_context(|| {
            format!(
                "{}:{}: expected a JSON object with string fields `gold` and `pred`",
                path.display(),
                i + 1
            )
        })?;
        pairs.push(pair);
    }
    let start = Instant::now();
    let checks: Vec<MathCheck> = pairs
        .iter()
        .map(|p| checker.check_prepared(&checker.prepare(&p.gold, &p.alternatives), &p.pred))
        .collect();
    let elapsed = start.elapsed().as_secs_f64();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for check in &checks {
        serde_json::to_writer(&mut out, &output(check))?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    let correct = checks.iter().filter(|c| c.correct).count();
    let rate = if elapsed > 0.0 {
        checks.len() as f64 / elapsed
    } else {
        f64::INFINITY
    };
    eprintln!(
        "checked {} pairs in {:.3} ms ({:.0} checks/s, one thread); {} correct",
        checks.len(),
        elapsed * 1e3,
        rate,
        correct
    );
    Ok(ExitCode::SUCCESS)
}
