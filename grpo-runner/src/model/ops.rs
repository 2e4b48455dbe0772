//! The decoder's kernels, built from differentiable candle ops only (see the module docs).

use candle_core::{D, DType, Device, Tensor};

use crate::error::Result;

use super::{ModelConfig, fused};

/// `x · Wᵀ + b` over the last dimension, for inputs of any rank.
pub(super) fn linear(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
) -> candle_core::Result<Tensor> {
    let dims = x.dims().to_vec();
    let (out_features, in_features) = weight.dims2()?;
    let rows: usize = dims[..dims.len() - 1].iter().product();
    let x = x.reshape((rows, in_features))?;
    // A decoding step without gradients: a few rows against the whole weight.
    let no_grad = |t: &Tensor| fused::applies(t) && !t.track_op();
    let y =
        if rows <= fused::SKINNY_ROWS && no_grad(&x) && no_grad(weight) && bias.is_none_or(no_grad)
        {
            fused::skinny_linear(&x, weight, bias)?
        } else {
            let y = x.matmul(&weight.t()?)?;
            match bias {
                Some(b) => y.broadcast_add(b)?,
                None => y,
            }
        };
    let mut out_dims = dims;
    if let Some(last) = out_dims.last_mut() {
        *last = out_features;
    }
    y.reshape(out_dims)
}

/// RMSNorm `x / sqrt(mean(x²) + eps) · w`, computed in f32 or wider: the fused kernel for f32
/// on the CPU, else differentiable ops.
pub(super) fn rms_norm(x: &Tensor, weight: &Tensor, eps: f64) -> candle_core::Result<Tensor> {
    if fused::applies(x) && fused::applies(weight) {
        return fused::rms_norm(x, weight, eps);
    }
    let dtype = x.dtype();
    let internal = match dtype {
        DType::F16 | DType::BF16 => DType::F32,
        d => d,
    };
    let x = x.to_dtype(internal)?;
    let norm = (x.sqr()?.mean_keepdim(D::Minus1)? + eps)?.sqrt()?;
    x.broadcast_div(&norm)?
        .to_dtype(dtype)?
        .broadcast_mul(weight)
}

/// Softmax over the last dimension from `exp`/`sum`. The max is subtracted for stability and
/// detached (softmax is shift invariant, so its gradient contributes nothing).
pub(super) fn softmax_last_dim(x: &Tensor) -> candle_core::Result<Tensor> {
    let max = x.max_keepdim(D::Minus1)?.detach();
    let e = x.broadcast_sub(&max)?.exp()?;
    let sum = e.sum_keepdim(D::Minus1)?;
    e.broadcast_div(&sum)
}

/// Rotate-half RoPE (the HF convention): for `x = [x1, x2]` split in halves,
/// `[x1·cos − x2·sin, x2·cos + x1·sin]`; the fused kernel for f32 on the CPU, else
/// differentiable ops.
///
/// # Shapes
/// `x`: `[batch, seq, heads, head_dim]` (before the heads are transposed forward);
/// `cos`, `sin`: `[batch, seq, 1, head_dim / 2]`.
pub(super) fn rope(x: &Tensor, cos: &Tensor, sin: &Tensor) -> candle_core::Result<Tensor> {
    if fused::applies(x) && fused::applies(cos) && fused::applies(sin) {
        return fused::rope(x, cos, sin);
    }
    let half = x.dim(D::Minus1)? / 2;
    let x1 = x.narrow(D::Minus1, 0, half)?;
    let x2 = x.narrow(D::Minus1, half, half)?;
    let r1 = (x1.broadcast_mul(cos)? - x2.broadcast_mul(sin)?)?;
    let r2 = (x2.broadcast_mul(cos)? + x1.broadcast_mul(sin)?)?;
    Tensor::cat(&[r1, r2], D::Minus1)
}

/// The gated MLP activation `silu(gate) · up`: the fused kernel for f32 on the CPU, else
/// candle's ops.
pub(super) fn swiglu(gate: &Tensor, up: &Tensor) -> candle_core::Result<Tensor> {
    if fused::applies(gate) && fused::applies(up) {
        return fused::swiglu(gate, up);
    }
    gate.silu()? * up
}

/// The attention probabilities `softmax(scores · scale + mask)` over the keys, in f32 for a
/// half compute dtype: the fused kernel when the scores are f32 on the CPU, else
/// differentiable ops (the scale applied in the scores' dtype, then the mask and softmax in
/// `softmax_dtype`).
///
/// # Shapes
/// `scores`: `[batch, heads, queries, keys]`; `mask`: `[batch, 1, queries, keys]`.
pub(super) fn attention_probs(
    scores: &Tensor,
    scale: f64,
    mask: Option<&Tensor>,
    softmax_dtype: DType,
) -> candle_core::Result<Tensor> {
    if fused::applies(scores) && softmax_dtype == DType::F32 && mask.is_none_or(fused::applies) {
        return fused::attention_softmax(scores, scale, mask);
    }
    let scores = (scores * scale)?.to_dtype(softmax_dtype)?;
    let scores = match mask {
        Some(m) => scores.broadcast_add(m)?,
        None => scores,
    };
    softmax_last_dim(&scores)
}

/// cos/sin tables `[max_position_embeddings, head_dim / 2]` with inverse frequencies
/// `θ^(−2i/head_dim)`, computed in f64 and cast to `dtype`.
pub(super) fn rope_tables(
    config: &ModelConfig,
    dtype: DType,
    device: &Device,
) -> Result<(Tensor, Tensor)> {
    let hd = config.head_dim;
    let half = hd / 2;
    let n = config.max_position_embeddings;
    let inv: Vec<f64> = (0..half)
        .map(|i| 1.0 / config.rope_theta.powf((2 * i) as f64 / hd as f64))
        .collect();
    let mut cos = Vec::with_capacity(n * half);
    let mut sin = Vec::with_capacity(n * half);
    for p in 0..n {
        for f in &inv {
            let angle = p as f64 * f;
            cos.push(angle.cos());
            sin.push(angle.sin());
        }
    }
    let cos = Tensor::from_vec(cos, (n, half), device)?.to_dtype(dtype)?;
    let sin = Tensor::from_vec(sin, (n, half), device)?.to_dtype(dtype)?;
    Ok((cos, sin))
}
