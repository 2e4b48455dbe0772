//! The fused kernels against candle's composed ops: forward values bit for bit, gradients
//! against finite differences and against candle's autograd, over several parallel blocks.

use candle_core::{D, Device, Var};

use super::*;

fn seeded(shape: &[usize], seed: u64) -> Tensor {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n).map(|_| rng.gen_range(-1.0f32..1.0)).collect();
    Tensor::from_vec(v, shape, &Device::Cpu).unwrap()
}

/// A fixed random projection of `y` to a scalar, so every output element gets a distinct
/// upstream gradient.
fn project(y: &Tensor, seed: u64) -> Tensor {
    let p = seeded(y.dims(), seed);
    (y * p).unwrap().sum_all().unwrap()
}

/// Central differences of `f` at `x` in f64, against the analytic gradient the autograd
/// graph gives in f32; returns the largest relative error.
fn gradient_error(x: &Tensor, f: &dyn Fn(&Tensor) -> Tensor) -> f32 {
    let var = Var::from_tensor(x).unwrap();
    let grads = f(var.as_tensor()).backward().unwrap();
    let analytic: Vec<f32> = grads
        .get(var.as_tensor())
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1()
        .unwrap();
    let base: Vec<f32> = x.flatten_all().unwrap().to_vec1().unwrap();
    let h = 1e-2f32;
    let mut worst = 0f32;
    for i in 0..base.len() {
        let at = |delta: f32| {
            let mut v = base.clone();
            v[i] += delta;
            let t = Tensor::from_vec(v, x.shape(), &Device::Cpu).unwrap();
            f64::from(f(&t).to_scalar::<f32>().unwrap())
        };
        let numeric = ((at(h) - at(-h)) / (2.0 * f64::from(h))) as f32;
        let err = (numeric - analytic[i]).abs() / (1.0 + numeric.abs());
        worst = worst.max(err);
    }
    worst
}

fn composed_rms_norm(x: &Tensor, w: &Tensor, eps: f64) -> Tensor {
    let norm = (x.sqr().unwrap().mean_keepdim(D::Minus1).unwrap() + eps)
        .unwrap()
        .sqrt()
        .unwrap();
    x.broadcast_div(&norm).unwrap().broadcast_mul(w).unwrap()
}

fn bits(t: &Tensor) -> Vec<u32> {
    let v: Vec<f32> = t.flatten_all().unwrap().to_vec1().unwrap();
    v.iter().map(|f| f.to_bits()).collect()
}

#[test]
fn rms_norm_forward_is_the_composed_ops_bit_for_bit() {
    // 19,200 elements: two parallel blocks.
    let x = seeded(&[3, 100, 64], 1);
    let w = seeded(&[64], 2);
    assert_eq!(
        bits(&rms_norm(&x, &w, 1e-6).unwrap()),
        bits(&composed_rms_norm(&x, &w, 1e-6))
    );
}

#[test]
fn rms_norm_gradients_match_finite_differences() {
    let x = seeded(&[2, 3, 8], 3);
    let w = seeded(&[8], 4);
    let wx = w.clone();
    let err = gradient_error(&x, &|x| project(&rms_norm(x, &wx, 1e-6).unwrap(), 5));
    assert!(err < 2e-3, "dx: {err}");
    let err = gradient_error(&w, &|w| project(&rms_norm(&x, w, 1e-6).unwrap(), 5));
    assert!(err < 2e-3, "dw: {err}");
}

fn composed_rope(x: &Tensor, cos: &Tensor, sin: &Tensor) -> Tensor {
    let half = x.dim(D::Minus1).unwrap() / 2;
    let x1 = x.narrow(D::Minus1, 0, half).unwrap();
    let x2 = x.narrow(D::Minus1, half, half).unwrap();
    let r1 = (x1.broadcast_mul(cos).unwrap() - x2.broadcast_mul(sin).unwrap()).unwrap();
    let r2 = (x2.broadcast_mul(cos).unwrap() + x1.broadcast_mul(sin).unwrap()).unwrap();
    Tensor::cat(&[r1, r2], D::Minus1).unwrap()
}

#[test]
fn rope_forward_is_the_composed_ops_bit_for_bit_and_its_gradient_is_right() {
    let big = seeded(&[2, 40, 4, 64], 6);
    let (big_cos, big_sin) = (seeded(&[2, 40, 1, 32], 7), seeded(&[2, 40, 1, 32], 8));
    assert_eq!(
        bits(&rope(&big, &big_cos, &big_sin).unwrap()),
        bits(&composed_rope(&big, &big_cos, &big_sin))
    );
    let x = seeded(&[2, 3, 4, 8], 6);
    let cos = seeded(&[2, 3, 1, 4], 7);
    let sin = seeded(&[2, 3, 1, 4], 8);
    let err = gradient_error(&x, &|x| project(&rope(x, &cos, &sin).unwrap(), 9));
    assert!(err < 2e-3, "{err}");
}

#[test]
fn swiglu_forward_is_the_composed_ops_bit_for_bit_and_its_gradients_are_right() {
    let big = (seeded(&[20, 30, 40], 12) * 4.0).unwrap();
    let big_up = seeded(&[20, 30, 40], 13);
    let composed = (big.silu().unwrap() * &big_up).unwrap();
    assert_eq!(bits(&swiglu(&big, &big_up).unwrap()), bits(&composed));
    let gate = (seeded(&[3, 4, 6], 12) * 4.0).unwrap();
    let up = seeded(&[3, 4, 6], 13);
    let u = up.clone();
    let err = gradient_error(&gate, &|g| project(&swiglu(g, &u).unwrap(), 14));
    assert!(err < 2e-3, "dgate: {err}");
    let err = gradient_error(&up, &|u| project(&swiglu(&gate, u).unwrap(), 14));
    assert!(err < 2e-3, "dup: {err}");
}

fn composed_softmax(scores: &Tensor, scale: f64, mask: Option<&Tensor>) -> Tensor {
    let s = (scores * scale).unwrap();
    let s = match mask {
        Some(m) => s.broadcast_add(m).unwrap(),
        None => s,
    };
    let max = s.max_keepdim(D::Minus1).unwrap();
    let e = s.broadcast_sub(&max).unwrap().exp().unwrap();
    let sum = e.sum_keepdim(D::Minus1).unwrap();
    e.broadcast_div(&sum).unwrap()
}

/// The gradient of `project(f(x))` with respect to `x` through candle's autograd.
fn autograd(x: &Tensor, f: &dyn Fn(&Tensor) -> Tensor) -> Vec<f32> {
    let var = Var::from_tensor(x).unwrap();
    let grads = project(&f(var.as_tensor()), 21).backward().unwrap();
    grads
        .get(var.as_tensor())
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1()
        .unwrap()
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[test]
fn skinny_linear_matches_the_matrix_multiply() {
    for (rows, n, outputs) in [(1, 64, 200), (8, 576, 300), (16, 37, 5), (3, 8, 64)] {
        let x = seeded(&[rows, n], 30);
        let w = seeded(&[outputs, n], 31);
        let b = seeded(&[outputs], 32);
        let want = x
            .matmul(&w.t().unwrap())
            .unwrap()
            .broadcast_add(&b)
            .unwrap();
        let got = skinny_linear(&x, &w, Some(&b)).unwrap();
        let diff = max_diff(
            &got.flatten_all().unwrap().to_vec1().unwrap(),
            &want.flatten_all().unwrap().to_vec1().unwrap(),
        );
        assert!(diff < 1e-4, "{rows}×{n}·{outputs}: {diff}");
        assert_eq!(got.dims(), [rows, outputs]);
    }
}

#[test]
fn backward_passes_over_several_parallel_blocks_match_the_composed_ops() {
    let x = seeded(&[3, 100, 64], 15);
    let w = seeded(&[64], 16);
    let wx = w.clone();
    let fused = autograd(&x, &|x| rms_norm(x, &wx, 1e-6).unwrap());
    let composed = autograd(&x, &|x| composed_rms_norm(x, &wx, 1e-6));
    assert!(max_diff(&fused, &composed) < 1e-4, "rms_norm dx");
    let fused = autograd(&w, &|w| rms_norm(&x, w, 1e-6).unwrap());
    let composed = autograd(&w, &|w| composed_rms_norm(&x, w, 1e-6));
    assert!(max_diff(&fused, &composed) < 1e-3, "rms_norm dw");
    let scores = seeded(&[2, 3, 60, 50], 17);
    let fused = autograd(&scores, &|s| attention_softmax(s, 0.5, None).unwrap());
    let composed = autograd(&scores, &|s| composed_softmax(s, 0.5, None));
    assert!(max_diff(&fused, &composed) < 1e-5, "softmax");
    let up = seeded(&[20, 30, 40], 18);
    let fused = autograd(&(&up * 3.0).unwrap(), &|g| swiglu(g, &up).unwrap());
    let composed = autograd(&(&up * 3.0).unwrap(), &|g| {
        (g.silu().unwrap() * &up).unwrap()
    });
    assert!(max_diff(&fused, &composed) < 1e-5, "swiglu");
}

#[test]
fn attention_softmax_is_the_composed_ops_bit_for_bit_and_its_gradient_is_right() {
    let scores = seeded(&[2, 3, 4, 5], 10);
    // A causal mask with one padded key in batch row 1.
    let mut m = vec![0f32; 2 * 4 * 5];
    for b in 0..2 {
        for q in 0..4 {
            for k in 0..5 {
                if k > q + 1 || (b == 1 && k == 0) {
                    m[(b * 4 + q) * 5 + k] = -1e9;
                }
            }
        }
    }
    let mask = Tensor::from_vec(m, (2, 1, 4, 5), &Device::Cpu).unwrap();
    let big = seeded(&[2, 3, 60, 50], 19);
    assert_eq!(
        bits(&attention_softmax(&big, 0.25, None).unwrap()),
        bits(&composed_softmax(&big, 0.25, None))
    );
    for mask in [None, Some(&mask)] {
        assert_eq!(
            bits(&attention_softmax(&scores, 0.25, mask).unwrap()),
            bits(&composed_softmax(&scores, 0.25, mask))
        );
        let err = gradient_error(&scores, &|s| {
            project(&attention_softmax(s, 0.25, mask).unwrap(), 11)
        });
        assert!(err < 2e-3, "{err}");
    }
}

/// `x·Wᵀ + b + s·(x·Aᵀ)·Bᵀ` from candle's ops.
fn composed_lora(
    w: &Tensor,
    bias: &Tensor,
    s: f64,
) -> impl Fn(&Tensor, &Tensor, &Tensor) -> CResult<Tensor> {
    move |x: &Tensor, a: &Tensor, b: &Tensor| {
        x.matmul(&w.t()?)?.broadcast_add(bias)? + (x.matmul(&a.t()?)? * s)?.matmul(&b.t()?)?
    }
}

#[test]
fn lora_linear_is_the_composed_ops_forward_and_backward() {
    let (w, bias) = (seeded(&[7, 12], 12), seeded(&[7], 13));
    let s = 2.5;
    let composed = composed_lora(&w, &bias, s);
    let x = Var::from_tensor(&seeded(&[5, 12], 11)).unwrap();
    let a = Var::from_tensor(&seeded(&[3, 12], 14)).unwrap();
    let b = Var::from_tensor(&seeded(&[7, 3], 15)).unwrap();
    let (xt, at, bt) = (x.as_tensor(), a.as_tensor(), b.as_tensor());
    let fused = lora_linear(xt, &w, at, bt, s, &composed).unwrap();
    let plain = composed(xt, at, bt).unwrap();
    assert_eq!(bits(&fused), bits(&plain));
    let fused_grads = project(&fused, 16).backward().unwrap();
    let plain_grads = project(&plain, 16).backward().unwrap();
    for v in [&x, &a, &b] {
        let g = |grads: &candle_core::backprop::GradStore| -> Vec<f32> {
            grads
                .get(v.as_tensor())
                .unwrap()
                .flatten_all()
                .unwrap()
                .to_vec1()
                .unwrap()
        };
        let (f, p) = (g(&fused_grads), g(&plain_grads));
        assert_eq!(f.len(), p.len());
        for (f, p) in f.iter().zip(&p) {
            assert!((f - p).abs() <= 1e-5 * (1.0 + p.abs()), "{f} against {p}");
        }
    }
    // The frozen weight is a constant: the node never asks for its gradient.
    assert!(fused_grads.get(&w).is_none());
}

#[test]
fn lora_linear_gradients_match_finite_differences() {
    let (w, bias) = (seeded(&[6, 8], 22), seeded(&[6], 23));
    let s = 0.75;
    let composed = composed_lora(&w, &bias, s);
    let (x, a, b) = (
        seeded(&[4, 8], 21),
        seeded(&[2, 8], 24),
        seeded(&[6, 2], 25),
    );
    let run = |x: &Tensor, a: &Tensor, b: &Tensor| {
        project(&lora_linear(x, &w, a, b, s, &composed).unwrap(), 26)
    };
    assert!(gradient_error(&x, &|x| run(x, &a, &b)) < 1e-3);
    assert!(gradient_error(&a, &|a| run(&x, a, &b)) < 1e-3);
    assert!(gradient_error(&b, &|b| run(&x, &a, b)) < 1e-3);
}
