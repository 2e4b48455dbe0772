//! Rotate-half RoPE with its backward (the inverse rotation).

use candle_core::{CpuStorage, CustomOp3, Layout, Shape, Tensor};

use super::{CResult, par_rows, slice};

/// Rotate-half RoPE on `x`: `[batch, seq, heads, head_dim]` (before the heads are transposed
/// forward), with `cos`, `sin`: `[batch, seq, 1, head_dim / 2]` (f32, CPU).
pub(crate) fn rope(x: &Tensor, cos: &Tensor, sin: &Tensor) -> CResult<Tensor> {
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
