//! Named functions (`\sin`, `\log_b`, `\sqrt[n]`), LaTeX commands (`\frac`, `\binom`,
//! `\{…\}`, floors, `\boxed`) and environments (matrices).

use num_bigint::BigInt;
use num_rational::BigRational;

use super::ast::{BigOp, Constant, Expr, Func, RelOp};
use super::lexer::{GREEK, Tok};
use super::parser::Parser;
use crate::error::Result;

impl Parser<'_> {
    pub(super) fn named(&mut self, n: &str) -> Result<Expr> {
        let func = match n {
            "pi" => return Ok(Expr::Const(Constant::Pi)),
            "inf" | "infty" | "infinity" => return Ok(Expr::Const(Constant::Infinity)),
            "sqrt" => {
                let index = if self.is_ch('[') {
                    self.pos += 1;
                    let idx = self.additive()?;
                    self.expect_ch(']')?;
                    idx
                } else {
                    Expr::Num(BigRational::from_integer(BigInt::from(2)))
                };
                let radicand = self.argument()?;
                return Ok(Expr::Root(Box::new(index), Box::new(radicand)));
            }
            "log" => {
                let base = if self.is_ch('_') {
                    self.pos += 1;
                    Some(self.argument()?)
                } else {
                    None
                };
                let power = self.function_power()?;
                let arg = self.function_argument()?;
                let e = match base {
                    Some(b) => Expr::Log(Box::new(b), Box::new(arg)),
                    None => Expr::Func(Func::Ln, Box::new(arg)),
                };
                return Ok(apply_power(e, power));
            }
            "sin" => Func::Sin,
            "cos" => Func::Cos,
            "tan" => Func::Tan,
            "cot" => Func::Cot,
            "sec" => Func::Sec,
            "csc" => Func::Csc,
            "arcsin" | "asin" => Func::Asin,
            "arccos" | "acos" => Func::Acos,
            "arctan" | "atan" => Func::Atan,
            "sinh" => Func::Sinh,
            "cosh" => Func::Cosh,
            "tanh" => Func::Tanh,
            "ln" => Func::Ln,
            "exp" => Func::Exp,
            "abs" => Func::Abs,
            "floor" => Func::Floor,
            "ceil" => Func::Ceil,
            _ => return Err(self.err("unknown name")),
        };
        let power = self.function_power()?;
        let arg = self.function_argument()?;
        Ok(apply_power(Expr::Func(func, Box::new(arg)), power))
    }

    /// `\sin^2 x`: a power written right after the function name.
    pub(super) fn function_power(&mut self) -> Result<Option<Expr>> {
        if self.is_ch('^') {
            self.pos += 1;
            return Ok(Some(self.argument()?));
        }
        Ok(None)
    }

    /// A function's argument: a parenthesised group, or (`\sin 2x`) a signed power followed
    /// by juxtaposed numbers, letters and Greek letters, stopping at the next function.
    pub(super) fn function_argument(&mut self) -> Result<Expr> {
        if self.is_ch('(') || self.is_ch('{') {
            return self.primary();
        }
        let first = self.signed_power()?;
        let mut factors = vec![(first, false)];
        while matches!(self.peek(), Some(Tok::Num(_) | Tok::Letter(_)))
            || matches!(self.peek(), Some(Tok::Cmd(c)) if GREEK.contains(&c.as_str()))
        {
            factors.push((self.power()?, false));
        }
        Ok(if factors.len() == 1 {
            factors.swap_remove(0).0
        } else {
            Expr::Product(factors)
        })
    }

    pub(super) fn command(&mut self, c: &str) -> Result<Expr> {
        match c {
            "frac" | "dfrac" | "tfrac" | "cfrac" => {
                let num = self.argument()?;
                let den = self.argument()?;
                Ok(Expr::Product(vec![(num, false), (den, true)]))
            }
            "binom" | "dbinom" | "tbinom" => {
                let n = self.argument()?;
                let k = self.argument()?;
                let nk = Expr::Sum(vec![n.clone(), Expr::Neg(Box::new(k.clone()))]);
                Ok(Expr::Product(vec![
                    (Expr::Factorial(Box::new(n)), false),
                    (Expr::Factorial(Box::new(k)), true),
                    (Expr::Factorial(Box::new(nk)), true),
                ]))
            }
            "{" | "lbrace" => {
                if self.is_cmd(&["}", "rbrace"]) {
                    self.pos += 1;
                    return Ok(Expr::Set(Vec::new()));
                }
                let e = self.list()?;
                if !self.is_cmd(&["}", "rbrace"]) {
                    return Err(self.err("unbalanced `\\{`"));
                }
                self.pos += 1;
                Ok(match e {
                    Expr::List(items) => Expr::Set(items),
                    e => Expr::Set(vec![e]),
                })
            }
            "emptyset" | "varnothing" => Ok(Expr::Set(Vec::new())),
            "mathbb" => {
                let (content, _) = match self.peek().cloned() {
                    Some(Tok::Ch('{')) => {
                        self.pos += 1;
                        let t = self.peek().cloned();
                        self.pos += 1;
                        self.expect_ch('}')?;
                        (t, ())
                    }
                    t => {
                        self.pos += 1;
                        (t, ())
                    }
                };
                match content {
                    Some(Tok::Letter('R')) => Ok(Expr::Interval {
                        lo: Box::new(Expr::Neg(Box::new(Expr::Const(Constant::Infinity)))),
                        hi: Box::new(Expr::Const(Constant::Infinity)),
                        lo_closed: false,
                        hi_closed: false,
                    }),
                    Some(Tok::Letter(l)) => Ok(Expr::Var(format!("mathbb_{l}"))),
                    _ => Err(self.err("unknown \\mathbb")),
                }
            }
            "lfloor" | "lceil" => {
                let e = self.additive()?;
                let (close, f) = if c == "lfloor" {
                    ("rfloor", Func::Floor)
                } else {
                    ("rceil", Func::Ceil)
                };
                if !self.is_cmd(&[close]) {
                    return Err(self.err("unbalanced floor/ceiling"));
                }
                self.pos += 1;
                Ok(Expr::Func(f, Box::new(e)))
            }
            "lvert" | "vert" | "mid" => {
                let e = self.additive()?;
                if !self.is_cmd(&["rvert", "vert", "mid"]) {
                    return Err(self.err("unbalanced |"));
                }
                self.pos += 1;
                Ok(Expr::Func(Func::Abs, Box::new(e)))
            }
            "langle" => {
                let e = self.list()?;
                if !self.is_cmd(&["rangle"]) {
                    return Err(self.err("unbalanced \\langle"));
                }
                self.pos += 1;
                Ok(match e {
                    Expr::List(items) => Expr::Tuple(items),
                    e => e,
                })
            }
            "boxed" | "fbox" => self.argument(),
            "sum" | "prod" => self.big_operator(if c == "sum" {
                BigOp::Sum
            } else {
                BigOp::Product
            }),
            g if GREEK.contains(&g) => Ok(Expr::Var(g.to_string())),
            // A command we do not know (`\zzz`, `\angle`) names something: a symbol.
            other if other.len() >= 2 && other.bytes().all(|b| b.is_ascii_alphabetic()) => {
                Ok(Expr::Var(format!("\\{other}")))
            }
            other => Err(self.err(&format!("unsupported command \\{other}"))),
        }
    }

    /// `\sum_{k=lo}^{hi} body`: the limits, then the body (a term: the factors juxtaposed
    /// after the operator, up to the next `+` or `-`).
    fn big_operator(&mut self, op: BigOp) -> Result<Expr> {
        if !self.is_ch('_') {
            return Err(self.err("a sum or product without limits"));
        }
        self.pos += 1;
        let (index, lo) = match self.argument()? {
            Expr::Relation { mut terms, ops } if ops == [RelOp::Eq] && terms.len() == 2 => {
                match (terms.remove(0), terms.remove(0)) {
                    (Expr::Var(v), lo) => (v, lo),
                    _ => return Err(self.err("a sum's index must be a variable")),
                }
            }
            _ => return Err(self.err("a sum's lower limit must be `index = value`")),
        };
        if !self.is_ch('^') {
            return Err(self.err("a sum or product without an upper limit"));
        }
        self.pos += 1;
        let hi = self.argument()?;
        let body = self.term()?;
        Ok(Expr::Big {
            op,
            index,
            lo: Box::new(lo),
            hi: Box::new(hi),
            body: Box::new(body),
        })
    }

    pub(super) fn environment(&mut self, env: &str) -> Result<Expr> {
        let mut rows: Vec<Vec<Expr>> = vec![Vec::new()];
        loop {
            match self.peek().cloned() {
                Some(Tok::End(e)) if e == env => {
                    self.pos += 1;
                    break;
                }
                Some(Tok::Cmd(c)) if c == "\\" || c == "cr" => {
                    self.pos += 1;
                    rows.push(Vec::new());
                }
                Some(Tok::Ch('&')) => {
                    self.pos += 1;
                    if rows.last().is_some_and(Vec::is_empty) {
                        return Err(self.err("empty matrix cell"));
                    }
                }
                None => return Err(self.err("unterminated environment")),
                _ => {
                    let cell = self.relation()?;
                    if let Some(row) = rows.last_mut() {
                        row.push(cell);
                    }
                }
            }
        }
        if rows.last().is_some_and(Vec::is_empty) {
            rows.pop();
        }
        Ok(Expr::Matrix(rows))
    }
}

fn apply_power(e: Expr, power: Option<Expr>) -> Expr {
    match power {
        // `\sin^{-1}` is the inverse function.
        Some(Expr::Neg(inner)) if matches!(*inner, Expr::Num(ref n) if *n == BigRational::from_integer(BigInt::from(1))) => {
            match e {
                Expr::Func(Func::Sin, a) => Expr::Func(Func::Asin, a),
                Expr::Func(Func::Cos, a) => Expr::Func(Func::Acos, a),
                Expr::Func(Func::Tan, a) => Expr::Func(Func::Atan, a),
                e => Expr::Pow(Box::new(e), Box::new(Expr::Neg(inner))),
            }
        }
        Some(p) => Expr::Pow(Box::new(e), Box::new(p)),
        None => e,
    }
}
