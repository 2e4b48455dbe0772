//! Exact arithmetic expressions: the language of countdown answers.
//!
//! An expression is integers combined with `+ - * /` (also `×` and `÷`), parentheses and
//! unary minus, evaluated exactly in rationals (`6 / 4` is `3/2`, never `1`). The countdown
//! generator builds its references with it, pack validation checks references with it, and
//! the countdown reward in `grpo-rewards` parses completions with it: one language, one
//! parser, capped at [`MAX_LEN`] bytes and [`MAX_DEPTH`] levels. [`solve`] finds an
//! expression for a countdown puzzle by exhaustive search, proving the puzzle solvable.
//!
//! ```
//! use grpo_tasks::expr::{Expr, solve};
//! let e = Expr::parse("(25 - 7) * 3").unwrap();
//! assert_eq!(e.eval().unwrap().to_string(), "54");
//! assert_eq!(e.literals(), vec![25, 7, 3]);
//! let found = solve(&[25, 7, 3], 54, true).unwrap();
//! assert_eq!(Expr::parse(&found).unwrap().eval().unwrap().to_string(), "54");
//! ```
//!
//! Files: `parser.rs` (tokens and the recursive-descent grammar), `countdown.rs` (the
//! multiset rule and the solver); the tree, its evaluation and its rendering are here.

mod countdown;
mod parser;

use std::fmt;

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{Signed, ToPrimitive, Zero};

use crate::error::ExprError;

pub use countdown::{Usage, check_usage, solve};

/// The deepest nesting the parser accepts (parentheses and unary minus together).
pub const MAX_DEPTH: usize = 200;
/// The longest expression the parser reads, in bytes (a countdown answer is a few dozen; the
/// cap keeps every parse, evaluation and drop of the tree shallow and quick).
pub const MAX_LEN: usize = 1_000;

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*` (or `×`)
    Mul,
    /// `/` (or `÷`), exact.
    Div,
}

impl Op {
    fn symbol(self) -> char {
        match self {
            Op::Add => '+',
            Op::Sub => '-',
            Op::Mul => '*',
            Op::Div => '/',
        }
    }

    /// Applies the operator exactly; `None` on division by zero.
    pub fn apply(self, a: &BigRational, b: &BigRational) -> Option<BigRational> {
        match self {
            Op::Add => Some(a + b),
            Op::Sub => Some(a - b),
            Op::Mul => Some(a * b),
            Op::Div => (!b.is_zero()).then(|| a / b),
        }
    }
}

/// A parsed arithmetic expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    /// A non-negative integer literal as written.
    Num(BigInt),
    /// Unary minus.
    Neg(Box<Expr>),
    /// A binary operation.
    Bin(Op, Box<Expr>, Box<Expr>),
}

impl Expr {
    /// Parses an expression; the whole input must be one expression.
    pub fn parse(text: &str) -> Result<Expr, ExprError> {
        parser::parse(text)
    }

    /// Evaluates exactly.
    pub fn eval(&self) -> Result<BigRational, ExprError> {
        match self {
            Expr::Num(n) => Ok(BigRational::from_integer(n.clone())),
            Expr::Neg(e) => Ok(-e.eval()?),
            Expr::Bin(op, a, b) => op
                .apply(&a.eval()?, &b.eval()?)
                .ok_or(ExprError::DivisionByZero),
        }
    }

    /// The worked solution: every operation in evaluation order (left operand first), written
    /// `a op b = value` without spaces, a negative operand in parentheses.
    ///
    /// ```
    /// use grpo_tasks::expr::Expr;
    /// let e = Expr::parse("47 - 12 + 8").unwrap();
    /// assert_eq!(e.work().unwrap(), ["47-12=35", "35+8=43"]);
    /// let e = Expr::parse("(84 - 12) / (3 - 5)").unwrap();
    /// assert_eq!(e.work().unwrap(), ["84-12=72", "3-5=-2", "72/(-2)=-36"]);
    /// ```
    pub fn work(&self) -> Result<Vec<String>, ExprError> {
        let mut steps = Vec::new();
        self.eval_recording(&mut steps)?;
        Ok(steps)
    }

    fn eval_recording(&self, steps: &mut Vec<String>) -> Result<BigRational, ExprError> {
        match self {
            Expr::Num(n) => Ok(BigRational::from_integer(n.clone())),
            Expr::Neg(e) => Ok(-e.eval_recording(steps)?),
            Expr::Bin(op, a, b) => {
                let x = a.eval_recording(steps)?;
                let y = b.eval_recording(steps)?;
                let value = op.apply(&x, &y).ok_or(ExprError::DivisionByZero)?;
                let shown = |v: &BigRational| {
                    if v.is_negative() {
                        format!("({v})")
                    } else {
                        v.to_string()
                    }
                };
                steps.push(format!("{}{}{}={value}", x, op.symbol(), shown(&y)));
                Ok(value)
            }
        }
    }

    /// The integer literals, left to right (a literal too large for `i64` is `i64::MAX`, which
    /// matches no countdown number).
    pub fn literals(&self) -> Vec<i64> {
        let mut out = Vec::new();
        self.collect_literals(&mut out);
        out
    }

    fn collect_literals(&self, out: &mut Vec<i64>) {
        match self {
            Expr::Num(n) => out.push(n.to_i64().unwrap_or(i64::MAX)),
            Expr::Neg(e) => e.collect_literals(out),
            Expr::Bin(_, a, b) => {
                a.collect_literals(out);
                b.collect_literals(out);
            }
        }
    }
}

impl Expr {
    /// Renders with only the parentheses precedence and associativity require:
    /// `(3 + 5) * 2 - 1`, `10 - (4 - 3)`.
    pub fn to_minimal_string(&self) -> String {
        let mut out = String::new();
        self.write_minimal(&mut out);
        out
    }

    fn precedence(&self) -> u8 {
        match self {
            Expr::Bin(Op::Add | Op::Sub, ..) => 1,
            Expr::Bin(Op::Mul | Op::Div, ..) => 2,
            Expr::Neg(_) => 3,
            Expr::Num(_) => 4,
        }
    }

    fn write_minimal(&self, out: &mut String) {
        let wrap = |e: &Expr, parens: bool, out: &mut String| {
            if parens {
                out.push('(');
                e.write_minimal(out);
                out.push(')');
            } else {
                e.write_minimal(out);
            }
        };
        match self {
            Expr::Num(n) => out.push_str(&n.to_string()),
            Expr::Neg(e) => {
                out.push('-');
                wrap(e, e.precedence() < 3, out);
            }
            Expr::Bin(op, a, b) => {
                let p = self.precedence();
                wrap(a, a.precedence() < p, out);
                out.push(' ');
                out.push(op.symbol());
                out.push(' ');
                let right_parens =
                    b.precedence() < p || (b.precedence() == p && matches!(op, Op::Sub | Op::Div));
                wrap(b, right_parens, out);
            }
        }
    }
}

impl fmt::Display for Expr {
    /// Fully parenthesised inner operations, no outer parentheses: `(3 + 5) * 2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn inner(e: &Expr, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match e {
                Expr::Bin(..) => write!(f, "({e})"),
                _ => write!(f, "{e}"),
            }
        }
        match self {
            Expr::Num(n) => write!(f, "{n}"),
            Expr::Neg(e) => {
                f.write_str("-")?;
                inner(e, f)
            }
            Expr::Bin(op, a, b) => {
                inner(a, f)?;
                write!(f, " {} ", op.symbol())?;
                inner(b, f)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str) -> String {
        Expr::parse(text).unwrap().eval().unwrap().to_string()
    }

    #[test]
    fn evaluates_exactly_with_precedence() {
        // Each golden value worked by hand.
        for (text, want) in [
            ("1 + 2 * 3", "7"),
            ("(1 + 2) * 3", "9"),
            ("10 - 4 - 3", "3"), // left-associative: (10-4)-3
            ("24 / 4 / 2", "3"), // (24/4)/2
            ("6 / 4", "3/2"),    // exact, not integer division
            ("1 / 3 + 1 / 6", "1/2"),
            ("-3 + 5", "2"),
            ("--3", "3"),
            ("2 × 3 ÷ 4", "3/2"),
            ("8 / (3 - 8 / 3)", "24"), // the classic 24 puzzle: 8/(1/3)
            ("99999999999999999999 - 99999999999999999998", "1"),
        ] {
            assert_eq!(value(text), want, "{text}");
        }
    }

    #[test]
    fn parse_errors_name_the_place() {
        let cases: &[(&str, &str)] = &[
            ("", "empty"),
            ("   ", "empty"),
            ("1 +", "unexpected the end at byte 3"),
            ("(1 + 2", "expected `)`"),
            ("1 + 2)", "unexpected `)` at byte 5"),
            ("1 2", "unexpected number 2 at byte 2"),
            ("1.5 + 2", "unexpected character `.` at byte 1"),
            ("x = 3", "unexpected character `x`"),
            ("* 3", "unexpected `*` at byte 0"),
        ];
        for (text, want) in cases {
            let err = Expr::parse(text).unwrap_err().to_string();
            assert!(err.contains(want), "{text:?}: {err}");
        }
        let deep = format!("{}1{}", "(".repeat(300), ")".repeat(300));
        assert_eq!(
            Expr::parse(&deep),
            Err(ExprError::TooDeep { max: MAX_DEPTH })
        );
        // A chain as long as the cap allows parses, evaluates and drops; one byte more is refused.
        let chain = format!("1{}", "+1".repeat((MAX_LEN - 1) / 2));
        assert_eq!(
            Expr::parse(&chain).unwrap().eval().unwrap().to_string(),
            "500"
        );
        let longer = format!("{chain}+1");
        assert_eq!(
            Expr::parse(&longer),
            Err(ExprError::TooLong {
                len: MAX_LEN + 1,
                max: MAX_LEN
            })
        );
    }

    #[test]
    fn evaluates_exactly_with_literals_in_order() {
        let cases: &[(&str, &str, &[i64])] = &[
            ("1+2", "3", &[1, 2]),
            ("(25-5)*4/8", "10", &[25, 5, 4, 8]),
            ("7/2", "7/2", &[7, 2]),
            ("7 / 2 * 2", "7", &[7, 2, 2]),
            ("8 / (3 - 8 / 3)", "24", &[8, 3, 8, 3]),
            ("2*(3+4)", "14", &[2, 3, 4]),
            ("-3+5", "2", &[3, 5]),
            ("10 - 2 - 3", "5", &[10, 2, 3]),
            ("3 × 4 ÷ 6", "2", &[3, 4, 6]),
            ("((((1))))", "1", &[1]),
            (
                "99999999999999999999 - 99999999999999999998",
                "1",
                &[i64::MAX, i64::MAX],
            ),
        ];
        for (src, value, literals) in cases {
            let e = Expr::parse(src).unwrap();
            assert_eq!(e.eval().unwrap().to_string(), *value, "{src}");
            assert_eq!(e.literals(), *literals, "{src}");
        }
    }

    #[test]
    fn only_the_grammar_parses() {
        for bad in [
            "2(3)", "2^3", "1.5", "x+1", "3!", "2**3", "1 + + ", "√4", "1e3",
        ] {
            assert!(Expr::parse(bad).is_err(), "{bad}");
        }
        // Unary minus chains are fine; `**` is not a power.
        assert_eq!(Expr::parse("--2").unwrap().eval().unwrap().to_string(), "2");
    }

    #[test]
    fn division_by_zero_is_an_error_not_a_panic() {
        assert_eq!(
            Expr::parse("5 / (3 - 3)").unwrap().eval(),
            Err(ExprError::DivisionByZero)
        );
    }

    #[test]
    fn usage_is_a_multiset_check() {
        assert_eq!(check_usage(&[3, 3], &[3, 3, 4], false), Usage::Valid);
        assert_eq!(
            check_usage(&[3, 3], &[3, 3, 4], true),
            Usage::Unused(vec![4])
        );
        assert_eq!(
            check_usage(&[3, 3, 3], &[3, 3, 4], false),
            Usage::NotAvailable(3)
        );
        assert_eq!(check_usage(&[5], &[3, 4], false), Usage::NotAvailable(5));
        assert_eq!(check_usage(&[4, 3], &[3, 4], true), Usage::Valid);
    }

    #[test]
    fn solver_finds_valid_expressions() {
        for (numbers, target, use_all) in [
            (vec![25, 7, 3], 54, true),
            (vec![3, 3, 8, 8], 24, true), // needs fractions: 8 / (3 - 8/3)
            (vec![1, 2, 3, 4], 10, true),
            (vec![50, 2, 9], 52, false), // 50 + 2, 9 unused
            (vec![100, 75, 50, 25, 6, 3], 952, true),
        ] {
            let found = solve(&numbers, target, use_all).unwrap();
            let e = Expr::parse(&found).unwrap();
            assert_eq!(
                e.eval().unwrap(),
                BigRational::from_integer(target.into()),
                "{found}"
            );
            assert_eq!(
                check_usage(&e.literals(), &numbers, use_all),
                Usage::Valid,
                "{found}"
            );
        }
    }

    #[test]
    fn solver_reports_impossible_puzzles() {
        // 1 and 1 reach at most 2 (1+1); 1,1 → {0, 1, 2}.
        assert_eq!(solve(&[1, 1], 3, true), None);
        // With at most once, a lone number equal to the target is a solution; here none is.
        assert_eq!(solve(&[2], 3, false), None);
        assert_eq!(solve(&[], 3, false), None);
    }

    #[test]
    fn minimal_rendering_keeps_the_value() {
        for (text, want) in [
            ("((3 + 5) * 2) - 1", "(3 + 5) * 2 - 1"),
            ("10 - (4 - 3)", "10 - (4 - 3)"),
            ("(10 - 4) - 3", "10 - 4 - 3"),
            ("24 / (4 / 2)", "24 / (4 / 2)"),
            ("(2 * 3) * 4", "2 * 3 * 4"),
            ("2 * (3 * 4)", "2 * 3 * 4"), // associative: same value, parentheses dropped
            ("-(2 + 3)", "-(2 + 3)"),
            ("1 + (2 + 3)", "1 + 2 + 3"),
            ("1 - (2 + 3)", "1 - (2 + 3)"),
        ] {
            let e = Expr::parse(text).unwrap();
            let minimal = e.to_minimal_string();
            assert_eq!(minimal, want, "{text}");
            assert_eq!(Expr::parse(&minimal).unwrap().eval(), e.eval(), "{text}");
        }
    }

    #[test]
    fn display_round_trips() {
        for text in ["(3 + 5) * 2", "8 / (3 - (8 / 3))", "-(2 + 3)", "7"] {
            let e = Expr::parse(text).unwrap();
            let again = Expr::parse(&e.to_string()).unwrap();
            assert_eq!(e, again, "{text} → {e}");
        }
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        fn arb_expr() -> impl Strategy<Value = Expr> {
            let leaf = (0i64..50).prop_map(|n| Expr::Num(BigInt::from(n)));
            leaf.prop_recursive(5, 32, 2, |inner| {
                prop_oneof![
                    inner.clone().prop_map(|e| Expr::Neg(Box::new(e))),
                    (
                        prop_oneof![Just(Op::Add), Just(Op::Sub), Just(Op::Mul), Just(Op::Div)],
                        inner.clone(),
                        inner
                    )
                        .prop_map(|(op, a, b)| Expr::Bin(
                            op,
                            Box::new(a),
                            Box::new(b)
                        )),
                ]
            })
        }

        proptest! {
            /// Both renderings parse back to an expression with the same value and literals.
            #[test]
            fn renderings_keep_value_and_literals(e in arb_expr()) {
                for text in [e.to_string(), e.to_minimal_string()] {
                    let back = Expr::parse(&text).unwrap();
                    prop_assert_eq!(back.eval(), e.eval(), "{}", text);
                    prop_assert_eq!(back.literals(), e.literals(), "{}", text);
                }
            }

            /// The parser never panics.
            #[test]
            fn parse_never_panics(text in "[0-9+*/() ×÷.-]{0,40}") {
                let _ = Expr::parse(&text).map(|e| e.eval());
            }
        }
    }
}
