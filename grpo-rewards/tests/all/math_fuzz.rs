//! Property tests: the parser and checker never panic on random or adversarial strings, and
//! equivalence respects exact arithmetic.
//!
//! Each property runs `CASES` generated inputs (see the `proptest_config` lines); the total is
//! printed by `cargo test -- --nocapture` in the test names' order.

use grpo_rewards::math::{MathChecker, parse_answer};
use grpo_tasks::expr::Expr;
use proptest::prelude::*;

const CASES: u32 = 4_000;

/// Fragments that stress the grammar: commands, unbalanced delimiters, operators.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("\\frac".to_string()),
        Just("\\sqrt".to_string()),
        Just("\\boxed{".to_string()),
        Just("{".to_string()),
        Just("}".to_string()),
        Just("(".to_string()),
        Just(")".to_string()),
        Just("[".to_string()),
        Just("]".to_string()),
        Just("\\{".to_string()),
        Just("\\}".to_string()),
        Just("^".to_string()),
        Just("_".to_string()),
        Just("\\pm".to_string()),
        Just("\\left(".to_string()),
        Just("\\right)".to_string()),
        Just("\\begin{pmatrix}".to_string()),
        Just("\\end{pmatrix}".to_string()),
        Just("&".to_string()),
        Just("\\\\".to_string()),
        Just("!".to_string()),
        Just("%".to_string()),
        Just(",".to_string()),
        Just("=".to_string()),
        Just("<".to_string()),
        Just("\\le".to_string()),
        Just("\\cup".to_string()),
        Just("\\text{".to_string()),
        Just("10^{10^{10}}".to_string()),
        Just("\\infty".to_string()),
        Just("\\pi".to_string()),
        Just("x".to_string()),
        Just("e".to_string()),
        Just("i".to_string()),
        Just("|".to_string()),
        Just("\\sin".to_string()),
        Just("\\log_".to_string()),
        Just(".".to_string()),
        Just("$".to_string()),
        Just("$$".to_string()),
        Just("\\(".to_string()),
        Just("\\)".to_string()),
        Just("3,75".to_string()),
        Just("12 500".to_string()),
        Just("12,\\!500".to_string()),
        Just(":".to_string()),
        Just("\\approx".to_string()),
        Just("\\boxed{2} and \\boxed{5}".to_string()),
        Just("\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}".to_string()),
        Just("^{8}".to_string()),
        Just("(m,n) = ".to_string()),
        Just("f(x) = ".to_string()),
        Just("0.4286".to_string()),
        "[0-9]{1,6}".prop_map(|s| s),
        "[+*/-]".prop_map(|s| s),
        "\\PC{0,3}".prop_map(|s| s),
    ]
}

fn adversarial() -> impl Strategy<Value = String> {
    prop::collection::vec(fragment(), 0..40).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    #[test]
    fn parser_never_panics_on_random_strings(s in "\\PC{0,64}") {
        let _ = parse_answer(&s);
    }

    #[test]
    fn parser_never_panics_on_adversarial_strings(s in adversarial()) {
        let _ = parse_answer(&s);
    }

    #[test]
    fn checker_never_panics(gold in adversarial(), pred in adversarial()) {
        let checker = MathChecker::default();
        let _ = checker.check(&gold, &pred);
        let _ = checker.check(&gold, &format!("\\boxed{{{pred}}}"));
        if let Ok(expr) = Expr::parse(&pred) {
            let _ = expr.eval();
        }
    }

    /// A number is equivalent to itself written as a fraction, and not to its successor.
    #[test]
    fn rationals_are_exact(n in -1_000_000i64..1_000_000, d in 1i64..1_000_000) {
        let checker = MathChecker::default();
        let gold = format!("\\frac{{{n}}}{{{d}}}");
        let scaled = format!("\\boxed{{\\frac{{{}}}{{{}}}}}", n * 3, d * 3);
        let next = format!("\\boxed{{\\frac{{{}}}{{{}}}}}", n * 3 + 1, d * 3);
        let same = checker.check(&gold, &scaled).correct;
        let off = checker.check(&gold, &next).correct;
        prop_assert!(same);
        prop_assert!(!off);
    }

    /// 1/2^k and 1/2^(k+1) are never equal, however small.
    #[test]
    fn tiny_powers_are_distinct(k in 1u32..3000) {
        let checker = MathChecker::default();
        let gold = format!("2^{{-{k}}}");
        let next = format!("\\boxed{{2^{{-{}}}}}", k + 1);
        let same = format!("\\boxed{{\\frac{{1}}{{2^{{{k}}}}}}}");
        let off = checker.check(&gold, &next).correct;
        let on = checker.check(&gold, &same).correct;
        prop_assert!(!off);
        prop_assert!(on);
    }

    /// A decimal written to `k` places stands for a non-terminating `p/q` exactly when it is
    /// `p/q` truncated or rounded to `k` places; its neighbours in the last place do not.
    #[test]
    fn decimals_match_only_their_rounding(p in 1i64..100_000, q in 2i64..10_000, k in 3u32..9) {
        let mut d = q / gcd(p, q);
        for f in [2, 5] {
            while d % f == 0 {
                d /= f;
            }
        }
        prop_assume!(d != 1); // terminating decimals must be written exactly
        let scaled = p as i128 * 10i128.pow(k);
        let truncated = scaled / q as i128;
        let rounded = (2 * scaled + q as i128) / (2 * q as i128);
        prop_assume!(truncated >= 100); // three significant digits
        let checker = MathChecker::default();
        let gold = format!("\\frac{{{p}}}{{{q}}}");
        for c in [truncated - 1, truncated, truncated + 1, truncated + 2] {
            let scale = 10i128.pow(k);
            let dec = format!("{}.{:0width$}", c / scale, c % scale, width = k as usize);
            let got = checker.check(&gold, &format!("\\boxed{{{dec}}}")).correct;
            prop_assert_eq!(got, c == truncated || c == rounded, "{} vs {}", gold, dec);
        }
    }

    /// Arithmetic the countdown reward evaluates agrees with integer arithmetic.
    #[test]
    fn arithmetic_matches_integers(a in 1i64..1000, b in 1i64..1000, c in 1i64..1000) {
        let expr = Expr::parse(&format!("({a} + {b}) * {c} - {a}")).unwrap();
        prop_assert_eq!(expr.eval().unwrap().to_string(), ((a + b) * c - a).to_string());
        prop_assert_eq!(expr.literals(), vec![a, b, c, a]);
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 { a.abs() } else { gcd(b, a % b) }
}
