//! Our side of the Math-Verify comparison: checks every bench pair, prints one JSON line per
//! pair (`{"category": …, "correct": …, "expected": …}`) on stdout, then times whole passes
//! over the pairs (one thread, reference parsed each time as the baseline does) for at least
//! `--seconds` (default 3) and prints the rate on stderr as `… (N checks/s)`.
//!
//! ```sh
//! cargo run --release -p grpo-benches --bin math_pairs [-- --seconds 3]
//! ```
//! `benches/baselines/math_verify.py` runs it right after timing Math-Verify.

use std::hint::black_box;
use std::time::Instant;

use grpo_benches::math_pairs::math_pairs;
use grpo_rewards::MathChecker;

fn main() {
    let mut seconds = 3.0f64;
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--seconds" {
            seconds = it.next().and_then(|v| v.parse().ok()).unwrap_or(seconds);
        }
    }
    let pairs = math_pairs();
    let checker = MathChecker::default();
    for p in &pairs {
        let c = checker.check(&p.gold, &p.pred);
        println!(
            "{}",
            serde_json::json!({"category": p.category, "correct": c.correct, "expected": p.expected})
        );
    }
    let start = Instant::now();
    let mut passes = 0u64;
    while passes == 0 || start.elapsed().as_secs_f64() < seconds {
        for p in &pairs {
            black_box(checker.check(black_box(&p.gold), black_box(&p.pred)));
        }
        passes += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    let rate = (passes * pairs.len() as u64) as f64 / secs;
    eprintln!(
        "{} pairs, {passes} passes in {secs:.2} s ({rate:.0} checks/s)",
        pairs.len()
    );
}
