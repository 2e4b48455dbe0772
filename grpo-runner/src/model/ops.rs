//! The decoder's kernels, built from differentiable candle ops only (see the module docs).

use candle_core::{D, DType, Device, Tensor};

use crate::error::Result;

use super::ModelConfig;

/// `x · Wᵀ + b` over the last dimension, for inputs of any rank.
pub(super) fn linear(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
) -> candle_core::Result<Tensor> {
    let dims = x.dims().to_vec();
    let (out_features, in_features) = weight.dims2()?;
    let rows: usize = dims[..dims.len() - 1].iter().product();
    let y = x.reshape((rows, in_features))?.matmul(&weight.t()?)?;
    let y = match bias {
        Some(b) => y.broadcast_add(b)?,
        None => y,
    };
    let mut out_dims = dims;
    if let Some(last) = out_dims.last_mut() {
        *last = out_features;
    }
    y.reshape(out_dims)
}

/// RMSNorm from differentiable ops: `x / sqrt(mean(x²) + eps) · w`, computed in f32 or wider.
pub(super) fn rms_norm(x: &Tensor, weight: &Tensor, eps: f64) -> candle_core::Result<Tensor> {
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
/// `[x1·cos − x2·sin, x2·cos + x1·sin]`.
///
/// # Shapes
/// `x`: `[batch, heads, seq, head_dim]`; `cos`, `sin`: `[batch, 1, seq, head_dim / 2]`.
pub(super) fn rope(x: &Tensor, cos: &Tensor, sin: &Tensor) -> candle_core::Result<Tensor> {
    let half = x.dim(D::Minus1)? / 2;
    let x1 = x.narrow(D::Minus1, 0, half)?;
    let x2 = x.narrow(D::Minus1, half, half)?;
    let r1 = (x1.broadcast_mul(cos)? - x2.broadcast_mul(sin)?)?;
    let r2 = (x2.broadcast_mul(cos)? + x1.broadcast_mul(sin)?)?;
    Tensor::cat(&[r1, r2], D::Minus1)
}

/// Repeats each key/value head `n` times: `[b, kv, t, d]` → `[b, kv·n, t, d]`.
pub(super) fn repeat_kv(x: &Tensor, n: usize) -> candle_core::Result<Tensor> {
    if n == 1 {
        return Ok(x.clone());
    }
    let (b, kv, t, d) = x.dims4()?;
    Tensor::cat(&vec![x; n], 2)?.reshape((b, kv * n, t, d))
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
