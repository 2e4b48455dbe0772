//! From reward functions to one reward per completion: weighted combination with missing
//! values, DAPO's soft overlong punishment, and the zero-variance group filter used by dynamic
//! sampling.
//!
//! # The missing-value rule
//!
//! A reward function may skip a completion (a code reward on a math task): its value is
//! `None`. The combined reward is the weighted sum of the values that are present; a missing
//! value contributes nothing (it is *not* treated as 0 with its weight renormalised away, and
//! the other weights are not rescaled). A completion for which every column is missing has no
//! reward at all, and that is an error naming the completion. This is TRL's rule (`nansum` of
//! weighted columns, with a warning when a row is all-NaN), made strict.

use candle_core::Tensor;

use crate::advantage::read_rewards;
use crate::config::OverlongConfig;
use crate::error::{Error, Result};

/// One reward function's values for every completion of a batch, with its weight.
#[derive(Debug, Clone, Copy)]
pub struct RewardColumn<'a> {
    /// The reward's name, for error messages (`accuracy`, `format`).
    pub name: &'a str,
    /// The weight of this column in the sum.
    pub weight: f64,
    /// One value per completion; `None` when the reward does not apply.
    pub values: &'a [Option<f64>],
}

/// Combines reward columns into one reward per completion: `Σ_k w_k · v_k` over present values.
///
/// # Errors
/// No columns; columns of different lengths; a non-finite weight or present value; a
/// completion with every value missing.
///
/// # Example
/// ```
/// use grpo_core::{combine_rewards, RewardColumn};
///
/// let accuracy = [Some(1.0), Some(0.0), None];
/// let format = [Some(1.0), None, Some(1.0)];
/// let combined = combine_rewards(&[
///     RewardColumn { name: "accuracy", weight: 1.0, values: &accuracy },
///     RewardColumn { name: "format", weight: 0.5, values: &format },
/// ])?;
/// // 1·1 + 0.5·1; 1·0 (format missing); 0.5·1 (accuracy missing).
/// assert_eq!(combined, [1.5, 0.0, 0.5]);
/// # Ok::<(), grpo_core::Error>(())
/// ```
pub fn combine_rewards(columns: &[RewardColumn<'_>]) -> Result<Vec<f64>> {
    let first = columns.first().ok_or(Error::NoRewardColumns)?;
    let n = first.values.len();
    for column in columns {
        if column.values.len() != n {
            return Err(Error::RewardColumnLength {
                column: column.name.to_string(),
                expected: n,
                got: column.values.len(),
            });
        }
        if !column.weight.is_finite() {
            return Err(Error::BadRewardWeight {
                column: column.name.to_string(),
                weight: column.weight,
            });
        }
    }
    (0..n)
        .map(|completion| {
            let mut total = 0.0;
            let mut present = false;
            for column in columns {
                if let Some(value) = column.values[completion] {
                    if !value.is_finite() {
                        return Err(Error::NonFiniteRewardValue {
                            column: column.name.to_string(),
                            completion,
                            value,
                        });
                    }
                    total += column.weight * value;
                    present = true;
                }
            }
            if present {
                Ok(total)
            } else {
                Err(Error::AllRewardsMissing { completion })
            }
        })
        .collect()
}

/// DAPO's soft overlong punishment for a completion of `length` tokens (Yu et al. 2025, eq. 13).
///
/// With `L_max = max_len` and `L_cache = cache_len`:
/// 0 up to `L_max − L_cache`; then falling linearly, `((L_max − L_cache) − length) / L_cache`,
/// to −1 at `L_max`; −1 beyond. Added to the task reward.
///
/// # Errors
/// A configuration with `cache_len` zero or above `max_len`.
///
/// # Example
/// ```
/// use grpo_core::{overlong_penalty, OverlongConfig};
///
/// let config = OverlongConfig { max_len: 100, cache_len: 20 };
/// assert_eq!(overlong_penalty(80, &config)?, 0.0);
/// assert_eq!(overlong_penalty(90, &config)?, -0.5);
/// assert_eq!(overlong_penalty(101, &config)?, -1.0);
/// # Ok::<(), grpo_core::Error>(())
/// ```
pub fn overlong_penalty(length: usize, config: &OverlongConfig) -> Result<f64> {
    config.validate()?;
    let soft_start = config.max_len - config.cache_len;
    Ok(if length <= soft_start {
        0.0
    } else if length <= config.max_len {
        (soft_start as f64 - length as f64) / config.cache_len as f64
    } else {
        -1.0
    })
}

/// For each prompt, whether its group's rewards are all equal (zero variance, zero advantage,
/// no policy gradient). DAPO's dynamic sampling drops these groups and samples more.
///
/// # Shapes
/// - `rewards`: `[prompts, group]`, f32 or f64.
/// - returns: one flag per prompt.
///
/// # Errors
/// The same as [`crate::group_advantages`]: not 2-D, empty, group < 2, non-finite.
pub fn zero_variance_groups(rewards: &Tensor) -> Result<Vec<bool>> {
    let rows = read_rewards(rewards)?;
    Ok(rows
        .iter()
        .map(|row| row.iter().all(|&r| r == row[0]))
        .collect())
}

/// The indices of prompts whose group rewards differ: the groups dynamic sampling keeps.
///
/// # Shapes
/// - `rewards`: `[prompts, group]`, f32 or f64.
///
/// # Errors
/// The same as [`zero_variance_groups`].
pub fn informative_groups(rewards: &Tensor) -> Result<Vec<usize>> {
    Ok(zero_variance_groups(rewards)?
        .into_iter()
        .enumerate()
        .filter_map(|(i, tied)| (!tied).then_some(i))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    fn column<'a>(name: &'a str, weight: f64, values: &'a [Option<f64>]) -> RewardColumn<'a> {
        RewardColumn {
            name,
            weight,
            values,
        }
    }

    #[test]
    fn missing_values_contribute_nothing() {
        let a = [Some(1.0), Some(0.0), None, Some(0.25)];
        let b = [Some(1.0), None, Some(1.0), Some(-2.0)];
        let c = [None, None, Some(4.0), Some(0.0)];
        let got = combine_rewards(&[
            column("a", 1.0, &a),
            column("b", 0.5, &b),
            column("c", -0.25, &c),
        ])
        .unwrap();
        // 1 + 0.5 = 1.5; 0; 0.5·1 − 0.25·4 = −0.5; 0.25 − 1 + 0 = −0.75.
        assert_eq!(got, [1.5, 0.0, -0.5, -0.75]);
    }

    #[test]
    fn combine_rejects_bad_columns() {
        let ok = [Some(1.0), Some(0.0)];
        assert!(matches!(combine_rewards(&[]), Err(Error::NoRewardColumns)));
        let short = [Some(1.0)];
        assert!(matches!(
            combine_rewards(&[column("a", 1.0, &ok), column("b", 1.0, &short)]),
            Err(Error::RewardColumnLength {
                expected: 2,
                got: 1,
                ..
            })
        ));
        assert!(matches!(
            combine_rewards(&[column("a", f64::NAN, &ok)]),
            Err(Error::BadRewardWeight { .. })
        ));
        let nan = [Some(1.0), Some(f64::INFINITY)];
        assert!(matches!(
            combine_rewards(&[column("a", 1.0, &nan)]),
            Err(Error::NonFiniteRewardValue { completion: 1, .. })
        ));
        let holes_a = [Some(1.0), None];
        let holes_b = [None, None];
        assert!(matches!(
            combine_rewards(&[column("a", 1.0, &holes_a), column("b", 1.0, &holes_b)]),
            Err(Error::AllRewardsMissing { completion: 1 })
        ));
    }

    #[test]
    fn overlong_penalty_table() {
        // L_max = 100, L_cache = 20: soft interval (80, 100], slope −1/20 per token.
        let config = OverlongConfig {
            max_len: 100,
            cache_len: 20,
        };
        for (length, want) in [
            (0, 0.0),
            (80, 0.0),
            (81, -0.05),
            (95, -0.75),
            (100, -1.0),
            (101, -1.0),
            (10_000, -1.0),
        ] {
            let got = overlong_penalty(length, &config).unwrap();
            assert!((got - want).abs() < 1e-12, "{length}: {got} vs {want}");
        }
        // The whole range is soft when cache_len = max_len.
        let all = OverlongConfig {
            max_len: 4,
            cache_len: 4,
        };
        assert_eq!(overlong_penalty(1, &all).unwrap(), -0.25);
        let bad = OverlongConfig {
            max_len: 4,
            cache_len: 0,
        };
        assert!(matches!(
            overlong_penalty(1, &bad),
            Err(Error::InvalidConfig { .. })
        ));
    }

    #[test]
    fn zero_variance_filter() {
        let rewards = Tensor::new(
            &[
                [1f32, 1., 1.],
                [0., 1., 0.],
                [0., 0., 0.],
                [0.5, 0.5, 0.5000001],
            ],
            &Device::Cpu,
        )
        .unwrap();
        assert_eq!(
            zero_variance_groups(&rewards).unwrap(),
            [true, false, true, false]
        );
        assert_eq!(informative_groups(&rewards).unwrap(), [1, 3]);
        let bad = Tensor::new(&[[1f32, f32::NAN]], &Device::Cpu).unwrap();
        assert!(zero_variance_groups(&bad).is_err());
    }
}
