//! `±`: an expression with `a ± b` read as its alternatives (`\frac{-1 \pm \sqrt5}{2}` is a
//! two-element set), capped at [`MAX_EXPANSIONS`] readings.

use crate::math::parse::Expr;

/// How many alternatives `±` may expand into.
pub const MAX_EXPANSIONS: usize = 16;

/// Whether the expression has a `±` outside collections.
pub fn contains_pm(e: &Expr) -> bool {
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
pub fn expand_pm(e: &Expr) -> Vec<Expr> {
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
