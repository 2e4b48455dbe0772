//! A decimal answer against an exact reference: `0.4286` for `3/7`, `1.414` for `√2`.
//!
//! The prediction's digits decide, never float closeness: a decimal written to `k` places
//! stands for the reference when it is the reference rounded (half away from zero) or
//! truncated (toward zero) to `k` places. Rational references are decided in exact
//! arithmetic; irrational ones (held as floats) only at places a float resolves, and never
//! when the float lies within its own error of a rounding boundary. The rule needs at least
//! [`MIN_SIGNIFICANT`] significant digits written, and never applies to a reference that is an
//! integer or a terminating decimal (those must be written out exactly: `2.999 ≠ 3`,
//! `12.8 ≠ 12.75`).

use num_bigint::{BigInt, Sign};
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{Signed, ToPrimitive, Zero};

use crate::math::number::Value;

/// The fewest significant digits a decimal needs to stand for a rounded value.
pub const MIN_SIGNIFICANT: usize = 3;

/// The most places the rule reads (beyond, a decimal must be exact).
pub const MAX_PLACES: u32 = 40;

/// Whether `decimal`, written with `places` digits after the point, is `reference` rounded or
/// truncated to that many places (see the module docs for the conditions).
pub fn stands_for(decimal: &BigRational, places: u32, reference: &Value) -> bool {
    if places == 0 || places > MAX_PLACES {
        return false;
    }
    let scale = BigInt::from(10u32).pow(places);
    // `decimal · 10^places` in integers (no gcd): it must be a whole number of units.
    let (units, rest) = scale.div_rem(decimal.denom());
    if !rest.is_zero() {
        return false;
    }
    let digits = decimal.numer() * units;
    // At least MIN_SIGNIFICANT digits: |digits| ≥ 10^(MIN_SIGNIFICANT - 1).
    let least = num_bigint::BigUint::from(10u32).pow(MIN_SIGNIFICANT.saturating_sub(1) as u32);
    if *digits.magnitude() < least {
        return false;
    }
    match reference {
        Value::Exact(q) => exact_rounding(q, &scale, &digits),
        Value::Approx { re, im } if *im == 0.0 && re.is_finite() => {
            float_rounding(*re, places, &digits)
        }
        _ => false,
    }
}

/// Rounded or truncated `q · scale` equals `digits`, for a non-terminating rational `q`.
fn exact_rounding(q: &BigRational, scale: &BigInt, digits: &BigInt) -> bool {
    if q.is_integer() || terminates(q.denom()) {
        return false;
    }
    // q · scale = num / den (den > 0), in integers: truncated toward zero, and rounded half
    // away from zero as ⌊(2|num| + den) / 2den⌋ with num's sign.
    let num = q.numer() * scale;
    let den = q.denom();
    let truncated = &num / den;
    let two = BigInt::from(2);
    let magnitude = (num.abs() * &two + den) / (den * &two);
    let rounded = if num.is_negative() {
        -magnitude
    } else {
        magnitude
    };
    *digits == truncated || *digits == rounded
}

/// Whether a reduced denominator has no prime factor other than 2 and 5: the twos shifted
/// out at once, then one exact power of five compared (division by 2 and 5 in a loop is
/// quadratic in the digits of a long decimal).
fn terminates(d: &BigInt) -> bool {
    if d.is_zero() {
        return false;
    }
    let twos = d.trailing_zeros().unwrap_or(0);
    let odd = d.magnitude() >> twos;
    if odd == num_bigint::BigUint::from(1u32) {
        return true;
    }
    // odd = 5^k with k ≈ bits / log2(5).
    let estimate = (odd.bits() as f64 / 5f64.log2()).round() as u64;
    (estimate.saturating_sub(1)..=estimate + 1)
        .any(|k| u32::try_from(k).is_ok_and(|k| num_bigint::BigUint::from(5u32).pow(k) == odd))
}

/// The same test for an irrational reference held as a float: only where `x · 10^places` is
/// well inside a float's precision and not within its error of a rounding boundary.
fn float_rounding(x: f64, places: u32, digits: &BigInt) -> bool {
    if (x - x.round()).abs() <= 1e-9 * x.abs().max(1.0) {
        // An integer up to float error: the integer rule applies (no rounding credit).
        return false;
    }
    let Some(d) = digits.to_f64() else {
        return false;
    };
    let s = x * 10f64.powi(places as i32);
    if !s.is_finite() || s.abs() >= 1e13 {
        return false;
    }
    // The float's own error, scaled: refuse to decide on a boundary it cannot resolve.
    let err = s.abs() * 1e-12 + 1e-12;
    let frac = (s - s.trunc()).abs();
    let near = |b: f64| (frac - b).abs() <= err;
    if near(0.0) || near(0.5) || near(1.0) {
        return false;
    }
    let sign_ok = match digits.sign() {
        Sign::Minus => s < 0.0,
        Sign::Plus => s > 0.0,
        Sign::NoSign => false,
    };
    sign_ok && (d == s.trunc() || d == s.round())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(n: i64, d: i64) -> Value {
        Value::Exact(BigRational::new(n.into(), d.into()))
    }

    fn dec(digits: i64, places: u32) -> BigRational {
        BigRational::new(digits.into(), BigInt::from(10u32).pow(places))
    }

    #[test]
    fn rationals_by_their_digits() {
        assert!(stands_for(&dec(4286, 4), 4, &q(3, 7)));
        assert!(stands_for(&dec(4285, 4), 4, &q(3, 7)));
        assert!(!stands_for(&dec(4287, 4), 4, &q(3, 7)));
        assert!(!stands_for(&dec(43, 2), 2, &q(3, 7)));
        assert!(stands_for(&dec(-333, 3), 3, &q(-1, 3)));
        assert!(stands_for(&dec(-667, 3), 3, &q(-2, 3)));
        assert!(!stands_for(&dec(-668, 3), 3, &q(-2, 3)));
        // integers and terminating decimals must be exact
        assert!(!stands_for(&dec(2999, 3), 3, &q(3, 1)));
        assert!(!stands_for(&dec(128, 1), 1, &q(51, 4)));
        // fewer than three significant digits never stand for a rounding
        assert!(!stands_for(&dec(14, 3), 3, &q(1, 70)));
        assert!(stands_for(&dec(143, 4), 4, &q(1, 70)));
    }

    #[test]
    fn a_long_terminating_reference_is_decided_without_a_loop_per_digit() {
        // 2^a·5^b terminates, anything with another prime factor does not.
        let pow = |b: u32, k: u32| BigInt::from(b).pow(k);
        assert!(terminates(&(pow(2, 300) * pow(5, 7))));
        assert!(terminates(&pow(5, 4001)));
        assert!(terminates(&BigInt::from(1)));
        assert!(!terminates(&(pow(5, 4001) * 3)));
        assert!(!terminates(&(pow(2, 10) * pow(5, 4000) * 7)));
        // 1.3969…91 with 4,000 nines is a terminating decimal: 6.875 never stands for it,
        // decided at once (a division per factor of 2 and 5 took 30 ms).
        let digits: BigInt = format!("13969{}1", "9".repeat(4000)).parse().unwrap();
        let reference = Value::Exact(BigRational::new(digits, pow(10, 4005)));
        let start = std::time::Instant::now();
        assert!(!stands_for(&dec(6875, 3), 3, &reference));
        assert!(start.elapsed().as_millis() < 20);
    }

    #[test]
    fn irrationals_only_where_a_float_decides() {
        let sqrt2 = Value::Approx {
            re: std::f64::consts::SQRT_2,
            im: 0.0,
        };
        assert!(stands_for(&dec(1414, 3), 3, &sqrt2));
        assert!(!stands_for(&dec(1415, 3), 3, &sqrt2));
        assert!(stands_for(&dec(14142, 4), 4, &sqrt2));
        assert!(!stands_for(&dec(14, 1), 1, &sqrt2));
        let complex = Value::Approx { re: 1.414, im: 1.0 };
        assert!(!stands_for(&dec(1414, 3), 3, &complex));
        let near_int = Value::Approx {
            re: 3.0 + 1e-13,
            im: 0.0,
        };
        assert!(!stands_for(&dec(3000, 3), 3, &near_int));
    }
}
