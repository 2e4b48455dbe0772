//! Helpers the loss and conventions tests share: tensors from plain numbers, a batch given as
//! numbers with its loss and gradient, and the hand-derived two-sequence batch.

use candle_core::{Device, Tensor, Var};
use grpo_core::{LossConfig, LossInputs, Normalizer, StepMetrics, policy_loss};

pub type TestResult = Result<(), Box<dyn std::error::Error>>;

pub const CPU: Device = Device::Cpu;

pub fn t2(rows: &[Vec<f64>]) -> Tensor {
    let cols = rows[0].len();
    let flat: Vec<f64> = rows.iter().flatten().copied().collect();
    Tensor::from_vec(flat, (rows.len(), cols), &CPU).unwrap()
}

pub fn t1(values: &[f64]) -> Tensor {
    Tensor::new(values, &CPU).unwrap()
}

/// Loss and d loss / d logprobs for a batch given as plain numbers.
#[derive(Clone)]
pub struct Batch {
    pub logprobs: Vec<Vec<f64>>,
    pub old: Vec<Vec<f64>>,
    pub reference: Option<Vec<Vec<f64>>>,
    pub advantages: Vec<f64>,
    pub mask: Vec<Vec<f64>>,
}

impl Batch {
    pub fn loss_and_grad(&self, config: &LossConfig) -> (f64, Vec<Vec<f64>>, StepMetrics) {
        let var = Var::from_tensor(&t2(&self.logprobs)).unwrap();
        let old = t2(&self.old);
        let reference = self.reference.as_ref().map(|r| t2(r));
        let advantages = t1(&self.advantages);
        let mask = t2(&self.mask);
        let inputs = LossInputs {
            logprobs: var.as_tensor(),
            old_logprobs: &old,
            ref_logprobs: reference.as_ref(),
            advantages: &advantages,
            mask: &mask,
            logits: None,
            group_size: None,
        };
        let normalizer = Normalizer::from_mask(&mask).unwrap();
        let (loss, metrics) = policy_loss(&inputs, config, &normalizer).unwrap();
        let grads = loss.backward().unwrap();
        let grad = grads
            .get(var.as_tensor())
            .unwrap()
            .to_vec2::<f64>()
            .unwrap();
        (loss.to_scalar::<f64>().unwrap(), grad, metrics)
    }

    pub fn loss(&self, config: &LossConfig) -> f64 {
        self.loss_and_grad(config).0
    }
}

/// Two sequences; the second has a padded position holding garbage log-probs.
pub fn hand_batch() -> Batch {
    Batch {
        // Sequence 0: ratios 1.1 and 1.0. Sequence 1: ratio 0.7, then padding.
        logprobs: vec![
            vec![1.1f64.ln() - 1.0, -2.0],
            vec![0.7f64.ln() - 0.5, f64::NEG_INFINITY],
        ],
        old: vec![vec![-1.0, -2.0], vec![-0.5, 0.0]],
        // Reference: d = ln 0.5 on token (0,0), d = 0 elsewhere; padding NaN.
        reference: Some(vec![
            vec![1.1f64.ln() - 1.0 + 0.5f64.ln(), -2.0],
            vec![0.7f64.ln() - 0.5, f64::NAN],
        ]),
        advantages: vec![1.0, -0.5],
        mask: vec![vec![1.0, 1.0], vec![1.0, 0.0]],
    }
}
