//! Configuration of the GRPO math: how advantages are formed, how the loss is built and reduced,
//! which reward shaping applies, and the named algorithm presets.
//!
//! All structs deny unknown fields and have hand-written defaults (the original GRPO of
//! DeepSeekMath); call [`GrpoConfig::validate`] before any work starts.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// What is subtracted from a completion's reward to form its advantage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Baseline {
    /// The group mean (GRPO).
    Mean,
    /// The mean of the *other* completions of the group (RLOO).
    LeaveOneOut,
}

/// What the centred reward is divided by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StdScaling {
    /// The group's standard deviation (GRPO, default), by the configured [`StdEstimator`].
    Group,
    /// The standard deviation of every reward in the batch, by the configured
    /// [`StdEstimator`].
    Batch,
    /// No scaling (Dr. GRPO).
    None,
}

/// Which estimator of the standard deviation scales the advantages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StdEstimator {
    /// `sqrt(Σ (r − mean)² / n)`, the population standard deviation (DeepSeekMath, default).
    #[default]
    Population,
    /// `sqrt(Σ (r − mean)² / (n − 1))`, Bessel-corrected (`torch.std`'s default, used by verl
    /// and TRL).
    Unbiased,
}

/// The floating-point precision the reward statistics and advantages are computed in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StatsPrecision {
    /// f64 throughout (default).
    #[default]
    F64,
    /// Every sum, product, quotient and square root rounded to f32, as PyTorch trainers do on
    /// float32 reward tensors (the Bessel factor `n / (n − 1)` is itself an f32, as in TRL).
    F32,
}

/// What a group of a single completion gets (a `[prompts, 1]` reward tensor).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupOfOne {
    /// An error: one completion has nothing to be relative to (default).
    #[default]
    Reject,
    /// The group's mean is taken as 0 and its standard deviation as 1 (verl): the advantage
    /// is the raw score, divided by `1 + ε` under group scaling; under the leave-one-out
    /// baseline (verl's RLOO) with no scaling it is exactly the raw score.
    RawScore,
}

/// How rewards of one group become advantages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AdvantageConfig {
    /// The baseline subtracted from each reward.
    pub baseline: Baseline,
    /// The standard deviation the centred reward is divided by.
    pub scaling: StdScaling,
    /// The positive stabilizer added to the standard deviation.
    pub epsilon: f64,
    /// Population (default) or unbiased standard deviation.
    pub std_estimator: StdEstimator,
    /// The precision of the statistics (f64 by default).
    pub precision: StatsPrecision,
    /// What a group of one completion gets (an error by default).
    pub group_of_one: GroupOfOne,
}

impl Default for AdvantageConfig {
    /// Mean baseline, group population std, stabilizer 1e-8 (the GRPO formula), in f64;
    /// groups of one are an error.
    fn default() -> Self {
        Self {
            baseline: Baseline::Mean,
            scaling: StdScaling::Group,
            epsilon: 1e-8,
            std_estimator: StdEstimator::Population,
            precision: StatsPrecision::F64,
            group_of_one: GroupOfOne::Reject,
        }
    }
}

impl AdvantageConfig {
    /// Checks that the stabilizer is finite and positive.
    pub fn validate(&self) -> Result<()> {
        if !(self.epsilon.is_finite() && self.epsilon > 0.0) {
            return Err(Error::InvalidConfig {
                field: "advantage.epsilon",
                value: self.epsilon.to_string(),
                reason: "the stabilizer must be finite and positive",
            });
        }
        Ok(())
    }
}

/// The level at which the importance ratio is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RatioLevel {
    /// One ratio per token: π(o_t)/π_old(o_t) (GRPO, DAPO, Dr. GRPO).
    Token,
    /// One ratio per sequence: the exponential of the masked mean token log-ratio (GSPO).
    Sequence,
}

/// The per-token estimator of KL(π ‖ π_ref) from the sampled token.
///
/// With `d = log π_ref(o_t) − log π(o_t)`:
/// k1 = −d, k2 = d²/2, k3 = exp(d) − d − 1 (DeepSeekMath eq. 4; unbiased and ≥ 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KlEstimator {
    /// `log π − log π_ref`: unbiased, can be negative.
    K1,
    /// `(log π − log π_ref)² / 2`: biased, low variance, ≥ 0.
    K2,
    /// `exp(d) − d − 1`: unbiased, ≥ 0 (default).
    K3,
}

/// How the per-token losses of a batch are reduced to one number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum LossReduction {
    /// Mean over sequences of each sequence's token mean (original GRPO).
    Sequence,
    /// Sum over valid tokens / number of valid tokens (DAPO, BNPO).
    Token,
    /// Sum over valid tokens / (sequences × `max_len`), a constant (Dr. GRPO).
    Constant {
        /// The configured maximum completion length.
        max_len: usize,
    },
    /// Sum over valid tokens, not normalised (verl's `token-sum`).
    TokenSum,
}

/// How the policy loss is built.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LossConfig {
    /// Lower clip range: a negative-advantage ratio stops counting below `1 − epsilon_low`.
    pub epsilon_low: f64,
    /// Upper clip range: a positive-advantage ratio stops counting above `1 + epsilon_high`.
    pub epsilon_high: f64,
    /// Dual-clip constant `c > 1`: a negative-advantage ratio stops counting above `c`.
    pub dual_clip: Option<f64>,
    /// Token-level (GRPO) or sequence-level (GSPO) ratio.
    pub ratio_level: RatioLevel,
    /// Weight β of the KL penalty in the loss (0 disables it and the reference model).
    pub beta: f64,
    /// The KL estimator.
    pub kl_estimator: KlEstimator,
    /// How per-token losses are reduced.
    pub reduction: LossReduction,
    /// With token ratios, clamp each log-ratio `log π − log π_old` to `[−c, c]` before the
    /// exponential (verl: 20); a clamped token gives no gradient. `None`: no clamp (default).
    pub log_ratio_clamp: Option<f64>,
    /// With sequence ratios (GSPO), clamp the sequence log-ratio from above at `c` before the
    /// exponential (verl: 10); a clamped sequence gives no gradient. `None`: no clamp
    /// (default).
    pub sequence_log_ratio_clamp: Option<f64>,
}

impl Default for LossConfig {
    /// DeepSeekMath's GRPO: ε = 0.2 both sides, token ratios, β = 0.04 with k3, sequence mean.
    fn default() -> Self {
        Self {
            epsilon_low: 0.2,
            epsilon_high: 0.2,
            dual_clip: None,
            ratio_level: RatioLevel::Token,
            beta: 0.04,
            kl_estimator: KlEstimator::K3,
            reduction: LossReduction::Sequence,
            log_ratio_clamp: None,
            sequence_log_ratio_clamp: None,
        }
    }
}

impl LossConfig {
    /// Checks the clip ranges, the dual-clip constant, β and the reduction.
    pub fn validate(&self) -> Result<()> {
        if !(self.epsilon_low.is_finite() && (0.0..1.0).contains(&self.epsilon_low)) {
            return Err(Error::InvalidConfig {
                field: "loss.epsilon_low",
                value: self.epsilon_low.to_string(),
                reason: "must be finite and in [0, 1)",
            });
        }
        if !(self.epsilon_high.is_finite() && self.epsilon_high >= 0.0) {
            return Err(Error::InvalidConfig {
                field: "loss.epsilon_high",
                value: self.epsilon_high.to_string(),
                reason: "must be finite and non-negative",
            });
        }
        if let Some(c) = self.dual_clip
            && !(c.is_finite() && c > 1.0)
        {
            return Err(Error::InvalidConfig {
                field: "loss.dual_clip",
                value: c.to_string(),
                reason: "must be finite and greater than 1",
            });
        }
        if !(self.beta.is_finite() && self.beta >= 0.0) {
            return Err(Error::InvalidConfig {
                field: "loss.beta",
                value: self.beta.to_string(),
                reason: "must be finite and non-negative",
            });
        }
        for (field, clamp) in [
            ("loss.log_ratio_clamp", self.log_ratio_clamp),
            (
                "loss.sequence_log_ratio_clamp",
                self.sequence_log_ratio_clamp,
            ),
        ] {
            if let Some(c) = clamp
                && !(c.is_finite() && c > 0.0)
            {
                return Err(Error::InvalidConfig {
                    field,
                    value: c.to_string(),
                    reason: "must be finite and positive",
                });
            }
        }
        if let LossReduction::Constant { max_len: 0 } = self.reduction {
            return Err(Error::InvalidConfig {
                field: "loss.reduction.max_len",
                value: "0".into(),
                reason: "the constant normaliser must be positive",
            });
        }
        Ok(())
    }
}

/// DAPO's soft overlong punishment (see [`crate::overlong_penalty`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OverlongConfig {
    /// Maximum completion length `L_max` in tokens.
    pub max_len: usize,
    /// Length of the soft punishment interval `L_cache` before `max_len`.
    pub cache_len: usize,
}

impl OverlongConfig {
    /// Checks `0 < cache_len ≤ max_len`.
    pub fn validate(&self) -> Result<()> {
        if self.cache_len == 0 || self.cache_len > self.max_len {
            return Err(Error::InvalidConfig {
                field: "shaping.overlong.cache_len",
                value: self.cache_len.to_string(),
                reason: "must be positive and at most max_len",
            });
        }
        Ok(())
    }
}

/// Reward shaping applied between scoring and advantages.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ShapingConfig {
    /// DAPO soft overlong punishment, added to the combined reward.
    pub overlong: Option<OverlongConfig>,
    /// Drop groups whose rewards are all equal (DAPO dynamic sampling).
    pub filter_zero_variance_groups: bool,
}

/// Everything grpo-core needs to know about the algorithm.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GrpoConfig {
    /// How rewards become advantages.
    pub advantage: AdvantageConfig,
    /// How the loss is built and reduced.
    pub loss: LossConfig,
    /// Reward shaping.
    pub shaping: ShapingConfig,
}

impl GrpoConfig {
    /// The preset of a named algorithm for completions of at most `max_completion_len` tokens
    /// (used by Dr. GRPO's constant normaliser and DAPO's overlong punishment).
    pub fn preset(algorithm: Algorithm, max_completion_len: usize) -> Self {
        algorithm.config(max_completion_len)
    }

    /// Checks every field; call before any work starts.
    pub fn validate(&self) -> Result<()> {
        self.advantage.validate()?;
        self.loss.validate()?;
        if let Some(overlong) = &self.shaping.overlong {
            overlong.validate()?;
        }
        Ok(())
    }
}

/// The named algorithms, each a preset of [`GrpoConfig`].
///
/// | preset | advantage | ratio | clip (low/high) | β | reduction | shaping |
/// |---|---|---|---|---|---|---|
/// | `grpo` (DeepSeekMath) | mean / group std | token | 0.2 / 0.2 | 0.04, k3 | sequence mean | none |
/// | `dr_grpo` (Liu et al. 2025) | mean / none | token | 0.2 / 0.2 | 0 | constant `max_len` | none |
/// | `dapo` (Yu et al. 2025) | mean / group std | token | 0.2 / 0.28 | 0 | token mean | overlong (cache = max/5), dynamic sampling |
/// | `gspo` (Zheng et al. 2025) | mean / group std | sequence | 3e-4 / 4e-4 | 0 | sequence mean | none |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Algorithm {
    /// Original GRPO (DeepSeekMath).
    Grpo,
    /// Dr. GRPO: no std scaling, constant normaliser.
    DrGrpo,
    /// DAPO: clip-higher, token mean, overlong punishment, dynamic sampling.
    Dapo,
    /// GSPO: sequence-level ratio and clipping.
    Gspo,
}

impl Algorithm {
    /// The preset [`GrpoConfig`] for completions of at most `max_completion_len` tokens.
    pub fn config(self, max_completion_len: usize) -> GrpoConfig {
        let grpo = GrpoConfig::default();
        match self {
            Algorithm::Grpo => grpo,
            Algorithm::DrGrpo => GrpoConfig {
                advantage: AdvantageConfig {
                    scaling: StdScaling::None,
                    ..grpo.advantage
                },
                loss: LossConfig {
                    beta: 0.0,
                    reduction: LossReduction::Constant {
                        max_len: max_completion_len,
                    },
                    ..grpo.loss
                },
                shaping: ShapingConfig::default(),
            },
            Algorithm::Dapo => GrpoConfig {
                advantage: grpo.advantage,
                loss: LossConfig {
                    epsilon_low: 0.2,
                    epsilon_high: 0.28,
                    beta: 0.0,
                    reduction: LossReduction::Token,
                    ..grpo.loss
                },
                shaping: ShapingConfig {
                    overlong: Some(OverlongConfig {
                        max_len: max_completion_len,
                        cache_len: (max_completion_len / 5).max(1),
                    }),
                    filter_zero_variance_groups: true,
                },
            },
            Algorithm::Gspo => GrpoConfig {
                advantage: grpo.advantage,
                loss: LossConfig {
                    epsilon_low: 3e-4,
                    epsilon_high: 4e-4,
                    ratio_level: RatioLevel::Sequence,
                    beta: 0.0,
                    ..grpo.loss
                },
                shaping: ShapingConfig::default(),
            },
        }
    }
}

/// Whose numerics to follow where trainers differ in small constants, for comparing runs
/// with verl or TRL. A convention sets only numeric details; the algorithm (baseline,
/// scaling, clip ranges, β, reduction) stays as chosen.
///
/// | convention | std (stabilizer) | precision | group of one | token log-ratio | GSPO sequence log-ratio |
/// |---|---|---|---|---|---|
/// | `grpo-rs` (default) | population (1e-8) | f64 | error | unclamped | unclamped |
/// | `verl` | unbiased (1e-6) | f32 | mean 0, std 1 | clamped to ±20 | clamped above at 10 |
/// | `trl` | unbiased (1e-4) | f32 | error | unclamped | unclamped |
///
/// In every convention a group whose rewards are all equal gets exactly zero (the peers give
/// zero too when the rewards are exactly representable, and rounding noise divided by ε
/// otherwise).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Conventions {
    /// This crate's defaults (DeepSeekMath's formulas as written).
    #[default]
    #[serde(rename = "grpo-rs")]
    GrpoRs,
    /// verl's `core_algos`: unbiased std + 1e-6, groups of one kept, log-ratio clamps.
    #[serde(rename = "verl")]
    Verl,
    /// TRL's `GRPOTrainer`: unbiased std + 1e-4 in float32.
    #[serde(rename = "trl")]
    Trl,
}

impl Conventions {
    /// The name used in configs (`grpo-rs`, `verl`, `trl`).
    pub fn name(self) -> &'static str {
        match self {
            Conventions::GrpoRs => "grpo-rs",
            Conventions::Verl => "verl",
            Conventions::Trl => "trl",
        }
    }

    /// Sets the advantage and loss options this convention decides, leaving the others.
    pub fn apply(self, advantage: &mut AdvantageConfig, loss: &mut LossConfig) {
        let (std_estimator, epsilon, precision, group_of_one, token_clamp, sequence_clamp) =
            match self {
                Conventions::GrpoRs => (
                    StdEstimator::Population,
                    1e-8,
                    StatsPrecision::F64,
                    GroupOfOne::Reject,
                    None,
                    None,
                ),
                Conventions::Verl => (
                    StdEstimator::Unbiased,
                    1e-6,
                    StatsPrecision::F32,
                    GroupOfOne::RawScore,
                    Some(20.0),
                    Some(10.0),
                ),
                Conventions::Trl => (
                    StdEstimator::Unbiased,
                    1e-4,
                    StatsPrecision::F32,
                    GroupOfOne::Reject,
                    None,
                    None,
                ),
            };
        advantage.std_estimator = std_estimator;
        advantage.epsilon = epsilon;
        advantage.precision = precision;
        advantage.group_of_one = group_of_one;
        loss.log_ratio_clamp = token_clamp;
        loss.sequence_log_ratio_clamp = sequence_clamp;
    }
}

impl std::str::FromStr for Conventions {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "grpo-rs" => Ok(Conventions::GrpoRs),
            "verl" => Ok(Conventions::Verl),
            "trl" => Ok(Conventions::Trl),
            other => Err(Error::InvalidConfig {
                field: "conventions",
                value: other.to_string(),
                reason: "must be `grpo-rs`, `verl` or `trl`",
            }),
        }
    }
}

impl GrpoConfig {
    /// This config with the numeric conventions of `conventions` (see [`Conventions`]).
    pub fn with_conventions(mut self, conventions: Conventions) -> Self {
        conventions.apply(&mut self.advantage, &mut self.loss);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_validates_and_round_trips_through_serde() {
        for algorithm in [
            Algorithm::Grpo,
            Algorithm::DrGrpo,
            Algorithm::Dapo,
            Algorithm::Gspo,
        ] {
            let config = GrpoConfig::preset(algorithm, 1024);
            config.validate().unwrap();
            let json = serde_json::to_string(&config).unwrap();
            let back: GrpoConfig = serde_json::from_str(&json).unwrap();
            assert_eq!(back, config, "{algorithm:?}");
        }
    }

    #[test]
    fn preset_values_follow_the_papers() {
        let dr = Algorithm::DrGrpo.config(512);
        assert_eq!(dr.advantage.scaling, StdScaling::None);
        assert_eq!(dr.loss.reduction, LossReduction::Constant { max_len: 512 });
        let dapo = Algorithm::Dapo.config(1000);
        assert_eq!((dapo.loss.epsilon_low, dapo.loss.epsilon_high), (0.2, 0.28));
        assert_eq!(dapo.loss.reduction, LossReduction::Token);
        assert_eq!(
            dapo.shaping.overlong,
            Some(OverlongConfig {
                max_len: 1000,
                cache_len: 200
            })
        );
        assert!(dapo.shaping.filter_zero_variance_groups);
        let gspo = Algorithm::Gspo.config(1000);
        assert_eq!(gspo.loss.ratio_level, RatioLevel::Sequence);
        assert_eq!(gspo.loss.beta, 0.0);
    }

    #[test]
    fn unknown_fields_are_rejected_and_missing_fields_default() {
        let err = serde_json::from_str::<GrpoConfig>(r#"{"loss": {"epsilon": 0.2}}"#);
        assert!(err.is_err());
        let partial: GrpoConfig =
            serde_json::from_str(r#"{"loss": {"reduction": {"type": "constant", "max_len": 64}}}"#)
                .unwrap();
        assert_eq!(
            partial.loss.reduction,
            LossReduction::Constant { max_len: 64 }
        );
        assert_eq!(partial.loss.epsilon_low, 0.2);
        assert_eq!(partial.advantage, AdvantageConfig::default());
    }

    #[test]
    fn validate_rejects_each_bad_value() {
        let bad: Vec<(&str, GrpoConfig)> = vec![
            (
                "advantage.epsilon",
                GrpoConfig {
                    advantage: AdvantageConfig {
                        epsilon: 0.0,
                        ..Default::default()
                    },
                    ..Default::default()
                },
            ),
            (
                "advantage.epsilon",
                GrpoConfig {
                    advantage: AdvantageConfig {
                        epsilon: f64::NAN,
                        ..Default::default()
                    },
                    ..Default::default()
                },
            ),
            (
                "loss.epsilon_low",
                GrpoConfig {
                    loss: LossConfig {
                        epsilon_low: 1.0,
                        ..Default::default()
                    },
                    ..Default::default()
                },
            ),
            (
                "loss.epsilon_high",
                GrpoConfig {
                    loss: LossConfig {
                        epsilon_high: -0.1,
                        ..Default::default()
                    },
                    ..Default::default()
                },
            ),
            (
                "loss.dual_clip",
                GrpoConfig {
                    loss: LossConfig {
                        dual_clip: Some(1.0),
                        ..Default::default()
                    },
                    ..Default::default()
                },
            ),
            (
                "loss.beta",
                GrpoConfig {
                    loss: LossConfig {
                        beta: f64::INFINITY,
                        ..Default::default()
                    },
                    ..Default::default()
                },
            ),
            (
                "loss.reduction.max_len",
                GrpoConfig {
                    loss: LossConfig {
                        reduction: LossReduction::Constant { max_len: 0 },
                        ..Default::default()
                    },
                    ..Default::default()
                },
            ),
            (
                "shaping.overlong.cache_len",
                GrpoConfig {
                    shaping: ShapingConfig {
                        overlong: Some(OverlongConfig {
                            max_len: 10,
                            cache_len: 11,
                        }),
                        filter_zero_variance_groups: false,
                    },
                    ..Default::default()
                },
            ),
        ];
        for (field, config) in bad {
            match config.validate() {
                Err(Error::InvalidConfig { field: got, .. }) => assert_eq!(got, field),
                other => panic!("{field}: expected InvalidConfig, got {other:?}"),
            }
        }
    }
}
