//! Fused CPU kernels over the vocabulary: the log-probability of the target token (with its
//! backward) and the entropy (a metric, no backward).
//!
//! With a real vocabulary the logits are the largest tensors of a step (`[batch, seq, vocab]`:
//! 8 × 128 × 49,152 floats is 200 MB), and the composed ops walk them about eight times
//! forward and backward, each walk a fresh allocation. Here each row is read once forward
//! and once backward, and the backward writes its gradient in one pass:
//! `d logits = g · (onehot(target) − softmax(logits))`.
//!
//! The forward passes compute exactly what the composed ops compute, in the same order
//! (candle's own row sum), so the values are the same bits either way. They run on contiguous
//! f32 logits on the CPU; other devices and dtypes use the composed ops.

use candle_core::cpu::kernels::VecOps;
use candle_core::{CpuStorage, CustomOp1, CustomOp2, DType, Layout, Shape, Tensor};

type CResult<T> = candle_core::Result<T>;

/// Whether the fused kernels take these logits: f32 on the CPU.
pub(crate) fn applies(logits: &Tensor) -> bool {
    logits.device().is_cpu() && logits.dtype() == DType::F32
}

fn f32s<'a>(storage: &'a CpuStorage, layout: &Layout, op: &'static str) -> CResult<&'a [f32]> {
    let CpuStorage::F32(data) = storage else {
        return Err(candle_core::Error::Msg(format!("{op}: expected f32")));
    };
    let (start, end) = layout
        .contiguous_offsets()
        .ok_or_else(|| candle_core::Error::Msg(format!("{op}: expected a contiguous tensor")))?;
    Ok(&data[start..end])
}

/// Target ids as indices, from u32 or i64 storage.
fn ids(storage: &CpuStorage, layout: &Layout, op: &'static str) -> CResult<Vec<usize>> {
    let (start, end) = layout
        .contiguous_offsets()
        .ok_or_else(|| candle_core::Error::Msg(format!("{op}: expected contiguous ids")))?;
    match storage {
        CpuStorage::U32(v) => Ok(v[start..end].iter().map(|&i| i as usize).collect()),
        CpuStorage::I64(v) => v[start..end]
            .iter()
            .map(|&i| {
                usize::try_from(i).map_err(|_| candle_core::Error::Msg(format!("{op}: id {i}")))
            })
            .collect(),
        _ => Err(candle_core::Error::Msg(format!(
            "{op}: ids must be u32 or i64"
        ))),
    }
}

/// Work (vocabulary entries) per parallel block. Blocks hold whole rows and their size does
/// not depend on the thread count, so results are the same on any pool.
const BLOCK_WORK: usize = 64 * 1024;

/// Runs `f(first_row, block)` over blocks of whole rows of `out` (`width` elements per row,
/// `work` vocabulary entries read per row), in parallel on rayon's pool (candle's threads)
/// when there is more than one block.
fn par_rows(out: &mut [f32], width: usize, work: usize, f: impl Fn(usize, &mut [f32]) + Sync) {
    use rayon::prelude::*;
    if width == 0 {
        return;
    }
    let rows = (BLOCK_WORK / work.max(1)).max(1);
    if out.len() <= rows * width {
        f(0, out);
        return;
    }
    out.par_chunks_mut(rows * width)
        .enumerate()
        .for_each(|(i, block)| f(i * rows, block));
}

/// candle's own sum of a row (the order its `sum_keepdim` over the last dimension uses).
fn row_sum(xs: &[f32]) -> f32 {
    let mut sum = 0f32;
    // SAFETY: `xs` holds `xs.len()` elements and `sum` is a valid destination.
    unsafe { f32::vec_reduce_sum(xs.as_ptr(), &mut sum, xs.len()) };
    sum
}

/// The row's maximum and `e^(x − max)` of each element, written into `exp`.
fn shifted_exp(row: &[f32], exp: &mut [f32]) -> f32 {
    let max = row.iter().copied().fold(row[0], f32::max);
    for (e, &x) in exp.iter_mut().zip(row) {
        *e = (x - max).exp();
    }
    max
}

/// `log_softmax(logits)[b, t, ids[b, t]]`: `[batch, seq, vocab]` f32 and `[batch, seq]` ids
/// give `[batch, seq]`.
pub(crate) fn token_logprobs(logits: &Tensor, token_ids: &Tensor) -> CResult<Tensor> {
    logits
        .contiguous()?
        .apply_op2(&token_ids.contiguous()?, TokenLogprobs)
}

struct TokenLogprobs;

impl CustomOp2 for TokenLogprobs {
    fn name(&self) -> &'static str {
        "grpo-token-logprobs"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> CResult<(CpuStorage, Shape)> {
        let logits = f32s(s1, l1, self.name())?;
        let ids = ids(s2, l2, self.name())?;
        let (batch, seq, vocab) = l1.shape().dims3()?;
        if let Some(&id) = ids.iter().find(|&&id| id >= vocab) {
            return Err(candle_core::Error::Msg(format!(
                "token id {id} outside a vocabulary of {vocab}"
            )));
        }
        let mut out = vec![0f32; batch * seq];
        if vocab > 0 {
            par_rows(&mut out, 1, vocab, |first, block| {
                let mut exp = vec![0f32; vocab];
                for (r, o) in block.iter_mut().enumerate() {
                    let row = &logits[(first + r) * vocab..(first + r + 1) * vocab];
                    let max = shifted_exp(row, &mut exp);
                    // As the composed ops: (x[id] − max) − ln Σ e^(x − max).
                    *o = (row[ids[first + r]] - max) - row_sum(&exp).ln();
                }
            });
        }
        Ok((CpuStorage::F32(out), Shape::from((batch, seq))))
    }

    fn bwd(
        &self,
        logits: &Tensor,
        token_ids: &Tensor,
        _res: &Tensor,
        grad: &Tensor,
    ) -> CResult<(Option<Tensor>, Option<Tensor>)> {
        let dlogits = logits.contiguous()?.apply_op2_no_bwd(
            &token_ids.contiguous()?,
            &TokenLogprobsBackward {
                grad: grad.contiguous()?.flatten_all()?.to_vec1::<f32>()?,
            },
        )?;
        Ok((Some(dlogits), None))
    }
}

/// `d logits[b, t, v] = g[b, t] · ([v = id] − softmax(logits[b, t])[v])`.
struct TokenLogprobsBackward {
    grad: Vec<f32>,
}

impl CustomOp2 for TokenLogprobsBackward {
    fn name(&self) -> &'static str {
        "grpo-token-logprobs-backward"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> CResult<(CpuStorage, Shape)> {
        let logits = f32s(s1, l1, self.name())?;
        let ids = ids(s2, l2, self.name())?;
        let (_, _, vocab) = l1.shape().dims3()?;
        if self.grad.len() != ids.len() {
            return Err(candle_core::Error::Msg(format!(
                "{}: {} gradients for {} positions",
                self.name(),
                self.grad.len(),
                ids.len()
            )));
        }
        let mut out = vec![0f32; logits.len()];
        par_rows(&mut out, vocab, vocab, |first, block| {
            for (r, d) in block.chunks_exact_mut(vocab).enumerate() {
                let (row, g) = (first + r, self.grad[first + r]);
                if g == 0.0 {
                    // A masked position: its gradient is zero (already written).
                    continue;
                }
                let _ = shifted_exp(&logits[row * vocab..(row + 1) * vocab], d);
                let scale = g / row_sum(d);
                for v in d.iter_mut() {
                    *v *= -scale;
                }
                if let Some(v) = d.get_mut(ids[row]) {
                    *v += g;
                }
            }
        });
        Ok((CpuStorage::F32(out), l1.shape().clone()))
    }
}

/// The entropy `−Σ_v p_v log p_v` of each row of `[batch, seq, vocab]` f32 logits, as
/// `[batch, seq]`, with no gradient (for a metric).
pub(crate) fn token_entropy(logits: &Tensor) -> CResult<Tensor> {
    logits.contiguous()?.apply_op1_no_bwd(&TokenEntropy)
}

struct TokenEntropy;

impl CustomOp1 for TokenEntropy {
    fn name(&self) -> &'static str {
        "grpo-token-entropy"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> CResult<(CpuStorage, Shape)> {
        let logits = f32s(storage, layout, self.name())?;
        let (batch, seq, vocab) = layout.shape().dims3()?;
        let mut out = vec![0f32; batch * seq];
        if vocab == 0 {
            return Ok((CpuStorage::F32(out), Shape::from((batch, seq))));
        }
        par_rows(&mut out, 1, vocab, |first, block| {
            let mut exp = vec![0f32; vocab];
            let mut weighted = vec![0f32; vocab];
            for (r, o) in block.iter_mut().enumerate() {
                let row = &logits[(first + r) * vocab..(first + r + 1) * vocab];
                let max = shifted_exp(row, &mut exp);
                for ((w, &e), &x) in weighted.iter_mut().zip(&exp).zip(row) {
                    *w = e * (x - max);
                }
                // As the composed ops: ln Σ e^s − (Σ e^s·s) / Σ e^s.
                let sum = row_sum(&exp);
                *o = sum.ln() - row_sum(&weighted) / sum;
            }
        });
        Ok((CpuStorage::F32(out), Shape::from((batch, seq))))
    }
}

#[cfg(test)]
mod tests {
    use candle_core::{D, Device, Var};

    use super::*;

    fn logits(shape: (usize, usize, usize), seed: u64) -> Vec<f32> {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let n = shape.0 * shape.1 * shape.2;
        (0..n).map(|_| rng.gen_range(-4.0f32..4.0)).collect()
    }

    fn bits(t: &Tensor) -> Vec<u32> {
        let v: Vec<f32> = t.flatten_all().unwrap().to_vec1().unwrap();
        v.iter().map(|f| f.to_bits()).collect()
    }

    /// The composed ops (the f64-capable path of `token_logprobs`).
    fn composed_logprobs(logits: &Tensor, ids: &Tensor) -> Tensor {
        let max = logits.max_keepdim(D::Minus1).unwrap().detach();
        let shifted = logits.broadcast_sub(&max).unwrap();
        let lse = shifted
            .exp()
            .unwrap()
            .sum_keepdim(D::Minus1)
            .unwrap()
            .log()
            .unwrap();
        let picked = shifted
            .gather(
                &ids.unsqueeze(D::Minus1).unwrap().contiguous().unwrap(),
                D::Minus1,
            )
            .unwrap();
        (picked - lse).unwrap().squeeze(D::Minus1).unwrap()
    }

    #[test]
    fn logprobs_are_the_composed_ops_bit_for_bit_with_u32_and_i64_ids() {
        // 160 rows of 500: two parallel blocks.
        let shape = (4, 40, 500);
        let x = Tensor::from_vec(logits(shape, 1), shape, &Device::Cpu).unwrap();
        let id_values: Vec<u32> = (0..160).map(|i| (i * 37 % 500) as u32).collect();
        let ids = Tensor::from_vec(id_values, (4, 40), &Device::Cpu).unwrap();
        let want = bits(&composed_logprobs(&x, &ids));
        assert_eq!(bits(&token_logprobs(&x, &ids).unwrap()), want);
        let ids64 = ids.to_dtype(DType::I64).unwrap();
        assert_eq!(bits(&token_logprobs(&x, &ids64).unwrap()), want);
    }

    #[test]
    fn logprob_gradient_matches_the_f64_chain_rule() {
        // The f64 composed path's gradient is checked against finite differences in
        // tests/all/loss.rs; the fused f32 gradient must agree with it to f32 precision, for
        // a weighted sum with one zero weight (a masked position).
        let shape = (2, 3, 50);
        let values = logits(shape, 2);
        let ids = Tensor::new(&[[0u32, 49, 7], [3, 3, 20]], &Device::Cpu).unwrap();
        let weights = [0.5f32, -1.5, 0.0, 2.0, 1.0, -0.25];
        let gradient = |dtype: DType, fused: bool| -> Vec<f64> {
            let x = Tensor::from_vec(values.clone(), shape, &Device::Cpu)
                .unwrap()
                .to_dtype(dtype)
                .unwrap();
            let var = Var::from_tensor(&x).unwrap();
            let w = Tensor::from_vec(weights.to_vec(), (2, 3), &Device::Cpu)
                .unwrap()
                .to_dtype(dtype)
                .unwrap();
            let logp = if fused {
                token_logprobs(var.as_tensor(), &ids).unwrap()
            } else {
                composed_logprobs(var.as_tensor(), &ids)
            };
            let grads = (logp * w).unwrap().sum_all().unwrap().backward().unwrap();
            grads
                .get(var.as_tensor())
                .unwrap()
                .to_dtype(DType::F64)
                .unwrap()
                .flatten_all()
                .unwrap()
                .to_vec1()
                .unwrap()
        };
        let exact = gradient(DType::F64, false);
        let fused = gradient(DType::F32, true);
        let worst = exact
            .iter()
            .zip(&fused)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-6, "{worst}");
        // The masked position's 50 logits get exactly zero.
        assert!(fused[2 * 50..3 * 50].iter().all(|&g| g == 0.0));
    }

    #[test]
    fn entropy_is_the_composed_ops_bit_for_bit() {
        let shape = (4, 40, 500);
        let x = Tensor::from_vec(logits(shape, 3), shape, &Device::Cpu).unwrap();
        let max = x.max_keepdim(D::Minus1).unwrap();
        let shifted = x.broadcast_sub(&max).unwrap();
        let exp = shifted.exp().unwrap();
        let sum = exp.sum_keepdim(D::Minus1).unwrap();
        let expected_shift = (exp * &shifted)
            .unwrap()
            .sum_keepdim(D::Minus1)
            .unwrap()
            .div(&sum)
            .unwrap();
        let composed = (sum.log().unwrap() - expected_shift)
            .unwrap()
            .squeeze(D::Minus1)
            .unwrap();
        assert_eq!(bits(&token_entropy(&x).unwrap()), bits(&composed));
    }
}
