//! Equations and inequalities: what a labelled answer (`x = 5`, `f(x) = 4`, `(m,n) = (2,9)`)
//! answers, chains (`x = 2+3 = 5`), inequalities as intervals (`-1 \le x \le 4`), and when two
//! relations say the same thing (mirror images, `-y > -4` against `y < 4`, and relations whose
//! sides differ by a constant factor).

use std::collections::BTreeSet;

use num_bigint::BigInt;
use num_rational::BigRational;

use crate::math::equiv::{EquivConfig, equal, scalar_equal};
use crate::math::eval::eval;
use crate::math::number::{Value, values_equal};
use crate::math::parse::{Constant, Expr, Func, RelOp};

/// A name standing for the answer: a variable (`x`, `a_1`), a function of variables
/// (`f(x)`, `g(s, t)`), a length `|CD|`, a ratio of lengths (`\frac{NO}{BO}`), or a tuple or
/// ratio of variables (`(m,n)`, `P:Q`).
pub fn is_label(e: &Expr) -> bool {
    let var = |e: &Expr| matches!(e, Expr::Var(_));
    let monomial = |e: &Expr| match e {
        Expr::Var(_) => true,
        Expr::Product(f) => f.iter().all(|(x, div)| !div && var(x)),
        _ => false,
    };
    match e {
        Expr::Var(_) => true,
        Expr::Product(f) if f.iter().any(|(_, div)| *div) => f.iter().all(|(x, _)| monomial(x)),
        Expr::Product(f) => f.iter().all(|(x, div)| {
            !div && (var(x) || matches!(x, Expr::Tuple(v) | Expr::List(v) if v.iter().all(var)))
        }),
        Expr::Func(Func::Abs, a) => is_label(a),
        Expr::Tuple(v) | Expr::Ratio(v) => !v.is_empty() && v.iter().all(var),
        _ => false,
    }
}

fn free_of_variables(e: &Expr) -> bool {
    let mut vars = BTreeSet::new();
    e.variables(&mut vars);
    vars.is_empty()
}

/// The value a relation gives as the answer: `v` in `x = v`, `v = x`, `x \in S`,
/// `f(x) = v`, `\frac{NO}{BO} = v`; nothing for an equation with unknowns on a side that is
/// not a label (`7 = 11a + c` gives neither 7 nor `11a + c`); in a chain `x = 2+3 = 5` (also through `\approx`) the last value, when every
/// earlier term is a label or a constant expression.
pub fn answer_side(e: &Expr) -> Option<&Expr> {
    let Expr::Relation { terms, ops } = e else {
        return None;
    };
    if terms.len() == 2 {
        let constant = (free_of_variables(&terms[0]), free_of_variables(&terms[1]));
        return match (is_label(&terms[0]), is_label(&terms[1]), ops[0]) {
            (true, false, RelOp::Eq | RelOp::In | RelOp::Approx) => Some(&terms[1]),
            (false, true, RelOp::Eq) => Some(&terms[0]),
            (true, true, RelOp::Eq | RelOp::Approx) => Some(&terms[1]),
            // `2 + 3 = 5`; an equation with unknowns on a side (`7 = 11a + c`, `a + 3z = 0`)
            // gives no bare value.
            (false, false, RelOp::Eq | RelOp::Approx) if constant == (true, true) => {
                Some(&terms[1])
            }
            _ => None,
        };
    }
    let chain = ops.iter().all(|o| matches!(o, RelOp::Eq | RelOp::Approx));
    let last = terms.last()?;
    (chain
        && terms[..terms.len() - 1]
            .iter()
            .all(|t| is_label(t) || free_of_variables(t)))
    .then_some(last)
}

/// The label a chain of equalities starts with (`x` in `x = 5+5+1 = 11`).
fn chain_label(e: &Expr) -> Option<&Expr> {
    let Expr::Relation { terms, ops } = e else {
        return None;
    };
    (ops.iter().all(|o| matches!(o, RelOp::Eq | RelOp::Approx)) && is_label(&terms[0]))
        .then(|| &terms[0])
}

/// In a chain that ends in `\approx` (`x = \sqrt 2 \approx 1.414`), the exact value before it.
pub fn exact_before_approx(e: &Expr) -> Option<&Expr> {
    let Expr::Relation { terms, ops } = e else {
        return None;
    };
    let k = ops.iter().position(|o| *o == RelOp::Approx)?;
    (k > 0 || !is_label(&terms[0])).then(|| &terms[k])
}

/// An interval for an interval expression or an inequality on one label (`x > 3`,
/// `-1 \le x \le 4`, `0 < g(t) < 2`).
pub fn as_interval(e: &Expr) -> Option<Expr> {
    let inf = || Expr::Const(Constant::Infinity);
    let neg_inf = || Expr::Neg(Box::new(Expr::Const(Constant::Infinity)));
    let iv = |lo: Expr, hi: Expr, lc: bool, hc: bool| Expr::Interval {
        lo: Box::new(lo),
        hi: Box::new(hi),
        lo_closed: lc,
        hi_closed: hc,
    };
    if let Some(region) = abs_region(e) {
        return Some(region);
    }
    match e {
        Expr::Interval { .. } | Expr::Union(_) => Some(e.clone()),
        Expr::Tuple(_) | Expr::List(_) => crate::math::equiv::pair_interval(e),
        Expr::Relation { terms, ops }
            if terms.len() == 2 && ops[0] == RelOp::In && is_label(&terms[0]) =>
        {
            matches!(terms[1], Expr::Interval { .. } | Expr::Union(_)).then(|| terms[1].clone())
        }
        Expr::Relation { terms, ops } if terms.len() == 2 => {
            let (var_left, v) = match (is_label(&terms[0]), is_label(&terms[1])) {
                (true, false) => (true, terms[1].clone()),
                (false, true) => (false, terms[0].clone()),
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
        Expr::Relation { terms, ops } if terms.len() == 3 && is_label(&terms[1]) => {
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

/// An inequality on `|z|` as the region of `z`: `1 \le |z| \le \frac32` is
/// `[-\frac32, -1] \cup [1, \frac32]`, `|x| < 3` is `(-3, 3)`, `|x| > 2` is
/// `(-\infty, -2) \cup (2, \infty)`.
fn abs_region(e: &Expr) -> Option<Expr> {
    let Expr::Relation { terms, ops } = e else {
        return None;
    };
    let at = match terms.len() {
        2 => usize::from(!matches!(terms[0], Expr::Func(Func::Abs, _))),
        3 => 1,
        _ => return None,
    };
    let Expr::Func(Func::Abs, inner) = &terms[at] else {
        return None;
    };
    if !matches!(inner.as_ref(), Expr::Var(_))
        || ops
            .iter()
            .any(|o| matches!(o, RelOp::Eq | RelOp::In | RelOp::Approx | RelOp::Ne))
    {
        return None;
    }
    // The interval of |z| itself, with |z| read as a plain label.
    let mut plain = terms.clone();
    plain[at] = Expr::Var("|·|".into());
    let Some(Expr::Interval {
        lo,
        hi,
        lo_closed,
        hi_closed,
    }) = as_interval(&Expr::Relation {
        terms: plain,
        ops: ops.clone(),
    })
    else {
        return None;
    };
    let neg = |x: &Expr| Expr::Neg(Box::new(x.clone()));
    let iv = |lo: Expr, hi: Expr, lc: bool, hc: bool| Expr::Interval {
        lo: Box::new(lo),
        hi: Box::new(hi),
        lo_closed: lc,
        hi_closed: hc,
    };
    let lo_sign = eval(&lo, &[]).ok()?.sign_real().ok()?;
    let hi_infinite = matches!(eval(&hi, &[]), Ok(Value::Infinity(false)));
    Some(if lo_sign <= 0 {
        // Only an upper bound matters: |z| ≤ b is -b ≤ z ≤ b.
        iv(neg(&hi), (*hi).clone(), hi_closed, hi_closed)
    } else if hi_infinite {
        Expr::Union(vec![
            iv(neg(&hi), neg(&lo), false, lo_closed),
            iv((*lo).clone(), (*hi).clone(), lo_closed, false),
        ])
    } else {
        Expr::Union(vec![
            iv(neg(&hi), neg(&lo), hi_closed, lo_closed),
            iv((*lo).clone(), (*hi).clone(), lo_closed, hi_closed),
        ])
    })
}

/// The relation read right to left (`<` becomes `>`).
pub fn mirror(op: RelOp) -> Option<RelOp> {
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

/// Whether two relations say the same: term by term (or mirrored), as equal intervals, or, for
/// one relation each, when `lhs - rhs` of one is a constant non-zero multiple of the other's
/// (a negative multiple turns `<` into `>`: `-y > -4` is `y < 4`).
pub fn relations_equal(g: &Expr, p: &Expr, cfg: &EquivConfig) -> bool {
    let (Expr::Relation { terms: gt, ops: go }, Expr::Relation { terms: pt, ops: po }) = (g, p)
    else {
        return false;
    };
    // `x = 11` against `x = 5+5+1 = 7 = 11`: the same label, and the chain's last value (or
    // its exact value before `\approx`) is the answer.
    if (gt.len() > 2 || pt.len() > 2)
        && let (Some(gl), Some(pl)) = (chain_label(g), chain_label(p))
        && gl == pl
    {
        let values = |e: &'_ Expr| -> Vec<Expr> {
            [answer_side(e), exact_before_approx(e)]
                .into_iter()
                .flatten()
                .cloned()
                .collect()
        };
        let (gv, pv) = (values(g), values(p));
        if gv.iter().any(|a| pv.iter().any(|b| equal(a, b, cfg, 1))) {
            return true;
        }
    }
    if gt.len() != pt.len() {
        return match (as_interval(g), as_interval(p)) {
            (Some(a), Some(b)) => equal(&a, &b, cfg, 1),
            _ => false,
        };
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
    if let (Some(a), Some(b)) = (as_interval(g), as_interval(p))
        && equal(&a, &b, cfg, 1)
    {
        return true;
    }
    if gt.len() != 2 || go[0] == RelOp::In || po[0] == RelOp::In {
        return false;
    }
    let diff = |t: &[Expr]| Expr::Sum(vec![t[0].clone(), Expr::Neg(Box::new(t[1].clone()))]);
    let Some(r) = constant_ratio(&diff(gt), &diff(pt), cfg) else {
        return false;
    };
    let Ok(sign) = r.sign_real() else {
        return false;
    };
    match go[0] {
        RelOp::Eq | RelOp::Ne | RelOp::Approx => go[0] == po[0],
        _ if sign > 0 => go[0] == po[0],
        _ => mirror(po[0]) == Some(go[0]),
    }
}

/// The constant `r` with `a = r · b` at every sample point where both are defined (at least
/// two), if there is one and it is not zero.
pub fn constant_ratio(a: &Expr, b: &Expr, cfg: &EquivConfig) -> Option<Value> {
    let mut vars = BTreeSet::new();
    a.variables(&mut vars);
    b.variables(&mut vars);
    let vars: Vec<String> = vars.into_iter().collect();
    let mut ratio: Option<Value> = None;
    let mut agreed = 0;
    let points = if vars.is_empty() { 1 } else { cfg.points };
    for k in 0..points {
        let env = sample_point(&vars, k);
        let (Ok(x), Ok(y)) = (eval(a, &env), eval(b, &env)) else {
            continue;
        };
        // An infinite side has no ratio (`x - \infty` is no multiple of `x - 12500`).
        if matches!(x, Value::Infinity(_)) || matches!(y, Value::Infinity(_)) {
            return None;
        }
        // A zero held as a float (`0 · 1.414`) is a zero too.
        let zero = |v: &Value| v.is_zero() || v.to_complex() == Some((0.0, 0.0));
        match (zero(&x), zero(&y)) {
            (true, true) => continue,
            // Zero on one side only: no multiple (`x - x` is no multiple of `x - \sqrt 2`).
            (true, false) | (false, true) => return None,
            (false, false) => {}
        }
        let r = x.div(&y).ok()?;
        if r.is_zero() {
            return None;
        }
        match &ratio {
            Some(prev) if !values_equal(prev, &r, cfg.rel_tol, cfg.abs_tol) => return None,
            Some(_) => {}
            None => ratio = Some(r),
        }
        agreed += 1;
    }
    (agreed >= 2 || (vars.is_empty() && agreed == 1)).then_some(ratio?)
}

/// The `k`-th sample point: each variable gets a different small rational, away from 0 and
/// ±1 so that `x/x`-style cancellations and sign errors show.
pub fn sample_point(vars: &[String], k: usize) -> Vec<(String, Value)> {
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
