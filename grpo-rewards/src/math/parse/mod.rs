//! LaTeX and plain-math answers → an expression tree ([`Expr`]).
//!
//! One pass of a hand-written lexer, then recursive descent with a nesting cap
//! ([`MAX_DEPTH`]) and an input cap ([`MAX_ANSWER_LEN`]): linear in the input, never recursing
//! without bound. Sums and products are n-ary, so `1+1+…+1` is flat, not a deep tree.
//!
//! Accepted: integers (`1,000`, `1{,}000`, `12 500`, `12\,500`, thin spaces), decimals (a
//! bare `3,75` is 3.75, by the lexer's decimal-comma rule; decimals keep the places written),
//! scientific notation, `\frac`/`\dfrac`/
//! `\tfrac` (also `\frac12`), `a/b`, mixed numbers (`3\frac{1}{2}` is 7/2), percentages,
//! `\sqrt[n]{x}`, powers (right-associative), `\pi`, `e`, `i`, `\infty`, implicit
//! multiplication, `\cdot`/`\times`/`\div`, functions (trig, inverse trig, hyperbolic, `\ln`,
//! `\log` (natural), `\log_b`, `\exp`, `|x|`), `\binom`, factorial, `\left`/`\right`, `±`,
//! sets `\{…\}`, intervals `(a, b]`, tuples, `pmatrix`/`bmatrix` matrices, unions `\cup`,
//! equations and inequalities (chains too), ratios and times (`5:12`, `10:30`), and `\text{…}`.

mod ast;
mod commands;
mod lexer;
mod parser;

use crate::error::{Result, RewardError};

pub use ast::{BigOp, Constant, Expr, Func, RelOp};
use lexer::{NAMES, Tok, decimal_comma, lex};
use parser::Parser;

/// The longest answer the parser reads, in bytes.
pub const MAX_ANSWER_LEN: usize = 4_096;

/// The deepest nesting the parser accepts.
pub const MAX_DEPTH: usize = 64;

/// Parses one answer (LaTeX or plain math) into an expression tree.
///
/// An answer made only of letters and spaces (`yes`, `Tuesday`, `no solution`) is plain
/// text. Errors: input longer than [`MAX_ANSWER_LEN`], nesting past [`MAX_DEPTH`], or
/// anything the grammar does not accept.
pub fn parse_answer(src: &str) -> Result<Expr> {
    if src.len() > MAX_ANSWER_LEN {
        return Err(RewardError::InputTooLong {
            len: src.len(),
            max: MAX_ANSWER_LEN,
        });
    }
    let trimmed = src.trim();
    if trimmed.is_empty() {
        return Err(RewardError::parse(src, 0, "empty answer"));
    }
    if trimmed.chars().count() >= 2
        && trimmed.chars().all(|c| c.is_alphabetic() || c == ' ')
        && !NAMES.contains(&trimmed)
    {
        return Ok(Expr::Text(normalize_text(trimmed)));
    }
    // `3,75` is 3.75 when the whole answer is that one number.
    let rewritten = decimal_comma(trimmed);
    let src = rewritten.as_deref().unwrap_or(src);
    let toks = lex(src)?;
    if toks.is_empty() {
        return Err(RewardError::parse(src, 0, "no math in the answer"));
    }
    if let [(Tok::Text(t), _)] = toks.as_slice() {
        return Ok(Expr::Text(normalize_text(t)));
    }
    let mut p = Parser::new(src, toks);
    let e = p.list()?;
    if p.pos < p.toks.len() {
        return Err(p.err("unexpected token"));
    }
    Ok(e)
}

/// Lowercases, collapses whitespace and trims punctuation at the ends of a text answer.
pub fn normalize_text(s: &str) -> String {
    let s = s.trim_matches(|c: char| {
        c.is_whitespace() || matches!(c, '.' | ',' | ';' | ':' | '!' | '"' | '\'')
    });
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_rational::BigRational;

    fn n(v: i64) -> Expr {
        Expr::Num(BigRational::from_integer(v.into()))
    }

    #[test]
    fn thousands_separators_and_decimals() {
        assert_eq!(parse_answer("1,000,000").unwrap(), n(1_000_000));
        assert_eq!(parse_answer("1{,}234").unwrap(), n(1234));
        assert!(matches!(parse_answer("(1,23)").unwrap(), Expr::Tuple(_)));
        assert!(matches!(parse_answer("1,2,3").unwrap(), Expr::List(_)));
        assert!(matches!(parse_answer("1, 23").unwrap(), Expr::List(_)));
    }

    #[test]
    fn decimal_commas_in_a_bare_number() {
        let dec = |s: &str| match parse_answer(s).unwrap() {
            Expr::Decimal(q, _) => q,
            other => panic!("{s}: {other:?}"),
        };
        let q = |n: i64, d: i64| BigRational::new(n.into(), d.into());
        assert_eq!(dec("3,75"), q(375, 100));
        assert_eq!(dec("0,375"), q(375, 1000));
        assert!(matches!(parse_answer("-2,5").unwrap(), Expr::Neg(_)));
        assert_eq!(dec("1,234,5"), q(12345, 10));
        assert_eq!(parse_answer("1,000").unwrap(), n(1000));
        assert_eq!(parse_answer("12 500").unwrap(), n(12_500));
        assert_eq!(parse_answer("12\u{2009}500").unwrap(), n(12_500));
        assert_eq!(parse_answer("1 234 567").unwrap(), n(1_234_567));
    }

    #[test]
    fn deep_nesting_is_refused() {
        let s = "(".repeat(500) + "1" + &")".repeat(500);
        assert!(matches!(parse_answer(&s), Err(RewardError::TooDeep { .. })));
        let s = "-".repeat(500) + "1";
        assert!(parse_answer(&s).is_err());
    }

    #[test]
    fn long_sums_are_flat() {
        let s = vec!["1"; 2000].join("+");
        assert!(matches!(parse_answer(&s).unwrap(), Expr::Sum(v) if v.len() == 2000));
    }
}
