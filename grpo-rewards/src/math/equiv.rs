//! Whether two parsed answers are equivalent.
//!
//! Rules, in the order they apply:
//! 1. **Text** answers match text answers after normalisation (case, spaces, end punctuation);
//!    a one-letter text (`\text{(B)}`) matches the same letter written as math (`B`).
//! 2. **Matrix arithmetic** (`A + B`, `I A`, `2A`, `A^2`) is folded into one matrix first
//!    ([`crate::math::matrix`]).
//! 3. **Labelled answers and chains** ([`crate::math::relation`]): when one side is a relation
//!    and the other is not, the relation's value is compared: `v` in `x = v`, `v = x`,
//!    `x \in S`, `f(x) = v`, `|CD| = v`, `(m,n) = (2,9)`, `P:Q = 5:12`; the last value of a
//!    chain `x = 2+3 = 5` (also through `\approx`, where the exact value before `\approx` is
//!    tried too). Two relations match term by term (either orientation), as equal intervals,
//!    or when `lhs - rhs` of one is a constant non-zero multiple of the other's, a negative
//!    multiple mirroring an inequality (`-y > -4` is `y < 4`). Inequalities on one label
//!    (`x > 3`, `-1 \le x \le 4`, `0 < g(t) < 2`) match the equal interval.
//! 4. **Collections**: `±` expands to its alternatives (`\frac{-1 \pm \sqrt5}{2}`); sets are
//!    compared without order (each element matches a distinct element of the other side),
//!    tuples in order, a bare list `1, 2` either way (as the reference has it, order-free when
//!    the reference is also a bare list); a tuple never matches a set (`(4,2) ≠ \{2,4\}`); a
//!    one-element collection matches its element; intervals match when both endpoints and
//!    both endpoint kinds match; a pair `(a, b)` matches the open interval `(a, b)`; unions of
//!    intervals compare as sets; ratios and times (`5:12`, `10:30`) term by term; matrices by
//!    shape and element, and a one-row or one-column matrix matches a tuple.
//! 5. **Values** without free variables are evaluated: when both are exact rationals they
//!    must be *exactly* equal (so `1/2^99 ≠ 1/2^98` and `1/2004! ≠ 1/2006!`); when either is
//!    irrational or complex, they must agree within a relative tolerance (default 1e-9) or an
//!    absolute 1e-12. Values too large to hold exactly (`10^{10^{10}}`) or undefined compare
//!    structurally, sums and products up to the order of their terms.
//! 6. **Decimals for exact values** ([`crate::math::rounding`]): a decimal prediction written
//!    to `k` places matches a non-terminating rational or an irrational reference that
//!    rounds or truncates to exactly those digits (`0.4286` and `0.4285` for `3/7`), with at
//!    least three significant digits; never for an integer or terminating-decimal reference.
//! 7. **Expressions with free variables** are evaluated at several fixed pseudo-random
//!    rational points, exactly where the expression allows (polynomials and rational
//!    functions stay exact), and must agree at every point where both are defined (at least
//!    two such points; otherwise the trees must be identical up to the order of terms).
//! 8. **Percentages**: `50\%` matches both `50` and `0.5`.
//! 9. **Variable names** (only with [`EquivConfig::rename_variables`]): when the answers use
//!    different variables, the prediction's names not in the reference are renamed to the
//!    reference's unused names (every assignment, up to [`MAX_RENAMED`] names), so `g(t)`
//!    matches `g(s)`.
//! 10. **Evaluated numbers** (only with [`EquivConfig::evaluated_numbers`], for packs that ask
//!     to compute): when the reference is a number written out, a prediction without free
//!     variables must be one too (an integer, a decimal, a fraction in lowest terms, each
//!     possibly negated or a percentage): `60 - 1 + 32`, `2^3` and `\frac{182}{2}` do not
//!     answer `What is …?` even where they evaluate to the reference.

use std::collections::BTreeSet;

use crate::math::eval::eval;
use crate::math::number::values_equal;
use crate::math::parse::{Expr, RelOp};
use crate::math::plusminus::{contains_pm, expand_pm};
use crate::math::relation::{
    answer_side, as_interval, exact_before_approx, relations_equal, sample_point,
};
use crate::math::{matrix, rounding};

/// Tolerances, sampling and options for the equivalence check.
#[derive(Debug, Clone, PartialEq)]
pub struct EquivConfig {
    /// Relative tolerance when a value is irrational or complex.
    pub rel_tol: f64,
    /// Absolute tolerance when a value is irrational or complex.
    pub abs_tol: f64,
    /// Number of points at which expressions with free variables are compared.
    pub points: usize,
    /// Whether answers that differ only in variable names match (`g(s)` and `g(t)`); off by
    /// default, because a reward should see `x` where the problem asks for `x`.
    pub rename_variables: bool,
    /// Whether a reference that is a number accepts only a number written out, not
    /// arithmetic that evaluates to it (rule 10); off by default.
    pub evaluated_numbers: bool,
}

impl Default for EquivConfig {
    fn default() -> Self {
        EquivConfig {
            rel_tol: 1e-9,
            abs_tol: 1e-12,
            points: 5,
            rename_variables: false,
            evaluated_numbers: false,
        }
    }
}

/// The largest collection compared element by element.
const MAX_ITEMS: usize = 256;
/// The deepest nesting of collections compared.
const MAX_NESTING: usize = 16;
/// The most variable names renamed under [`EquivConfig::rename_variables`] (4! assignments).
pub const MAX_RENAMED: usize = 4;

/// Whether `pred` is equivalent to `gold` under the rules of the module docs.
pub fn equivalent(gold: &Expr, pred: &Expr, cfg: &EquivConfig) -> bool {
    equal(gold, pred, cfg, 0) || (cfg.rename_variables && equal_renamed(gold, pred, cfg))
}

/// Rule 9: the prediction with its own variable names mapped onto the reference's.
fn equal_renamed(gold: &Expr, pred: &Expr, cfg: &EquivConfig) -> bool {
    let (mut gv, mut pv) = (BTreeSet::new(), BTreeSet::new());
    gold.variables(&mut gv);
    pred.variables(&mut pv);
    let only_g: Vec<String> = gv.difference(&pv).cloned().collect();
    let only_p: Vec<String> = pv.difference(&gv).cloned().collect();
    if only_p.is_empty() || only_g.len() != only_p.len() || only_p.len() > MAX_RENAMED {
        return false;
    }
    let mut order: Vec<usize> = (0..only_g.len()).collect();
    loop {
        let map: Vec<(String, String)> = only_p
            .iter()
            .zip(&order)
            .map(|(from, &k)| (from.clone(), only_g[k].clone()))
            .collect();
        if equal(gold, &pred.rename(&map), cfg, 0) {
            return true;
        }
        if !next_permutation(&mut order) {
            return false;
        }
    }
}

/// Steps `v` to its next permutation in lexicographic order; `false` after the last.
fn next_permutation(v: &mut [usize]) -> bool {
    let Some(i) = (1..v.len()).rev().find(|&i| v[i - 1] < v[i]) else {
        return false;
    };
    let Some(j) = (i..v.len()).rev().find(|&j| v[j] > v[i - 1]) else {
        return false;
    };
    v.swap(i - 1, j);
    v[i..].reverse();
    true
}

pub(crate) fn equal(g: &Expr, p: &Expr, cfg: &EquivConfig, depth: usize) -> bool {
    if depth > MAX_NESTING {
        return false;
    }
    if g == p {
        return true;
    }
    match (g, p) {
        (Expr::Text(a), Expr::Text(b)) => return a == b,
        (Expr::Text(t), Expr::Var(v)) | (Expr::Var(v), Expr::Text(t)) => {
            return t.trim_matches(['(', ')']) == v.to_lowercase();
        }
        (Expr::Text(_), _) | (_, Expr::Text(_)) => return false,
        (Expr::Relation { .. }, Expr::Relation { .. }) => return relations_equal(g, p, cfg),
        _ => {}
    }
    // Matrix arithmetic, folded.
    if let Some(m) = matrix::fold(p) {
        return equal(g, &Expr::Matrix(m), cfg, depth + 1);
    }
    if let Some(m) = matrix::fold(g) {
        return equal(&Expr::Matrix(m), p, cfg, depth + 1);
    }
    // `x = 5` answers `5`; a chain's last value, or its exact value before `\approx`.
    if !matches!(g, Expr::Relation { .. }) && matches!(p, Expr::Relation { .. }) {
        return answer_side(p).is_some_and(|side| equal(g, side, cfg, depth + 1))
            || exact_before_approx(p).is_some_and(|side| equal(g, side, cfg, depth + 1))
            || relation_as_interval(g, p, cfg, depth);
    }
    if let Some(side) = answer_side(g)
        && !matches!(p, Expr::Relation { .. })
    {
        return equal(side, p, cfg, depth + 1);
    }
    if relation_as_interval(g, p, cfg, depth) {
        return true;
    }
    // A pair against an interval; a tuple against a one-row or one-column matrix.
    if let (Expr::Interval { .. }, Some(iv)) = (g, pair_interval(p)) {
        return structured_equal(g, &iv, cfg, depth);
    }
    if let (Some(iv), Expr::Interval { .. }) = (pair_interval(g), p) {
        return structured_equal(&iv, p, cfg, depth);
    }
    if matches!(g, Expr::Matrix(_)) != matches!(p, Expr::Matrix(_))
        && let (Some(gv), Some(pv)) = (vector(g), vector(p))
    {
        return gv.len() == pv.len()
            && gv.iter().zip(&pv).all(|(a, b)| equal(a, b, cfg, depth + 1));
    }
    match (collection(g), collection(p)) {
        (Some(gc), Some(pc)) => collections_equal(&gc, &pc, cfg, depth),
        (Some(gc), None) => gc.items.len() == 1 && equal(&gc.items[0], p, cfg, depth + 1),
        (None, Some(pc)) => pc.items.len() == 1 && equal(g, &pc.items[0], cfg, depth + 1),
        (None, None) => structured_equal(g, p, cfg, depth),
    }
}

/// Inequalities against intervals (one side at least a relation).
fn relation_as_interval(g: &Expr, p: &Expr, cfg: &EquivConfig, depth: usize) -> bool {
    (matches!(g, Expr::Relation { .. }) || matches!(p, Expr::Relation { .. }))
        && match (as_interval(g), as_interval(p)) {
            (Some(gi), Some(pi)) => equal(&gi, &pi, cfg, depth + 1),
            _ => false,
        }
}

struct Collection {
    items: Vec<Expr>,
    kind: CollectionKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CollectionKind {
    Set,
    Tuple,
    List,
    /// The readings of an expression with `±`: order-free, and a tuple may list them.
    Alternatives,
}

fn collection(e: &Expr) -> Option<Collection> {
    let (items, kind) = match e {
        Expr::Set(items) => (items.clone(), CollectionKind::Set),
        Expr::Tuple(items) => (items.clone(), CollectionKind::Tuple),
        Expr::List(items) => match labelled_groups(items) {
            // `p=5,q=2;p=7,q=2` lists the pairs `(5,2), (7,2)`.
            Some(groups) => (groups, CollectionKind::List),
            // `x = 1, x = 2` lists the values.
            None => (
                items
                    .iter()
                    .map(|i| answer_side(i).unwrap_or(i).clone())
                    .collect(),
                CollectionKind::List,
            ),
        },
        Expr::Union(items) => (items.clone(), CollectionKind::Set),
        e if contains_pm(e) => {
            let mut v = expand_pm(e);
            v.dedup();
            (v, CollectionKind::Alternatives)
        }
        _ => return None,
    };
    // Expand ± inside elements of a set-like collection.
    let items = if kind != CollectionKind::Tuple && items.iter().any(contains_pm) {
        items.iter().flat_map(expand_pm).collect()
    } else {
        items
    };
    Some(Collection { items, kind })
}

/// A list of assignments whose labels repeat in groups (`p=5, q=2; p=7, q=2`) as one tuple
/// of values per group, in the group's label order.
fn labelled_groups(items: &[Expr]) -> Option<Vec<Expr>> {
    let pairs: Vec<(&str, &Expr)> = items
        .iter()
        .map(|i| match i {
            Expr::Relation { terms, ops } if ops == &[RelOp::Eq] && terms.len() == 2 => {
                match &terms[0] {
                    Expr::Var(v) => Some((v.as_str(), &terms[1])),
                    _ => None,
                }
            }
            _ => None,
        })
        .collect::<Option<_>>()?;
    let first = pairs.first()?.0;
    let period = pairs.iter().skip(1).position(|(l, _)| *l == first)? + 1;
    if period < 2 || !pairs.len().is_multiple_of(period) {
        return None;
    }
    let labels: Vec<&str> = pairs[..period].iter().map(|(l, _)| *l).collect();
    pairs
        .chunks(period)
        .map(|chunk| {
            chunk
                .iter()
                .map(|(l, _)| *l)
                .eq(labels.iter().copied())
                .then(|| Expr::Tuple(chunk.iter().map(|(_, v)| (*v).clone()).collect()))
        })
        .collect()
}

fn collections_equal(g: &Collection, p: &Collection, cfg: &EquivConfig, depth: usize) -> bool {
    if g.items.len() > MAX_ITEMS || p.items.len() > MAX_ITEMS {
        return false;
    }
    use CollectionKind::*;
    let ordered = matches!(
        (g.kind, p.kind),
        (Tuple, Tuple) | (Tuple, List) | (List, Tuple)
    );
    if matches!((g.kind, p.kind), (Tuple, Set) | (Set, Tuple)) {
        // An ordered tuple is not a set, even with the same elements.
        return false;
    }
    if ordered {
        return g.items.len() == p.items.len()
            && g.items
                .iter()
                .zip(&p.items)
                .all(|(a, b)| equal(a, b, cfg, depth + 1));
    }
    // Sets of plain exact numbers (integers and fractions, no decimals) compare as sorted
    // values: linear in evaluations, where the pairwise matching below is quadratic.
    if let (Some(mut a), Some(mut b)) = (exact_values(&g.items), exact_values(&p.items)) {
        a.sort();
        a.dedup();
        b.sort();
        b.dedup();
        return a == b;
    }
    if g.items.len() > MAX_PAIRWISE || p.items.len() > MAX_PAIRWISE {
        // Past the pairwise bound: the same elements up to order, structurally.
        let sorted = |items: &[Expr]| {
            let mut keys: Vec<String> = items
                .iter()
                .map(|e| format!("{:?}", canonical(e)))
                .collect();
            keys.sort();
            keys.dedup();
            keys
        };
        return sorted(&g.items) == sorted(&p.items);
    }
    // Unordered: every element of each side matches an element of the other, and a perfect
    // matching exists when sizes agree (greedy is enough for equivalence classes).
    let gs = distinct(&g.items, cfg, depth);
    let ps = distinct(&p.items, cfg, depth);
    if gs.len() != ps.len() {
        return false;
    }
    let mut used = vec![false; ps.len()];
    for a in &gs {
        let Some(k) = (0..ps.len()).find(|&k| !used[k] && equal(a, ps[k], cfg, depth + 1)) else {
            return false;
        };
        used[k] = true;
    }
    true
}

/// The most elements of an unordered collection matched pair by pair (quadratic in the
/// elements); larger ones compare as sorted exact values or, failing that, structurally.
const MAX_PAIRWISE: usize = 48;

/// The exact values of collection elements that are plain numbers (integer literals,
/// fractions of them, their negations), or `None` when any element is something else.
fn exact_values(items: &[Expr]) -> Option<Vec<num_rational::BigRational>> {
    fn plain(e: &Expr) -> bool {
        match e {
            Expr::Num(_) => true,
            Expr::Neg(a) => plain(a),
            Expr::Product(f) => f.iter().all(|(x, _)| matches!(x, Expr::Num(_))),
            _ => false,
        }
    }
    if items.len() < 8 || !items.iter().all(plain) {
        return None;
    }
    items
        .iter()
        .map(|e| match eval(e, &[]) {
            Ok(crate::math::number::Value::Exact(q)) => Some(q),
            _ => None,
        })
        .collect()
}

fn distinct<'a>(items: &'a [Expr], cfg: &EquivConfig, depth: usize) -> Vec<&'a Expr> {
    let mut out: Vec<&Expr> = Vec::new();
    for it in items {
        if !out.iter().any(|o| equal(o, it, cfg, depth + 1)) {
            out.push(it);
        }
    }
    out
}

fn structured_equal(g: &Expr, p: &Expr, cfg: &EquivConfig, depth: usize) -> bool {
    match (g, p) {
        (
            Expr::Interval {
                lo: a,
                hi: b,
                lo_closed: ac,
                hi_closed: bc,
            },
            Expr::Interval {
                lo: c,
                hi: d,
                lo_closed: cc,
                hi_closed: dc,
            },
        ) => ac == cc && bc == dc && scalar_equal(a, c, cfg) && scalar_equal(b, d, cfg),
        (Expr::Ratio(a), Expr::Ratio(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| equal(x, y, cfg, depth + 1))
        }
        (Expr::Ratio(_), _) | (_, Expr::Ratio(_)) => false,
        (Expr::Matrix(a), Expr::Matrix(b)) => {
            a.len() == b.len()
                && a.iter().zip(b).all(|(r, s)| {
                    r.len() == s.len() && r.iter().zip(s).all(|(x, y)| equal(x, y, cfg, depth + 1))
                })
        }
        (Expr::Matrix(_), _)
        | (_, Expr::Matrix(_))
        | (Expr::Interval { .. }, _)
        | (_, Expr::Interval { .. }) => false,
        _ => scalar_equal(g, p, cfg),
    }
}

/// A pair `(a, b)` (tuple or bare list) read as the open interval `(a, b)`.
pub(crate) fn pair_interval(e: &Expr) -> Option<Expr> {
    match e {
        Expr::Tuple(v) | Expr::List(v) if v.len() == 2 => Some(Expr::Interval {
            lo: Box::new(v[0].clone()),
            hi: Box::new(v[1].clone()),
            lo_closed: false,
            hi_closed: false,
        }),
        _ => None,
    }
}

/// Compares two values (or two expressions in free variables); a percentage also matches
/// its number, and a decimal prediction a reference it rounds or truncates (rule 6).
pub(crate) fn scalar_equal(g: &Expr, p: &Expr, cfg: &EquivConfig) -> bool {
    if cfg.evaluated_numbers && written_number(g) && !written_number(p) && closed(p) {
        return false;
    }
    if g == p || values_match(g, p, cfg) {
        return true;
    }
    match (g, p) {
        (Expr::Percent(x), _) => values_match(x, p, cfg),
        (_, Expr::Percent(x)) => values_match(g, x, cfg),
        _ => decimal_for_exact(g, p) || decimal_for_exact(p, g),
    }
}

/// Rule 10: a number as one writes a final answer: an integer or decimal literal, a
/// fraction of two integers in lowest terms (denominator above 1), each possibly negated,
/// or such a number as a percentage.
fn written_number(e: &Expr) -> bool {
    let integer = |e: &Expr| matches!(e, Expr::Num(q) if q.is_integer());
    match e {
        Expr::Num(_) | Expr::Decimal(..) => true,
        Expr::Neg(x) | Expr::Percent(x) => written_number(x),
        Expr::Product(factors) => match factors.as_slice() {
            [(n, false), (d, true)] if integer(n) && integer(d) => {
                let (Expr::Num(n), Expr::Num(d)) = (n, d) else {
                    return false;
                };
                let (n, d) = (n.to_integer(), d.to_integer());
                d > num_bigint::BigInt::from(1) && num_integer::Integer::gcd(&n, &d) == 1.into()
            }
            _ => false,
        },
        _ => false,
    }
}

/// Whether `e` has no free variables (a value, however it is written).
fn closed(e: &Expr) -> bool {
    let mut vars = BTreeSet::new();
    e.variables(&mut vars);
    vars.is_empty()
}

/// Rule 6: `p` is a decimal literal (or its negation) standing for `g`'s value (tried both
/// ways: a rounded reference matches its exact value too).
fn decimal_for_exact(g: &Expr, p: &Expr) -> bool {
    let (negated, (q, places)) = match p {
        Expr::Decimal(q, k) => (false, (q, *k)),
        Expr::Neg(inner) => match inner.as_ref() {
            Expr::Decimal(q, k) => (true, (q, *k)),
            _ => return false,
        },
        _ => return false,
    };
    let mut vars = BTreeSet::new();
    g.variables(&mut vars);
    if !vars.is_empty() {
        return false;
    }
    let Ok(value) = eval(g, &[]) else {
        return false;
    };
    let q = if negated { -q.clone() } else { q.clone() };
    rounding::stands_for(&q, places, &value)
}

/// A tuple or a one-row/one-column matrix, as a vector of elements.
fn vector(e: &Expr) -> Option<Vec<Expr>> {
    match e {
        Expr::Tuple(v) | Expr::List(v) => Some(v.clone()),
        Expr::Matrix(rows) if rows.len() == 1 => Some(rows[0].clone()),
        Expr::Matrix(rows) if rows.iter().all(|r| r.len() == 1) => {
            Some(rows.iter().map(|r| r[0].clone()).collect())
        }
        _ => None,
    }
}

fn values_match(g: &Expr, p: &Expr, cfg: &EquivConfig) -> bool {
    let mut vars = BTreeSet::new();
    g.variables(&mut vars);
    p.variables(&mut vars);
    if vars.is_empty() {
        return match (eval(g, &[]), eval(p, &[])) {
            (Ok(a), Ok(b)) => values_equal(&a, &b, cfg.rel_tol, cfg.abs_tol),
            _ => same_up_to_order(g, p),
        };
    }
    let vars: Vec<String> = vars.into_iter().collect();
    let mut agreed = 0;
    for k in 0..cfg.points {
        let env = sample_point(&vars, k);
        match (eval(g, &env), eval(p, &env)) {
            // Real on one side, complex on the other: a branch choice (`\sqrt[3]{x}^2` and
            // `x^{2/3}` at a negative x), not a difference; the point does not count.
            (Ok(a), Ok(b)) if is_real(&a) != is_real(&b) => {}
            (Ok(a), Ok(b)) => {
                if !values_equal(&a, &b, cfg.rel_tol, cfg.abs_tol) {
                    return false;
                }
                agreed += 1;
            }
            (Err(_), Err(_)) => {}
            _ => return false,
        }
    }
    agreed >= 2 || same_up_to_order(g, p)
}

fn is_real(v: &crate::math::number::Value) -> bool {
    v.to_complex()
        .is_none_or(|(re, im)| im.abs() <= 1e-12 * re.abs().max(1.0))
}

/// Structural equality with the terms of every sum and the factors of every product sorted
/// (for values that cannot be evaluated: `10^{10^{10}} + 1` and `1 + 10^{10^{10}}`).
fn same_up_to_order(g: &Expr, p: &Expr) -> bool {
    g == p || canonical(g) == canonical(p)
}

fn canonical(e: &Expr) -> Expr {
    let sorted = |mut v: Vec<Expr>| {
        v.sort_by_cached_key(|x| format!("{x:?}"));
        v
    };
    match e {
        Expr::Sum(items) => Expr::Sum(sorted(items.iter().map(canonical).collect())),
        Expr::Product(items) => {
            let mut v: Vec<(Expr, bool)> = items.iter().map(|(x, d)| (canonical(x), *d)).collect();
            v.sort_by_cached_key(|x| format!("{x:?}"));
            Expr::Product(v)
        }
        Expr::Neg(a) => Expr::Neg(Box::new(canonical(a))),
        Expr::Pow(a, b) => Expr::Pow(Box::new(canonical(a)), Box::new(canonical(b))),
        Expr::Func(f, a) => Expr::Func(*f, Box::new(canonical(a))),
        Expr::Factorial(a) => Expr::Factorial(Box::new(canonical(a))),
        Expr::Big {
            op,
            index,
            lo,
            hi,
            body,
        } => Expr::Big {
            op: *op,
            index: index.clone(),
            lo: Box::new(canonical(lo)),
            hi: Box::new(canonical(hi)),
            body: Box::new(canonical(body)),
        },
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::parse::parse_answer;

    fn eq(a: &str, b: &str) -> bool {
        equivalent(
            &parse_answer(a).unwrap(),
            &parse_answer(b).unwrap(),
            &EquivConfig::default(),
        )
    }

    #[test]
    fn exact_near_misses() {
        assert!(!eq("1/2^{99}", "1/2^{98}"));
        assert!(!eq(r"\frac{1}{2004!}", r"\frac{1}{2006!}"));
        assert!(eq(r"\frac{1}{2006!}", r"\frac{1}{2006!}"));
        assert!(eq("0.5", r"\frac{1}{2}"));
    }

    #[test]
    fn log_exact() {
        assert!(eq(r"\log_2 8", "3"));
        assert!(eq(r"\log_{2}\frac{1}{8}", "-3"));
        assert!(eq(r"\log_{1/2} 8", "-3"));
    }
}
