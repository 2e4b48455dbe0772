//! Evaluation: greedy accuracy and pass@k of a model on a set of prompts.
//!
//! This is the one evaluation path: the trainer's held-out evaluations and `grpo eval` both
//! encode prompts with [`encode_prompt`], decode with [`evaluate`], and judge with the reward
//! set of the scoring contract, so `grpo eval` of a run's `final/` model (which reads the
//! run's [`EvalSettings`] from `final/grpo_eval.json`) reproduces the run's last evaluation.
//!
//! Correctness comes from a *judge* (the accuracy verdict of the reward set), so this module
//! needs no knowledge of task kinds. pass@k uses the unbiased estimator of Chen et
//! al. (2021): with `n` samples of which `c` are correct,
//! `pass@k = 1 − C(n−c, k) / C(n, k)`, computed as a product so it never overflows.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use std::path::Path;

use crate::error::{Error, Result};
use crate::model::Model;
use crate::rollout::sampler::{Completion, SampleRequest, SamplingConfig, ToolDriver, sample};
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

/// Encodes a templated prompt: through the tokenizer's chat template when `chat_template` is
/// set, as plain text otherwise. The trainer and `grpo eval` both encode with this.
pub fn encode_prompt(tokenizer: &Tokenizer, text: &str, chat_template: bool) -> Result<Vec<u32>> {
    if chat_template {
        tokenizer.encode_prompt(text)
    } else {
        tokenizer.encode(text)
    }
}

/// How a run evaluates, saved beside its final model (`final/grpo_eval.json`) so that
/// `grpo eval` of that model repeats the run's evaluation exactly by default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvalSettings {
    /// The pack trained and evaluated on.
    pub pack: String,
    /// The evaluated split.
    pub split: String,
    /// Problems evaluated (the first N of the split; 0: all).
    pub problems: usize,
    /// The prompt template's spec.
    pub template: String,
    /// Whether prompts go through the tokenizer's chat template.
    pub chat_template: bool,
    /// Most tokens per greedy completion.
    pub max_new_tokens: usize,
    /// Prompts decoded together.
    pub batch_prompts: usize,
    /// Reward weight of accuracy (the judge uses the accuracy verdict only).
    pub accuracy_weight: f64,
    /// Reward weight of format.
    pub format_weight: f64,
    /// The code interpreter the policy was given, when it was (evaluation then runs its calls
    /// as the run's did); absent in runs without tools and in runs saved before tools were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<crate::config::ToolsSection>,
}

impl EvalSettings {
    /// The file name under a model directory.
    pub const FILE: &'static str = "grpo_eval.json";

    /// Reads `dir/grpo_eval.json`; `None` when the directory has none.
    pub fn read(dir: &Path) -> Result<Option<EvalSettings>> {
        let path = dir.join(Self::FILE);
        if !path.is_file() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&path).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|source| Error::Json { path, source })
    }

    /// Writes `dir/grpo_eval.json` (write, then rename).
    pub fn write(&self, dir: &Path) -> Result<()> {
        let path = dir.join(Self::FILE);
        let tmp = dir.join(format!("{}.tmp", Self::FILE));
        let text = serde_json::to_string_pretty(self).map_err(|source| Error::Json {
            path: path.clone(),
            source,
        })?;
        std::fs::write(&tmp, text).map_err(|source| Error::Io {
            path: tmp.clone(),
            source,
        })?;
        std::fs::rename(&tmp, &path).map_err(|source| Error::Io { path, source })
    }
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
    /// The greedy completion's length in tokens.
    pub greedy_tokens: usize,
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

/// Evaluates `model` on `encoded` prompts (templated and encoded with [`encode_prompt`]).
/// `judge(i, completions)` says which completions of prompt `i` are correct, one bool per
/// completion, in order; its error (a scoring fault) ends the evaluation.
pub fn evaluate(
    model: &Model,
    tokenizer: &Tokenizer,
    encoded: &[Vec<u32>],
    config: &EvalConfig,
    judge: impl FnMut(usize, &[String]) -> Result<Vec<bool>>,
) -> Result<EvalReport> {
    evaluate_with_tools(model, tokenizer, encoded, config, None, judge)
}

/// A fresh tool for each sampling call of an evaluation (its sessions end with it).
pub type ToolFactory<'a> = dyn FnMut() -> Box<dyn ToolDriver + 'a> + 'a;

/// [`evaluate`] with a tool the model may call while it answers (each sampling call gets a
/// fresh one from `tools`; see [`SampleRequest::with_tools`]).
pub fn evaluate_with_tools(
    model: &Model,
    tokenizer: &Tokenizer,
    encoded: &[Vec<u32>],
    config: &EvalConfig,
    mut tools: Option<&mut ToolFactory<'_>>,
    mut judge: impl FnMut(usize, &[String]) -> Result<Vec<bool>>,
) -> Result<EvalReport> {
    let mut sample = |model: &Model,
                      prompts: &[Vec<u32>],
                      group_size: usize,
                      sampling: &SamplingConfig|
     -> Result<Vec<Completion>> {
        let mut tool = tools.as_mut().map(|make| make());
        let request = SampleRequest::new(prompts, group_size, sampling)
            .with_tools(tool.as_mut().map(|t| &mut **t as &mut dyn ToolDriver));
        Ok(sample(model, request)?.completions())
    };
    let batch = config.batch_prompts.max(1);
    let mut results = Vec::with_capacity(encoded.len());
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
            let greedy_correct = judge(index, std::slice::from_ref(&text))?
                .first()
                .copied()
                .unwrap_or(false);
            let correct_samples = if config.samples > 0 {
                let texts = sampled[local * config.samples..(local + 1) * config.samples]
                    .iter()
                    .map(|c| tokenizer.decode(&c.tokens))
                    .collect::<Result<Vec<_>>>()?;
                let verdicts = judge(index, &texts)?;
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
                greedy_tokens: g.tokens.len(),
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
