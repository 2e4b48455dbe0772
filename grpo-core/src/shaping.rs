//! Reward shaping between scoring and advantages: DAPO's soft overlong punishment, and the
//! one definition of a *tied* group (all rewards equal: zero advantage, no policy gradient),
//! which DAPO's dynamic sampling drops.
//!
//! Combining reward components into one reward per completion is the scorer's
//! (`grpo_rewards::Scorer`); what arrives here is one reward per completion.

use crate::config::OverlongConfig;
use crate::error::Result;

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

/// Whether a group's rewards are all equal (zero variance, zero advantage, no policy
/// gradient): the groups DAPO's dynamic sampling drops and samples again. An empty group is
/// tied (it carries no signal either).
///
/// ```
/// use grpo_core::is_tied;
/// assert!(is_tied(&[0.5, 0.5, 0.5]));
/// assert!(!is_tied(&[1.0, 0.0]));
/// assert!(is_tied(&[]));
/// ```
pub fn is_tied(rewards: &[f64]) -> bool {
    rewards.iter().all(|&r| r == rewards[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlong_ramps_from_zero_to_minus_one_over_the_cache() {
        let config = OverlongConfig {
            max_len: 10,
            cache_len: 4,
        };
        let got: Vec<f64> = (4..=12)
            .map(|n| overlong_penalty(n, &config).unwrap())
            .collect();
        assert_eq!(got, [0.0, 0.0, 0.0, -0.25, -0.5, -0.75, -1.0, -1.0, -1.0]);
        let bad = OverlongConfig {
            max_len: 4,
            cache_len: 0,
        };
        assert!(overlong_penalty(1, &bad).is_err());
    }

    #[test]
    fn tied_means_exactly_equal() {
        assert!(is_tied(&[1.0]));
        assert!(!is_tied(&[1.0, 1.0 + f64::EPSILON]));
        assert!(is_tied(&[-0.0, 0.0]));
    }
}
