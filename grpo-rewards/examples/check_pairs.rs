//! Checks JSONL pairs and times every check: one `{"id", "correct", "expected", "micros"}`
//! line per pair on stdout, then the per-check time distribution (p50, p99, max, and the
//! slowest pairs) on stderr.
//!
//! ```sh
//! cargo run --release -p grpo-rewards --example check_pairs -- benches/data/math_pairs.jsonl
//! ```
//!
//! Each input line is an object with `gold` and `pred` (and optional `id`, `expected`, and
//! `strict`: `false` turns on [`EquivConfig::rename_variables`]), checked as
//! `MathChecker::check(gold, pred)` checks it (the Python package's `verify(parse(gold),
//! parse(pred))` does the same). Each check is timed as the best of `--repeat N` runs
//! (default 3), so that one preemption on a shared machine is not read as a slow input.

use std::time::{Duration, Instant};

use grpo_rewards::math::{EquivConfig, MathChecker, MathConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut repeat = 3usize;
    let mut paths = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--repeat" => repeat = args.next().and_then(|v| v.parse().ok()).unwrap_or(repeat),
            _ => paths.push(a),
        }
    }
    let strict = MathChecker::default();
    let free = MathChecker::new(MathConfig {
        equiv: EquivConfig {
            rename_variables: true,
            ..EquivConfig::default()
        },
        ..MathConfig::default()
    })?;
    let mut times: Vec<(Duration, String)> = Vec::new();
    for path in &paths {
        let text = std::fs::read_to_string(path)?;
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let v: serde_json::Value = serde_json::from_str(line)?;
            let (Some(gold), Some(pred)) = (v["gold"].as_str(), v["pred"].as_str()) else {
                return Err(format!("{path}:{}: no `gold` and `pred`", n + 1).into());
            };
            let checker = if v["strict"].as_bool() == Some(false) {
                &free
            } else {
                &strict
            };
            let run = || checker.check(gold, pred);
            let mut best = Duration::MAX;
            let mut check = None;
            for _ in 0..repeat.max(1) {
                let t0 = Instant::now();
                check = Some(run());
                best = best.min(t0.elapsed());
            }
            let (correct, extracted) = check.map_or((false, None), |c| (c.correct, c.extracted));
            let id = v["id"]
                .as_str()
                .map_or_else(|| format!("{path}:{}", n + 1), str::to_string);
            println!(
                "{}",
                serde_json::json!({"id": id, "correct": correct, "expected": v["expected"],
                                   "extracted": extracted, "micros": best.as_secs_f64() * 1e6})
            );
            times.push((best, id));
        }
    }
    times.sort();
    let at = |q: f64| {
        let k = ((times.len() as f64 - 1.0) * q).round() as usize;
        times.get(k).map_or(0.0, |t| t.0.as_secs_f64() * 1e6)
    };
    eprintln!(
        "{} checks: p50 {:.1} us, p90 {:.1} us, p99 {:.1} us, max {:.1} us",
        times.len(),
        at(0.5),
        at(0.9),
        at(0.99),
        at(1.0)
    );
    for (t, id) in times.iter().rev().take(5) {
        eprintln!("  {:>9.1} us  {id}", t.as_secs_f64() * 1e6);
    }
    Ok(())
}
