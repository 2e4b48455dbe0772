//! RMSNorm with its backward.

use candle_core::{CpuStorage, CustomOp2, CustomOp3, Layout, Shape, Tensor};

use super::{CResult, last_dim, packed_grads, par_rows, row_sum, slice};

/// RMSNorm `x / sqrt(mean(x²) + eps) · w` over the last dimension of `x` (f32, CPU).
pub(crate) fn rms_norm(x: &Tensor, weight: &Tensor, eps: f64) -> CResult<Tensor> {
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
        packed_grads(x, w, grad, &RmsNormBackward { eps: self.eps })
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
