//! Group-relative advantages: one number per completion saying how much better it did than
//! the other completions to the same prompt.
//!
//! ```text
//! A_i = (r_i − baseline) / (std + ε)
//! ```
//!
//! The baseline is the group mean (GRPO) or the mean of the other completions (RLOO); the
//! scale is the group's *population* standard deviation (GRPO, the default), the batch's, or
//! none (Dr. GRPO, which also adds no ε). A group whose rewards are all equal gets exactly zero,
//! whatever the scaling: it says nothing about which completion to favour.
//!
//! Peers differ in small constants: TRL adds 1e-4 to the unbiased std, verl 1e-6; both compute
//! in float32, and verl gives a group of one completion mean 0 and std 1. This crate follows
//! DeepSeekMath's formula as written by default (population std, ε = 1e-8, f64, a group of one
//! is an error); [`AdvantageConfig`]'s `std_estimator`, `precision` and `group_of_one` (or
//! [`crate::Conventions`]) select the peers' numerics.

use candle_core::{DType, Tensor};

use crate::config::{
    AdvantageConfig, Baseline, GroupOfOne, StatsPrecision, StdEstimator, StdScaling,
};
use crate::error::{Error, Result};

/// The advantage of every completion, computed within its prompt's group.
///
/// Statistics are computed in f64 on the host (rewards are a few thousand numbers at most);
/// the result has the input's dtype and device and carries no gradient.
///
/// # Shapes
/// - `rewards`: `[prompts, group]`, f32 or f64, each row one prompt's completions.
/// - returns: `[prompts, group]`.
///
/// # Errors
/// A tensor that is not 2-D, has no prompts, has fewer than two completions per prompt (unless
/// `group_of_one` is `raw_score`), holds a NaN or infinity, or whose statistics overflow; a
/// stabilizer that is not finite and positive.
///
/// # Example
/// ```
/// use candle_core::{Device, Tensor};
/// use grpo_core::{group_advantages, AdvantageConfig};
///
/// let rewards = Tensor::new(&[[0f32, 1., 1., 0.], [1., 1., 1., 1.]], &Device::Cpu)?;
/// let advantages = group_advantages(&rewards, &AdvantageConfig::default())?;
/// // Mean 0.5, population std 0.5: ±0.5 / 0.5 = ±1. The tied group is exactly zero.
/// assert_eq!(advantages.to_vec2::<f32>()?, [[-1., 1., 1., -1.], [0., 0., 0., 0.]]);
/// # Ok::<(), grpo_core::Error>(())
/// ```
pub fn group_advantages(rewards: &Tensor, config: &AdvantageConfig) -> Result<Tensor> {
    config.validate()?;
    let min_group = match config.group_of_one {
        GroupOfOne::Reject => 2,
        GroupOfOne::RawScore => 1,
    };
    let rows = read_reward_rows(rewards, min_group)?;
    let group = rows[0].len();
    let arith = Arith(config.precision);
    let g = arith.round(group as f64);

    let batch_std = match config.scaling {
        StdScaling::Batch => {
            let all: Vec<f64> = rows.iter().flatten().copied().collect();
            // A single reward in the whole batch has no spread: std 1, as for a group of one.
            let std = if all.len() < 2 {
                1.0
            } else {
                arith.mean_and_std(&all, config.std_estimator).1
            };
            if !std.is_finite() {
                return Err(Error::RewardStatsOverflow { prompt: None });
            }
            Some(std)
        }
        StdScaling::Group | StdScaling::None => None,
    };

    let mut out = Vec::with_capacity(rows.len() * group);
    for (prompt, row) in rows.iter().enumerate() {
        let singleton = group == 1;
        if !singleton && row.iter().all(|&r| r == row[0]) {
            out.extend(std::iter::repeat_n(0.0, group));
            continue;
        }
        // A group of one (allowed only by `GroupOfOne::RawScore`): mean 0, std 1.
        let (mean, group_std) = if singleton {
            (0.0, 1.0)
        } else {
            arith.mean_and_std(row, config.std_estimator)
        };
        if !(mean.is_finite() && group_std.is_finite()) {
            return Err(Error::RewardStatsOverflow {
                prompt: Some(prompt),
            });
        }
        let denominator = match (config.scaling, batch_std) {
            (StdScaling::Group, _) => arith.add(group_std, config.epsilon),
            (StdScaling::Batch, Some(std)) => arith.add(std, config.epsilon),
            (StdScaling::Batch, None) | (StdScaling::None, _) => 1.0,
        };
        for &r in row {
            let centred = match config.baseline {
                Baseline::Mean => arith.sub(r, mean),
                // The others of a group of one are no one: baseline 0.
                Baseline::LeaveOneOut if singleton => arith.round(r),
                // r_i − (Σ_j r_j − r_i)/(G − 1) = G/(G − 1) · (r_i − mean)
                Baseline::LeaveOneOut => {
                    let factor = arith.div(g, arith.sub(g, 1.0));
                    arith.mul(factor, arith.sub(r, mean))
                }
            };
            let advantage = arith.div(centred, denominator);
            if !advantage.is_finite() {
                return Err(Error::RewardStatsOverflow {
                    prompt: Some(prompt),
                });
            }
            out.push(advantage);
        }
    }
    let advantages = Tensor::from_vec(out, (rows.len(), group), rewards.device())?;
    Ok(advantages.to_dtype(rewards.dtype())?)
}

/// Arithmetic in the configured precision: f64 operations whose every result is rounded to f32
/// under [`StatsPrecision::F32`]. For f32 operands, rounding the exact-in-f64 result of `+ − × ÷`
/// and `sqrt` gives exactly the f32 operation, so this is f32 arithmetic.
#[derive(Debug, Clone, Copy)]
struct Arith(StatsPrecision);

impl Arith {
    fn round(self, x: f64) -> f64 {
        match self.0 {
            StatsPrecision::F64 => x,
            StatsPrecision::F32 => x as f32 as f64,
        }
    }
    fn add(self, a: f64, b: f64) -> f64 {
        self.round(self.round(a) + self.round(b))
    }
    fn sub(self, a: f64, b: f64) -> f64 {
        self.round(self.round(a) - self.round(b))
    }
    fn mul(self, a: f64, b: f64) -> f64 {
        self.round(self.round(a) * self.round(b))
    }
    fn div(self, a: f64, b: f64) -> f64 {
        self.round(self.round(a) / self.round(b))
    }

    /// Mean and standard deviation (two passes); at least two values for `Unbiased`.
    ///
    /// The unbiased variance is the population variance times the Bessel factor `n / (n − 1)`,
    /// the factor itself computed in the configured precision.
    fn mean_and_std(self, values: &[f64], estimator: StdEstimator) -> (f64, f64) {
        let n = self.round(values.len() as f64);
        let sum = values.iter().fold(0.0, |acc, &v| self.add(acc, v));
        let mean = self.div(sum, n);
        let squares = values.iter().fold(0.0, |acc, &v| {
            let d = self.sub(v, mean);
            self.add(acc, self.mul(d, d))
        });
        let population = self.div(squares, n);
        let variance = match estimator {
            StdEstimator::Population => population,
            StdEstimator::Unbiased => self.mul(population, self.div(n, self.sub(n, 1.0))),
        };
        (mean, self.round(variance.sqrt()))
    }
}

/// Checks shape, dtype and finiteness, and copies the rewards to the host as f64 rows, with
/// groups of at least `min_group` completions.
fn read_reward_rows(rewards: &Tensor, min_group: usize) -> Result<Vec<Vec<f64>>> {
    let (prompts, group) = rewards.dims2().map_err(|_| Error::Shape {
        name: "rewards",
        expected: "[prompts, group]".into(),
        got: rewards.dims().to_vec(),
    })?;
    if !matches!(rewards.dtype(), DType::F32 | DType::F64) {
        return Err(Error::DType {
            name: "rewards",
            expected: "f32 or f64",
            got: rewards.dtype(),
        });
    }
    if prompts == 0 {
        return Err(Error::EmptyRewards);
    }
    if group < min_group.max(1) {
        return Err(Error::GroupTooSmall { group_size: group });
    }
    let rows = rewards.to_dtype(DType::F64)?.to_vec2::<f64>()?;
    for (prompt, row) in rows.iter().enumerate() {
        if let Some((completion, &value)) = row.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(Error::NonFiniteReward {
                prompt,
                completion,
                value,
            });
        }
    }
    Ok(rows)
}

/// Mean and population standard deviation (two passes, f64).
#[cfg(test)]
fn mean_and_population_std(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, variance.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;
    use proptest::prelude::*;

    fn advantages(rows: &[&[f64]], config: &AdvantageConfig) -> Result<Vec<Vec<f64>>> {
        let flat: Vec<f64> = rows.iter().flat_map(|r| r.iter().copied()).collect();
        let t = Tensor::from_vec(flat, (rows.len(), rows[0].len()), &Device::Cpu)?;
        Ok(group_advantages(&t, config)?.to_vec2::<f64>()?)
    }

    fn assert_close(got: &[Vec<f64>], want: &[&[f64]], tol: f64) {
        for (g, w) in got.iter().zip(want) {
            for (a, b) in g.iter().zip(w.iter()) {
                assert!((a - b).abs() <= tol, "got {got:?}, want {want:?}");
            }
        }
    }

    #[test]
    fn design_worked_example_and_tied_group_is_exactly_zero() {
        // DESIGN.md: [[0,1,1,0],[1,1,1,1]] → [[-1,1,1,-1],[0,0,0,0]].
        let got = advantages(
            &[&[0., 1., 1., 0.], &[1., 1., 1., 1.]],
            &AdvantageConfig::default(),
        )
        .unwrap();
        assert_close(&got, &[&[-1., 1., 1., -1.]], 1e-7);
        assert_eq!(got[1], vec![0.0; 4]);
    }

    #[test]
    fn one_and_three_successes_in_four() {
        // One in four: mean 0.25, std sqrt(0.25·0.75) = 0.4330127; success 0.75/0.4330127 =
        // 1.7320508 (√3), failures −0.25/0.4330127 = −0.5773503 (−1/√3).
        // Three in four: mirror image, each success +1/√3 ≈ 0.5773503.
        let got = advantages(
            &[&[1., 0., 0., 0.], &[1., 1., 1., 0.]],
            &AdvantageConfig::default(),
        )
        .unwrap();
        let s = 3f64.sqrt();
        assert_close(
            &got,
            &[
                &[s, -1. / s, -1. / s, -1. / s],
                &[1. / s, 1. / s, 1. / s, -s],
            ],
            1e-7,
        );
    }

    #[test]
    fn scaling_and_baseline_variants() {
        // Rows [0,1,1,0] (mean 0.5, std 0.5) and [0,0,0,2] (mean 0.5, std √0.75 = 0.8660254).
        // All eight rewards: mean 0.5, squared deviations 0.25·7 + 2.25 = 4, variance 0.5,
        // batch std 0.7071068.
        let rows: &[&[f64]] = &[&[0., 1., 1., 0.], &[0., 0., 0., 2.]];
        let none = AdvantageConfig {
            scaling: StdScaling::None,
            ..Default::default()
        };
        assert_close(
            &advantages(rows, &none).unwrap(),
            &[&[-0.5, 0.5, 0.5, -0.5], &[-0.5, -0.5, -0.5, 1.5]],
            1e-12,
        );
        let batch = AdvantageConfig {
            scaling: StdScaling::Batch,
            ..Default::default()
        };
        let b = 0.5f64.sqrt() + 1e-8;
        assert_close(
            &advantages(rows, &batch).unwrap(),
            &[
                &[-0.5 / b, 0.5 / b, 0.5 / b, -0.5 / b],
                &[-0.5 / b, -0.5 / b, -0.5 / b, 1.5 / b],
            ],
            1e-9,
        );
        // RLOO, no scaling: reward 2 vs the others' mean 0 → 2; each 0 vs (0+0+2)/3 → −2/3.
        let rloo = AdvantageConfig {
            baseline: Baseline::LeaveOneOut,
            scaling: StdScaling::None,
            ..Default::default()
        };
        assert_close(
            &advantages(&[&[0., 0., 0., 2.]], &rloo).unwrap(),
            &[&[-2. / 3., -2. / 3., -2. / 3., 2.]],
            1e-12,
        );
    }

    #[test]
    fn tied_groups_are_zero_under_every_config() {
        for baseline in [Baseline::Mean, Baseline::LeaveOneOut] {
            for scaling in [StdScaling::Group, StdScaling::Batch, StdScaling::None] {
                let config = AdvantageConfig {
                    baseline,
                    scaling,
                    ..Default::default()
                };
                // 0.1 is not exactly representable: the mean of three 0.1s is not 0.1, so
                // only the explicit tie rule gives an exact zero.
                let got = advantages(&[&[0.1, 0.1, 0.1], &[0., 1., 2.]], &config).unwrap();
                assert_eq!(got[0], vec![0.0; 3], "{baseline:?} {scaling:?}");
            }
        }
    }

    #[test]
    fn f32_input_keeps_dtype_and_device() {
        let t = Tensor::new(&[[0f32, 1.]], &Device::Cpu).unwrap();
        let a = group_advantages(&t, &AdvantageConfig::default()).unwrap();
        assert_eq!(a.dtype(), DType::F32);
        assert_eq!(a.to_vec2::<f32>().unwrap(), [[-1., 1.]]);
    }

    #[test]
    fn rejects_bad_input() {
        let cpu = Device::Cpu;
        let cfg = AdvantageConfig::default();
        let one_d = Tensor::new(&[0f32, 1.], &cpu).unwrap();
        assert!(matches!(
            group_advantages(&one_d, &cfg),
            Err(Error::Shape {
                name: "rewards",
                ..
            })
        ));
        let empty = Tensor::zeros((0, 4), DType::F32, &cpu).unwrap();
        assert!(matches!(
            group_advantages(&empty, &cfg),
            Err(Error::EmptyRewards)
        ));
        let single = Tensor::zeros((3, 1), DType::F32, &cpu).unwrap();
        assert!(matches!(
            group_advantages(&single, &cfg),
            Err(Error::GroupTooSmall { group_size: 1 })
        ));
        let ints = Tensor::new(&[[0u32, 1]], &cpu).unwrap();
        assert!(matches!(
            group_advantages(&ints, &cfg),
            Err(Error::DType { .. })
        ));
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let t = Tensor::new(&[[0f32, 1.], [1., bad]], &cpu).unwrap();
            match group_advantages(&t, &cfg) {
                Err(Error::NonFiniteReward {
                    prompt: 1,
                    completion: 1,
                    ..
                }) => {}
                other => panic!("{bad}: {other:?}"),
            }
        }
        for eps in [0.0, -1e-8, f64::NAN, f64::INFINITY] {
            let t = Tensor::new(&[[0f32, 1.]], &cpu).unwrap();
            let config = AdvantageConfig {
                epsilon: eps,
                ..Default::default()
            };
            assert!(matches!(
                group_advantages(&t, &config),
                Err(Error::InvalidConfig {
                    field: "advantage.epsilon",
                    ..
                })
            ));
        }
        // Finite rewards whose squared deviations overflow f64.
        let huge = Tensor::new(&[[-1e300f64, 1e300]], &cpu).unwrap();
        assert!(matches!(
            group_advantages(&huge, &cfg),
            Err(Error::RewardStatsOverflow { prompt: Some(0) })
        ));
    }

    proptest! {
        #[test]
        fn zero_mean_unit_scale_and_order_preserved(
            rows in prop::collection::vec(prop::collection::vec(-10f64..10., 2..9), 1..5),
        ) {
            let group = rows[0].len();
            let rows: Vec<Vec<f64>> = rows.into_iter().map(|mut r| { r.resize(group, 0.5); r }).collect();
            let refs: Vec<&[f64]> = rows.iter().map(|r| r.as_slice()).collect();
            let got = advantages(&refs, &AdvantageConfig::default()).unwrap();
            for (row, adv) in rows.iter().zip(&got) {
                let mean: f64 = adv.iter().sum::<f64>() / group as f64;
                prop_assert!(mean.abs() < 1e-9);
                // Advantages are an increasing affine map of the rewards.
                for i in 0..group { for j in 0..group {
                    if row[i] < row[j] { prop_assert!(adv[i] < adv[j]); }
                }}
                if row.iter().all(|&r| r == row[0]) {
                    prop_assert!(adv.iter().all(|&a| a == 0.0));
                } else {
                    // Population variance of the advantages is (std / (std + ε))², which is 1
                    // unless the rewards are within a few ε of each other.
                    let (_, std) = mean_and_population_std(row);
                    let want = (std / (std + 1e-8)).powi(2);
                    let var: f64 = adv.iter().map(|a| a * a).sum::<f64>() / group as f64;
                    prop_assert!((var - want).abs() < 1e-9, "var {} want {}", var, want);
                }
            }
        }

        #[test]
        fn tied_groups_are_exactly_zero(value in -1e6f64..1e6, group in 2usize..17) {
            let row = vec![value; group];
            let got = advantages(&[&row, &[0.0, 1.0].repeat(group).as_slice()[..group]], &AdvantageConfig::default()).unwrap();
            prop_assert!(got[0].iter().all(|&a| a == 0.0));
        }
    }
}
