//! Log-probabilities of sampled tokens, the response mask, and per-token entropy.
//!
//! A decoder's logits at position `j` predict token `j + 1`. For a sequence `x` of `n` tokens,
//! pass `logits[:, ..n-1]` and the targets `x[:, 1..]`: every function here works in that
//! *target frame*, where position `j` is the action "emit target `j`". A response that starts
//! at sequence index `p` (the prompt has `p` tokens) starts at target position `p − 1`.

use candle_core::{D, DType, Device, Tensor};

use crate::error::{Error, Result};
use crate::fused;

/// Log-probability of each target token under the logits: `log_softmax(logits)[b, t, id]`.
///
/// Computed as `logits[id] − logsumexp(logits)` with the row maximum subtracted first (and
/// detached: the shift cancels in value and in gradient). Differentiable with respect to
/// `logits`. For f32 logits on the CPU a fused kernel reads each row once forward and once
/// backward (the same values; see `fused.rs`); elsewhere the composed ops allocate two
/// `[b, t, v]` temporaries instead of log-softmax's three.
///
/// # Shapes
/// - `logits`: `[batch, seq, vocab]`, f32 or f64.
/// - `token_ids`: `[batch, seq]`, u32 or i64, each `< vocab`.
/// - returns: `[batch, seq]`, the dtype of `logits`.
///
/// # Example
/// ```
/// use candle_core::{Device, Tensor};
/// use grpo_core::token_logprobs;
///
/// // Uniform logits over 4 tokens: every token has log-probability ln(1/4).
/// let logits = Tensor::zeros((1, 2, 4), candle_core::DType::F32, &Device::Cpu)?;
/// let ids = Tensor::new(&[[3u32, 0]], &Device::Cpu)?;
/// let logp = token_logprobs(&logits, &ids)?.to_vec2::<f32>()?;
/// assert!((logp[0][0] - 0.25f32.ln()).abs() < 1e-6);
/// # Ok::<(), grpo_core::Error>(())
/// ```
pub fn token_logprobs(logits: &Tensor, token_ids: &Tensor) -> Result<Tensor> {
    let (batch, seq, _) = check_logits(logits)?;
    if token_ids.dims() != [batch, seq] {
        return Err(Error::Shape {
            name: "token_ids",
            expected: format!("[{batch}, {seq}] (the first two dims of logits)"),
            got: token_ids.dims().to_vec(),
        });
    }
    if !matches!(token_ids.dtype(), DType::U32 | DType::I64) {
        return Err(Error::DType {
            name: "token_ids",
            expected: "u32 or i64",
            got: token_ids.dtype(),
        });
    }
    if fused::applies(logits) {
        return Ok(fused::token_logprobs(logits, token_ids)?);
    }
    let max = logits.max_keepdim(D::Minus1)?.detach(); // [b, t, 1]
    let shifted = logits.broadcast_sub(&max)?; // [b, t, v]
    let log_normaliser = shifted.exp()?.sum_keepdim(D::Minus1)?.log()?; // [b, t, 1]
    let ids = token_ids.unsqueeze(D::Minus1)?.contiguous()?; // [b, t, 1]
    let picked = shifted.gather(&ids, D::Minus1)?; // [b, t, 1]
    Ok((picked - log_normaliser)?.squeeze(D::Minus1)?)
}

/// Entropy of the next-token distribution at each position, `−Σ_v p_v log p_v`, in nats.
/// Differentiable with respect to `logits`.
///
/// # Shapes
/// - `logits`: `[batch, seq, vocab]`, f32 or f64.
/// - returns: `[batch, seq]`.
pub fn token_entropy(logits: &Tensor) -> Result<Tensor> {
    check_logits(logits)?;
    if fused::applies(logits) && !logits.track_op() {
        return Ok(fused::token_entropy(logits)?);
    }
    let max = logits.max_keepdim(D::Minus1)?.detach();
    let shifted = logits.broadcast_sub(&max)?; // [b, t, v]
    let exp = shifted.exp()?;
    let sum = exp.sum_keepdim(D::Minus1)?; // [b, t, 1]
    // H = log Σ e^s − Σ p·s with p = e^s / Σ e^s.
    let expected_shift = (exp * &shifted)?.sum_keepdim(D::Minus1)?.div(&sum)?;
    Ok((sum.log()? - expected_shift)?.squeeze(D::Minus1)?)
}

fn check_logits(logits: &Tensor) -> Result<(usize, usize, usize)> {
    let dims = logits.dims3().map_err(|_| Error::Shape {
        name: "logits",
        expected: "[batch, seq, vocab]".into(),
        got: logits.dims().to_vec(),
    })?;
    if !matches!(logits.dtype(), DType::F32 | DType::F64) {
        return Err(Error::DType {
            name: "logits",
            expected: "f32 or f64",
            got: logits.dtype(),
        });
    }
    Ok(dims)
}

/// Number of response tokens in each row: from `starts[row]` up to and including the first
/// `eos_id` (a sampled EOS is an action and counts), or to the end of the row when there is
/// none (a truncated completion). Tokens after the EOS are padding.
///
/// # Shapes
/// - `token_ids`: `[batch, seq]` targets, u32 or i64.
/// - `starts`: one entry per row, the target position of the first response token.
///
/// # Errors
/// Wrong shape or dtype; `starts` not one per row; a start beyond the row.
pub fn completion_lengths(token_ids: &Tensor, starts: &[usize], eos_id: u32) -> Result<Vec<usize>> {
    let (batch, seq) = token_ids.dims2().map_err(|_| Error::Shape {
        name: "token_ids",
        expected: "[batch, seq]".into(),
        got: token_ids.dims().to_vec(),
    })?;
    if starts.len() != batch {
        return Err(Error::LengthMismatch {
            name: "starts",
            expected: batch,
            got: starts.len(),
        });
    }
    let rows: Vec<Vec<i64>> = match token_ids.dtype() {
        DType::U32 | DType::I64 => token_ids.to_dtype(DType::I64)?.to_vec2::<i64>()?,
        other => {
            return Err(Error::DType {
                name: "token_ids",
                expected: "u32 or i64",
                got: other,
            });
        }
    };
    rows.iter()
        .zip(starts)
        .enumerate()
        .map(|(row, (ids, &start))| {
            if start > seq {
                return Err(Error::SpanOutOfRange {
                    row,
                    start,
                    len: 0,
                    seq_len: seq,
                });
            }
            let eos = i64::from(eos_id);
            Ok(match ids[start..].iter().position(|&id| id == eos) {
                Some(offset) => offset + 1,
                None => seq - start,
            })
        })
        .collect()
}

/// The response mask: 1 on each row's response tokens `starts[row] .. starts[row] + lens[row]`,
/// 0 on prompt and padding.
///
/// # Shapes
/// - `starts`, `lens`: one entry per row.
/// - returns: `[batch, seq_len]`, f32.
///
/// # Errors
/// `starts` and `lens` of different lengths; a span that runs past `seq_len`.
///
/// # Example
/// ```
/// use candle_core::{Device, Tensor};
/// use grpo_core::{completion_lengths, response_mask};
///
/// // Targets of two rows; responses start at position 2; EOS is 9, padding 0.
/// let targets = Tensor::new(&[[5u32, 6, 7, 9, 0], [5, 6, 7, 8, 8]], &Device::Cpu)?;
/// let starts = [2, 2];
/// let lens = completion_lengths(&targets, &starts, 9)?;
/// assert_eq!(lens, [2, 3]); // "7 EOS" keeps the EOS; the second row was truncated.
/// let mask = response_mask(&starts, &lens, 5, &Device::Cpu)?;
/// assert_eq!(mask.to_vec2::<f32>()?, [[0., 0., 1., 1., 0.], [0., 0., 1., 1., 1.]]);
/// # Ok::<(), grpo_core::Error>(())
/// ```
pub fn response_mask(
    starts: &[usize],
    lens: &[usize],
    seq_len: usize,
    device: &Device,
) -> Result<Tensor> {
    if lens.len() != starts.len() {
        return Err(Error::LengthMismatch {
            name: "lens",
            expected: starts.len(),
            got: lens.len(),
        });
    }
    let mut mask = vec![0f32; starts.len() * seq_len];
    for (row, (&start, &len)) in starts.iter().zip(lens).enumerate() {
        let end = start.checked_add(len).filter(|&end| end <= seq_len);
        let Some(end) = end else {
            return Err(Error::SpanOutOfRange {
                row,
                start,
                len,
                seq_len,
            });
        };
        mask[row * seq_len + start..row * seq_len + end].fill(1.0);
    }
    Ok(Tensor::from_vec(mask, (starts.len(), seq_len), device)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Var;

    #[test]
    fn logprobs_golden() {
        // Row logits [0, ln 2, ln 3, ln 4]: softmax = [1, 2, 3, 4] / 10.
        let l = [0f64, 2f64.ln(), 3f64.ln(), 4f64.ln()];
        let logits = Tensor::new(&[[l, l.map(|x| x + 100.0)]], &Device::Cpu).unwrap();
        let ids = Tensor::new(&[[2u32, 3]], &Device::Cpu).unwrap();
        let got = token_logprobs(&logits, &ids)
            .unwrap()
            .to_vec2::<f64>()
            .unwrap();
        assert!((got[0][0] - 0.3f64.ln()).abs() < 1e-12);
        // Adding 100 to every logit changes nothing.
        assert!((got[0][1] - 0.4f64.ln()).abs() < 1e-12);
        let h = token_entropy(&logits).unwrap().to_vec2::<f64>().unwrap();
        let want: f64 = -[0.1f64, 0.2, 0.3, 0.4]
            .iter()
            .map(|p| p * p.ln())
            .sum::<f64>();
        assert!((h[0][0] - want).abs() < 1e-12 && (h[0][1] - want).abs() < 1e-12);
    }

    #[test]
    fn logprobs_match_candle_log_softmax_on_large_logits() {
        // Logits spanning ±1e4 (f32) would overflow exp without the max shift.
        let logits =
            Tensor::new(&[[[1e4f32, -1e4, 3.0], [0.5, 0.25, -2.0]]], &Device::Cpu).unwrap();
        let ids = Tensor::new(&[[0u32, 2]], &Device::Cpu).unwrap();
        let got = token_logprobs(&logits, &ids)
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        let reference = candle_nn::ops::log_softmax(&logits, 2)
            .unwrap()
            .to_vec3::<f32>()
            .unwrap();
        assert!((got[0][0] - reference[0][0][0]).abs() < 1e-6);
        assert!((got[0][1] - reference[0][1][2]).abs() < 1e-6);
        assert!(got[0][0].is_finite() && got[0][0] <= 0.0);
    }

    #[test]
    fn logprob_and_entropy_gradients_match_finite_differences() {
        let values: Vec<f64> = (0..2 * 3 * 5)
            .map(|i| ((i * 7 % 11) as f64 - 5.0) * 0.3)
            .collect();
        let ids = Tensor::new(&[[1u32, 4, 0], [2, 2, 3]], &Device::Cpu).unwrap();
        let weights = Tensor::new(&[[1.0f64, -0.5, 2.0], [0.3, 1.5, -1.0]], &Device::Cpu).unwrap();
        let objective = |logits: &Tensor| -> Tensor {
            let lp = token_logprobs(logits, &ids).unwrap();
            let h = token_entropy(logits).unwrap();
            ((lp + h).unwrap() * &weights).unwrap().sum_all().unwrap()
        };
        let var = Var::from_vec(values.clone(), (2, 3, 5), &Device::Cpu).unwrap();
        let grads = objective(var.as_tensor()).backward().unwrap();
        let analytic = grads
            .get(var.as_tensor())
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1::<f64>()
            .unwrap();
        let h = 1e-6;
        for i in 0..values.len() {
            let eval = |delta: f64| {
                let mut v = values.clone();
                v[i] += delta;
                let t = Tensor::from_vec(v, (2, 3, 5), &Device::Cpu).unwrap();
                objective(&t).to_scalar::<f64>().unwrap()
            };
            let numeric = (eval(h) - eval(-h)) / (2.0 * h);
            assert!(
                (numeric - analytic[i]).abs() < 1e-6,
                "{i}: {numeric} vs {}",
                analytic[i]
            );
        }
    }

    #[test]
    fn logprob_input_errors() {
        let cpu = Device::Cpu;
        let logits = Tensor::zeros((2, 3, 4), DType::F32, &cpu).unwrap();
        let wrong_shape = Tensor::zeros((2, 2), DType::U32, &cpu).unwrap();
        assert!(matches!(
            token_logprobs(&logits, &wrong_shape),
            Err(Error::Shape {
                name: "token_ids",
                ..
            })
        ));
        let float_ids = Tensor::zeros((2, 3), DType::F32, &cpu).unwrap();
        assert!(matches!(
            token_logprobs(&logits, &float_ids),
            Err(Error::DType {
                name: "token_ids",
                ..
            })
        ));
        let flat = Tensor::zeros((2, 3), DType::F32, &cpu).unwrap();
        assert!(matches!(
            token_logprobs(&flat, &wrong_shape),
            Err(Error::Shape { name: "logits", .. })
        ));
        let out_of_vocab = Tensor::new(&[[0u32, 1, 4], [0, 0, 0]], &cpu).unwrap();
        assert!(matches!(
            token_logprobs(&logits, &out_of_vocab),
            Err(Error::Candle(_))
        ));
    }

    #[test]
    fn completion_lengths_and_mask_cases() {
        let cpu = Device::Cpu;
        // EOS = 2. Row 0: EOS sampled then padded with EOS (pad = EOS, as in many
        // tokenizers): only the first counts. Row 1: EOS inside the prompt region (before
        // start) is ignored. Row 2: no EOS (truncated). Row 3: EOS as first response token.
        let ids = Tensor::new(
            &[
                [7u32, 8, 9, 2, 2, 2],
                [2, 2, 5, 5, 2, 0],
                [7, 7, 7, 7, 7, 7],
                [1, 1, 1, 2, 0, 0],
            ],
            &cpu,
        )
        .unwrap();
        let starts = [1, 2, 3, 3];
        let lens = completion_lengths(&ids, &starts, 2).unwrap();
        assert_eq!(lens, [3, 3, 3, 1]);
        let mask = response_mask(&starts, &lens, 6, &cpu)
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        assert_eq!(
            mask,
            [
                [0., 1., 1., 1., 0., 0.],
                [0., 0., 1., 1., 1., 0.],
                [0., 0., 0., 1., 1., 1.],
                [0., 0., 0., 1., 0., 0.],
            ]
        );
        // A start at the very end gives an empty response.
        assert_eq!(
            completion_lengths(&ids.narrow(0, 0, 1).unwrap(), &[6], 2).unwrap(),
            [0]
        );
        assert!(matches!(
            completion_lengths(&ids, &[0, 0], 2),
            Err(Error::LengthMismatch {
                name: "starts",
                expected: 4,
                got: 2
            })
        ));
        assert!(matches!(
            completion_lengths(&ids, &[0, 0, 0, 7], 2),
            Err(Error::SpanOutOfRange { row: 3, .. })
        ));
        assert!(matches!(
            response_mask(&[0, 4], &[2, 3], 6, &cpu),
            Err(Error::SpanOutOfRange {
                row: 1,
                start: 4,
                len: 3,
                seq_len: 6
            })
        ));
        assert!(matches!(
            response_mask(&[0], &[usize::MAX], 6, &cpu),
            Err(Error::SpanOutOfRange { row: 0, .. })
        ));
        assert!(matches!(
            response_mask(&[0, 1], &[1], 6, &cpu),
            Err(Error::LengthMismatch { name: "lens", .. })
        ));
    }
}
