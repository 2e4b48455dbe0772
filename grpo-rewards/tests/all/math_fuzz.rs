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

    /// Arithmetic the countdown reward evaluates agrees with integer arithmetic.
    #[test]
    fn arithmetic_matches_integers(a in 1i64..1000, b in 1i64..1000, c in 1i64..1000) {
        let expr = Expr::parse(&format!("({a} + {b}) * {c} - {a}")).unwrap();
        prop_assert_eq!(expr.eval().unwrap().to_string(), ((a + b) * c - a).to_string());
        prop_assert_eq!(expr.literals(), vec![a, b, c, a]);
    }
}
