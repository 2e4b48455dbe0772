//! The gated MLP activation with its backward, and the skinny matrix-vector kernel of decoding.

use candle_core::{CpuStorage, CustomOp2, CustomOp3, Layout, Shape, Tensor};

use super::{CResult, packed_grads, par_rows, slice};

/// Most rows [`skinny_linear`] takes: decoding steps (one token per sampled row).
pub(crate) const SKINNY_ROWS: usize = 16;

/// `x · Wᵀ (+ b)` for a few rows (`x`: `[rows, in]`, `weight`: `[out, in]`, f32, CPU), with no
/// gradient: one pass over the weight, each of its rows read once and dotted with every row of
/// `x` (which stays in cache), in parallel over blocks of outputs.
///
/// A general matrix multiply first packs the weight into panels, which for a decoding step
/// (8 rows against a 576 × 49,152 head) costs as much memory traffic as the product itself;
/// decoding is bound by reading the weights, so this reads them once.
pub(crate) fn skinny_linear(x: &Tensor, weight: &Tensor, bias: Option<&Tensor>) -> CResult<Tensor> {
    use rayon::prelude::*;
    let (rows, n) = x.dims2()?;
    let (outputs, n_w) = weight.dims2()?;
    if n != n_w {
        return Err(candle_core::Error::Msg(format!(
            "skinny_linear: rows of {n} against a weight of {outputs} × {n_w}"
        )));
    }
    let x = x.contiguous()?.flatten_all()?.to_vec1::<f32>()?;
    let weight = weight.contiguous()?;
    let (storage, layout) = weight.storage_and_layout();
    let candle_core::Storage::Cpu(storage) = &*storage else {
        return Err(candle_core::Error::Msg(
            "skinny_linear: expected a CPU weight".into(),
        ));
    };
    let w = slice(storage, layout, "skinny_linear")?;
    let bias = bias.map(|b| b.to_vec1::<f32>()).transpose()?;
    // out_t[o][r]: blocks of 64 outputs in parallel, then transposed to [rows, outputs].
    let mut out_t = vec![0f32; outputs * rows];
    if rows > 0 && n > 0 {
        out_t
            .par_chunks_mut(64 * rows)
            .enumerate()
            .for_each(|(block, chunk)| {
                for (j, dots) in chunk.chunks_exact_mut(rows).enumerate() {
                    let o = block * 64 + j;
                    row_dots(&w[o * n..(o + 1) * n], &x, dots);
                }
            });
    }
    let mut out = vec![0f32; rows * outputs];
    for (o, dots) in out_t.chunks_exact(rows.max(1)).enumerate() {
        let b = bias.as_ref().map_or(0.0, |b| b[o]);
        for (r, &d) in dots.iter().enumerate() {
            out[r * outputs + o] = d + b;
        }
    }
    Tensor::from_vec(out, (rows, outputs), &candle_core::Device::Cpu)
}

/// `dots[r] = w · x[r]` for every row `r` of `x` (rows of `w.len()`).
fn row_dots(w: &[f32], x: &[f32], dots: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has AVX2 and FMA (checked just above).
        unsafe { row_dots_avx2(w, x, dots) };
        return;
    }
    row_dots_portable(w, x, dots);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn row_dots_avx2(w: &[f32], x: &[f32], dots: &mut [f32]) {
    let n = w.len();
    for (r, d) in dots.iter_mut().enumerate() {
        let xr = &x[r * n..(r + 1) * n];
        let mut acc = [0f32; 16];
        for (wc, xc) in w.chunks_exact(16).zip(xr.chunks_exact(16)) {
            for j in 0..16 {
                acc[j] = wc[j].mul_add(xc[j], acc[j]);
            }
        }
        let tail = n - n % 16;
        let mut sum: f32 = acc.iter().sum();
        for i in tail..n {
            sum = w[i].mul_add(xr[i], sum);
        }
        *d = sum;
    }
}

fn row_dots_portable(w: &[f32], x: &[f32], dots: &mut [f32]) {
    let n = w.len();
    for (r, d) in dots.iter_mut().enumerate() {
        let xr = &x[r * n..(r + 1) * n];
        let mut acc = [0f32; 8];
        for (wc, xc) in w.chunks_exact(8).zip(xr.chunks_exact(8)) {
            for j in 0..8 {
                acc[j] += wc[j] * xc[j];
            }
        }
        let tail = n - n % 8;
        let mut sum: f32 = acc.iter().sum();
        for i in tail..n {
            sum += w[i] * xr[i];
        }
        *d = sum;
    }
}

/// The gated MLP activation `silu(gate) · up` (both the same shape, f32, CPU).
pub(crate) fn swiglu(gate: &Tensor, up: &Tensor) -> CResult<Tensor> {
    gate.contiguous()?.apply_op2(&up.contiguous()?, SwiGlu)
}

struct SwiGlu;

impl CustomOp2 for SwiGlu {
    fn name(&self) -> &'static str {
        "grpo-swiglu"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> CResult<(CpuStorage, Shape)> {
        let a = slice(s1, l1, self.name())?;
        let b = slice(s2, l2, self.name())?;
        if a.len() != b.len() {
            return Err(candle_core::Error::Msg(format!(
                "swiglu: {} gate and {} up values",
                a.len(),
                b.len()
            )));
        }
        // As candle's `silu` (`x / (1 + e^−x)`) and then the product.
        let mut out = vec![0f32; a.len()];
        par_rows(&mut out, 1, |first, block| {
            for (i, o) in block.iter_mut().enumerate() {
                let (a, b) = (a[first + i], b[first + i]);
                *o = (a / (1.0 + (-a).exp())) * b;
            }
        });
        Ok((CpuStorage::F32(out), l1.shape().clone()))
    }

    fn bwd(
        &self,
        gate: &Tensor,
        up: &Tensor,
        _res: &Tensor,
        grad: &Tensor,
    ) -> CResult<(Option<Tensor>, Option<Tensor>)> {
        packed_grads(gate, up, grad, &SwiGluBackward)
    }
}

/// The gradients of `silu(a) · b`, packed as `[da, db]`: with `s = sigmoid(a)`,
/// `da = g · b · s · (1 + a · (1 − s))` and `db = g · a · s`.
struct SwiGluBackward;

impl CustomOp3 for SwiGluBackward {
    fn name(&self) -> &'static str {
        "grpo-swiglu-backward"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
        s3: &CpuStorage,
        l3: &Layout,
    ) -> CResult<(CpuStorage, Shape)> {
        let a = slice(s1, l1, self.name())?;
        let b = slice(s2, l2, self.name())?;
        let g = slice(s3, l3, self.name())?;
        let n = a.len();
        // Rows of two, `[da_i, db_i]`, rearranged into `[da, db]` after.
        let mut pairs = vec![0f32; 2 * n];
        par_rows(&mut pairs, 2, |first, block| {
            for (j, pair) in block.chunks_exact_mut(2).enumerate() {
                let i = first + j;
                let s = 1.0 / (1.0 + (-a[i]).exp());
                pair[0] = g[i] * b[i] * s * (1.0 + a[i] * (1.0 - s));
                pair[1] = g[i] * a[i] * s;
            }
        });
        let mut out = Vec::with_capacity(2 * n);
        out.extend(pairs.iter().step_by(2));
        out.extend(pairs.iter().skip(1).step_by(2));
        Ok((CpuStorage::F32(out), Shape::from(2 * n)))
    }
}
