//! Evaluation: greedy accuracy and pass@k of a model on a set of prompts.
//!
//! Correctness comes from a *judge* (the accuracy verdict of the reward set in the CLI), so
//! this module needs no knowledge of task kinds. pass@k uses the unbiased estimator of Chen et
//! al. (2021): with `n` samples of which `c` are correct,
//! `pass@k = 1 − C(n−c, k) / C(n, k)`, computed as a product so it never overflows.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::Model;
use crate::sampler::{SamplingConfig, sample};
use crate::tokenizer::Tokenizer;

/// Unbiased pass@k for `n` samples with `c` correct (`k ≤ n`).
///
/// ```
/// use grpo_runner::eval::pass_at_k;
/// // 1 correct of 4: pass@1 = 1/4, pass@4 = 1.
/// assert!((pass_at_k(4, 1, 1) - 0.25).abs() < 1e-12);
/// assert_eq!(pass_at_k(4, 1, 4), 1.0);
/// ```
pub fn pass_at_k(n: usize, c: usize, k: usize) -> f64 {
    if c == 0 {
        return 0.0;
    }
    if n - c < k {
        return 1.0;
    }
    // C(n−c, k)/C(n, k) = ∏_{i=n−c+1}^{n} (1 − k/i)
    1.0 - ((n - c + 1)..=n)
        .map(|i| 1.0 - k as f64 / i as f64)
        .product::<f64>()
}

/// The values of k reported for `n` samples: powers of two up to `n`, and `n` itself.
pub fn report_ks(n: usize) -> Vec<usize> {
    let mut ks: Vec<usize> = std::iter::successors(Some(1usize), |k| k.checked_mul(2))
        .take_while(|&k| k <= n)
        .collect();
    if n > 0 && ks.last() != Some(&n) {
        ks.push(n);
    }
    ks
}

/// Settings of one evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EvalConfig {
    /// Most tokens per completion.
    pub max_new_tokens: usize,
    /// Samples per prompt for pass@k (0: greedy accuracy only).
    pub samples: usize,
    /// Sampling settings for the pass@k samples (`max_new_tokens` is taken from above).
    pub sampling: SamplingConfig,
    /// Prompts decoded together.
    pub batch_prompts: usize,
}

impl Default for EvalConfig {
    fn default() -> Self {
        EvalConfig {
            max_new_tokens: 256,
            samples: 0,
            sampling: SamplingConfig {
                temperature: 1.0,
                top_p: 1.0,
                ..Default::default()
            },
            batch_prompts: 8,
        }
    }
}

/// One prompt's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptResult {
    /// Index of the prompt.
    pub index: usize,
    /// The greedy completion's text.
    pub greedy_completion: String,
    /// Whether the judge accepted the greedy completion.
    pub greedy_correct: bool,
    /// Correct samples out of `samples`.
    pub correct_samples: usize,
}

/// The summary of an evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalReport {
    /// Number of prompts.
    pub prompts: usize,
    /// Greedy completions judged correct.
    pub greedy_correct: usize,
    /// `greedy_correct / prompts`.
    pub greedy_accuracy: f64,
    /// Samples per prompt for pass@k (0 when not sampled).
    pub samples: usize,
    /// `(k, mean pass@k over prompts)` for k in [`report_ks`].
    pub pass_at_k: Vec<(usize, f64)>,
    /// Tokens generated in all.
    pub generated_tokens: usize,
    /// Wall-clock seconds spent generating.
    pub generation_seconds: f64,
    /// Per-prompt outcomes.
    pub results: Vec<PromptResult>,
}

/// Evaluates `model` on `prompts` (already templated text). `judge(i, completions)` says which
/// completions of prompt `i` are correct, one bool per completion, in order.
pub fn evaluate(
    model: &Model,
    tokenizer: &Tokenizer,
    prompts: &[String],
    config: &EvalConfig,
    mut judge: impl FnMut(usize, &[String]) -> Vec<bool>,
) -> Result<EvalReport> {
    let encoded: Vec<Vec<u32>> = prompts
        .iter()
        .map(|p| tokenizer.encode_prompt(p))
        .collect::<Result<_>>()?;
    let batch = config.batch_prompts.max(1);
    let mut results = Vec::with_capacity(prompts.len());
    let mut generated = 0usize;
    let mut seconds = 0.0;
    for (chunk_index, chunk) in encoded.chunks(batch).enumerate() {
        let start = Instant::now();
        let greedy = sample(
            model,
            chunk,
            1,
            &SamplingConfig::greedy(config.max_new_tokens),
        )?;
        let sampled = if config.samples > 0 {
            let sampling = SamplingConfig {
                max_new_tokens: config.max_new_tokens,
                seed: config.sampling.seed.wrapping_add(chunk_index as u64),
                ..config.sampling.clone()
            };
            sample(model, chunk, config.samples, &sampling)?
        } else {
            Vec::new()
        };
        seconds += start.elapsed().as_secs_f64();
        generated += greedy
            .iter()
            .chain(&sampled)
            .map(|c| c.tokens.len())
            .sum::<usize>();
        for (local, g) in greedy.iter().enumerate() {
            let index = chunk_index * batch + local;
            let text = tokenizer.decode(&g.tokens)?;
            let greedy_correct = judge(index, std::slice::from_ref(&text))
                .first()
                .copied()
                .unwrap_or(false);
            let correct_samples = if config.samples > 0 {
                let texts = sampled[local * config.samples..(local + 1) * config.samples]
                    .iter()
                    .map(|c| tokenizer.decode(&c.tokens))
                    .collect::<Result<Vec<_>>>()?;
                let verdicts = judge(index, &texts);
                if verdicts.len() != texts.len() {
                    return Err(Error::invalid(
                        "the judge returned the wrong number of verdicts",
                    ));
                }
                verdicts.iter().filter(|&&v| v).count()
            } else {
                0
            };
            tracing::debug!(index, greedy_correct, correct_samples, "evaluated prompt");
            results.push(PromptResult {
                index,
                greedy_completion: text,
                greedy_correct,
                correct_samples,
            });
        }
    }
    let n = results.len();
    let greedy_correct = results.iter().filter(|r| r.greedy_correct).count();
    let pass = if config.samples > 0 && n > 0 {
        report_ks(config.samples)
            .into_iter()
            .map(|k| {
                let mean = results
                    .iter()
                    .map(|r| pass_at_k(config.samples, r.correct_samples, k))
                    .sum::<f64>()
                    / n as f64;
                (k, mean)
            })
            .collect()
    } else {
        Vec::new()
    };
    Ok(EvalReport {
        prompts: n,
        greedy_correct,
        greedy_accuracy: if n == 0 {
            0.0
        } else {
            greedy_correct as f64 / n as f64
        },
        samples: config.samples,
        pass_at_k: pass,
        generated_tokens: generated,
        generation_seconds: seconds,
        results,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Brute-force pass@k: the fraction of k-subsets of n samples containing a correct one.
    fn brute(n: usize, c: usize, k: usize) -> f64 {
        let mut hit = 0u64;
        let mut total = 0u64;
        for mask in 0u32..(1 << n) {
            if mask.count_ones() as usize != k {
                continue;
            }
            total += 1;
            // Samples 0..c are the correct ones.
            if (0..c).any(|i| mask & (1 << i) != 0) {
                hit += 1;
            }
        }
        hit as f64 / total as f64
    }

    #[test]
    fn pass_at_k_matches_brute_force() {
        for n in 1..=8 {
            for c in 0..=n {
                for k in 1..=n {
                    let (a, b) = (pass_at_k(n, c, k), brute(n, c, k));
                    assert!((a - b).abs() < 1e-12, "n={n} c={c} k={k}: {a} vs {b}");
                }
            }
        }
    }

    #[test]
    fn pass_at_k_golden_values() {
        // n=10, c=3, k=1 → 3/10; k=5 → 1 − C(7,5)/C(10,5) = 1 − 21/252 = 11/12.
        assert!((pass_at_k(10, 3, 1) - 0.3).abs() < 1e-12);
        assert!((pass_at_k(10, 3, 5) - 11.0 / 12.0).abs() < 1e-12);
        assert_eq!(pass_at_k(10, 0, 10), 0.0);
        assert_eq!(pass_at_k(10, 10, 1), 1.0);
    }

    #[test]
    fn reported_ks() {
        assert_eq!(report_ks(1), [1]);
        assert_eq!(report_ks(8), [1, 2, 4, 8]);
        assert_eq!(report_ks(10), [1, 2, 4, 8, 10]);
        assert!(report_ks(0).is_empty());
    }
}
