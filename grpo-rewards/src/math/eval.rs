//! Evaluating an expression to a [`Value`]: exact rationals where the operations allow it
//! (sums, products, integer powers, exact roots, `log_b` of exact powers), complex floats for
//! irrational and complex values, and an error (never a panic) for undefined or oversized
//! results.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

use crate::error::{Result, RewardError};
use crate::math::number::{self, Value};
use crate::math::parse::{BigOp, Constant, Expr, Func};

fn undefined(reason: &str) -> RewardError {
    RewardError::Undefined {
        reason: reason.to_string(),
    }
}

/// Evaluates an expression, with free variables bound by `env`. Exact where the operations
/// allow it; see [`Value`].
pub fn eval(e: &Expr, env: &[(String, Value)]) -> Result<Value> {
    Ok(match e {
        Expr::Num(q) | Expr::Decimal(q, _) => Value::Exact(q.clone()),
        Expr::Const(Constant::Pi) => Value::Approx {
            re: std::f64::consts::PI,
            im: 0.0,
        },
        Expr::Const(Constant::E) => Value::Approx {
            re: std::f64::consts::E,
            im: 0.0,
        },
        Expr::Const(Constant::I) => Value::Approx { re: 0.0, im: 1.0 },
        Expr::Const(Constant::Infinity) => Value::Infinity(false),
        Expr::Var(name) => env
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| undefined("a free variable"))?,
        Expr::Neg(a) => eval(a, env)?.neg(),
        Expr::Sum(items) => {
            let mut acc = number::int(0);
            for it in items {
                acc = acc.add(&eval(it, env)?)?;
            }
            acc
        }
        Expr::Product(items) => {
            let mut acc = number::int(1);
            for (it, div) in items {
                let v = eval(it, env)?;
                acc = if *div { acc.div(&v)? } else { acc.mul(&v)? };
            }
            acc
        }
        Expr::Pow(a, b) => {
            let base = eval(a, env)?;
            let exp = eval(b, env)?;
            if let (Expr::Const(Constant::E), false) = (a.as_ref(), exp.is_zero()) {
                return exp_value(&exp);
            }
            base.pow(&exp)?
        }
        Expr::Root(index, x) => {
            let n = eval(index, env)?;
            let v = eval(x, env)?;
            let Value::Exact(nq) = &n else {
                return Err(undefined("a root of non-rational index"));
            };
            if nq.is_zero() {
                return Err(undefined("a zeroth root"));
            }
            let odd = nq.is_integer() && nq.numer().to_i64().is_some_and(|k| k % 2 != 0);
            if odd && v.sign_real().is_ok_and(|s| s < 0) {
                v.neg().pow(&Value::Exact(nq.recip()))?.neg()
            } else {
                v.pow(&Value::Exact(nq.recip()))?
            }
        }
        Expr::Func(f, a) => func(*f, &eval(a, env)?)?,
        Expr::Log(base, x) => log(&eval(base, env)?, &eval(x, env)?)?,
        Expr::Factorial(a) => eval(a, env)?.factorial()?,
        Expr::Percent(a) => eval(a, env)?.div(&number::int(100))?,
        Expr::Big {
            op,
            index,
            lo,
            hi,
            body,
        } => big_operator(*op, index, lo, hi, body, env)?,
        Expr::PlusMinus(..) => return Err(undefined("± has two values")),
        Expr::Tuple(_)
        | Expr::Ratio(_)
        | Expr::List(_)
        | Expr::Set(_)
        | Expr::Interval { .. }
        | Expr::Union(_)
        | Expr::Matrix(_)
        | Expr::Relation { .. }
        | Expr::Text(_) => return Err(undefined("not a number")),
    })
}

/// The most terms a `\sum` or `\prod` is evaluated over (beyond, it is compared by its
/// structure).
pub const MAX_BIG_TERMS: i64 = 256;

/// `\sum_{k=lo}^{hi} body` (or `\prod`) with integer limits, term by term; a body with a
/// sum of its own is not evaluated (the work stays linear in [`MAX_BIG_TERMS`]).
fn big_operator(
    op: BigOp,
    index: &str,
    lo: &Expr,
    hi: &Expr,
    body: &Expr,
    env: &[(String, Value)],
) -> Result<Value> {
    let limit = |e: &Expr| -> Result<i64> {
        match eval(e, env)? {
            Value::Exact(q) if q.is_integer() => q
                .numer()
                .to_i64()
                .ok_or_else(|| undefined("a limit too large")),
            _ => Err(undefined("a limit that is not an integer")),
        }
    };
    let (lo, hi) = (limit(lo)?, limit(hi)?);
    if hi.saturating_sub(lo) >= MAX_BIG_TERMS || has_big(body) {
        return Err(RewardError::TooLarge {
            what: "a sum or product with many terms".into(),
        });
    }
    let mut inner: Vec<(String, Value)> = Vec::with_capacity(env.len() + 1);
    inner.push((index.to_string(), number::int(lo)));
    inner.extend(env.iter().cloned());
    let mut acc = match op {
        BigOp::Sum => number::int(0),
        BigOp::Product => number::int(1),
    };
    for k in lo..=hi {
        inner[0].1 = number::int(k);
        let term = eval(body, &inner)?;
        acc = match op {
            BigOp::Sum => acc.add(&term)?,
            BigOp::Product => acc.mul(&term)?,
        };
    }
    Ok(acc)
}

fn has_big(e: &Expr) -> bool {
    match e {
        Expr::Big { .. } => true,
        Expr::Neg(a) | Expr::Func(_, a) | Expr::Factorial(a) | Expr::Percent(a) => has_big(a),
        Expr::Pow(a, b) | Expr::Log(a, b) | Expr::Root(a, b) | Expr::PlusMinus(a, b) => {
            has_big(a) || has_big(b)
        }
        Expr::Sum(v) => v.iter().any(has_big),
        Expr::Product(v) => v.iter().any(|(x, _)| has_big(x)),
        _ => false,
    }
}

fn exp_value(x: &Value) -> Result<Value> {
    if x.is_zero() {
        return Ok(number::int(1));
    }
    let (re, im) = x.to_complex().ok_or_else(|| undefined("exp of infinity"))?;
    if re > 709.0 {
        return Err(RewardError::TooLarge {
            what: "exp overflow".into(),
        });
    }
    let m = re.exp();
    Ok(Value::Approx {
        re: m * im.cos(),
        im: m * im.sin(),
    })
}

fn real(v: &Value) -> Result<f64> {
    match v.to_complex() {
        Some((re, 0.0)) => Ok(re),
        _ => Err(undefined("a real function of a complex or infinite value")),
    }
}

fn approx_real(x: f64) -> Result<Value> {
    if x.is_finite() {
        Ok(Value::Approx { re: x, im: 0.0 })
    } else {
        Err(undefined("outside the function's domain"))
    }
}

fn func(f: Func, v: &Value) -> Result<Value> {
    if v.is_zero() {
        match f {
            Func::Sin
            | Func::Tan
            | Func::Asin
            | Func::Atan
            | Func::Sinh
            | Func::Tanh
            | Func::Abs => {
                return Ok(number::int(0));
            }
            Func::Cos | Func::Cosh | Func::Exp | Func::Sec => return Ok(number::int(1)),
            Func::Ln | Func::Cot | Func::Csc => return Err(undefined("a pole at 0")),
            _ => {}
        }
    }
    match (f, v) {
        (Func::Abs, Value::Exact(q)) => return Ok(Value::Exact(q.abs())),
        (Func::Abs, Value::Infinity(_)) => return Ok(Value::Infinity(false)),
        (Func::Abs, Value::Approx { re, im }) => return approx_real((re * re + im * im).sqrt()),
        (Func::Floor, Value::Exact(q)) => return Ok(Value::Exact(q.floor())),
        (Func::Ceil, Value::Exact(q)) => return Ok(Value::Exact(q.ceil())),
        (Func::Ln, Value::Exact(q)) if q.is_one() => return Ok(number::int(0)),
        (Func::Exp, _) => return exp_value(v),
        (Func::Ln, _) => {
            let (re, im) = v.to_complex().ok_or_else(|| undefined("ln of infinity"))?;
            if im == 0.0 && re > 0.0 {
                return approx_real(re.ln());
            }
            let r = (re * re + im * im).sqrt();
            if r == 0.0 {
                return Err(undefined("ln 0"));
            }
            return Ok(Value::Approx {
                re: r.ln(),
                im: im.atan2(re),
            });
        }
        _ => {}
    }
    let x = real(v)?;
    let y = match f {
        Func::Sin => x.sin(),
        Func::Cos => x.cos(),
        Func::Tan => x.tan(),
        Func::Cot => 1.0 / x.tan(),
        Func::Sec => 1.0 / x.cos(),
        Func::Csc => 1.0 / x.sin(),
        Func::Asin => x.asin(),
        Func::Acos => x.acos(),
        Func::Atan => x.atan(),
        Func::Sinh => x.sinh(),
        Func::Cosh => x.cosh(),
        Func::Tanh => x.tanh(),
        Func::Floor => return exact_from_f64(x.floor()),
        Func::Ceil => return exact_from_f64(x.ceil()),
        Func::Ln | Func::Exp | Func::Abs => return Err(undefined("unreachable function case")),
    };
    approx_real(y)
}

fn exact_from_f64(x: f64) -> Result<Value> {
    BigRational::from_float(x)
        .map(Value::Exact)
        .ok_or_else(|| undefined("a non-finite value"))
}

/// `log_b x`: an exact integer (or its negative) when `x` is an integral power of `b`.
fn log(b: &Value, x: &Value) -> Result<Value> {
    if let (Value::Exact(bq), Value::Exact(xq)) = (b, x)
        && bq.is_positive()
        && xq.is_positive()
        && !bq.is_one()
    {
        if xq.is_one() {
            return Ok(number::int(0));
        }
        let (big, inverted) = if (*xq > BigRational::one()) == (*bq > BigRational::one()) {
            (xq.clone(), false)
        } else {
            (xq.recip(), true)
        };
        if let Some(k) = integral_log(bq, &big) {
            return Ok(number::int(if inverted { -k } else { k }));
        }
    }
    let lx = func(Func::Ln, x)?;
    let lb = func(Func::Ln, b)?;
    lx.div(&lb)
}

/// The largest exponent `log_b x` is looked for as an exact integer.
const MAX_LOG_EXPONENT: u64 = 4096;

/// `k` with `b^k = x` (both positive, on the same side of 1), found with one float estimate
/// and at most three exact powers: constant work, however large `x` is.
fn integral_log(b: &BigRational, x: &BigRational) -> Option<i64> {
    fn ln(n: &BigInt) -> f64 {
        let bits = n.bits();
        let shift = bits.saturating_sub(64);
        (n >> shift).to_f64().unwrap_or(f64::NAN).ln() + shift as f64 * std::f64::consts::LN_2
    }
    let ln_q = |q: &BigRational| ln(q.numer()) - ln(q.denom());
    let estimate = (ln_q(x) / ln_q(b)).round();
    if !estimate.is_finite() || estimate < 1.0 {
        return None;
    }
    let k0 = estimate as u64;
    (k0.saturating_sub(1)..=k0 + 1)
        .filter(|k| (1..=MAX_LOG_EXPONENT).contains(k))
        .find(|&k| {
            let fits = |n: &BigInt| n.bits().saturating_mul(k) <= number::MAX_BITS + 64;
            let Ok(e) = u32::try_from(k) else {
                return false;
            };
            fits(b.numer())
                && fits(b.denom())
                && b.numer().pow(e) == *x.numer()
                && b.denom().pow(e) == *x.denom()
        })
        .and_then(|k| i64::try_from(k).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::parse::parse_answer;

    fn value(s: &str) -> Value {
        eval(&parse_answer(s).unwrap(), &[]).unwrap()
    }

    #[test]
    fn log_of_a_non_power_stops_at_once() {
        // log_9 9501 is not an integer: found out with at most three exact powers.
        let start = std::time::Instant::now();
        assert!(matches!(value(r"\log_9 9501"), Value::Approx { .. }));
        assert!(matches!(
            value(r"\log_{1/9} \frac{1}{9501}"),
            Value::Approx { .. }
        ));
        let huge = "9".repeat(3000);
        let big_log = eval(&parse_answer(&format!(r"\log_9 {{{huge}}}")).unwrap(), &[]);
        assert!(!matches!(big_log, Ok(Value::Exact(_))));
        assert_eq!(value(r"\log_3 {3^{2000}}"), number::int(2000));
        assert_eq!(value(r"\log_{2/3} \frac{4}{9}"), number::int(2));
        assert_eq!(value(r"\log_{2/3} \frac{9}{4}"), number::int(-2));
        assert!(start.elapsed().as_millis() < 50);
    }

    #[test]
    fn log_exact() {
        assert_eq!(value(r"\log_2 8"), number::int(3));
        assert_eq!(value(r"\log_{2}\frac{1}{8}"), number::int(-3));
        assert_eq!(value(r"\log_{1/2} 8"), number::int(-3));
    }
}
