//! Matrix arithmetic in an answer (`A + B`, `I \cdot A`, `2A`, `A^2`) folded into one matrix of
//! entry expressions, so that entries compare with the same rules as scalars.
//!
//! Bounded: at most [`MAX_DIM`] rows and columns, powers up to [`MAX_POWER`], and entries that
//! evaluate to exact rationals are replaced by their value after every operation, so numeric
//! matrices never grow as trees.

use num_traits::ToPrimitive;

use crate::math::eval::eval;
use crate::math::number::Value;
use crate::math::parse::Expr;

/// The largest number of rows or columns folded.
pub const MAX_DIM: usize = 16;

/// The largest integer power of a matrix folded.
pub const MAX_POWER: u32 = 8;

/// The deepest expression folded.
const MAX_DEPTH: usize = 32;

/// The largest entry (in tree nodes) a fold may build: symbolic entries grow with every
/// product, so a fold that would pass this gives up instead.
pub const MAX_ENTRY_NODES: usize = 2_000;

type Rows = Vec<Vec<Expr>>;

enum Folded {
    Scalar(Expr),
    Matrix(Rows),
}

/// The matrix an expression with matrix arithmetic evaluates to; `None` when the expression
/// is a plain matrix, has no matrix in it, or the shapes do not agree.
pub fn fold(e: &Expr) -> Option<Rows> {
    if !matches!(
        e,
        Expr::Sum(_) | Expr::Product(_) | Expr::Neg(_) | Expr::Pow(..)
    ) || !has_matrix(e, 0)
    {
        return None;
    }
    match fold_at(e, 0)? {
        Folded::Matrix(rows) => Some(rows),
        Folded::Scalar(_) => None,
    }
}

fn has_matrix(e: &Expr, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match e {
        Expr::Matrix(_) => true,
        Expr::Neg(a) => has_matrix(a, depth + 1),
        Expr::Pow(a, _) => has_matrix(a, depth + 1),
        Expr::Sum(v) => v.iter().any(|x| has_matrix(x, depth + 1)),
        Expr::Product(v) => v.iter().any(|(x, _)| has_matrix(x, depth + 1)),
        _ => false,
    }
}

/// An entry, replaced by its value when that is an exact rational.
fn simplified(e: Expr) -> Expr {
    match eval(&e, &[]) {
        Ok(Value::Exact(q)) => Expr::Num(q),
        _ => e,
    }
}

/// The size of an entry in nodes, counted up to [`MAX_ENTRY_NODES`] + 1.
fn nodes(e: &Expr) -> usize {
    fn count(e: &Expr, budget: &mut usize) {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        match e {
            Expr::Neg(a) | Expr::Func(_, a) | Expr::Factorial(a) | Expr::Percent(a) => {
                count(a, budget)
            }
            Expr::Pow(a, b) | Expr::PlusMinus(a, b) | Expr::Log(a, b) | Expr::Root(a, b) => {
                count(a, budget);
                count(b, budget);
            }
            Expr::Sum(v) => v.iter().for_each(|x| count(x, budget)),
            Expr::Product(v) => v.iter().for_each(|(x, _)| count(x, budget)),
            _ => {}
        }
    }
    let mut budget = MAX_ENTRY_NODES + 1;
    count(e, &mut budget);
    MAX_ENTRY_NODES + 1 - budget
}

fn largest_entry(rows: &Rows) -> usize {
    rows.iter().flatten().map(nodes).max().unwrap_or(0)
}

fn shape(rows: &Rows) -> Option<(usize, usize)> {
    let cols = rows.first()?.len();
    (cols > 0 && rows.len() <= MAX_DIM && cols <= MAX_DIM && rows.iter().all(|r| r.len() == cols))
        .then_some((rows.len(), cols))
}

fn map(rows: Rows, f: impl Fn(Expr) -> Expr) -> Rows {
    rows.into_iter()
        .map(|r| r.into_iter().map(|x| simplified(f(x))).collect())
        .collect()
}

fn matmul(a: &Rows, b: &Rows) -> Option<Rows> {
    let (n, k) = shape(a)?;
    let (k2, m) = shape(b)?;
    // Each entry of the product is a sum of `k` products of two entries: refuse before
    // building one past the cap.
    if k != k2 || k * (largest_entry(a) + largest_entry(b) + 1) + 1 > MAX_ENTRY_NODES {
        return None;
    }
    Some(
        (0..n)
            .map(|i| {
                (0..m)
                    .map(|j| {
                        simplified(Expr::Sum(
                            (0..k)
                                .map(|t| {
                                    Expr::Product(vec![
                                        (a[i][t].clone(), false),
                                        (b[t][j].clone(), false),
                                    ])
                                })
                                .collect(),
                        ))
                    })
                    .collect()
            })
            .collect(),
    )
}

fn fold_at(e: &Expr, depth: usize) -> Option<Folded> {
    if depth > MAX_DEPTH {
        return None;
    }
    if !has_matrix(e, depth) {
        return Some(Folded::Scalar(e.clone()));
    }
    match e {
        Expr::Matrix(rows) => {
            shape(rows)?;
            Some(Folded::Matrix(rows.clone()))
        }
        Expr::Neg(a) => match fold_at(a, depth + 1)? {
            Folded::Matrix(m) => Some(Folded::Matrix(map(m, |x| Expr::Neg(Box::new(x))))),
            Folded::Scalar(s) => Some(Folded::Scalar(Expr::Neg(Box::new(s)))),
        },
        Expr::Sum(items) => {
            let mut acc: Option<Rows> = None;
            for it in items {
                let Folded::Matrix(m) = fold_at(it, depth + 1)? else {
                    return None; // a scalar plus a matrix is not defined
                };
                acc = Some(match acc {
                    None => m,
                    Some(a) => {
                        if shape(&a)? != shape(&m)? {
                            return None;
                        }
                        a.into_iter()
                            .zip(m)
                            .map(|(r, s)| {
                                r.into_iter()
                                    .zip(s)
                                    .map(|(x, y)| simplified(Expr::Sum(vec![x, y])))
                                    .collect()
                            })
                            .collect()
                    }
                });
            }
            acc.map(Folded::Matrix)
        }
        Expr::Product(factors) => {
            let mut acc =
                Folded::Scalar(Expr::Num(num_rational::BigRational::from_integer(1.into())));
            for (f, div) in factors {
                let next = fold_at(f, depth + 1)?;
                acc = match (acc, next, div) {
                    (Folded::Scalar(a), Folded::Scalar(b), _) => {
                        Folded::Scalar(Expr::Product(vec![(a, false), (b, *div)]))
                    }
                    (Folded::Scalar(s), Folded::Matrix(m), false) => Folded::Matrix(map(m, |x| {
                        Expr::Product(vec![(s.clone(), false), (x, false)])
                    })),
                    (Folded::Matrix(m), Folded::Scalar(s), div) => Folded::Matrix(map(m, |x| {
                        Expr::Product(vec![(x, false), (s.clone(), *div)])
                    })),
                    (Folded::Matrix(a), Folded::Matrix(b), false) => {
                        Folded::Matrix(matmul(&a, &b)?)
                    }
                    (_, Folded::Matrix(_), true) => return None,
                };
            }
            Some(acc)
        }
        Expr::Pow(base, exp) => {
            let Folded::Matrix(m) = fold_at(base, depth + 1)? else {
                return None;
            };
            let (r, c) = shape(&m)?;
            let k = match eval(exp, &[]) {
                Ok(Value::Exact(q)) if q.is_integer() => q.to_integer().to_u32()?,
                _ => return None,
            };
            if r != c || k == 0 || k > MAX_POWER {
                return None;
            }
            let mut acc = m.clone();
            for _ in 1..k {
                acc = matmul(&acc, &m)?;
            }
            Some(Folded::Matrix(acc))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::parse::parse_answer;

    fn folded(s: &str) -> Option<Rows> {
        fold(&parse_answer(s).unwrap())
    }

    fn ints(rows: &[&[i64]]) -> Rows {
        rows.iter()
            .map(|r| {
                r.iter()
                    .map(|&x| Expr::Num(num_rational::BigRational::from_integer(x.into())))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn sums_products_powers() {
        let a = r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}";
        let i = r"\begin{pmatrix} 1 & 0 \\ 0 & 1 \end{pmatrix}";
        assert_eq!(
            folded(&format!("{a} + {i}")),
            Some(ints(&[&[2, 2], &[3, 5]]))
        );
        assert_eq!(
            folded(&format!("{a} - {i}")),
            Some(ints(&[&[0, 2], &[3, 3]]))
        );
        assert_eq!(folded(&format!("{i} {a}")), Some(ints(&[&[1, 2], &[3, 4]])));
        assert_eq!(
            folded(&format!("{a}^2")),
            Some(ints(&[&[7, 10], &[15, 22]]))
        );
        assert_eq!(folded(&format!("2{a}")), Some(ints(&[&[2, 4], &[6, 8]])));
        assert_eq!(
            folded(&format!("-{a}")),
            Some(ints(&[&[-1, -2], &[-3, -4]]))
        );
    }

    #[test]
    fn undefined_shapes_are_refused() {
        let a = r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}";
        let row = r"\begin{pmatrix} 1 & 2 \end{pmatrix}";
        assert_eq!(folded(&format!("{a} + {row}")), None);
        assert_eq!(folded(&format!("{a} + 1")), None);
        assert_eq!(folded(&format!("{a} / {a}")), None);
        assert_eq!(folded(&format!("{a}^{{100}}")), None);
        assert_eq!(folded(a), None);
        assert_eq!(folded("1 + 2"), None);
    }

    #[test]
    fn symbolic_products_stop_at_the_entry_cap() {
        let row = vec!["x"; 16].join(" & ");
        let m = format!(
            "\\begin{{pmatrix}} {} \\end{{pmatrix}}",
            vec![row; 16].join(" \\\\ ")
        );
        let start = std::time::Instant::now();
        assert_eq!(folded(&format!("{m}^8")), None);
        assert_eq!(folded(&format!("{m}^4")), None);
        assert!(folded(&format!("{m}^3")).is_some());
        assert!(folded(&format!("{m}{m}")).is_some());
        assert!(start.elapsed().as_secs() < 5);
    }
}
