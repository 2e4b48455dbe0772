//! Step metrics: what one loss computation reports alongside the loss.

use serde::{Deserialize, Serialize};

/// Diagnostics of one loss computation (one micro-batch), as plain numbers.
///
/// Fractions and means are over this micro-batch's valid (masked-in) tokens. Combine the
/// metrics of several micro-batches with [`StepMetrics::merge`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct StepMetrics {
    /// The value of the returned loss.
    pub loss: f64,
    /// Fraction of tokens with negative advantage whose ratio is below `1 − ε_low`.
    pub clip_fraction_low: f64,
    /// Fraction of tokens with positive advantage whose ratio is above `1 + ε_high`.
    pub clip_fraction_high: f64,
    /// Fraction of tokens with negative advantage whose ratio is above the dual-clip `c`.
    pub dual_clip_fraction: f64,
    /// Mean importance ratio (for sequence-level ratios, each token carries its sequence's).
    pub mean_ratio: f64,
    /// Mean per-token KL estimate to the reference, when reference log-probs were given.
    pub kl: Option<f64>,
    /// Mean per-token entropy of the policy, when logits were given.
    pub entropy: Option<f64>,
    /// Fraction of groups whose advantages are all zero, when the group size was given.
    pub zero_advantage_group_fraction: Option<f64>,
    /// Number of valid tokens in this micro-batch.
    pub tokens: f64,
    /// Number of sequences in this micro-batch.
    pub sequences: f64,
}

impl StepMetrics {
    /// Combines the metrics of the micro-batches of one step: losses add up (each micro-batch
    /// loss is already scaled by the whole batch's normaliser), token metrics are averaged
    /// weighted by tokens, the group fraction weighted by sequences. An optional metric is
    /// present when it is present in any part.
    pub fn merge(parts: &[StepMetrics]) -> StepMetrics {
        let tokens: f64 = parts.iter().map(|m| m.tokens).sum();
        let sequences: f64 = parts.iter().map(|m| m.sequences).sum();
        let by_tokens = |f: fn(&StepMetrics) -> f64| {
            if tokens > 0.0 {
                parts.iter().map(|m| f(m) * m.tokens).sum::<f64>() / tokens
            } else {
                0.0
            }
        };
        let optional = |f: fn(&StepMetrics) -> Option<f64>, weight: fn(&StepMetrics) -> f64| {
            let present: Vec<(f64, f64)> = parts
                .iter()
                .filter_map(|m| f(m).map(|v| (v, weight(m))))
                .collect();
            if present.is_empty() {
                return None;
            }
            let total: f64 = present.iter().map(|(_, w)| w).sum();
            Some(if total > 0.0 {
                present.iter().map(|(v, w)| v * w).sum::<f64>() / total
            } else {
                0.0
            })
        };
        StepMetrics {
            loss: parts.iter().map(|m| m.loss).sum(),
            clip_fraction_low: by_tokens(|m| m.clip_fraction_low),
            clip_fraction_high: by_tokens(|m| m.clip_fraction_high),
            dual_clip_fraction: by_tokens(|m| m.dual_clip_fraction),
            mean_ratio: by_tokens(|m| m.mean_ratio),
            kl: optional(|m| m.kl, |m| m.tokens),
            entropy: optional(|m| m.entropy, |m| m.tokens),
            zero_advantage_group_fraction: optional(
                |m| m.zero_advantage_group_fraction,
                |m| m.sequences,
            ),
            tokens,
            sequences,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_weights_by_tokens_and_sums_losses() {
        let a = StepMetrics {
            loss: 0.25,
            clip_fraction_high: 0.5,
            mean_ratio: 1.0,
            kl: Some(0.1),
            zero_advantage_group_fraction: Some(1.0),
            tokens: 2.0,
            sequences: 1.0,
            ..Default::default()
        };
        let b = StepMetrics {
            loss: -0.5,
            clip_fraction_high: 0.0,
            mean_ratio: 1.3,
            kl: None,
            zero_advantage_group_fraction: Some(0.0),
            tokens: 6.0,
            sequences: 3.0,
            ..Default::default()
        };
        let m = StepMetrics::merge(&[a, b]);
        assert_eq!(m.loss, -0.25);
        // (0.5·2 + 0·6)/8 = 0.125; (1·2 + 1.3·6)/8 = 1.225.
        assert!((m.clip_fraction_high - 0.125).abs() < 1e-12);
        assert!((m.mean_ratio - 1.225).abs() < 1e-12);
        assert_eq!(m.kl, Some(0.1));
        assert_eq!(m.entropy, None);
        assert_eq!(m.zero_advantage_group_fraction, Some(0.25));
        assert_eq!((m.tokens, m.sequences), (8.0, 4.0));
        assert_eq!(StepMetrics::merge(&[]), StepMetrics::default());
    }
}
