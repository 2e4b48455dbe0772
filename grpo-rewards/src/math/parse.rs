//! LaTeX and plain-math answers → an expression tree ([`Expr`]).
//!
//! One pass of a hand-written lexer, then recursive descent with a nesting cap
//! ([`MAX_DEPTH`]) and an input cap ([`MAX_ANSWER_LEN`]): linear in the input, never recursing
//! without bound. Sums and products are n-ary, so `1+1+…+1` is flat, not a deep tree.
//!
//! Accepted: integers (`1,000`, `1{,}000`), decimals, scientific notation, `\frac`/`\dfrac`/
//! `\tfrac` (also `\frac12`), `a/b`, mixed numbers (`3\frac{1}{2}` is 7/2), percentages,
//! `\sqrt[n]{x}`, powers (right-associative), `\pi`, `e`, `i`, `\infty`, implicit
//! multiplication, `\cdot`/`\times`/`\div`, functions (trig, inverse trig, hyperbolic, `\ln`,
//! `\log` (natural), `\log_b`, `\exp`, `|x|`), `\binom`, factorial, `\left`/`\right`, `±`,
//! sets `\{…\}`, intervals `(a, b]`, tuples, `pmatrix`/`bmatrix` matrices, unions `\cup`,
//! equations and inequalities (chains too), and `\text{…}`.

use num_bigint::BigInt;
use num_rational::BigRational;

use crate::error::{Result, RewardError};
use crate::math::number::parse_decimal;

/// The longest answer the parser reads, in bytes.
pub const MAX_ANSWER_LEN: usize = 4_096;

/// The deepest nesting the parser accepts.
pub const MAX_DEPTH: usize = 64;

/// A named constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Constant {
    /// π.
    Pi,
    /// Euler's number.
    E,
    /// The imaginary unit.
    I,
    /// +∞.
    Infinity,
}

/// A function of one argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Func {
    Sin,
    Cos,
    Tan,
    Cot,
    Sec,
    Csc,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    /// Natural logarithm (`\ln` and `\log` without a base).
    Ln,
    Exp,
    Abs,
    Floor,
    Ceil,
}

/// A relation between two expressions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum RelOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `\in`.
    In,
    /// `\approx`.
    Approx,
}

/// An answer's expression tree.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// An exact number literal.
    Num(BigRational),
    /// A named constant.
    Const(Constant),
    /// A free variable (`x`, `x_1`, `alpha`).
    Var(String),
    /// `-x`.
    Neg(Box<Expr>),
    /// `a + b + …` (subtraction is a [`Expr::Neg`] term).
    Sum(Vec<Expr>),
    /// `a · b / c …`: each factor with `true` when it divides.
    Product(Vec<(Expr, bool)>),
    /// `a ^ b`.
    Pow(Box<Expr>, Box<Expr>),
    /// `a ± b` (a two-element set once expanded).
    PlusMinus(Box<Expr>, Box<Expr>),
    /// A function applied to its argument.
    Func(Func, Box<Expr>),
    /// `log_base(x)`.
    Log(Box<Expr>, Box<Expr>),
    /// The `index`-th root of the radicand.
    Root(Box<Expr>, Box<Expr>),
    /// `x!`.
    Factorial(Box<Expr>),
    /// `x%`.
    Percent(Box<Expr>),
    /// `(a, b, …)`: ordered; a pair may also read as an open interval.
    Tuple(Vec<Expr>),
    /// `a, b, …` without brackets: a set or a tuple, whichever the reference is.
    List(Vec<Expr>),
    /// `\{a, b, …\}`: unordered.
    Set(Vec<Expr>),
    /// An interval with its endpoint kinds.
    Interval {
        /// Lower endpoint.
        lo: Box<Expr>,
        /// Upper endpoint.
        hi: Box<Expr>,
        /// `[` rather than `(`.
        lo_closed: bool,
        /// `]` rather than `)`.
        hi_closed: bool,
    },
    /// `A \cup B \cup …`.
    Union(Vec<Expr>),
    /// Rows of a matrix.
    Matrix(Vec<Vec<Expr>>),
    /// `t0 op0 t1 op1 t2 …` (`x = 5`, `1 < x \le 2`).
    Relation {
        /// The expressions, one more than the operators.
        terms: Vec<Expr>,
        /// The relations between consecutive terms.
        ops: Vec<RelOp>,
    },
    /// A plain-text answer, normalised (lowercase, single spaces).
    Text(String),
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(String),
    Letter(char),
    /// A known multi-letter name (`sqrt`, `sin`, `pi`, …), from plain text or a command.
    Name(String),
    /// An unknown word of three or more letters.
    Word(String),
    /// A backslash command not known as a name (`frac`, `{`, `\\`, `cdot`, …).
    Cmd(String),
    Begin(String),
    End(String),
    Text(String),
    Ch(char),
}

const NAMES: &[&str] = &[
    "sqrt", "sin", "cos", "tan", "cot", "sec", "csc", "arcsin", "arccos", "arctan", "asin", "acos",
    "atan", "sinh", "cosh", "tanh", "ln", "log", "exp", "pi", "inf", "infty", "infinity", "abs",
    "floor", "ceil",
];

const GREEK: &[&str] = &[
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "varepsilon",
    "zeta",
    "eta",
    "theta",
    "vartheta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "nu",
    "xi",
    "rho",
    "sigma",
    "tau",
    "upsilon",
    "phi",
    "varphi",
    "chi",
    "psi",
    "omega",
    "Gamma",
    "Delta",
    "Theta",
    "Lambda",
    "Xi",
    "Sigma",
    "Phi",
    "Psi",
    "Omega",
];

/// Commands that only change spacing or size: dropped by the lexer.
const IGNORED: &[&str] = &[
    "left",
    "right",
    "big",
    "Big",
    "bigg",
    "Bigg",
    "bigl",
    "bigr",
    "Bigl",
    "Bigr",
    "biggl",
    "biggr",
    "displaystyle",
    "textstyle",
    "limits",
    "quad",
    "qquad",
    ",",
    ";",
    "!",
    " ",
    ":",
    "mathrm",
    "mathbf",
    "mathit",
    "boldsymbol",
    "bf",
    "rm",
    "operatorname",
    "circ",
    "degree",
    "$",
    "displaylimits",
    "mathnormal",
    "bm",
];

fn lex(src: &str) -> Result<Vec<(Tok, usize)>> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < src.len() {
        let c = src[i..].chars().next().unwrap_or(' ');
        let start = i;
        if c.is_whitespace() {
            i += c.len_utf8();
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let (text, end) = lex_number(src, i);
            out.push((Tok::Num(text), start));
            i = end;
            continue;
        }
        if c.is_ascii_alphabetic() {
            let end = src[i..]
                .find(|ch: char| !ch.is_ascii_alphabetic())
                .map_or(src.len(), |e| i + e);
            let word = &src[i..end];
            if NAMES.contains(&word) {
                out.push((Tok::Name(word.to_string()), start));
            } else if word.len() >= 3 {
                out.push((Tok::Word(word.to_string()), start));
            } else {
                for (k, ch) in word.chars().enumerate() {
                    out.push((Tok::Letter(ch), start + k));
                }
            }
            i = end;
            continue;
        }
        if c == '\\' {
            let rest = &src[i + 1..];
            let name_len = rest
                .find(|ch: char| !ch.is_ascii_alphabetic())
                .unwrap_or(rest.len());
            let (name, end) = if name_len > 0 {
                (&rest[..name_len], i + 1 + name_len)
            } else if let Some(ch) = rest.chars().next() {
                (&rest[..ch.len_utf8()], i + 1 + ch.len_utf8())
            } else {
                return Err(RewardError::parse(src, i, "a lone backslash"));
            };
            i = end;
            match name {
                n if IGNORED.contains(&n) => {}
                "text" | "textbf" | "textit" | "textrm" | "mbox" | "textnormal" | "mathrm_text" => {
                    let (content, end) = braced_raw(src, i)?;
                    i = end;
                    let t = content.trim();
                    if !t.is_empty() {
                        out.push((Tok::Text(t.to_string()), start));
                    }
                }
                "begin" | "end" => {
                    let (content, end) = braced_raw(src, i)?;
                    i = end;
                    let env = content.trim().trim_end_matches('*').to_string();
                    out.push((
                        if name == "begin" {
                            Tok::Begin(env)
                        } else {
                            Tok::End(env)
                        },
                        start,
                    ));
                    if name == "begin" && env_is_array(content.trim()) {
                        // `\begin{array}{cc}`: skip the column spec.
                        if src[i..].trim_start().starts_with('{') {
                            let skip = src[i..].len() - src[i..].trim_start().len();
                            let (_, end) = braced_raw(src, i + skip)?;
                            i = end;
                        }
                    }
                }
                n if NAMES.contains(&n) => out.push((Tok::Name(n.to_string()), start)),
                n => out.push((Tok::Cmd(n.to_string()), start)),
            }
            continue;
        }
        i += c.len_utf8();
        let tok = match c {
            '≤' | '⩽' => Tok::Cmd("le".into()),
            '≥' | '⩾' => Tok::Cmd("ge".into()),
            '≠' => Tok::Cmd("ne".into()),
            '±' => Tok::Cmd("pm".into()),
            '∓' => Tok::Cmd("mp".into()),
            '×' => Tok::Cmd("times".into()),
            '÷' => Tok::Cmd("div".into()),
            '·' | '⋅' => Tok::Cmd("cdot".into()),
            '−' | '–' => Tok::Ch('-'),
            '√' => Tok::Name("sqrt".into()),
            'π' => Tok::Name("pi".into()),
            '∞' => Tok::Name("infty".into()),
            '∪' => Tok::Cmd("cup".into()),
            '∈' => Tok::Cmd("in".into()),
            '°' | '$' => continue,
            '<' | '>' | '!' if bytes.get(i) == Some(&b'=') => {
                i += 1;
                Tok::Cmd(
                    match c {
                        '<' => "le",
                        '>' => "ge",
                        _ => "ne",
                    }
                    .into(),
                )
            }
            '*' if bytes.get(i) == Some(&b'*') => {
                i += 1;
                Tok::Ch('^')
            }
            '^' if src[i..].starts_with("{\\circ}") => {
                i += "{\\circ}".len();
                continue;
            }
            '^' if src[i..].starts_with("\\circ") => {
                i += "\\circ".len();
                continue;
            }
            c if c.is_ascii() => Tok::Ch(c),
            _ => {
                return Err(RewardError::parse(
                    src,
                    start,
                    format!("unexpected character {c:?}"),
                ));
            }
        };
        out.push((tok, start));
    }
    Ok(out)
}

fn env_is_array(env: &str) -> bool {
    env == "array"
}

/// The content of the `{…}` group starting at (or after spaces from) `at`, and the byte after it.
fn braced_raw(src: &str, at: usize) -> Result<(&str, usize)> {
    let skip = src[at..].len() - src[at..].trim_start().len();
    let open = at + skip;
    if !src[open..].starts_with('{') {
        return Err(RewardError::parse(src, open, "expected `{`"));
    }
    let mut depth = 0usize;
    let bytes = src.as_bytes();
    let mut k = open;
    while k < bytes.len() {
        match bytes[k] {
            b'\\' => k += 1,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Ok((&src[open + 1..k], k + 1));
                }
            }
            _ => {}
        }
        k += 1;
    }
    Err(RewardError::parse(src, open, "unbalanced `{`"))
}

/// A number literal at `i`: digits with thousands separators (`1,000`, `1{,}000`, `1\,000`),
/// a decimal part and an exponent. Returns the digits without separators and the end.
fn lex_number(src: &str, mut i: usize) -> (String, usize) {
    let b = src.as_bytes();
    let digit = |k: usize| b.get(k).is_some_and(u8::is_ascii_digit);
    let mut text = String::new();
    let mut group = 0usize;
    let mut first_group = true;
    while i < b.len() {
        if digit(i) {
            text.push(b[i] as char);
            group += 1;
            i += 1;
            continue;
        }
        // Thousands separator: exactly three digits follow, then no digit.
        let sep_len = [",", "{,}", "\\,"]
            .iter()
            .find(|s| src[i..].starts_with(**s))
            .map(|s| s.len());
        if let Some(len) = sep_len {
            let j = i + len;
            if (1..=3).contains(&group)
                && (first_group || group == 3)
                && digit(j)
                && digit(j + 1)
                && digit(j + 2)
                && !digit(j + 3)
                && !text.contains('.')
            {
                first_group = false;
                group = 0;
                i = j;
                continue;
            }
        }
        break;
    }
    if b.get(i) == Some(&b'.') && digit(i + 1) {
        text.push('.');
        i += 1;
        while digit(i) {
            text.push(b[i] as char);
            i += 1;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if digit(j) {
            let start = i;
            while digit(j) {
                j += 1;
            }
            text.push('e');
            text.push_str(src[start + 1..j].trim_start_matches('+'));
            i = j;
        }
    }
    (text, i)
}

struct Parser<'a> {
    src: &'a str,
    toks: Vec<(Tok, usize)>,
    pos: usize,
    depth: usize,
}

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
    let toks = lex(src)?;
    if toks.is_empty() {
        return Err(RewardError::parse(src, 0, "no math in the answer"));
    }
    if let [(Tok::Text(t), _)] = toks.as_slice() {
        return Ok(Expr::Text(normalize_text(t)));
    }
    let mut p = Parser {
        src,
        toks,
        pos: 0,
        depth: 0,
    };
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

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|(t, _)| t)
    }

    fn err(&self, reason: &str) -> RewardError {
        let at = self.toks.get(self.pos).map_or(self.src.len(), |(_, p)| *p);
        RewardError::parse(self.src, at, reason)
    }

    fn is_ch(&self, c: char) -> bool {
        self.peek() == Some(&Tok::Ch(c))
    }

    fn is_cmd(&self, names: &[&str]) -> bool {
        matches!(self.peek(), Some(Tok::Cmd(n)) if names.contains(&n.as_str()))
    }

    fn expect_ch(&mut self, c: char) -> Result<()> {
        if self.is_ch(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.err(&format!("expected `{c}`")))
        }
    }

    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(RewardError::TooDeep { max: MAX_DEPTH });
        }
        Ok(())
    }

    /// `union (, union)*` → a list when there is more than one item.
    fn list(&mut self) -> Result<Expr> {
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

    fn union(&mut self) -> Result<Expr> {
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

    fn rel_op(&self) -> Option<RelOp> {
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

    fn relation(&mut self) -> Result<Expr> {
        let first = self.additive()?;
        let mut terms = vec![first];
        let mut ops = Vec::new();
        while let Some(op) = self.rel_op() {
            self.pos += 1;
            ops.push(op);
            terms.push(self.additive()?);
        }
        Ok(if ops.is_empty() {
            terms.swap_remove(0)
        } else {
            Expr::Relation { terms, ops }
        })
    }

    fn additive(&mut self) -> Result<Expr> {
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
    fn signed(&mut self) -> Result<Expr> {
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

    fn starts_factor(&self) -> bool {
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
    fn term(&mut self) -> Result<Expr> {
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

    fn is_term_end(&self) -> bool {
        !self.starts_factor() && !self.is_ch('*') && !self.is_ch('/') && !self.is_ch('^')
    }

    fn signed_power(&mut self) -> Result<Expr> {
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
    fn power(&mut self) -> Result<Expr> {
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

    fn postfix(&mut self) -> Result<Expr> {
        let e = self.primary()?;
        self.postfix_ops(e)
    }

    fn postfix_ops(&mut self, mut e: Expr) -> Result<Expr> {
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
    fn argument(&mut self) -> Result<Expr> {
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

    fn primary(&mut self) -> Result<Expr> {
        self.enter()?;
        let e = self.primary_inner();
        self.depth -= 1;
        e
    }

    fn primary_inner(&mut self) -> Result<Expr> {
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
            Tok::Ch('{') => {
                let e = self.list()?;
                self.expect_ch('}')?;
                Ok(match e {
                    Expr::List(items) => Expr::Set(items),
                    e => e,
                })
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

    fn subscript(&mut self) -> Result<String> {
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
    fn bracketed(&mut self, open: char) -> Result<Expr> {
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

    fn named(&mut self, n: &str) -> Result<Expr> {
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
    fn function_power(&mut self) -> Result<Option<Expr>> {
        if self.is_ch('^') {
            self.pos += 1;
            return Ok(Some(self.argument()?));
        }
        Ok(None)
    }

    /// A function's argument: a parenthesised group, or (`\sin 2x`) a signed power followed
    /// by juxtaposed numbers, letters and Greek letters, stopping at the next function.
    fn function_argument(&mut self) -> Result<Expr> {
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

    fn command(&mut self, c: &str) -> Result<Expr> {
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
            g if GREEK.contains(&g) => Ok(Expr::Var(g.to_string())),
            other => Err(self.err(&format!("unsupported command \\{other}"))),
        }
    }

    fn environment(&mut self, env: &str) -> Result<Expr> {
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

fn num_expr(text: &str) -> Option<Expr> {
    parse_decimal(text).map(Expr::Num)
}

fn is_literal_fraction(e: &Expr) -> bool {
    matches!(e, Expr::Product(f) if f.len() == 2
        && matches!(&f[0], (Expr::Num(n), false) if n.is_integer())
        && matches!(&f[1], (Expr::Num(d), true) if d.is_integer()))
}

impl Expr {
    /// Collects the names of free variables into `out`.
    pub fn variables(&self, out: &mut std::collections::BTreeSet<String>) {
        match self {
            Expr::Var(v) => {
                out.insert(v.clone());
            }
            Expr::Num(_) | Expr::Const(_) | Expr::Text(_) => {}
            Expr::Neg(a) | Expr::Func(_, a) | Expr::Factorial(a) | Expr::Percent(a) => {
                a.variables(out)
            }
            Expr::Pow(a, b) | Expr::PlusMinus(a, b) | Expr::Log(a, b) | Expr::Root(a, b) => {
                a.variables(out);
                b.variables(out);
            }
            Expr::Sum(v) | Expr::Tuple(v) | Expr::List(v) | Expr::Set(v) | Expr::Union(v) => {
                v.iter().for_each(|e| e.variables(out));
            }
            Expr::Relation { terms, .. } => terms.iter().for_each(|e| e.variables(out)),
            Expr::Product(v) => v.iter().for_each(|(e, _)| e.variables(out)),
            Expr::Interval { lo, hi, .. } => {
                lo.variables(out);
                hi.variables(out);
            }
            Expr::Matrix(rows) => rows.iter().flatten().for_each(|e| e.variables(out)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(v: i64) -> Expr {
        Expr::Num(BigRational::from_integer(v.into()))
    }

    #[test]
    fn thousands_separators_and_decimals() {
        assert_eq!(parse_answer("1,000,000").unwrap(), n(1_000_000));
        assert_eq!(parse_answer("1{,}234").unwrap(), n(1234));
        assert!(matches!(parse_answer("1,23").unwrap(), Expr::List(_)));
        assert!(matches!(parse_answer("12,345,67").unwrap(), Expr::List(_)));
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
