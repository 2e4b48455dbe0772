//! Recursive descent over the tokens: lists, unions, relations, sums, products, powers,
//! postfix operators and primaries, with the nesting cap checked on every level.

use num_bigint::BigInt;
use num_rational::BigRational;

use super::ast::{Constant, Expr, Func, RelOp};
use super::lexer::{GREEK, Tok};
use super::{MAX_DEPTH, normalize_text};
use crate::error::{Result, RewardError};
use crate::math::number::parse_decimal;

pub(super) struct Parser<'a> {
    pub(super) src: &'a str,
    pub(super) toks: Vec<(Tok, usize)>,
    pub(super) pos: usize,
    pub(super) depth: usize,
}

impl<'a> Parser<'a> {
    pub(super) fn new(src: &'a str, toks: Vec<(Tok, usize)>) -> Self {
        Parser {
            src,
            toks,
            pos: 0,
            depth: 0,
        }
    }
}

impl Parser<'_> {
    pub(super) fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|(t, _)| t)
    }

    pub(super) fn err(&self, reason: &str) -> RewardError {
        let at = self.toks.get(self.pos).map_or(self.src.len(), |(_, p)| *p);
        RewardError::parse(self.src, at, reason)
    }

    pub(super) fn is_ch(&self, c: char) -> bool {
        self.peek() == Some(&Tok::Ch(c))
    }

    pub(super) fn is_cmd(&self, names: &[&str]) -> bool {
        matches!(self.peek(), Some(Tok::Cmd(n)) if names.contains(&n.as_str()))
    }

    pub(super) fn expect_ch(&mut self, c: char) -> Result<()> {
        if self.is_ch(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.err(&format!("expected `{c}`")))
        }
    }

    pub(super) fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(RewardError::TooDeep { max: MAX_DEPTH });
        }
        Ok(())
    }

    /// `union (, union)*` → a list when there is more than one item.
    pub(super) fn list(&mut self) -> Result<Expr> {
        let mut items = vec![self.union()?];
        while self.is_ch(',') || self.is_ch(';') {
            self.pos += 1;
            items.push(self.union()?);
        }
        Ok(if items.len() == 1 {
            items.swap_remove(0)
        } else {
            Expr::List(items)
        })
    }

    pub(super) fn union(&mut self) -> Result<Expr> {
        let mut items = vec![self.relation()?];
        while self.is_cmd(&["cup"]) || self.peek() == Some(&Tok::Letter('U')) {
            self.pos += 1;
            items.push(self.relation()?);
        }
        Ok(if items.len() == 1 {
            items.swap_remove(0)
        } else {
            Expr::Union(items)
        })
    }

    pub(super) fn rel_op(&self) -> Option<RelOp> {
        Some(match self.peek()? {
            Tok::Ch('=') => RelOp::Eq,
            Tok::Ch('<') => RelOp::Lt,
            Tok::Ch('>') => RelOp::Gt,
            Tok::Cmd(n) => match n.as_str() {
                "le" | "leq" | "leqslant" => RelOp::Le,
                "ge" | "geq" | "geqslant" => RelOp::Ge,
                "lt" => RelOp::Lt,
                "gt" => RelOp::Gt,
                "ne" | "neq" => RelOp::Ne,
                "in" => RelOp::In,
                "approx" => RelOp::Approx,
                _ => return None,
            },
            _ => return None,
        })
    }

    pub(super) fn relation(&mut self) -> Result<Expr> {
        let first = self.ratio()?;
        let mut terms = vec![first];
        let mut ops = Vec::new();
        while let Some(op) = self.rel_op() {
            self.pos += 1;
            ops.push(op);
            terms.push(self.ratio()?);
        }
        Ok(if ops.is_empty() {
            terms.swap_remove(0)
        } else {
            Expr::Relation { terms, ops }
        })
    }

    /// `a : b : …` (a ratio or a time) → [`Expr::Ratio`] when there is more than one part.
    pub(super) fn ratio(&mut self) -> Result<Expr> {
        let mut parts = vec![self.additive()?];
        while self.is_ch(':') || self.is_cmd(&["colon"]) {
            self.pos += 1;
            parts.push(self.additive()?);
        }
        Ok(if parts.len() == 1 {
            parts.swap_remove(0)
        } else {
            Expr::Ratio(parts)
        })
    }

    pub(super) fn additive(&mut self) -> Result<Expr> {
        let mut terms = vec![self.signed()?];
        let mut pm: Option<Expr> = None;
        loop {
            if self.is_ch('+') {
                self.pos += 1;
                terms.push(self.term()?);
            } else if self.is_ch('-') {
                self.pos += 1;
                terms.push(Expr::Neg(Box::new(self.term()?)));
            } else if self.is_cmd(&["pm", "mp"]) {
                // a ± b ± … : keep the left part, the ± part becomes one PlusMinus.
                self.pos += 1;
                let rhs = self.term()?;
                let left = if terms.len() == 1 {
                    terms.swap_remove(0)
                } else {
                    Expr::Sum(std::mem::take(&mut terms))
                };
                let left = match pm.take() {
                    Some(prev) => Expr::Sum(vec![prev, left]),
                    None => left,
                };
                pm = Some(Expr::PlusMinus(Box::new(left), Box::new(rhs)));
                terms.clear();
            } else {
                break;
            }
        }
        let rest = match terms.len() {
            0 => None,
            1 => Some(terms.swap_remove(0)),
            _ => Some(Expr::Sum(terms)),
        };
        Ok(match (pm, rest) {
            (Some(p), None) => p,
            (Some(p), Some(r)) => Expr::Sum(vec![p, r]),
            (None, Some(r)) => r,
            (None, None) => return Err(self.err("empty sum")),
        })
    }

    /// A term with optional leading signs (`-x^2` is `-(x^2)`; `±3` is `0 ± 3`).
    pub(super) fn signed(&mut self) -> Result<Expr> {
        self.enter()?;
        let e = if self.is_ch('-') {
            self.pos += 1;
            Expr::Neg(Box::new(self.signed()?))
        } else if self.is_ch('+') {
            self.pos += 1;
            self.signed()?
        } else if self.is_cmd(&["pm", "mp"]) {
            self.pos += 1;
            Expr::PlusMinus(
                Box::new(Expr::Num(BigRational::from_integer(BigInt::from(0)))),
                Box::new(self.signed()?),
            )
        } else {
            self.term()?
        };
        self.depth -= 1;
        Ok(e)
    }

    pub(super) fn starts_factor(&self) -> bool {
        match self.peek() {
            Some(Tok::Num(_) | Tok::Letter(_) | Tok::Name(_) | Tok::Begin(_)) => true,
            Some(Tok::Ch('(')) => true,
            Some(Tok::Ch('{')) => true,
            Some(Tok::Cmd(n)) => {
                matches!(
                    n.as_str(),
                    "frac"
                        | "dfrac"
                        | "tfrac"
                        | "cfrac"
                        | "sqrt"
                        | "{"
                        | "binom"
                        | "dbinom"
                        | "tbinom"
                        | "mathbb"
                        | "emptyset"
                        | "varnothing"
                        | "lfloor"
                        | "lceil"
                        | "lvert"
                        | "vert"
                        | "mid"
                ) || GREEK.contains(&n.as_str())
            }
            _ => false,
        }
    }

    /// Factors joined by `*`, `\cdot`, `\times`, `/`, `\div` or juxtaposition.
    pub(super) fn term(&mut self) -> Result<Expr> {
        let first = self.power()?;
        let mut factors = vec![(first, false)];
        loop {
            if self.is_ch('*') || self.is_cmd(&["cdot", "times", "ast"]) {
                self.pos += 1;
                factors.push((self.signed_power()?, false));
            } else if self.is_ch('/') || self.is_cmd(&["div"]) {
                self.pos += 1;
                factors.push((self.signed_power()?, true));
            } else if self.starts_factor() {
                let next = self.power()?;
                // Mixed number: an integer literal followed by a fraction of integer literals.
                if let ([(Expr::Num(whole), false)], true) =
                    (factors.as_slice(), is_literal_fraction(&next))
                    && whole.is_integer()
                    && self.is_term_end()
                {
                    let whole = Expr::Num(whole.clone());
                    return Ok(Expr::Sum(vec![whole, next]));
                }
                factors.push((next, false));
            } else {
                break;
            }
        }
        Ok(if factors.len() == 1 && !factors[0].1 {
            factors.swap_remove(0).0
        } else {
            Expr::Product(factors)
        })
    }

    pub(super) fn is_term_end(&self) -> bool {
        !self.starts_factor() && !self.is_ch('*') && !self.is_ch('/') && !self.is_ch('^')
    }

    pub(super) fn signed_power(&mut self) -> Result<Expr> {
        self.enter()?;
        let e = if self.is_ch('-') {
            self.pos += 1;
            Expr::Neg(Box::new(self.signed_power()?))
        } else if self.is_ch('+') {
            self.pos += 1;
            self.signed_power()?
        } else {
            self.power()?
        };
        self.depth -= 1;
        Ok(e)
    }

    /// `postfix (^ exponent)?`, right-associative.
    pub(super) fn power(&mut self) -> Result<Expr> {
        self.enter()?;
        let base = self.postfix()?;
        let e = if self.is_ch('^') {
            self.pos += 1;
            let exp = self.signed_power()?;
            let e = Expr::Pow(Box::new(base), Box::new(exp));
            self.postfix_ops(e)?
        } else {
            base
        };
        self.depth -= 1;
        Ok(e)
    }

    pub(super) fn postfix(&mut self) -> Result<Expr> {
        let e = self.primary()?;
        self.postfix_ops(e)
    }

    pub(super) fn postfix_ops(&mut self, mut e: Expr) -> Result<Expr> {
        loop {
            match self.peek() {
                Some(Tok::Ch('!')) => {
                    self.pos += 1;
                    e = Expr::Factorial(Box::new(e));
                }
                Some(Tok::Ch('%')) => {
                    self.pos += 1;
                    e = Expr::Percent(Box::new(e));
                }
                Some(Tok::Cmd(n)) if n == "%" || n == "percent" => {
                    self.pos += 1;
                    e = Expr::Percent(Box::new(e));
                }
                // A unit after a value (`5 \text{ cm}`) is dropped.
                Some(Tok::Text(_)) => self.pos += 1,
                _ => return Ok(e),
            }
        }
    }

    /// A braced group `{…}` or a single token, as TeX reads macro arguments.
    pub(super) fn argument(&mut self) -> Result<Expr> {
        if self.is_ch('{') {
            self.pos += 1;
            let e = self.list()?;
            self.expect_ch('}')?;
            return Ok(e);
        }
        match self.peek().cloned() {
            // `\frac12`: one digit per argument.
            Some(Tok::Num(n)) if n.len() > 1 && n.bytes().all(|b| b.is_ascii_digit()) => {
                let first = &n[..1];
                let rest = n[1..].to_string();
                self.toks[self.pos].0 = Tok::Num(rest);
                num_expr(first).ok_or_else(|| self.err("bad number"))
            }
            _ => self.power(),
        }
    }

    pub(super) fn primary(&mut self) -> Result<Expr> {
        self.enter()?;
        let e = self.primary_inner();
        self.depth -= 1;
        e
    }

    pub(super) fn primary_inner(&mut self) -> Result<Expr> {
        let Some(tok) = self.peek().cloned() else {
            return Err(self.err("unexpected end"));
        };
        self.pos += 1;
        match tok {
            Tok::Num(n) => num_expr(&n).ok_or_else(|| self.err("bad number")),
            Tok::Letter(c) => {
                let mut name = c.to_string();
                if self.is_ch('_') {
                    self.pos += 1;
                    name.push('_');
                    name.push_str(&self.subscript()?);
                } else if name == "e" {
                    return Ok(Expr::Const(Constant::E));
                } else if name == "i" {
                    return Ok(Expr::Const(Constant::I));
                }
                Ok(Expr::Var(name))
            }
            Tok::Name(n) => self.named(&n),
            Tok::Word(w) => Err(self.err(&format!("unknown word `{w}`"))),
            Tok::Text(t) => Ok(Expr::Text(normalize_text(&t))),
            Tok::Begin(env) => self.environment(&env),
            Tok::End(_) => Err(self.err("unexpected \\end")),
            Tok::Ch('(') | Tok::Ch('[') => {
                let open = if tok == Tok::Ch('(') { '(' } else { '[' };
                self.bracketed(open)
            }
            // A bare brace group only groups (it renders without braces): `{1,3}` is the
            // list `1, 3`, not the set `\{1,3\}`.
            Tok::Ch('{') => {
                let e = self.list()?;
                self.expect_ch('}')?;
                Ok(e)
            }
            Tok::Ch('|') => {
                let e = self.additive()?;
                self.expect_ch('|')?;
                Ok(Expr::Func(Func::Abs, Box::new(e)))
            }
            Tok::Cmd(c) => self.command(&c),
            Tok::Ch(c) => Err(self.err(&format!("unexpected `{c}`"))),
        }
    }

    pub(super) fn subscript(&mut self) -> Result<String> {
        let start = self.pos;
        if self.is_ch('{') {
            let mut depth = 0usize;
            let mut out = String::new();
            while let Some(t) = self.peek().cloned() {
                self.pos += 1;
                match t {
                    Tok::Ch('{') => depth += 1,
                    Tok::Ch('}') => {
                        depth -= 1;
                        if depth == 0 {
                            return Ok(out);
                        }
                    }
                    Tok::Num(n) => out.push_str(&n),
                    Tok::Letter(c) => out.push(c),
                    Tok::Name(n) | Tok::Word(n) | Tok::Cmd(n) => out.push_str(&n),
                    Tok::Ch(c) => out.push(c),
                    _ => {}
                }
            }
            self.pos = start;
            return Err(self.err("unbalanced subscript"));
        }
        match self.peek().cloned() {
            Some(Tok::Num(n)) => {
                self.pos += 1;
                Ok(n)
            }
            Some(Tok::Letter(c)) => {
                self.pos += 1;
                Ok(c.to_string())
            }
            _ => Err(self.err("bad subscript")),
        }
    }

    /// `(…)`, `[…]` and the mixed forms: grouping, tuples, intervals.
    pub(super) fn bracketed(&mut self, open: char) -> Result<Expr> {
        let inner = self.list()?;
        let close = match self.peek() {
            Some(Tok::Ch(c @ (')' | ']'))) => *c,
            _ => return Err(self.err("unbalanced bracket")),
        };
        self.pos += 1;
        Ok(match inner {
            Expr::List(mut items) if items.len() == 2 && (open == '[' || close == ']') => {
                let hi = items.pop().unwrap_or(Expr::Const(Constant::Infinity));
                let lo = items.pop().unwrap_or(Expr::Const(Constant::Infinity));
                Expr::Interval {
                    lo: Box::new(lo),
                    hi: Box::new(hi),
                    lo_closed: open == '[',
                    hi_closed: close == ']',
                }
            }
            Expr::List(items) => Expr::Tuple(items),
            e => e,
        })
    }
}

fn num_expr(text: &str) -> Option<Expr> {
    let value = parse_decimal(text)?;
    match text.split_once('.') {
        Some((_, places)) if !text.contains('e') => {
            Some(Expr::Decimal(value, u32::try_from(places.len()).ok()?))
        }
        _ => Some(Expr::Num(value)),
    }
}

fn is_literal_fraction(e: &Expr) -> bool {
    matches!(e, Expr::Product(f) if f.len() == 2
        && matches!(&f[0], (Expr::Num(n), false) if n.is_integer())
        && matches!(&f[1], (Expr::Num(d), true) if d.is_integer()))
}
