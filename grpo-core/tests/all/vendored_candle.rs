//! The paths of the vendored candle-core that the workspace patches (`vendor/README.md`):
//!
//! - `GradStore::accumulate`: a tensor that feeds several ops (and a strided view of one) gets
//!   the sum of its gradients, checked against central finite differences in f64;
//! - `Op::Matmul`: a constant side (no op, not a variable: a frozen weight, a detached tensor)
//!   gets no gradient, and the tracked side's gradient is unchanged;
//! - the CPU matrix multiply without a zero-filled output: every element is written, an empty
//!   sum (k = 0) is zeros, and values match a plain triple loop.

use candle_core::{D, DType, Device, Tensor, Var};

const CPU: Device = Device::Cpu;

/// The function under test: `x` feeds five ops (two of them through a transposed view), so
/// its gradient is accumulated from five contributions, one of them first stored from a
/// strided tensor.
fn f(x: &Tensor, w: &Tensor) -> candle_core::Result<Tensor> {
    let square = x.sqr()?.sum_all()?;
    let exp = x.exp()?.mean_all()?;
    let product = x.matmul(w)?.tanh()?.sum_all()?;
    let transposed = x.t()?.matmul(&x.ones_like()?)?.sqr()?.sum_all()?;
    let softmax = candle_nn::ops::log_softmax(&x.t()?, D::Minus1)?
        .narrow(1, 0, 1)?
        .sum_all()?;
    square
        .add(&exp)?
        .add(&product)?
        .add(&transposed)?
        .add(&softmax)
}

fn values(n: usize, scale: f64, offset: f64) -> Vec<f64> {
    (0..n)
        .map(|i| ((i as f64 * 0.731 + offset).sin()) * scale)
        .collect()
}

#[test]
fn accumulated_gradients_match_finite_differences() -> candle_core::Result<()> {
    let (rows, cols) = (3, 4);
    let start = values(rows * cols, 0.8, 0.3);
    let w = Tensor::from_vec(values(cols * 2, 0.5, 1.7), (cols, 2), &CPU)?;
    let x = Var::from_vec(start.clone(), (rows, cols), &CPU)?;
    let grads = f(x.as_tensor(), &w)?.backward()?;
    let analytic: Vec<f64> = grads
        .get(x.as_tensor())
        .expect("x has a gradient")
        .flatten_all()?
        .to_vec1()?;

    let h = 1e-6;
    let at = |values: Vec<f64>| -> candle_core::Result<f64> {
        f(&Tensor::from_vec(values, (rows, cols), &CPU)?, &w)?.to_scalar::<f64>()
    };
    for (i, analytic) in analytic.iter().enumerate() {
        let mut plus = start.clone();
        plus[i] += h;
        let mut minus = start.clone();
        minus[i] -= h;
        let numeric = (at(plus)? - at(minus)?) / (2.0 * h);
        assert!(
            (analytic - numeric).abs() <= 1e-6 * (1.0 + numeric.abs()),
            "element {i}: backward gives {analytic}, finite differences {numeric}"
        );
    }
    Ok(())
}

#[test]
fn a_gradient_is_stored_once_per_tensor_and_not_aliased_to_its_source() -> candle_core::Result<()> {
    // x is used once through a transposed view: its stored gradient must be the contiguous
    // transpose of the view's, and a second backward pass must not change the first's store.
    let x = Var::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], (2, 3), &CPU)?;
    let weights = Tensor::from_vec(vec![1.0f64, 10.0, 100.0, 1000.0, 1e4, 1e5], (3, 2), &CPU)?;
    let loss = x.t()?.mul(&weights)?.sum_all()?;
    let first = loss.backward()?;
    let grad = first.get(x.as_tensor()).expect("x has a gradient");
    assert!(grad.is_contiguous());
    assert_eq!(
        grad.to_vec2::<f64>()?,
        vec![vec![1.0, 100.0, 1e4], vec![10.0, 1000.0, 1e5]]
    );
    let second = loss.backward()?;
    assert_eq!(
        second.get(x.as_tensor()).expect("x").to_vec2::<f64>()?,
        grad.to_vec2::<f64>()?
    );
    Ok(())
}

#[test]
fn a_constant_side_of_a_matmul_gets_no_gradient() -> candle_core::Result<()> {
    let a = Var::from_vec(values(6, 1.0, 0.1), (2, 3), &CPU)?;
    let frozen = Tensor::from_vec(values(12, 1.0, 2.2), (3, 4), &CPU)?;
    let trained = Var::from_vec(values(12, 1.0, 2.2), (3, 4), &CPU)?;
    let detached = trained.as_tensor().detach();

    for constant in [&frozen, &detached] {
        let grads = a.as_tensor().matmul(constant)?.sum_all()?.backward()?;
        assert!(
            grads.get(constant).is_none(),
            "a constant side of a matmul received a gradient"
        );
        // d/da sum(a · b) = 1 · bᵀ: each row of the gradient is b's row sums.
        let expected: Vec<f64> = constant.sum(1)?.to_vec1()?;
        for row in grads
            .get(a.as_tensor())
            .expect("a has a gradient")
            .to_vec2::<f64>()?
        {
            for (got, want) in row.iter().zip(&expected) {
                assert!((got - want).abs() < 1e-12, "{got} vs {want}");
            }
        }
    }
    // Both sides tracked: both get theirs.
    let grads = a
        .as_tensor()
        .matmul(trained.as_tensor())?
        .sum_all()?
        .backward()?;
    assert!(grads.get(trained.as_tensor()).is_some());
    assert!(grads.get(a.as_tensor()).is_some());
    Ok(())
}

fn naive_matmul(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut out = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            out[i * n + j] = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
        }
    }
    out
}

#[test]
fn cpu_matmul_writes_every_element_and_an_empty_sum_is_zero() -> candle_core::Result<()> {
    // Allocate and free buffers of the output's size filled with garbage first, so an element
    // the multiply failed to write would likely show something other than the right value.
    for _ in 0..4 {
        drop(Tensor::full(f32::NAN, (17, 23), &CPU)?);
    }
    for (m, k, n) in [(17, 9, 23), (1, 1, 1), (5, 64, 3), (2, 3, 1)] {
        let a: Vec<f32> = values(m * k, 1.0, 0.5).iter().map(|&v| v as f32).collect();
        let b: Vec<f32> = values(k * n, 1.0, 1.5).iter().map(|&v| v as f32).collect();
        let product = Tensor::from_vec(a.clone(), (m, k), &CPU)?.matmul(&Tensor::from_vec(
            b.clone(),
            (k, n),
            &CPU,
        )?)?;
        let got = product.flatten_all()?.to_vec1::<f32>()?;
        let want = naive_matmul(&a, &b, m, k, n);
        for (index, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(
                (g - w).abs() <= 1e-4,
                "{m}x{k}x{n} element {index}: {g} vs {w}"
            );
        }
    }
    for dtype in [DType::F32, DType::F64] {
        drop(Tensor::full(7.0f32, (4, 5), &CPU)?.to_dtype(dtype)?);
        let empty =
            Tensor::zeros((4, 0), dtype, &CPU)?.matmul(&Tensor::zeros((0, 5), dtype, &CPU)?)?;
        assert_eq!(empty.dims(), &[4, 5]);
        assert_eq!(
            empty
                .to_dtype(DType::F64)?
                .flatten_all()?
                .to_vec1::<f64>()?,
            vec![0.0; 20],
            "{dtype:?}: an empty sum is zero"
        );
    }
    Ok(())
}
