//! Fused CPU kernels with their own backward pass: RMSNorm, RoPE, the attention softmax and
//! the gated MLP activation.
//!
//! Each kernel replaces a chain of candle ops (and their autograd nodes: RMSNorm was seven
//! ops, RoPE eight, the attention's scale, mask and softmax six, `silu(gate) · up` two forward
//! and about ten backward) by one pass over the data forward and one backward. The forward passes compute exactly what the composed ops compute,
//! in the same order (candle's own row sum for the reductions), so a forward pass gives the
//! same bits either way; the backward passes are the analytic gradients, which round
//! differently from candle's chain rule through the composed ops.
//!
//! They run on contiguous f32 tensors on the CPU; every other device and dtype goes through
//! the composed ops in `ops.rs` (a CustomOp has no CUDA or Metal kernel unless it is given
//! one). The gradients are checked against finite differences in the tests below, since a
//! missing or wrong gradient would be silent.

use candle_core::cpu::kernels::VecOps;
use candle_core::{CpuStorage, CustomOp1, CustomOp2, CustomOp3, DType, Layout, Shape, Tensor};

type CResult<T> = candle_core::Result<T>;

/// Whether the fused kernels take `x`: f32 on the CPU.
pub(super) fn applies(x: &Tensor) -> bool {
    x.device().is_cpu() && x.dtype() == DType::F32
}

/// The f32 elements of a contiguous CPU tensor.
fn slice<'a>(storage: &'a CpuStorage, layout: &Layout, op: &'static str) -> CResult<&'a [f32]> {
    let CpuStorage::F32(data) = storage else {
        return Err(candle_core::Error::Msg(format!("{op}: expected f32")));
    };
    let (start, end) = layout
        .contiguous_offsets()
        .ok_or_else(|| candle_core::Error::Msg(format!("{op}: expected a contiguous tensor")))?;
    Ok(&data[start..end])
}

/// The length of the last dimension (1 for a scalar).
fn last_dim(layout: &Layout) -> usize {
    layout.dims().last().copied().unwrap_or(1)
}

/// Elements per parallel block. Blocks hold whole rows and their size does not depend on the
/// thread count, so a kernel's results (partial sums included) are the same on any pool.
const BLOCK_ELEMS: usize = 16 * 1024;

/// Runs `f(first_row, block)` over blocks of whole rows (of `n` elements) of `out`, in parallel
/// on rayon's pool (candle's threads) when there is more than one block; returns each block's
/// result in block order.
fn par_rows<R: Send>(
    out: &mut [f32],
    n: usize,
    f: impl Fn(usize, &mut [f32]) -> R + Sync,
) -> Vec<R> {
    use rayon::prelude::*;
    if n == 0 {
        return Vec::new();
    }
    let rows = (BLOCK_ELEMS / n).max(1);
    if out.len() <= rows * n {
        return vec![f(0, out)];
    }
    out.par_chunks_mut(rows * n)
        .enumerate()
        .map(|(i, block)| f(i * rows, block))
        .collect()
}

/// candle's own sum of a row (the order its `sum_keepdim` over the last dimension uses).
fn row_sum(xs: &[f32]) -> f32 {
    let mut sum = 0f32;
    // SAFETY: `xs` holds `xs.len()` elements and `sum` is a valid destination.
    unsafe { f32::vec_reduce_sum(xs.as_ptr(), &mut sum, xs.len()) };
    sum
}

/// The largest element of a non-empty row.
fn row_max(xs: &[f32]) -> f32 {
    xs.iter().copied().fold(xs[0], f32::max)
}

/// RMSNorm `x / sqrt(mean(x²) + eps) · w` over the last dimension of `x` (f32, CPU).
pub(super) fn rms_norm(x: &Tensor, weight: &Tensor, eps: f64) -> CResult<Tensor> {
    x.contiguous()?
        .apply_op2(&weight.contiguous()?, RmsNorm { eps })
}

struct RmsNorm {
    eps: f64,
}

impl RmsNorm {
    /// Per row `(x / norm, norm)` written into `out` (the normalised row times `w`).
    fn forward_row(&self, x: &[f32], w: &[f32], squares: &mut [f32], out: &mut [f32]) -> f32 {
        let n = x.len();
        for (s, &v) in squares.iter_mut().zip(x) {
            *s = v * v;
        }
        // As the composed ops: sum, `* (1/n)` (an affine with add 0), `+ eps`, sqrt.
        let mean = row_sum(squares) * (1.0 / n as f64) as f32 + 0.0;
        let norm = (mean * 1.0 + self.eps as f32).sqrt();
        for ((o, &v), &wv) in out.iter_mut().zip(x).zip(w) {
            *o = (v / norm) * wv;
        }
        norm
    }
}

impl CustomOp2 for RmsNorm {
    fn name(&self) -> &'static str {
        "grpo-rms-norm"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> CResult<(CpuStorage, Shape)> {
        let x = slice(s1, l1, self.name())?;
        let w = slice(s2, l2, self.name())?;
        let n = last_dim(l1);
        if w.len() != n {
            return Err(candle_core::Error::Msg(format!(
                "rms_norm: weight of {} for rows of {n}",
                w.len()
            )));
        }
        let mut out = vec![0f32; x.len()];
        par_rows(&mut out, n, |first, block| {
            let mut squares = vec![0f32; n];
            for (r, or) in block.chunks_exact_mut(n).enumerate() {
                let row = first + r;
                self.forward_row(&x[row * n..(row + 1) * n], w, &mut squares, or);
            }
        });
        Ok((CpuStorage::F32(out), l1.shape().clone()))
    }

    fn bwd(
        &self,
        x: &Tensor,
        w: &Tensor,
        _res: &Tensor,
        grad: &Tensor,
    ) -> CResult<(Option<Tensor>, Option<Tensor>)> {
        let packed = x.contiguous()?.apply_op3_no_bwd(
            &w.contiguous()?,
            &grad.contiguous()?,
            &RmsNormBackward { eps: self.eps },
        )?;
        let len = x.elem_count();
        let dx = packed.narrow(0, 0, len)?.reshape(x.shape())?;
        let dw = packed.narrow(0, len, w.elem_count())?.reshape(w.shape())?;
        Ok((Some(dx), Some(dw)))
    }
}

/// The gradients of RMSNorm, packed as `[dx (every element of x), dw]`.
///
/// With `r = 1 / norm`, `x̂ = x·r` and `y = x̂·w`: `dw = Σ_rows g·x̂` and
/// `dx = r·(g·w − x̂·mean(g·w·x̂))`.
struct RmsNormBackward {
    eps: f64,
}

impl CustomOp3 for RmsNormBackward {
    fn name(&self) -> &'static str {
        "grpo-rms-norm-backward"
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
        let x = slice(s1, l1, self.name())?;
        let w = slice(s2, l2, self.name())?;
        let g = slice(s3, l3, self.name())?;
        let n = last_dim(l1);
        let mut out = vec![0f32; x.len() + n];
        let (dx, dw_out) = out.split_at_mut(x.len());
        let forward = RmsNorm { eps: self.eps };
        // Each block returns its rows' share of dw; the shares add up in block order.
        let partials = par_rows(dx, n, |first, block| {
            let mut dw = vec![0f64; n];
            let mut squares = vec![0f32; n];
            let mut scratch = vec![0f32; n];
            for (r, dr) in block.chunks_exact_mut(n).enumerate() {
                let row = first + r;
                let xr = &x[row * n..(row + 1) * n];
                let gr = &g[row * n..(row + 1) * n];
                let norm = forward.forward_row(xr, w, &mut squares, &mut scratch);
                let r = 1.0 / f64::from(norm);
                let mut dot = 0f64;
                for i in 0..n {
                    let xh = f64::from(xr[i]) * r;
                    let gw = f64::from(gr[i]) * f64::from(w[i]);
                    dot += gw * xh;
                    dw[i] += f64::from(gr[i]) * xh;
                }
                let mean = dot / n as f64;
                for i in 0..n {
                    let xh = f64::from(xr[i]) * r;
                    let gw = f64::from(gr[i]) * f64::from(w[i]);
                    dr[i] = (r * (gw - xh * mean)) as f32;
                }
            }
            dw
        });
        let mut dw = vec![0f64; n];
        for part in partials {
            for (d, p) in dw.iter_mut().zip(part) {
                *d += p;
            }
        }
        for (o, v) in dw_out.iter_mut().zip(dw) {
            *o = v as f32;
        }
        Ok((CpuStorage::F32(out), Shape::from(x.len() + n)))
    }
}

/// Rotate-half RoPE on `x`: `[batch, seq, heads, head_dim]` (before the heads are transposed
/// forward), with `cos`, `sin`: `[batch, seq, 1, head_dim / 2]` (f32, CPU).
pub(super) fn rope(x: &Tensor, cos: &Tensor, sin: &Tensor) -> CResult<Tensor> {
    x.contiguous()?.apply_op3(
        &cos.contiguous()?,
        &sin.contiguous()?,
        Rope { inverse: false },
    )
}

/// `[x1·cos − x2·sin, x2·cos + x1·sin]` per head, or with `inverse` the transposed rotation
/// `[x1·cos + x2·sin, x2·cos − x1·sin]`, which is the backward pass.
#[derive(Clone, Copy)]
struct Rope {
    inverse: bool,
}

impl CustomOp3 for Rope {
    fn name(&self) -> &'static str {
        "grpo-rope"
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
        let x = slice(s1, l1, self.name())?;
        let cos = slice(s2, l2, self.name())?;
        let sin = slice(s3, l3, self.name())?;
        let (batch, seq, heads, d) = l1.shape().dims4()?;
        let half = d / 2;
        if cos.len() != batch * seq * half || sin.len() != cos.len() || 2 * half != d {
            return Err(candle_core::Error::Msg(format!(
                "rope: tables of {} for {batch}×{seq} positions of head_dim {d}",
                cos.len()
            )));
        }
        let mut out = vec![0f32; x.len()];
        let width = heads * d;
        if half == 0 {
            return Ok((CpuStorage::F32(out), l1.shape().clone()));
        }
        par_rows(&mut out, width, |first, block| {
            for (r, op) in block.chunks_exact_mut(width).enumerate() {
                let position = first + r;
                let xp = &x[position * width..(position + 1) * width];
                let c = &cos[position * half..(position + 1) * half];
                let s = &sin[position * half..(position + 1) * half];
                for (xh, oh) in xp.chunks_exact(d).zip(op.chunks_exact_mut(d)) {
                    let (x1, x2) = xh.split_at(half);
                    let (o1, o2) = oh.split_at_mut(half);
                    for i in 0..half {
                        if self.inverse {
                            o1[i] = x1[i] * c[i] + x2[i] * s[i];
                            o2[i] = x2[i] * c[i] - x1[i] * s[i];
                        } else {
                            o1[i] = x1[i] * c[i] - x2[i] * s[i];
                            o2[i] = x2[i] * c[i] + x1[i] * s[i];
                        }
                    }
                }
            }
        });
        Ok((CpuStorage::F32(out), l1.shape().clone()))
    }

    fn bwd(
        &self,
        _x: &Tensor,
        cos: &Tensor,
        sin: &Tensor,
        _res: &Tensor,
        grad: &Tensor,
    ) -> CResult<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        let inverse = Rope {
            inverse: !self.inverse,
        };
        let dx = grad.contiguous()?.apply_op3_no_bwd(cos, sin, &inverse)?;
        Ok((Some(dx), None, None))
    }
}

/// Most rows [`skinny_linear`] takes: decoding steps (one token per sampled row).
pub(super) const SKINNY_ROWS: usize = 16;

/// `x · Wᵀ (+ b)` for a few rows (`x`: `[rows, in]`, `weight`: `[out, in]`, f32, CPU), with no
/// gradient: one pass over the weight, each of its rows read once and dotted with every row of
/// `x` (which stays in cache), in parallel over blocks of outputs.
///
/// A general matrix multiply first packs the weight into panels, which for a decoding step
/// (8 rows against a 576 × 49,152 head) costs as much memory traffic as the product itself;
/// decoding is bound by reading the weights, so this reads them once.
pub(super) fn skinny_linear(x: &Tensor, weight: &Tensor, bias: Option<&Tensor>) -> CResult<Tensor> {
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
pub(super) fn swiglu(gate: &Tensor, up: &Tensor) -> CResult<Tensor> {
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
        let packed = gate.contiguous()?.apply_op3_no_bwd(
            &up.contiguous()?,
            &grad.contiguous()?,
            &SwiGluBackward,
        )?;
        let n = gate.elem_count();
        let dgate = packed.narrow(0, 0, n)?.reshape(gate.shape())?;
        let dup = packed.narrow(0, n, n)?.reshape(up.shape())?;
        Ok((Some(dgate), Some(dup)))
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

/// The attention probabilities `softmax(scores · scale + mask)` over the last dimension.
///
/// # Shapes
/// - `scores`: `[batch, heads, queries, keys]`, f32 on the CPU;
/// - `mask`: `[batch, 1, queries, keys]` (added to every head), or `None`.
pub(super) fn attention_softmax(
    scores: &Tensor,
    scale: f64,
    mask: Option<&Tensor>,
) -> CResult<Tensor> {
    let op = AttentionSoftmax { scale };
    let scores = scores.contiguous()?;
    match mask {
        None => scores.apply_op1(op),
        Some(mask) => scores.apply_op2(&mask.contiguous()?, op),
    }
}

#[derive(Clone, Copy)]
struct AttentionSoftmax {
    scale: f64,
}

impl AttentionSoftmax {
    /// Softmax of each row of `x · scale (+ mask row)`, in the composed ops' order: the
    /// scaled scores, the mask added, the row's max subtracted, `exp`, candle's row sum,
    /// division.
    fn forward(&self, x: &[f32], layout: &Layout, mask: Option<&[f32]>) -> CResult<Vec<f32>> {
        let n = last_dim(layout);
        let mut out = vec![0f32; x.len()];
        if n == 0 {
            return Ok(out);
        }
        let dims = layout.dims();
        let (queries, heads) = match dims.len() {
            4 => (dims[2], dims[1]),
            _ => (1, 1),
        };
        if let Some(m) = mask
            && (dims.len() != 4 || m.len() != dims[0] * queries * n)
        {
            return Err(candle_core::Error::Msg(format!(
                "attention_softmax: a mask of {} for scores {dims:?}",
                m.len()
            )));
        }
        let scale = self.scale as f32;
        par_rows(&mut out, n, |first, block| {
            for (r, yr) in block.chunks_exact_mut(n).enumerate() {
                let row = first + r;
                let xr = &x[row * n..(row + 1) * n];
                self.forward_row(xr, yr, row, heads, queries, scale, mask);
            }
        });
        Ok(out)
    }

    /// One row of [`AttentionSoftmax::forward`]: row `row` of the scores is `xr`, its
    /// probabilities go to `yr`.
    #[allow(clippy::too_many_arguments)]
    fn forward_row(
        &self,
        xr: &[f32],
        yr: &mut [f32],
        row: usize,
        heads: usize,
        queries: usize,
        scale: f32,
        mask: Option<&[f32]>,
    ) {
        let n = xr.len();
        match mask {
            Some(m) => {
                let batch = row / (heads * queries);
                let query = row % queries;
                let mr = &m[(batch * queries + query) * n..(batch * queries + query + 1) * n];
                for ((y, &v), &mv) in yr.iter_mut().zip(xr).zip(mr) {
                    *y = (v * scale + 0.0) + mv;
                }
            }
            None => {
                for (y, &v) in yr.iter_mut().zip(xr) {
                    *y = v * scale + 0.0;
                }
            }
        }
        let max = row_max(yr);
        for y in yr.iter_mut() {
            *y = (*y - max).exp();
        }
        let sum = row_sum(yr);
        for y in yr.iter_mut() {
            *y /= sum;
        }
    }

    /// `dx = scale · y · (g − Σ g·y)` per row.
    fn backward(&self, y: &Tensor, grad: &Tensor) -> CResult<Tensor> {
        y.contiguous()?
            .apply_op2_no_bwd(&grad.contiguous()?, &SoftmaxBackward { scale: self.scale })
    }
}

impl CustomOp1 for AttentionSoftmax {
    fn name(&self) -> &'static str {
        "grpo-attention-softmax"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> CResult<(CpuStorage, Shape)> {
        let x = slice(storage, layout, CustomOp1::name(self))?;
        let out = self.forward(x, layout, None)?;
        Ok((CpuStorage::F32(out), layout.shape().clone()))
    }

    fn bwd(&self, _x: &Tensor, res: &Tensor, grad: &Tensor) -> CResult<Option<Tensor>> {
        Ok(Some(self.backward(res, grad)?))
    }
}

impl CustomOp2 for AttentionSoftmax {
    fn name(&self) -> &'static str {
        "grpo-attention-softmax-masked"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> CResult<(CpuStorage, Shape)> {
        let x = slice(s1, l1, CustomOp2::name(self))?;
        let mask = slice(s2, l2, CustomOp2::name(self))?;
        let out = self.forward(x, l1, Some(mask))?;
        Ok((CpuStorage::F32(out), l1.shape().clone()))
    }

    fn bwd(
        &self,
        _x: &Tensor,
        _mask: &Tensor,
        res: &Tensor,
        grad: &Tensor,
    ) -> CResult<(Option<Tensor>, Option<Tensor>)> {
        Ok((Some(self.backward(res, grad)?), None))
    }
}

struct SoftmaxBackward {
    scale: f64,
}

impl CustomOp2 for SoftmaxBackward {
    fn name(&self) -> &'static str {
        "grpo-softmax-backward"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> CResult<(CpuStorage, Shape)> {
        let y = slice(s1, l1, self.name())?;
        let g = slice(s2, l2, self.name())?;
        let n = last_dim(l1);
        let mut out = vec![0f32; y.len()];
        par_rows(&mut out, n, |first, block| {
            for (r, dr) in block.chunks_exact_mut(n).enumerate() {
                let row = first + r;
                let yr = &y[row * n..(row + 1) * n];
                let gr = &g[row * n..(row + 1) * n];
                let dot: f32 = yr.iter().zip(gr).map(|(a, b)| a * b).sum();
                for ((d, &yv), &gv) in dr.iter_mut().zip(yr).zip(gr) {
                    *d = self.scale as f32 * yv * (gv - dot);
                }
            }
        });
        Ok((CpuStorage::F32(out), l1.shape().clone()))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
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
}
