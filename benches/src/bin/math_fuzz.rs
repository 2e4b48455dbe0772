//! Structure-aware fuzzing of the math parser and checker.
//!
//! Generates and mutates inputs (LaTeX fragments, random expression trees, deep nesting, huge
//! exponents, unbalanced delimiters, mutations of the bench pairs) and runs each through
//! `parse_answer` and the checker (as the completion against a reference, and as the
//! reference against a completion). Stops at the first panic and prints the input; at the
//! end prints the throughput, the slowest input with its time, and the peak resident memory.
//! Deterministic for a given `--seed`.
//!
//! ```sh
//! cargo run --release -p grpo-benches --bin math_fuzz -- --inputs 10000000 [--seed 1] \
//!     [--save-slowest slowest.txt]
//! ```

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use grpo_benches::math_pairs::math_pairs;
use grpo_rewards::MathChecker;
use grpo_rewards::math::parse_answer;
use rand::{Rng as _, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The fuzzer's random choices: a seeded ChaCha stream (the same sequence everywhere for a
/// seed) with the few helpers the generators use.
struct Rng(ChaCha8Rng);

impl Rng {
    fn seeded(seed: u64) -> Self {
        Rng(ChaCha8Rng::seed_from_u64(seed))
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        self.0.gen_range(0..n)
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn pick_str(&mut self, items: &[&'static str]) -> &'static str {
        items[self.below(items.len())]
    }
}

/// How many of the slowest inputs are kept and re-timed at the end.
const KEEP_SLOWEST: usize = 16;

/// Pieces of LaTeX and plain math that stress the lexer and the grammar.
const FRAGMENTS: &[&str] = &[
    "\\frac",
    "\\dfrac",
    "\\sqrt",
    "\\sqrt[",
    "\\boxed{",
    "\\fbox{",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "\\{",
    "\\}",
    "^",
    "_",
    "\\pm",
    "\\mp",
    "\\left(",
    "\\right)",
    "\\left[",
    "\\right]",
    "\\left|",
    "\\right|",
    "\\begin{pmatrix}",
    "\\end{pmatrix}",
    "\\begin{bmatrix}",
    "\\end{bmatrix}",
    "\\begin{array}{cc}",
    "\\end{array}",
    "&",
    "\\\\",
    "!",
    "%",
    "\\%",
    ",",
    ";",
    ":",
    "=",
    "<",
    ">",
    "\\le",
    "\\geq",
    "\\neq",
    "!=",
    ">=",
    "\\approx",
    "\\in",
    "\\cup",
    "\\text{",
    "\\text{ and }",
    "\\text{or}",
    " and ",
    " or ",
    "\\infty",
    "\\pi",
    "x",
    "y",
    "e",
    "i",
    "|",
    "\\sin",
    "\\cos",
    "\\log_",
    "\\ln",
    "\\exp",
    ".",
    "$",
    "$$",
    "\\(",
    "\\)",
    "\\[",
    "\\]",
    "\\,",
    "\\!",
    "{,}",
    " ",
    "\n",
    "\\cdot",
    "\\times",
    "\\div",
    "/",
    "*",
    "**",
    "+",
    "-",
    "0",
    "1",
    "7",
    "12",
    "0.5",
    "3,75",
    "12 500",
    "1e-3",
    "10^{10^{10}}",
    "9^{9^{9^9}}",
    "2^{-99}",
    "(10^{10})!",
    "1000!",
    "\\binom",
    "\\mathbb{R}",
    "\\emptyset",
    "\\lfloor",
    "\\rfloor",
    "\\lceil",
    "\\rceil",
    "\\langle",
    "\\rangle",
    "\\alpha",
    "\\theta",
    "f(x)",
    "g(t)",
    "|CD|",
    "(m,n)",
    "P:Q",
    "10:30",
    "<answer>",
    "</answer>",
    "####",
    "The answer is ",
    "Final Answer: ",
    "\\displaystyle",
    "^\\circ",
    "\\$",
    "π",
    "√",
    "≤",
    "∞",
    "−",
    "×",
    "é",
    "\u{0}",
    "\\",
    "\\\\\\",
    "}}}}",
    "{{{{",
    "((((",
    "))))",
];

/// A random expression as LaTeX, `depth` levels deep at most.
fn expr(rng: &mut Rng, depth: usize, out: &mut String) {
    if depth == 0 || rng.chance(25) {
        match rng.below(8) {
            0 => out.push_str(&rng.below(1000).to_string()),
            1 => out.push_str(&format!("{}.{}", rng.below(100), rng.below(10_000))),
            2 => out.push_str(rng.pick_str(&["x", "y", "t", "\\alpha", "a_1", "n"])),
            3 => out.push_str(rng.pick_str(&["\\pi", "e", "i", "\\infty"])),
            4 => out.push_str(&"9".repeat(1 + rng.below(60))),
            5 => out.push_str(&format!("10^{{{}}}", rng.below(1_000_000_000))),
            6 => out.push_str(&format!("{},{:03}", 1 + rng.below(999), rng.below(1000))),
            _ => out.push_str(&format!("{}!", rng.below(3000))),
        }
        return;
    }
    let d = depth - 1;
    match rng.below(22) {
        0 => {
            out.push_str("\\frac{");
            expr(rng, d, out);
            out.push_str("}{");
            expr(rng, d, out);
            out.push('}');
        }
        1 => {
            out.push_str("\\sqrt{");
            expr(rng, d, out);
            out.push('}');
        }
        2 | 3 => {
            expr(rng, d, out);
            out.push_str(rng.pick_str(&["+", "-", "\\cdot", "/", " ", "\\times", "\\pm"]));
            expr(rng, d, out);
        }
        4 => {
            out.push('{');
            expr(rng, d, out);
            out.push_str("}^{");
            expr(rng, d, out);
            out.push('}');
        }
        5 => {
            out.push_str("\\left(");
            expr(rng, d, out);
            out.push_str("\\right)");
        }
        6 => {
            out.push_str("\\{");
            expr(rng, d, out);
            out.push_str(", ");
            expr(rng, d, out);
            out.push_str("\\}");
        }
        7 => {
            out.push_str(rng.pick_str(&["(", "["]));
            expr(rng, d, out);
            out.push_str(", ");
            expr(rng, d, out);
            out.push_str(rng.pick_str(&[")", "]"]));
        }
        8 => {
            let env = rng.pick_str(&["pmatrix", "bmatrix"]);
            out.push_str(&format!("\\begin{{{env}}}"));
            let rows = 1 + rng.below(3);
            let cols = 1 + rng.below(3);
            for r in 0..rows {
                for c in 0..cols {
                    expr(rng, d.min(2), out);
                    if c + 1 < cols {
                        out.push('&');
                    }
                }
                if r + 1 < rows {
                    out.push_str("\\\\");
                }
            }
            out.push_str(&format!("\\end{{{env}}}"));
        }
        9 => {
            expr(rng, d, out);
            out.push_str(rng.pick_str(&["=", "<", "\\le", ">", "\\geq", "\\ne", "\\approx", ":"]));
            expr(rng, d, out);
        }
        10 => {
            out.push_str(rng.pick_str(&["\\sin", "\\ln", "\\log_2", "\\exp", "\\cos^2"]));
            out.push('(');
            expr(rng, d, out);
            out.push(')');
        }
        11 => {
            out.push('|');
            expr(rng, d, out);
            out.push('|');
        }
        12 => {
            expr(rng, d, out);
            out.push_str(rng.pick_str(&["\\%", "!", "^\\circ", "\\text{ cm}"]));
        }
        13 => {
            out.push_str("\\boxed{");
            expr(rng, d, out);
            out.push('}');
        }
        14 => {
            expr(rng, d, out);
            out.push_str(rng.pick_str(&[", ", " and ", "\\text{ and }", " or ", "\\cup"]));
            expr(rng, d, out);
        }
        15 => {
            out.push_str(rng.pick_str(&["$", "\\(", "\\[", "$$"]));
            expr(rng, d, out);
            out.push_str(rng.pick_str(&["$", "\\)", "\\]", "$$"]));
        }
        16 => {
            out.push_str("\\text{");
            out.push_str(rng.pick_str(&["Tuesday", "(B)", "and", "no solution", "cm", "{"]));
            out.push('}');
        }
        17 => {
            let k = 1 + rng.below(200);
            out.push_str(&"{".repeat(k));
            expr(rng, d, out);
            out.push_str(&"}".repeat(k));
        }
        18 => {
            out.push_str(&format!("{}^{{", rng.below(20)));
            out.push_str(&format!("{}^{{{}}}", rng.below(20), rng.below(100_000)));
            out.push('}');
        }
        19 => {
            out.push_str("The answer is ");
            expr(rng, d, out);
            out.push('.');
        }
        20 => {
            expr(rng, d, out);
            out.push_str(" = ");
            expr(rng, d, out);
            out.push_str(" = ");
            expr(rng, d, out);
        }
        _ => out.push_str(rng.pick_str(FRAGMENTS)),
    }
}

/// A byte offset on a character boundary of `s`.
fn boundary(rng: &mut Rng, s: &str) -> usize {
    let mut at = rng.below(s.len() + 1);
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// `base` with one to four random edits.
fn mutate(rng: &mut Rng, base: &str) -> String {
    let mut s = base.to_string();
    for _ in 0..1 + rng.below(4) {
        let a = boundary(rng, &s);
        let b = boundary(rng, &s);
        let (lo, hi) = (a.min(b), a.max(b));
        match rng.below(7) {
            0 => s.insert_str(a, rng.pick_str(FRAGMENTS)),
            1 => s.replace_range(lo..hi, ""),
            2 => {
                let piece = s[lo..hi].to_string();
                s.insert_str(hi, &piece);
            }
            3 => s.truncate(a),
            4 => {
                let k = 1 + rng.below(3000);
                let open = rng.pick_str(&["{", "(", "\\frac{", "\\sqrt{", "\\left(", "-", "\\{"]);
                s.insert_str(a, &open.repeat(k));
            }
            5 => {
                let mut e = String::new();
                expr(rng, 4, &mut e);
                s.insert_str(a, &e);
            }
            _ => s.insert_str(a, &"9".repeat(1 + rng.below(5000))),
        }
        if s.len() > 1 << 17 {
            s.truncate(boundary(rng, &s[..1 << 16]));
        }
    }
    s
}

fn input(rng: &mut Rng, corpus: &[String]) -> String {
    match rng.below(10) {
        0..=3 => {
            let mut s = String::new();
            let depth = 1 + rng.below(8);
            expr(rng, depth, &mut s);
            s
        }
        4 | 5 => {
            let n = rng.below(40);
            (0..n).map(|_| rng.pick_str(FRAGMENTS)).collect()
        }
        6..=8 => {
            let base = rng.pick(corpus).clone();
            mutate(rng, &base)
        }
        _ => {
            let k = 1 + rng.below(3_000);
            let (open, close) = *rng.pick(&[
                ("{", "}"),
                ("(", ")"),
                ("\\frac{1}{", "}"),
                ("\\sqrt{", "}"),
                ("2^{", "}"),
                ("\\boxed{", "}"),
                ("\\left(", "\\right)"),
                ("\\begin{pmatrix}", "\\end{pmatrix}"),
            ]);
            let closes = if rng.chance(50) { k } else { rng.below(k + 1) };
            open.repeat(k) + "1" + &close.repeat(closes)
        }
    }
}

struct Args {
    inputs: u64,
    seed: u64,
    /// Where to write the slowest input in full.
    save_slowest: Option<String>,
}

fn args() -> Result<Args, String> {
    let mut out = Args {
        inputs: 1_000_000,
        seed: 1,
        save_slowest: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        if flag == "--save-slowest" {
            out.save_slowest = Some(value);
            continue;
        }
        let n: u64 = value
            .replace('_', "")
            .parse()
            .map_err(|e| format!("{flag} {value}: {e}"))?;
        match flag.as_str() {
            "--inputs" => out.inputs = n,
            "--seed" => out.seed = n,
            _ => {
                return Err(format!(
                    "unknown flag {flag} (use --inputs N, --seed S, --save-slowest FILE)"
                ));
            }
        }
    }
    Ok(out)
}

/// Peak resident memory in KiB (Linux), if known.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn shown(s: &str) -> String {
    let head: String = s.chars().take(160).collect();
    if head.len() < s.len() {
        format!("{head:?}… ({} bytes)", s.len())
    } else {
        format!("{head:?}")
    }
}

fn main() -> ExitCode {
    let args = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("math_fuzz: {e}");
            return ExitCode::from(2);
        }
    };
    let pairs = math_pairs();
    let corpus: Vec<String> = pairs
        .iter()
        .flat_map(|p| [p.gold.clone(), p.pred.clone()])
        .collect();
    let golds: Vec<String> = pairs.iter().map(|p| p.gold.clone()).collect();
    let checker = MathChecker::default();
    let run = |s: &str, gold: &str| {
        let _ = parse_answer(s);
        let _ = checker.check(gold, s);
        let _ = checker.check(s, gold);
    };
    let mut rng = Rng::seeded(args.seed);
    // The slowest inputs of the pass (time, input, reference), re-timed at the end: one
    // wall-clock sample on a shared machine can be a preemption, not the input.
    let mut slowest: Vec<(Duration, String, String)> = Vec::new();
    let mut bytes = 0u64;
    let start = Instant::now();
    for n in 0..args.inputs {
        let s = input(&mut rng, &corpus);
        let gold = rng.pick(&golds).clone();
        bytes += s.len() as u64;
        let t0 = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| run(&s, &gold)));
        let dt = t0.elapsed();
        if outcome.is_err() {
            eprintln!(
                "math_fuzz: panic on input #{n} (seed {}): {}\nreference: {gold:?}",
                args.seed,
                shown(&s)
            );
            return ExitCode::FAILURE;
        }
        if slowest.len() < KEEP_SLOWEST || dt > slowest[slowest.len() - 1].0 {
            slowest.push((dt, s, gold));
            slowest.sort_by_key(|s| std::cmp::Reverse(s.0));
            slowest.truncate(KEEP_SLOWEST);
        }
        if (n + 1) % 1_000_000 == 0 {
            let secs = start.elapsed().as_secs_f64();
            eprintln!(
                "{} inputs, {:.0} inputs/s, slowest so far {:.2} ms",
                n + 1,
                (n + 1) as f64 / secs,
                slowest.first().map_or(0.0, |s| s.0.as_secs_f64() * 1e3)
            );
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "inputs: {} (seed {}), {:.1} MB of input, {:.1} s, {:.0} inputs/s",
        args.inputs,
        args.seed,
        bytes as f64 / 1e6,
        secs,
        args.inputs as f64 / secs
    );
    println!("panics: 0");
    if let Some((first, _, _)) = slowest.first() {
        println!(
            "slowest single measurement: {:.3} ms",
            first.as_secs_f64() * 1e3
        );
    }
    // Re-time the candidates: the best of five runs each; the slowest of those is the input.
    let retimed = slowest
        .iter()
        .map(|(_, s, gold)| {
            let best = (0..5)
                .map(|_| {
                    let t0 = Instant::now();
                    run(s, gold);
                    t0.elapsed()
                })
                .min()
                .unwrap_or(Duration::ZERO);
            (best, s, gold)
        })
        .max_by_key(|(t, _, _)| *t);
    if let Some((t, s, gold)) = retimed {
        println!(
            "slowest input (best of 5 re-runs of the {KEEP_SLOWEST} slowest): {:.3} ms for \
             parse + two checks against {gold:?}: {}",
            t.as_secs_f64() * 1e3,
            shown(s)
        );
        if let Some(path) = &args.save_slowest
            && let Err(e) = std::fs::write(path, s)
        {
            eprintln!("math_fuzz: cannot write {path}: {e}");
        }
    }
    if let Some(kib) = peak_rss_kib() {
        println!("peak resident memory: {:.1} MiB", kib as f64 / 1024.0);
    }
    ExitCode::SUCCESS
}
