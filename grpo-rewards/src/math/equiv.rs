//! Whether two parsed answers are equivalent.
//!
//! Rules, in the order they apply:
//! 1. **Text** answers match text answers after normalisation (case, spaces, end punctuation).
//! 2. **Equations** `x = 5` answer `5`: when one side is an equation (or `x \in S`) whose one
//!    side is a bare variable and the other side is not an equation, the other side of the
//!    equation is compared. Two equations match side by side (either orientation), or when
//!    `lhs - rhs` of one is a non-zero constant multiple of the other's. Inequalities on one
//!    variable (`x > 3`, `1 < x \le 2`) match the equal interval.
//! 3. **Collections**: `±` expands to a two-element set (`\frac{-1 \pm \sqrt5}{2}`); sets are
//!    compared without order (each element matches a distinct element of the other side),
//!    tuples in order, a bare list `1, 2` either way (as the reference has it, order-free when
//!    the reference is also a bare list); a one-element collection matches its element;
//!    intervals match when both endpoints and both endpoint kinds match; a pair `(a, b)`
//!    matches the open interval `(a, b)`; unions of intervals compare as sets; matrices by
//!    shape and element, and a one-row or one-column matrix matches a tuple.
//! 4. **Values** without free variables are evaluated: when both are exact rationals they
//!    must be *exactly* equal (so `1/2^99 ≠ 1/2^98` and `1/2004! ≠ 1/2006!`); when either is
//!    irrational or complex, they must agree within a relative tolerance (default 1e-9) or an
//!    absolute 1e-12. Values too large to hold exactly (`10^{10^{10}}`) or undefined compare
//!    structurally (same tree).
//! 5. **Expressions with free variables** are evaluated at several fixed pseudo-random
//!    rational points, exactly where the expression allows (polynomials and rational
//!    functions stay exact), and must agree at every point where both are defined (at least
//!    two such points; otherwise the trees must be identical).
//! 6. **Percentages**: `50\%` matches both `50` and `0.5`.

use std::collections::BTreeSet;

use num_bigint::BigInt;
use num_rational::BigRational;

use crate::math::eval::eval;
use crate::math::number::{Value, values_equal};
use crate::math::parse::{Constant, Expr, RelOp};

/// Tolerances and sampling for the equivalence check.
#[derive(Debug, Clone, PartialEq)]
pub struct EquivConfig {
    /// Relative tolerance when a value is irrational or complex.
    pub rel_tol: f64,
    /// Absolute tolerance when a value is irrational or complex.
    pub abs_tol: f64,
    /// Number of points at which expressions with free variables are compared.
    pub points: usize,
}

impl Default for EquivConfig {
    fn default() -> Self {
        EquivConfig {
            rel_tol: 1e-9,
            abs_tol: 1e-12,
            points: 5,
        }
    }
}

/// The largest collection compared element by element.
const MAX_ITEMS: usize = 256;
/// How many alternatives `±` may expand into.
const MAX_EXPANSIONS: usize = 16;
/// The deepest nesting of collections compared.
const MAX_NESTING: usize = 16;

/// Whether `pred` is equivalent to `gold` under the rules of the module docs.
pub fn equivalent(gold: &Expr, pred: &Expr, cfg: &EquivConfig) -> bool {
    equal(gold, pred, cfg, 0)
}

fn equal(g: &Expr, p: &Expr, cfg: &EquivConfig, depth: usize) -> bool {
    if depth > MAX_NESTING {
        return false;
    }
    if g == p {
        return true;
    }
    match (g, p) {
        (Expr::Text(a), Expr::Text(b)) => return a == b,
        (Expr::Text(_), _) | (_, Expr::Text(_)) => return false,
        (Expr::Relation { .. }, Expr::Relation { .. }) => return relations_equal(g, p, cfg),
        _ => {}
    }
    // `x = 5` answers `5`.
    if let Some(side) = answer_side(p)
        && !matches!(g, Expr::Relation { .. })
    {
        return equal(g, side, cfg, depth + 1);
    }
    if let Some(side) = answer_side(g)
        && !matches!(p, Expr::Relation { .. })
    {
        return equal(side, p, cfg, depth + 1);
    }
    // Inequalities against intervals.
    if let (Some(gi), Some(pi)) = (as_interval(g), as_interval(p))
        && (matches!(g, Expr::Relation { .. }) || matches!(p, Expr::Relation { .. }))
    {
        return equal(&gi, &pi, cfg, depth + 1);
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

/// The value side of `x = v`, `v = x` or `x \in S`.
fn answer_side(e: &Expr) -> Option<&Expr> {
    let Expr::Relation { terms, ops } = e else {
        return None;
    };
    if terms.len() != 2 || !matches!(ops[0], RelOp::Eq | RelOp::In | RelOp::Approx) {
        return None;
    }
    let is_var = |e: &Expr| matches!(e, Expr::Var(_));
    match (is_var(&terms[0]), is_var(&terms[1])) {
        (true, false) => Some(&terms[1]),
        (false, true) if ops[0] == RelOp::Eq => Some(&terms[0]),
        (true, true) if ops[0] != RelOp::In => Some(&terms[1]),
        _ => None,
    }
}

/// An interval for an interval expression or an inequality on one bare variable.
fn as_interval(e: &Expr) -> Option<Expr> {
    let inf = || Expr::Const(Constant::Infinity);
    let neg_inf = || Expr::Neg(Box::new(Expr::Const(Constant::Infinity)));
    let iv = |lo: Expr, hi: Expr, lc: bool, hc: bool| Expr::Interval {
        lo: Box::new(lo),
        hi: Box::new(hi),
        lo_closed: lc,
        hi_closed: hc,
    };
    match e {
        Expr::Interval { .. } => Some(e.clone()),
        Expr::Tuple(_) | Expr::List(_) => pair_interval(e),
        Expr::Relation { terms, ops } if terms.len() == 2 => {
            let (var_left, v) = match (&terms[0], &terms[1]) {
                (Expr::Var(_), v) if !matches!(v, Expr::Var(_)) => (true, v.clone()),
                (v, Expr::Var(_)) if !matches!(v, Expr::Var(_)) => (false, v.clone()),
                _ => return None,
            };
            // Normalise to `x op v`.
            let op = if var_left { ops[0] } else { mirror(ops[0])? };
            Some(match op {
                RelOp::Lt => iv(neg_inf(), v, false, false),
                RelOp::Le => iv(neg_inf(), v, false, true),
                RelOp::Gt => iv(v, inf(), false, false),
                RelOp::Ge => iv(v, inf(), true, false),
                _ => return None,
            })
        }
        Expr::Relation { terms, ops } if terms.len() == 3 && matches!(terms[1], Expr::Var(_)) => {
            let closed = |op: RelOp| match op {
                RelOp::Le | RelOp::Ge => Some(true),
                RelOp::Lt | RelOp::Gt => Some(false),
                _ => None,
            };
            let ascending =
                matches!(ops[0], RelOp::Lt | RelOp::Le) && matches!(ops[1], RelOp::Lt | RelOp::Le);
            let descending =
                matches!(ops[0], RelOp::Gt | RelOp::Ge) && matches!(ops[1], RelOp::Gt | RelOp::Ge);
            if ascending {
                Some(iv(
                    terms[0].clone(),
                    terms[2].clone(),
                    closed(ops[0])?,
                    closed(ops[1])?,
                ))
            } else if descending {
                Some(iv(
                    terms[2].clone(),
                    terms[0].clone(),
                    closed(ops[1])?,
                    closed(ops[0])?,
                ))
            } else {
                None
            }
        }
        _ => None,
    }
}

fn mirror(op: RelOp) -> Option<RelOp> {
    Some(match op {
        RelOp::Lt => RelOp::Gt,
        RelOp::Gt => RelOp::Lt,
        RelOp::Le => RelOp::Ge,
        RelOp::Ge => RelOp::Le,
        RelOp::Eq => RelOp::Eq,
        RelOp::Ne => RelOp::Ne,
        RelOp::Approx => RelOp::Approx,
        RelOp::In => return None,
    })
}

fn relations_equal(g: &Expr, p: &Expr, cfg: &EquivConfig) -> bool {
    let (Expr::Relation { terms: gt, ops: go }, Expr::Relation { terms: pt, ops: po }) = (g, p)
    else {
        return false;
    };
    if gt.len() != pt.len() {
        return false;
    }
    let same = go == po && gt.iter().zip(pt).all(|(a, b)| scalar_equal(a, b, cfg));
    let mirrored: Option<Vec<RelOp>> = po.iter().rev().map(|o| mirror(*o)).collect();
    let reversed = mirrored.is_some_and(|m| m == *go)
        && gt
            .iter()
            .zip(pt.iter().rev())
            .all(|(a, b)| scalar_equal(a, b, cfg));
    if same || reversed {
        return true;
    }
    if let (Some(a), Some(b)) = (as_interval(g), as_interval(p)) {
        return equal(&a, &b, cfg, 1);
    }
    // Equations: lhs - rhs proportional.
    if gt.len() == 2 && go[0] == RelOp::Eq && po[0] == RelOp::Eq {
        let dg = Expr::Sum(vec![gt[0].clone(), Expr::Neg(Box::new(gt[1].clone()))]);
        let dp = Expr::Sum(vec![pt[0].clone(), Expr::Neg(Box::new(pt[1].clone()))]);
        return proportional(&dg, &dp, cfg);
    }
    false
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
}

fn collection(e: &Expr) -> Option<Collection> {
    let (items, kind) = match e {
        Expr::Set(items) => (items.clone(), CollectionKind::Set),
        Expr::Tuple(items) => (items.clone(), CollectionKind::Tuple),
        Expr::List(items) => {
            // `x = 1, x = 2` lists the values.
            let items = items
                .iter()
                .map(|i| answer_side(i).unwrap_or(i).clone())
                .collect();
            (items, CollectionKind::List)
        }
        Expr::Union(items) => (items.clone(), CollectionKind::Set),
        e if contains_pm(e) => {
            let mut v = expand_pm(e);
            v.dedup();
            (v, CollectionKind::Set)
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

fn collections_equal(g: &Collection, p: &Collection, cfg: &EquivConfig, depth: usize) -> bool {
    if g.items.len() > MAX_ITEMS || p.items.len() > MAX_ITEMS {
        return false;
    }
    use CollectionKind::*;
    let ordered = matches!(
        (g.kind, p.kind),
        (Tuple, Tuple) | (Tuple, List) | (List, Tuple)
    );
    if ordered {
        return g.items.len() == p.items.len()
            && g.items
                .iter()
                .zip(&p.items)
                .all(|(a, b)| equal(a, b, cfg, depth + 1));
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
fn pair_interval(e: &Expr) -> Option<Expr> {
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
/// its number.
fn scalar_equal(g: &Expr, p: &Expr, cfg: &EquivConfig) -> bool {
    if g == p || values_match(g, p, cfg) {
        return true;
    }
    match (g, p) {
        (Expr::Percent(x), _) => values_match(x, p, cfg),
        (_, Expr::Percent(x)) => values_match(g, x, cfg),
        _ => false,
    }
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
            _ => g == p,
        };
    }
    let vars: Vec<String> = vars.into_iter().collect();
    let mut agreed = 0;
    for k in 0..cfg.points {
        let env = sample_point(&vars, k);
        match (eval(g, &env), eval(p, &env)) {
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
    agreed >= 2 || g == p
}

/// Whether `a` is a non-zero constant multiple of `b` at the sample points.
fn proportional(a: &Expr, b: &Expr, cfg: &EquivConfig) -> bool {
    let mut vars = BTreeSet::new();
    a.variables(&mut vars);
    b.variables(&mut vars);
    let vars: Vec<String> = vars.into_iter().collect();
    let mut ratio: Option<Value> = None;
    let mut agreed = 0;
    for k in 0..cfg.points {
        let env = sample_point(&vars, k);
        let (Ok(x), Ok(y)) = (eval(a, &env), eval(b, &env)) else {
            continue;
        };
        if x.is_zero() && y.is_zero() {
            continue;
        }
        let Ok(r) = x.div(&y) else {
            return false;
        };
        if r.is_zero() {
            return false;
        }
        match &ratio {
            Some(prev) if !values_equal(prev, &r, cfg.rel_tol, cfg.abs_tol) => return false,
            Some(_) => {}
            None => ratio = Some(r),
        }
        agreed += 1;
    }
    agreed >= 2
}

/// The `k`-th sample point: each variable gets a different small rational, away from 0 and
/// ±1 so that `x/x`-style cancellations and sign errors show.
fn sample_point(vars: &[String], k: usize) -> Vec<(String, Value)> {
    const NUMS: [(i64, i64); 9] = [
        (7, 3),
        (-5, 11),
        (13, 7),
        (3, 17),
        (-17, 13),
        (11, 5),
        (19, 23),
        (-23, 19),
        (29, 6),
    ];
    vars.iter()
        .enumerate()
        .map(|(j, v)| {
            let (n, d) = NUMS[(k * 2 + j * 5) % NUMS.len()];
            let shift = BigRational::from_integer(BigInt::from(j as i64));
            let q = BigRational::new(BigInt::from(n), BigInt::from(d)) + shift;
            (v.clone(), Value::Exact(q))
        })
        .collect()
}

fn contains_pm(e: &Expr) -> bool {
    match e {
        Expr::PlusMinus(..) => true,
        Expr::Neg(a) | Expr::Func(_, a) | Expr::Factorial(a) | Expr::Percent(a) => contains_pm(a),
        Expr::Pow(a, b) | Expr::Log(a, b) | Expr::Root(a, b) => contains_pm(a) || contains_pm(b),
        Expr::Sum(v) => v.iter().any(contains_pm),
        Expr::Product(v) => v.iter().any(|(e, _)| contains_pm(e)),
        _ => false,
    }
}

/// All readings of an expression with `±` (capped at [`MAX_EXPANSIONS`]).
fn expand_pm(e: &Expr) -> Vec<Expr> {
    if !contains_pm(e) {
        return vec![e.clone()];
    }
    let bx = Box::new;
    let mut out = match e {
        Expr::PlusMinus(a, b) => {
            let mut v = Vec::new();
            for x in expand_pm(a) {
                for y in expand_pm(b) {
                    v.push(Expr::Sum(vec![x.clone(), y.clone()]));
                    v.push(Expr::Sum(vec![x.clone(), Expr::Neg(bx(y))]));
                }
            }
            v
        }
        Expr::Neg(a) => expand_pm(a).into_iter().map(|x| Expr::Neg(bx(x))).collect(),
        Expr::Func(f, a) => expand_pm(a)
            .into_iter()
            .map(|x| Expr::Func(*f, bx(x)))
            .collect(),
        Expr::Factorial(a) => expand_pm(a)
            .into_iter()
            .map(|x| Expr::Factorial(bx(x)))
            .collect(),
        Expr::Percent(a) => expand_pm(a)
            .into_iter()
            .map(|x| Expr::Percent(bx(x)))
            .collect(),
        Expr::Pow(a, b) | Expr::Log(a, b) | Expr::Root(a, b) => {
            let mut v = Vec::new();
            for x in expand_pm(a) {
                for y in expand_pm(b) {
                    v.push(match e {
                        Expr::Pow(..) => Expr::Pow(bx(x.clone()), bx(y)),
                        Expr::Log(..) => Expr::Log(bx(x.clone()), bx(y)),
                        _ => Expr::Root(bx(x.clone()), bx(y)),
                    });
                }
            }
            v
        }
        Expr::Sum(items) => {
            let mut acc: Vec<Vec<Expr>> = vec![Vec::new()];
            for it in items {
                let opts = expand_pm(it);
                acc = acc
                    .into_iter()
                    .flat_map(|prefix| {
                        opts.iter()
                            .map(move |o| [prefix.clone(), vec![o.clone()]].concat())
                    })
                    .take(MAX_EXPANSIONS)
                    .collect();
            }
            acc.into_iter().map(Expr::Sum).collect()
        }
        Expr::Product(items) => {
            let mut acc: Vec<Vec<(Expr, bool)>> = vec![Vec::new()];
            for (it, div) in items {
                let opts = expand_pm(it);
                acc = acc
                    .into_iter()
                    .flat_map(|prefix| {
                        opts.iter()
                            .map(move |o| [prefix.clone(), vec![(o.clone(), *div)]].concat())
                    })
                    .take(MAX_EXPANSIONS)
                    .collect();
            }
            acc.into_iter().map(Expr::Product).collect()
        }
        other => vec![other.clone()],
    };
    out.truncate(MAX_EXPANSIONS);
    out
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
