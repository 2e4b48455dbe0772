//! Fused CPU kernels with their own backward pass: RMSNorm, RoPE, the attention softmax and
//! the gated MLP activation.
//!
//! Each kernel replaces a chain of candle ops (and their autograd nodes: RMSNorm was seven
//! ops, RoPE eight, the attention's scale, mask and softmax six, `silu(gate) · up` two forward
//! and about ten backward) by one pass over the data forward and one backward. The forward
//! passes compute exactly what the composed ops compute, in the same order (candle's own row
//! sum for the reductions), so a forward pass gives the same bits either way; the backward passes are the analytic gradients, which round
//! differently from candle's chain rule through the composed ops.
//!
//! They run on contiguous f32 tensors on the CPU; every other device and dtype goes through
//! the composed ops in `ops.rs` (a CustomOp has no CUDA or Metal kernel unless it is given
//! one). The gradients are checked against finite differences in `tests.rs`, since a
//! missing or wrong gradient would be silent.
//!
//! Files: `norm.rs` (RMSNorm), `rope.rs`, `attention.rs` (scale, mask and softmax), `mlp.rs`
//! (`silu(gate) · up` and the skinny decode kernel), `lora.rs` (a projection with its LoRA
//! adapter as one node); the shared helpers are here.

use candle_core::cpu::kernels::VecOps;
use candle_core::{CpuStorage, CustomOp3, DType, Layout, Tensor};

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

/// The gradients of a two-input kernel whose backward kernel `op` reads `(a, b, grad)` and
/// writes `[d_a, d_b]` into one flat tensor: the two parts, shaped like `a` and `b`.
fn packed_grads(
    a: &Tensor,
    b: &Tensor,
    grad: &Tensor,
    op: &impl CustomOp3,
) -> CResult<(Option<Tensor>, Option<Tensor>)> {
    let packed = a
        .contiguous()?
        .apply_op3_no_bwd(&b.contiguous()?, &grad.contiguous()?, op)?;
    let n = a.elem_count();
    let da = packed.narrow(0, 0, n)?.reshape(a.shape())?;
    let db = packed.narrow(0, n, b.elem_count())?.reshape(b.shape())?;
    Ok((Some(da), Some(db)))
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

mod attention;
mod lora;
mod mlp;
mod norm;
mod rope;
#[cfg(test)]
mod tests;

pub(super) use attention::attention_softmax;
pub(super) use lora::lora_linear;
pub(super) use mlp::{SKINNY_ROWS, skinny_linear, swiglu};
pub(super) use norm::rms_norm;
pub(super) use rope::rope;
