//! A projection with a LoRA adapter, `y = x·Wᵀ + b + s·(x·Aᵀ)·Bᵀ`, as one autograd node.
//!
//! Composed from candle ops, the adapter's term puts three output-sized tensors into the
//! graph per projection (`x·Wᵀ + b`, `(x·Aᵀ·s)·Bᵀ` and their sum), all held until the
//! backward pass: with SmolLM2-135M and 64 completions that is gigabytes more than full
//! fine-tuning holds. As one node the graph keeps only `x`, `A`, `B` and `y`, and the
//! backward computes what LoRA needs and nothing of the frozen weight:
//!
//! - `g = s·(∂y·B)` (rank-sized),
//! - `∂x = ∂y·W + g·A`,
//! - `∂A = gᵀ·x`,
//! - `∂B = ∂yᵀ·(s·x·Aᵀ)`.
//!
//! The forward is the composed ops on detached inputs, so its bits are the composed path's.

use std::sync::Mutex;

use candle_core::{CpuStorage, CustomOp3, Layout, Shape, Tensor};

use super::CResult;

/// `x·Wᵀ + b + s·(x·Aᵀ)·Bᵀ` for a 2-D `x: [rows, in]`, with `W` and `b` frozen; `composed`
/// computes it from (detached) `x`, `A` and `B` with candle's ops.
pub(in crate::model) fn lora_linear(
    x: &Tensor,
    weight: &Tensor,
    a: &Tensor,
    b: &Tensor,
    scale: f64,
    composed: impl Fn(&Tensor, &Tensor, &Tensor) -> CResult<Tensor>,
) -> CResult<Tensor> {
    let y = composed(&x.detach(), &a.detach(), &b.detach())?;
    let shape = y.shape().clone();
    let out = y.flatten_all()?.to_vec1::<f32>()?;
    x.apply_op3(
        a,
        b,
        LoraLinear {
            weight: weight.detach(),
            scale,
            out: Mutex::new(Some((out, shape))),
        },
    )
}

struct LoraLinear {
    /// The frozen weight, `[out, in]`.
    weight: Tensor,
    scale: f64,
    /// The output, computed before the node is made; `cpu_fwd` moves it into the graph.
    out: Mutex<Option<(Vec<f32>, Shape)>>,
}

impl CustomOp3 for LoraLinear {
    fn name(&self) -> &'static str {
        "grpo-lora-linear"
    }

    fn cpu_fwd(
        &self,
        _: &CpuStorage,
        _: &Layout,
        _: &CpuStorage,
        _: &Layout,
        _: &CpuStorage,
        _: &Layout,
    ) -> CResult<(CpuStorage, Shape)> {
        let (out, shape) = self
            .out
            .lock()
            .map_err(|_| candle_core::Error::Msg("grpo-lora-linear: poisoned".into()))?
            .take()
            .ok_or_else(|| candle_core::Error::Msg("grpo-lora-linear: run twice".into()))?;
        Ok((CpuStorage::F32(out), shape))
    }

    fn bwd(
        &self,
        x: &Tensor,
        a: &Tensor,
        b: &Tensor,
        _res: &Tensor,
        grad: &Tensor,
    ) -> CResult<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        let (xd, ad, bd, dy) = (x.detach(), a.detach(), b.detach(), grad.detach());
        let g = (dy.matmul(&bd)? * self.scale)?;
        let dx = if x.track_op() {
            Some((dy.matmul(&self.weight)? + g.matmul(&ad)?)?)
        } else {
            None
        };
        let da = g.t()?.matmul(&xd)?;
        let u = (xd.matmul(&ad.t()?)? * self.scale)?;
        let db = dy.t()?.matmul(&u)?;
        Ok((dx, Some(da), Some(db)))
    }
}
