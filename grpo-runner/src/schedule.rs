//! Learning-rate schedules: linear warm-up, then constant, cosine or linear decay.
//!
//! Steps count from 0. During warm-up (`step < warmup_steps`) the rate climbs linearly from
//! `lr / warmup_steps` to `lr`, so the first update is never taken at rate 0 (as in
//! `transformers`' schedules with the step counted after the update). After warm-up the decay
//! runs over the remaining `total_steps - warmup_steps` steps down to `min_lr_ratio · lr`.

use serde::{Deserialize, Serialize};

/// The shape of the rate after warm-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScheduleKind {
    /// Stay at the peak rate.
    Constant,
    /// Half a cosine from the peak down to the floor.
    Cosine,
    /// A straight line from the peak down to the floor.
    Linear,
}

/// A learning-rate schedule.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    /// The peak learning rate.
    pub lr: f64,
    /// Shape after warm-up.
    pub kind: ScheduleKind,
    /// Steps of linear warm-up.
    pub warmup_steps: u64,
    /// The floor, as a fraction of `lr`, reached at the last step (cosine and linear only).
    pub min_lr_ratio: f64,
}

impl Default for Schedule {
    fn default() -> Self {
        Schedule {
            lr: 1e-6,
            kind: ScheduleKind::Constant,
            warmup_steps: 0,
            min_lr_ratio: 0.0,
        }
    }
}

impl Schedule {
    /// The learning rate for optimiser step `step` (from 0) out of `total_steps`.
    ///
    /// ```
    /// use grpo_runner::schedule::{Schedule, ScheduleKind};
    /// let s = Schedule { lr: 1.0, kind: ScheduleKind::Cosine, warmup_steps: 2, min_lr_ratio: 0.0 };
    /// assert_eq!(s.lr_at(0, 10), 0.5); // warm-up: (0 + 1) / 2
    /// assert_eq!(s.lr_at(2, 10), 1.0); // peak right after warm-up
    /// ```
    pub fn lr_at(&self, step: u64, total_steps: u64) -> f64 {
        if step < self.warmup_steps {
            return self.lr * (step + 1) as f64 / self.warmup_steps as f64;
        }
        let floor = self.lr * self.min_lr_ratio;
        let span = total_steps.saturating_sub(self.warmup_steps);
        if span <= 1 {
            return self.lr;
        }
        let progress = ((step - self.warmup_steps) as f64 / (span - 1) as f64).min(1.0);
        match self.kind {
            ScheduleKind::Constant => self.lr,
            ScheduleKind::Linear => self.lr - (self.lr - floor) * progress,
            ScheduleKind::Cosine => {
                floor + (self.lr - floor) * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn golden_values() {
        // (kind, warmup, floor, total, step, expected)
        // cosine, no warmup, 5 steps: progress = step/4 → 0.5(1+cos(π p)):
        //   p = 0.5 → 0.5; p = 0.25 → 0.5(1+√2/2) = 0.853553…
        // linear with floor 0.1, warmup 2, total 12 → span 10, p = (s−2)/9:
        //   s = 2 → 1; s = 11 → 0.1; s = 5 → 1 − 0.9·3/9 = 0.7
        let cases: &[(ScheduleKind, u64, f64, u64, u64, f64)] = &[
            (ScheduleKind::Constant, 0, 0.0, 10, 0, 1.0),
            (ScheduleKind::Constant, 0, 0.0, 10, 9, 1.0),
            (ScheduleKind::Constant, 4, 0.0, 10, 0, 0.25),
            (ScheduleKind::Constant, 4, 0.0, 10, 3, 1.0),
            (ScheduleKind::Cosine, 0, 0.0, 5, 0, 1.0),
            (ScheduleKind::Cosine, 0, 0.0, 5, 2, 0.5),
            (
                ScheduleKind::Cosine,
                0,
                0.0,
                5,
                1,
                0.5 * (1.0 + std::f64::consts::FRAC_1_SQRT_2),
            ),
            (ScheduleKind::Cosine, 0, 0.0, 5, 4, 0.0),
            (ScheduleKind::Linear, 2, 0.1, 12, 0, 0.5),
            (ScheduleKind::Linear, 2, 0.1, 12, 2, 1.0),
            (ScheduleKind::Linear, 2, 0.1, 12, 5, 0.7),
            (ScheduleKind::Linear, 2, 0.1, 12, 11, 0.1),
            // Past the end the floor holds.
            (ScheduleKind::Linear, 2, 0.1, 12, 40, 0.1),
            // A single post-warm-up step stays at the peak.
            (ScheduleKind::Cosine, 0, 0.0, 1, 0, 1.0),
        ];
        for &(kind, warmup_steps, min_lr_ratio, total, step, want) in cases {
            let s = Schedule {
                lr: 1.0,
                kind,
                warmup_steps,
                min_lr_ratio,
            };
            let got = s.lr_at(step, total);
            assert!(
                close(got, want),
                "{kind:?} w{warmup_steps} step {step}/{total}: {got} != {want}"
            );
        }
    }

    #[test]
    fn never_negative_never_above_peak() {
        for kind in [
            ScheduleKind::Constant,
            ScheduleKind::Cosine,
            ScheduleKind::Linear,
        ] {
            for warmup_steps in [0, 1, 3, 50] {
                let s = Schedule {
                    lr: 3e-4,
                    kind,
                    warmup_steps,
                    min_lr_ratio: 0.1,
                };
                for step in 0..60 {
                    let lr = s.lr_at(step, 40);
                    assert!(
                        lr > 0.0 && lr <= 3e-4 + 1e-18,
                        "{kind:?} {warmup_steps} {step}: {lr}"
                    );
                }
            }
        }
    }
}
