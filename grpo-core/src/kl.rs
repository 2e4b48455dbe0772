//! Per-token estimators of KL(π_θ ‖ π_ref) from the log-probabilities of sampled tokens.
//!
//! With `d = log π_ref(o_t) − log π_θ(o_t)` (Schulman, "Approximating KL divergence"):
//!
//! | estimator | formula | bias | sign |
//! |---|---|---|---|
//! | k1 | `−d` | unbiased | any |
//! | k2 | `d² / 2` | biased | ≥ 0 |
//! | k3 | `exp(d) − d − 1` | unbiased | ≥ 0 (DeepSeekMath eq. 4, the default) |
//!
//! All three are differentiable with respect to `logprobs`; the reference is a constant.

use candle_core::Tensor;

use crate::config::KlEstimator;
use crate::error::{Error, Result};

/// k1 = `logprobs − ref_logprobs`.
///
/// # Shapes
/// - `logprobs`, `ref_logprobs`: the same shape, usually `[batch, seq]`.
/// - returns: that shape.
pub fn kl_k1(logprobs: &Tensor, ref_logprobs: &Tensor) -> Result<Tensor> {
    check_same_shape(logprobs, ref_logprobs)?;
    Ok((logprobs - ref_logprobs.detach())?)
}

/// k2 = `(logprobs − ref_logprobs)² / 2`.
///
/// # Shapes
/// - `logprobs`, `ref_logprobs`: the same shape; returns that shape.
pub fn kl_k2(logprobs: &Tensor, ref_logprobs: &Tensor) -> Result<Tensor> {
    Ok((kl_k1(logprobs, ref_logprobs)?.sqr()? * 0.5)?)
}

/// k3 = `exp(d) − d − 1` with `d = ref_logprobs − logprobs` (DeepSeekMath eq. 4).
///
/// # Shapes
/// - `logprobs`, `ref_logprobs`: the same shape; returns that shape.
///
/// # Example
/// ```
/// use candle_core::{Device, Tensor};
/// use grpo_core::kl_k3;
///
/// // π = 0.5, π_ref = 0.25: d = ln 0.5, k3 = 0.5 − ln 0.5 − 1 = ln 2 − 0.5.
/// let logp = Tensor::new(&[0.5f64.ln()], &Device::Cpu)?;
/// let reference = Tensor::new(&[0.25f64.ln()], &Device::Cpu)?;
/// let k3 = kl_k3(&logp, &reference)?.to_vec1::<f64>()?;
/// assert!((k3[0] - (2f64.ln() - 0.5)).abs() < 1e-12);
/// # Ok::<(), grpo_core::Error>(())
/// ```
pub fn kl_k3(logprobs: &Tensor, ref_logprobs: &Tensor) -> Result<Tensor> {
    check_same_shape(logprobs, ref_logprobs)?;
    let d = (ref_logprobs.detach() - logprobs)?;
    Ok(((d.exp()? - d)? - 1.0)?)
}

/// The chosen estimator.
///
/// # Shapes
/// - `logprobs`, `ref_logprobs`: the same shape; returns that shape.
pub fn kl_estimate(
    logprobs: &Tensor,
    ref_logprobs: &Tensor,
    estimator: KlEstimator,
) -> Result<Tensor> {
    match estimator {
        KlEstimator::K1 => kl_k1(logprobs, ref_logprobs),
        KlEstimator::K2 => kl_k2(logprobs, ref_logprobs),
        KlEstimator::K3 => kl_k3(logprobs, ref_logprobs),
    }
}

fn check_same_shape(logprobs: &Tensor, ref_logprobs: &Tensor) -> Result<()> {
    if logprobs.dims() != ref_logprobs.dims() {
        return Err(Error::Shape {
            name: "ref_logprobs",
            expected: format!("{:?} (the shape of logprobs)", logprobs.dims()),
            got: ref_logprobs.dims().to_vec(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;
    use proptest::prelude::*;

    fn eval(estimator: KlEstimator, logp: f64, reference: f64) -> f64 {
        let a = Tensor::new(&[logp], &Device::Cpu).unwrap();
        let b = Tensor::new(&[reference], &Device::Cpu).unwrap();
        kl_estimate(&a, &b, estimator)
            .unwrap()
            .to_vec1::<f64>()
            .unwrap()[0]
    }

    #[test]
    fn estimator_goldens() {
        // π = 0.3, π_ref = 0.2: d = ln(0.2/0.3) = ln(2/3) = −0.4054651.
        // k1 = 0.4054651; k2 = 0.4054651² / 2 = 0.0822010; k3 = 2/3 + 0.4054651 − 1 = 0.0721318.
        let (lp, r) = (0.3f64.ln(), 0.2f64.ln());
        let d = (2f64 / 3.0).ln();
        assert!((eval(KlEstimator::K1, lp, r) - (-d)).abs() < 1e-12);
        assert!((eval(KlEstimator::K2, lp, r) - d * d / 2.0).abs() < 1e-12);
        assert!((eval(KlEstimator::K3, lp, r) - (2.0 / 3.0 - d - 1.0)).abs() < 1e-12);
        assert!((eval(KlEstimator::K3, lp, r) - 0.0721318).abs() < 1e-7);
        for estimator in [KlEstimator::K1, KlEstimator::K2, KlEstimator::K3] {
            assert_eq!(eval(estimator, -1.7, -1.7), 0.0);
        }
    }

    #[test]
    fn shape_mismatch_is_an_error() {
        let a = Tensor::zeros((2, 3), candle_core::DType::F32, &Device::Cpu).unwrap();
        let b = Tensor::zeros((3, 2), candle_core::DType::F32, &Device::Cpu).unwrap();
        assert!(matches!(
            kl_k3(&a, &b),
            Err(Error::Shape {
                name: "ref_logprobs",
                ..
            })
        ));
    }

    #[test]
    fn k3_is_unbiased_for_the_exact_kl() {
        // Σ_x π(x) k3(x) = Σ π (π_ref/π − ln(π_ref/π) − 1) = KL(π ‖ π_ref) exactly.
        let pi = [0.5f64, 0.3, 0.2];
        let pref = [0.2f64, 0.2, 0.6];
        let exact: f64 = pi.iter().zip(&pref).map(|(p, q)| p * (p / q).ln()).sum();
        let expected_k3: f64 = pi
            .iter()
            .zip(&pref)
            .map(|(p, q)| p * eval(KlEstimator::K3, p.ln(), q.ln()))
            .sum();
        let expected_k1: f64 = pi
            .iter()
            .zip(&pref)
            .map(|(p, q)| p * eval(KlEstimator::K1, p.ln(), q.ln()))
            .sum();
        assert!((expected_k3 - exact).abs() < 1e-12);
        assert!((expected_k1 - exact).abs() < 1e-12);
    }

    proptest! {
        #[test]
        fn k2_and_k3_are_non_negative(lp in -20f64..0., r in -20f64..0.) {
            // k3 is ≥ 0 in exact arithmetic; `(exp(d) − d) − 1` can round to −1 ulp of 1 when d ≈ 0.
            prop_assert!(eval(KlEstimator::K3, lp, r) >= -1e-15);
            prop_assert!(eval(KlEstimator::K2, lp, r) >= 0.0);
        }
    }
}
