//! The countdown rules on expressions: which numbers an answer may use, and a solver.

use std::collections::HashSet;

use num_bigint::BigInt;
use num_rational::BigRational;

use super::{Expr, Op};

/// How the literals of an expression fit the numbers of a countdown puzzle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Usage {
    /// Every literal is one of the numbers, each used no more often than given (and, when all
    /// must be used, every number used).
    Valid,
    /// A literal that is not among the numbers (or is used more often than given).
    NotAvailable(i64),
    /// Numbers left unused although all must be used.
    Unused(Vec<i64>),
}

/// Checks the literals of an expression against the puzzle's numbers (a multiset).
pub fn check_usage(literals: &[i64], numbers: &[i64], use_all: bool) -> Usage {
    let mut left: Vec<i64> = numbers.to_vec();
    for &lit in literals {
        match left.iter().position(|&n| n == lit) {
            Some(i) => {
                left.swap_remove(i);
            }
            None => return Usage::NotAvailable(lit),
        }
    }
    if use_all && !left.is_empty() {
        left.sort_unstable();
        return Usage::Unused(left);
    }
    Usage::Valid
}

/// Finds an expression over `numbers` (each exactly once when `use_all`, else at most once)
/// that evaluates exactly to `target`, by exhaustive search over pairwise combinations with
/// memoised states. Returns `None` when no expression exists. Practical up to six numbers.
pub fn solve(numbers: &[i64], target: i64, use_all: bool) -> Option<String> {
    let target = BigRational::from_integer(BigInt::from(target));
    let items: Vec<(BigRational, Expr)> = numbers
        .iter()
        .map(|&n| {
            let leaf = if n < 0 {
                Expr::Neg(Box::new(Expr::Num(
                    BigInt::from(n).magnitude().clone().into(),
                )))
            } else {
                Expr::Num(BigInt::from(n))
            };
            (BigRational::from_integer(BigInt::from(n)), leaf)
        })
        .collect();
    let mut seen = HashSet::new();
    search(items, &target, use_all, &mut seen).map(|e| e.to_string())
}

fn search(
    items: Vec<(BigRational, Expr)>,
    target: &BigRational,
    use_all: bool,
    seen: &mut HashSet<Vec<BigRational>>,
) -> Option<Expr> {
    if use_all {
        if items.len() == 1 && &items[0].0 == target {
            return items.into_iter().next().map(|(_, e)| e);
        }
    } else if let Some((_, e)) = items.iter().find(|(v, _)| v == target) {
        return Some(e.clone());
    }
    if items.len() < 2 {
        return None;
    }
    let mut key: Vec<BigRational> = items.iter().map(|(v, _)| v.clone()).collect();
    key.sort();
    if !seen.insert(key) {
        return None;
    }
    for i in 0..items.len() {
        for j in 0..items.len() {
            if i == j {
                continue;
            }
            let (a, ea) = &items[i];
            let (b, eb) = &items[j];
            for op in [Op::Add, Op::Sub, Op::Mul, Op::Div] {
                // + and * are symmetric: try each unordered pair once.
                if matches!(op, Op::Add | Op::Mul) && i > j {
                    continue;
                }
                let Some(value) = op.apply(a, b) else {
                    continue;
                };
                let mut next: Vec<(BigRational, Expr)> = items
                    .iter()
                    .enumerate()
                    .filter(|&(k, _)| k != i && k != j)
                    .map(|(_, it)| it.clone())
                    .collect();
                next.push((
                    value,
                    Expr::Bin(op, Box::new(ea.clone()), Box::new(eb.clone())),
                ));
                if let Some(found) = search(next, target, use_all, seen) {
                    return Some(found);
                }
            }
        }
    }
    None
}
