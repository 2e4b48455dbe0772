//! The expression tree the parser builds and the checker compares.

use num_rational::BigRational;

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
#[allow(
    missing_docs,
    reason = "the variants are the functions and relations they name"
)]
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
#[allow(
    missing_docs,
    reason = "the variants are the functions and relations they name"
)]
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

/// A big operator over an index (`\sum`, `\prod`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BigOp {
    /// `\sum`.
    Sum,
    /// `\prod`.
    Product,
}

/// An answer's expression tree.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// An exact number literal (an integer, a fraction's parts, scientific notation).
    Num(BigRational),
    /// A decimal literal with the number of places written (`0.4286` has 4): the value is
    /// exact, the places say which rounding of an exact reference it may stand for.
    Decimal(BigRational, u32),
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
    /// `\sum_{index=lo}^{hi} body` or `\prod…`: the index is bound in the body.
    Big {
        /// Sum or product.
        op: BigOp,
        /// The bound variable.
        index: String,
        /// The first value of the index.
        lo: Box<Expr>,
        /// The last value of the index.
        hi: Box<Expr>,
        /// What is summed or multiplied.
        body: Box<Expr>,
    },
    /// `x%`.
    Percent(Box<Expr>),
    /// `(a, b, …)`: ordered; a pair may also read as an open interval.
    Tuple(Vec<Expr>),
    /// `a, b, …` without brackets: a set or a tuple, whichever the reference is.
    List(Vec<Expr>),
    /// `a : b : …`, a ratio or a time (`5:12`, `10:30`): ordered, compared term by term.
    Ratio(Vec<Expr>),
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

impl Expr {
    /// Collects the names of free variables into `out`.
    pub fn variables(&self, out: &mut std::collections::BTreeSet<String>) {
        match self {
            Expr::Var(v) => {
                out.insert(v.clone());
            }
            Expr::Num(_) | Expr::Decimal(..) | Expr::Const(_) | Expr::Text(_) => {}
            Expr::Neg(a) | Expr::Func(_, a) | Expr::Factorial(a) | Expr::Percent(a) => {
                a.variables(out)
            }
            Expr::Pow(a, b) | Expr::PlusMinus(a, b) | Expr::Log(a, b) | Expr::Root(a, b) => {
                a.variables(out);
                b.variables(out);
            }
            Expr::Sum(v)
            | Expr::Tuple(v)
            | Expr::List(v)
            | Expr::Set(v)
            | Expr::Union(v)
            | Expr::Ratio(v) => {
                v.iter().for_each(|e| e.variables(out));
            }
            Expr::Relation { terms, .. } => terms.iter().for_each(|e| e.variables(out)),
            Expr::Product(v) => v.iter().for_each(|(e, _)| e.variables(out)),
            Expr::Interval { lo, hi, .. } => {
                lo.variables(out);
                hi.variables(out);
            }
            Expr::Matrix(rows) => rows.iter().flatten().for_each(|e| e.variables(out)),
            Expr::Big {
                index,
                lo,
                hi,
                body,
                ..
            } => {
                lo.variables(out);
                hi.variables(out);
                let mut inner = std::collections::BTreeSet::new();
                body.variables(&mut inner);
                inner.remove(index);
                out.extend(inner);
            }
        }
    }

    /// The same tree with each variable named in `map` (`from`, `to`) renamed.
    pub fn rename(&self, map: &[(String, String)]) -> Expr {
        let r = |e: &Expr| Box::new(e.rename(map));
        let all = |v: &[Expr]| v.iter().map(|e| e.rename(map)).collect::<Vec<_>>();
        match self {
            Expr::Var(v) => Expr::Var(
                map.iter()
                    .find(|(from, _)| from == v)
                    .map_or_else(|| v.clone(), |(_, to)| to.clone()),
            ),
            Expr::Num(_) | Expr::Decimal(..) | Expr::Const(_) | Expr::Text(_) => self.clone(),
            Expr::Neg(a) => Expr::Neg(r(a)),
            Expr::Func(f, a) => Expr::Func(*f, r(a)),
            Expr::Factorial(a) => Expr::Factorial(r(a)),
            Expr::Percent(a) => Expr::Percent(r(a)),
            Expr::Pow(a, b) => Expr::Pow(r(a), r(b)),
            Expr::PlusMinus(a, b) => Expr::PlusMinus(r(a), r(b)),
            Expr::Log(a, b) => Expr::Log(r(a), r(b)),
            Expr::Root(a, b) => Expr::Root(r(a), r(b)),
            Expr::Sum(v) => Expr::Sum(all(v)),
            Expr::Tuple(v) => Expr::Tuple(all(v)),
            Expr::List(v) => Expr::List(all(v)),
            Expr::Set(v) => Expr::Set(all(v)),
            Expr::Union(v) => Expr::Union(all(v)),
            Expr::Ratio(v) => Expr::Ratio(all(v)),
            Expr::Product(v) => Expr::Product(v.iter().map(|(e, d)| (e.rename(map), *d)).collect()),
            Expr::Interval {
                lo,
                hi,
                lo_closed,
                hi_closed,
            } => Expr::Interval {
                lo: r(lo),
                hi: r(hi),
                lo_closed: *lo_closed,
                hi_closed: *hi_closed,
            },
            Expr::Matrix(rows) => Expr::Matrix(rows.iter().map(|row| all(row)).collect()),
            Expr::Relation { terms, ops } => Expr::Relation {
                terms: all(terms),
                ops: ops.clone(),
            },
            Expr::Big {
                op,
                index,
                lo,
                hi,
                body,
            } => Expr::Big {
                op: *op,
                index: index.clone(),
                lo: r(lo),
                hi: r(hi),
                // The bound index keeps its name.
                body: Box::new(
                    body.rename(
                        &map.iter()
                            .filter(|(from, _)| from != index)
                            .cloned()
                            .collect::<Vec<_>>(),
                    ),
                ),
            },
        }
    }
}
