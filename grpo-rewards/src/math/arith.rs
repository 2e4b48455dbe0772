//! Strict integer arithmetic, evaluated exactly in rationals: the expression language of the
//! countdown game.
//!
//! Grammar: integers, `+ - * /` (also `×`, `÷`), parentheses, unary minus, spaces. Nothing
//! else: no implicit multiplication, no decimals, no powers. Evaluation is exact
//! ([`BigRational`]); division by zero is [`RewardError::Undefined`]; input is capped at
//! [`MAX_ARITH_LEN`] bytes and [`MAX_ARITH_DEPTH`] nested levels.
//!
//! ```
//! use grpo_rewards::math::arith::eval_arithmetic;
//! let a = eval_arithmetic("(25 - 5) * 4 / 8").unwrap();
//! assert_eq!(a.value.to_string(), "10");
//! assert_eq!(a.literals, vec![25, 5, 4, 8]);
//! ```

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::Zero;

use crate::error::{Result, RewardError};
use crate::math::number::{Value, checked};

/// The longest arithmetic expression read, in bytes.
pub const MAX_ARITH_LEN: usize = 1_000;
/// The deepest nesting accepted.
pub const MAX_ARITH_DEPTH: usize = 64;

/// An evaluated arithmetic expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Arithmetic {
    /// The exact value.
    pub value: BigRational,
    /// The integer literals, in the order written (without signs).
    pub literals: Vec<i64>,
}

/// Parses and evaluates `src` exactly. Errors: anything outside the grammar
/// ([`RewardError::Parse`]), division by zero ([`RewardError::Undefined`]), caps.
pub fn eval_arithmetic(src: &str) -> Result<Arithmetic> {
    if src.len() > MAX_ARITH_LEN {
        return Err(RewardError::InputTooLong {
            len: src.len(),
            max: MAX_ARITH_LEN,
        });
    }
    let mut p = Arith {
        src,
        chars: src.char_indices().collect(),
        pos: 0,
        depth: 0,
        literals: Vec::new(),
    };
    let value = p.expr()?;
    p.skip_ws();
    if p.pos < p.chars.len() {
        return Err(p.err("unexpected character"));
    }
    Ok(Arithmetic {
        value,
        literals: p.literals,
    })
}

struct Arith<'a> {
    src: &'a str,
    chars: Vec<(usize, char)>,
    pos: usize,
    depth: usize,
    literals: Vec<i64>,
}

impl Arith<'_> {
    fn err(&self, reason: &str) -> RewardError {
        let at = self.chars.get(self.pos).map_or(self.src.len(), |(i, _)| *i);
        RewardError::parse(self.src, at, reason)
    }

    fn skip_ws(&mut self) {
        while self
            .chars
            .get(self.pos)
            .is_some_and(|(_, c)| c.is_whitespace())
        {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.chars.get(self.pos).map(|(_, c)| *c)
    }

    fn expr(&mut self) -> Result<BigRational> {
        let mut acc = self.term()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.pos += 1;
            let rhs = self.term()?;
            acc = exact(if op == '+' { acc + rhs } else { acc - rhs })?;
        }
        Ok(acc)
    }

    fn term(&mut self) -> Result<BigRational> {
        let mut acc = self.factor()?;
        while let Some(op @ ('*' | '/' | '×' | '÷')) = self.peek() {
            self.pos += 1;
            let rhs = self.factor()?;
            acc = if op == '*' || op == '×' {
                exact(acc * rhs)?
            } else if rhs.is_zero() {
                return Err(RewardError::Undefined {
                    reason: "division by zero".into(),
                });
            } else {
                exact(acc / rhs)?
            };
        }
        Ok(acc)
    }

    fn factor(&mut self) -> Result<BigRational> {
        self.depth += 1;
        if self.depth > MAX_ARITH_DEPTH {
            return Err(RewardError::TooDeep {
                max: MAX_ARITH_DEPTH,
            });
        }
        let v = match self.peek() {
            Some('-') => {
                self.pos += 1;
                -self.factor()?
            }
            Some('(') => {
                self.pos += 1;
                let v = self.expr()?;
                if self.peek() != Some(')') {
                    return Err(self.err("expected `)`"));
                }
                self.pos += 1;
                v
            }
            Some(c) if c.is_ascii_digit() => {
                let start = self.pos;
                while self
                    .chars
                    .get(self.pos)
                    .is_some_and(|(_, c)| c.is_ascii_digit())
                {
                    self.pos += 1;
                }
                let text: String = self.chars[start..self.pos]
                    .iter()
                    .map(|(_, c)| *c)
                    .collect();
                let n: i64 = text
                    .parse()
                    .map_err(|_| self.err("integer literal too large"))?;
                self.literals.push(n);
                BigRational::from_integer(BigInt::from(n))
            }
            _ => return Err(self.err("expected a number or `(`")),
        };
        self.depth -= 1;
        Ok(v)
    }
}

fn exact(q: BigRational) -> Result<BigRational> {
    match checked(q)? {
        Value::Exact(q) => Ok(q),
        _ => Err(RewardError::Undefined {
            reason: "not exact".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        // (expression, value as "n" or "n/d", literals)
        let cases: &[(&str, &str, &[i64])] = &[
            ("1+2", "3", &[1, 2]),
            ("(25-5)*4/8", "10", &[25, 5, 4, 8]),
            ("7/2", "7/2", &[7, 2]),
            ("2*3+4", "10", &[2, 3, 4]),
            ("2*(3+4)", "14", &[2, 3, 4]),
            ("-3+5", "2", &[3, 5]),
            ("10 - 2 - 3", "5", &[10, 2, 3]),
            ("100/(5*4)", "5", &[100, 5, 4]),
            ("3 × 4 ÷ 6", "2", &[3, 4, 6]),
            ("((((1))))", "1", &[1]),
        ];
        for (src, value, lits) in cases {
            let a = eval_arithmetic(src).unwrap();
            assert_eq!(a.value.to_string(), *value, "{src}");
            assert_eq!(a.literals, *lits, "{src}");
        }
    }

    #[test]
    fn errors() {
        for bad in [
            "",
            "1+",
            "2(3)",
            "1.5",
            "2^3",
            "x+1",
            "(1+2",
            "1+2)",
            "1 2",
            "99999999999999999999",
        ] {
            assert!(
                matches!(eval_arithmetic(bad), Err(RewardError::Parse { .. })),
                "{bad}"
            );
        }
        assert!(matches!(
            eval_arithmetic("1/(2-2)"),
            Err(RewardError::Undefined { .. })
        ));
        let deep = "(".repeat(200) + "1" + &")".repeat(200);
        assert!(matches!(
            eval_arithmetic(&deep),
            Err(RewardError::TooDeep { .. })
        ));
    }
}
