//! The advantages phase: the kept groups' shaped rewards, one `[groups, G]` tensor, made
//! group-relative by grpo-core.

use candle_core::{Device, Tensor};
use grpo_core::AdvantageConfig;

use crate::error::Result;
use crate::rollout::group::Group;

/// Group-relative advantages of the shaped rewards of `groups` (`group_size` each), `[groups,
/// G]` (f64, on the host: a few numbers per step, and Metal has no f64; the update moves its
/// rows to the model's device as f32); `None` when no group is left to train on.
pub(super) fn advantages(
    groups: &[Group],
    group_size: usize,
    config: &AdvantageConfig,
) -> Result<Option<Tensor>> {
    if groups.is_empty() {
        return Ok(None);
    }
    let flat: Vec<f64> = groups
        .iter()
        .flat_map(|gr| gr.rewards.iter().copied())
        .collect();
    let rewards = Tensor::from_vec(flat, (groups.len(), group_size), &Device::Cpu)?;
    Ok(Some(grpo_core::group_advantages(&rewards, config)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::rollout::tests::scored_group;

    #[test]
    fn each_group_is_normalised_on_its_own_and_a_tied_group_gets_zeros() -> Result<()> {
        let groups = [
            scored_group(&["<answer>5</answer>", "<answer>4</answer>"])?,
            scored_group(&["<answer>4</answer>", "<answer>4</answer>"])?,
        ];
        // Accuracy and format: the right answer's reward is above the wrong one's.
        assert!(groups[0].rewards[0] > groups[0].rewards[1], "{groups:?}");
        let rows = advantages(&groups, 2, &AdvantageConfig::default())?
            .expect("two groups to train on")
            .to_vec2::<f64>()?;
        // Mean baseline over the population std of a pair: ±1 (less the 1e-8 stabiliser).
        assert!((rows[0][0] - 1.0).abs() < 1e-6 && (rows[0][1] + 1.0).abs() < 1e-6);
        assert_eq!(rows[1], [0.0, 0.0]);
        assert!(advantages(&[], 2, &AdvantageConfig::default())?.is_none());
        Ok(())
    }
}
