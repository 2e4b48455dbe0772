//! Example of GRPO on the smallest policy there is: a softmax over four arms, one token per
//! completion, a reward of 1 for arm 2. Each step samples a group of eight arms, turns the
//! rewards into group-relative advantages and takes a gradient step on the clipped loss (with
//! the β-weighted KL to the uniform starting policy); the probability of the rewarded arm
//! climbs towards 1.
//!
//!     cargo run -p grpo-core --example toy_bandit

use candle_core::{DType, Device, Tensor, Var};
use grpo_core::{
    Algorithm, GrpoConfig, LossInputs, Normalizer, group_advantages, policy_loss, response_mask,
    token_logprobs,
};
use rand::{Rng, SeedableRng};

const ARMS: usize = 4;
const GROUP: usize = 8;
const GOOD_ARM: u32 = 2;

fn probabilities(logits: &Tensor) -> candle_core::Result<Vec<f32>> {
    let values = logits.to_vec1::<f32>()?;
    let max = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let exp: Vec<f32> = values.iter().map(|v| (v - max).exp()).collect();
    let total: f32 = exp.iter().sum();
    Ok(exp.iter().map(|e| e / total).collect())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cpu = Device::Cpu;
    let config = GrpoConfig::preset(Algorithm::Grpo, 1);
    config.validate()?;
    let logits = Var::zeros(ARMS, DType::F32, &cpu)?;
    // The frozen reference policy the β-weighted KL pulls towards: the uniform start.
    let reference = logits.as_tensor().detach();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let learning_rate = 0.5;
    for step in 0..60 {
        // Sample: a group of arms from the current policy.
        let probs = probabilities(logits.as_tensor())?;
        let arms: Vec<u32> = (0..GROUP)
            .map(|_| {
                let mut u: f32 = rng.r#gen();
                probs
                    .iter()
                    .position(|p| {
                        u -= p;
                        u <= 0.0
                    })
                    .unwrap_or(ARMS - 1) as u32
            })
            .collect();
        // Score, and turn the group's rewards into advantages.
        let rewards: Vec<f32> = arms.iter().map(|&a| f32::from(a == GOOD_ARM)).collect();
        let rewards = Tensor::from_vec(rewards, (1, GROUP), &cpu)?;
        let advantages = group_advantages(&rewards, &config.advantage)?.flatten_all()?;
        // The loss over one token per completion (the response starts at position 0).
        let batch_logits = logits
            .as_tensor()
            .reshape((1, 1, ARMS))?
            .broadcast_as((GROUP, 1, ARMS))?;
        let targets = Tensor::from_vec(arms.clone(), (GROUP, 1), &cpu)?;
        let mask = response_mask(&[0; GROUP], &[1; GROUP], 1, &cpu)?;
        let logprobs = token_logprobs(&batch_logits, &targets)?;
        let old = logprobs.detach();
        let reference = reference
            .reshape((1, 1, ARMS))?
            .broadcast_as((GROUP, 1, ARMS))?;
        let ref_logprobs = token_logprobs(&reference, &targets)?;
        let inputs = LossInputs {
            logprobs: &logprobs,
            old_logprobs: &old,
            ref_logprobs: Some(&ref_logprobs),
            advantages: &advantages,
            mask: &mask,
            logits: None,
            group_size: Some(GROUP),
        };
        let (loss, _metrics) = policy_loss(&inputs, &config.loss, &Normalizer::from_mask(&mask)?)?;
        // Update: plain gradient descent on the four logits.
        let grads = loss.backward()?;
        if let Some(grad) = grads.get(logits.as_tensor()) {
            logits.set(&(logits.as_tensor() - (grad * learning_rate)?)?)?;
        }
        if step % 10 == 0 {
            println!(
                "step {step:2}: P(arm {GOOD_ARM}) = {:.3}",
                probs[GOOD_ARM as usize]
            );
        }
    }
    let last = probabilities(logits.as_tensor())?[GOOD_ARM as usize];
    println!("after 60 steps: P(arm {GOOD_ARM}) = {last:.3}");
    assert!(last > 0.9, "the rewarded arm should dominate, got {last}");
    Ok(())
}
