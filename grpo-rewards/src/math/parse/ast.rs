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
