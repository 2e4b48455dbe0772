//! The attention's scale, mask and softmax in one kernel, with its backward.

use candle_core::{CpuStorage, CustomOp1, CustomOp2, Layout, Shape, Tensor};

use super::{CResult, last_dim, par_rows, row_max, row_sum, slice};

/// The attention probabilities `softmax(scores · scale + mask)` over the last dimension.
///
/// # Shapes
/// - `scores`: `[batch, heads, queries, keys]`, f32 on the CPU;
/// - `mask`: `[batch, 1, queries, keys]` (added to every head), or `None`.
pub(crate) fn attention_softmax(
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
    #[expect(
        clippy::too_many_arguments,
        reason = "the kernel's inputs and output slices, each its own buffer"
    )]
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
