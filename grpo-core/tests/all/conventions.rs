//! Other trainers' numerics on demand: the `grpo-rs`, `verl` and `trl` conventions against
//! hand-worked numbers, verl's log-ratio clamps, the `token_sum` reduction, and finite-difference
//! gradients of every new path.

use candle_core::{DType, Tensor, Var};
use grpo_core::{
    AdvantageConfig, Baseline, Conventions, Error, GroupOfOne, GrpoConfig, KlEstimator, LossConfig,
    LossInputs, LossReduction, Normalizer, RatioLevel, StatsPrecision, StdEstimator, StdScaling,
    group_advantages, policy_loss,
};
use rand::{Rng, SeedableRng, rngs::StdRng};

use crate::common::*;

fn advantage_config(conventions: Conventions) -> AdvantageConfig {
    GrpoConfig::default()
        .with_conventions(conventions)
        .advantage
}

fn advantages_f32(rows: &[&[f32]], config: &AdvantageConfig) -> Result<Vec<Vec<f32>>, Error> {
    let flat: Vec<f32> = rows.iter().flat_map(|r| r.iter().copied()).collect();
    let t = Tensor::from_vec(flat, (rows.len(), rows[0].len()), &CPU)?;
    Ok(group_advantages(&t, config)?.to_vec2::<f32>()?)
}

fn assert_row(got: &[f32], want: &[f64], tol: f64, label: &str) {
    assert_eq!(got.len(), want.len(), "{label}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            (*g as f64 - w).abs() <= tol,
            "{label}: got {got:?}, want {want:?}"
        );
    }
}

#[test]
fn conventions_set_the_documented_options() {
    let verl = GrpoConfig::default().with_conventions(Conventions::Verl);
    assert_eq!(verl.advantage.std_estimator, StdEstimator::Unbiased);
    assert_eq!(verl.advantage.epsilon, 1e-6);
    assert_eq!(verl.advantage.precision, StatsPrecision::F32);
    assert_eq!(verl.advantage.group_of_one, GroupOfOne::RawScore);
    assert_eq!(verl.loss.log_ratio_clamp, Some(20.0));
    assert_eq!(verl.loss.sequence_log_ratio_clamp, Some(10.0));
    // The algorithm's own choices are left alone.
    assert_eq!(verl.loss.reduction, LossReduction::Sequence);
    assert_eq!(verl.loss.beta, 0.04);

    let trl = GrpoConfig::default().with_conventions(Conventions::Trl);
    assert_eq!(trl.advantage.std_estimator, StdEstimator::Unbiased);
    assert_eq!(trl.advantage.epsilon, 1e-4);
    assert_eq!(trl.advantage.precision, StatsPrecision::F32);
    assert_eq!(trl.advantage.group_of_one, GroupOfOne::Reject);
    assert_eq!(trl.loss.log_ratio_clamp, None);
    assert_eq!(trl.loss.sequence_log_ratio_clamp, None);

    // `grpo-rs` is exactly the default, and undoes another convention.
    assert_eq!(
        GrpoConfig::default().with_conventions(Conventions::GrpoRs),
        GrpoConfig::default()
    );
    assert_eq!(
        verl.with_conventions(Conventions::GrpoRs),
        GrpoConfig::default()
    );
    assert_eq!(Conventions::default(), Conventions::GrpoRs);
}

#[test]
fn conventions_parse_and_serialize_by_name() {
    for c in [Conventions::GrpoRs, Conventions::Verl, Conventions::Trl] {
        assert_eq!(c.name().parse::<Conventions>().unwrap(), c);
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            format!("\"{}\"", c.name())
        );
    }
    match "pytorch".parse::<Conventions>() {
        Err(Error::InvalidConfig { field, value, .. }) => {
            assert_eq!((field, value.as_str()), ("conventions", "pytorch"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn one_in_two_pairs_under_each_convention() -> TestResult {
    // Rewards [1, 0, 0, 1]: mean 0.5, every |r − mean| = 0.5, Σ (r − mean)² = 4 · 0.25 = 1.
    //
    // grpo-rs: population std sqrt(1/4) = 0.5;
    //          A = ±0.5 / (0.5 + 1e-8) = ±0.99999998.
    // verl:    unbiased std sqrt(1/3) = 0.57735027;
    //          A = ±0.5 / (0.57735027 + 1e-6) = ±0.5 / 0.57735127 = ±0.86602390.
    // trl:     the same std, A = ±0.5 / (0.57735027 + 1e-4) = ±0.5 / 0.57745027 = ±0.86587543.
    // In f32 (verl, trl): Bessel factor 4/3 = 1.3333334, variance 0.25 · 1.3333334 =
    // 0.33333334, std 0.57735026; the advantages round to 0.8660239 and 0.8658754.
    let rewards: &[&[f32]] = &[&[1., 0., 0., 1.]];
    let unbiased = (1.0f64 / 3.0).sqrt();
    for (conventions, magnitude) in [
        (Conventions::GrpoRs, 0.5 / (0.5 + 1e-8)),
        (Conventions::Verl, 0.5 / (unbiased + 1e-6)),
        (Conventions::Trl, 0.5 / (unbiased + 1e-4)),
    ] {
        let got = advantages_f32(rewards, &advantage_config(conventions))?;
        let m = magnitude;
        assert_row(&got[0], &[m, -m, -m, m], 1e-7, conventions.name());
    }
    // Spelled out, so a change of formula shows as a changed number.
    let verl = advantages_f32(rewards, &advantage_config(Conventions::Verl))?;
    assert!((verl[0][0] as f64 - 0.866_023_90).abs() < 1e-7);
    let trl = advantages_f32(rewards, &advantage_config(Conventions::Trl))?;
    assert!((trl[0][0] as f64 - 0.865_875_43).abs() < 1e-7);
    Ok(())
}

#[test]
fn one_success_in_four_unbiased() -> TestResult {
    // Rewards [1, 0, 0, 0]: mean 0.25, Σ (r − mean)² = 0.5625 + 3 · 0.0625 = 0.75.
    // Unbiased std sqrt(0.75 / 3) = 0.5. verl: success 0.75 / (0.5 + 1e-6) = 1.4999970,
    // failures −0.25 / 0.500001 = −0.4999990. (grpo-rs: √3 and −1/√3, see advantage.rs.)
    let got = advantages_f32(&[&[1., 0., 0., 0.]], &advantage_config(Conventions::Verl))?;
    let d = 0.5 + 1e-6;
    assert_row(
        &got[0],
        &[0.75 / d, -0.25 / d, -0.25 / d, -0.25 / d],
        2e-7,
        "verl",
    );
    Ok(())
}

#[test]
fn tied_groups_stay_exactly_zero_under_every_convention() -> TestResult {
    for conventions in [Conventions::GrpoRs, Conventions::Verl, Conventions::Trl] {
        let got = advantages_f32(
            &[&[0.1, 0.1, 0.1], &[0., 1., 2.]],
            &advantage_config(conventions),
        )?;
        assert_eq!(got[0], vec![0.0; 3], "{}", conventions.name());
    }
    Ok(())
}

#[test]
fn groups_of_one_under_each_convention() -> TestResult {
    // Two prompts, one completion each, scores 2 and −0.5.
    let rewards: &[&[f32]] = &[&[2.0], &[-0.5]];
    // grpo-rs and trl: an error, as before (TRL also requires two generations per prompt).
    for conventions in [Conventions::GrpoRs, Conventions::Trl] {
        assert!(matches!(
            advantages_f32(rewards, &advantage_config(conventions)),
            Err(Error::GroupTooSmall { group_size: 1 })
        ));
    }
    // verl GRPO: mean 0, std 1, so A = r / (1 + 1e-6): 2 → 1.999998, −0.5 → −0.4999995.
    let verl = advantage_config(Conventions::Verl);
    let got = advantages_f32(rewards, &verl)?;
    assert_row(&got[0], &[2.0 / (1.0 + 1e-6)], 2e-7, "verl grpo");
    assert_row(&got[1], &[-0.5 / (1.0 + 1e-6)], 1e-7, "verl grpo");
    // verl without std scaling (Dr. GRPO style) and verl RLOO: the raw score, exactly.
    for baseline in [Baseline::Mean, Baseline::LeaveOneOut] {
        let config = AdvantageConfig {
            baseline,
            scaling: StdScaling::None,
            ..verl.clone()
        };
        assert_eq!(
            advantages_f32(rewards, &config)?,
            [[2.0], [-0.5]],
            "{baseline:?}"
        );
    }
    // A group of one is never "tied": a raw score of 1 is not zeroed.
    assert_row(
        &advantages_f32(&[&[1.0]], &verl)?[0],
        &[1.0 / (1.0 + 1e-6)],
        1e-7,
        "single",
    );
    // Batch scaling over the two scores: mean 0.75, unbiased std sqrt(2 · 1.25² / 1) =
    // 1.7677670; A = r / (1.7677670 + 1e-6) = 1.1313698 and −0.2828424.
    let batch = AdvantageConfig {
        scaling: StdScaling::Batch,
        ..verl.clone()
    };
    let s = (2.0f64 * 1.25 * 1.25).sqrt() + 1e-6;
    let got = advantages_f32(rewards, &batch)?;
    assert_row(&got[0], &[2.0 / s], 2e-7, "batch");
    assert_row(&got[1], &[-0.5 / s], 2e-7, "batch");
    Ok(())
}

#[test]
fn f32_statistics_round_like_float32_and_f64_does_not() -> TestResult {
    // Rewards [0.1, 0.2, 0.7] in f64 under the unbiased estimator: f64 and f32 statistics
    // agree to f32 precision but not bit for bit.
    let t = Tensor::new(&[[0.1f64, 0.2, 0.7]], &CPU)?;
    let f64_config = AdvantageConfig {
        std_estimator: StdEstimator::Unbiased,
        ..Default::default()
    };
    let f32_config = AdvantageConfig {
        precision: StatsPrecision::F32,
        ..f64_config.clone()
    };
    let a64 = group_advantages(&t, &f64_config)?.to_vec2::<f64>()?;
    let a32 = group_advantages(&t, &f32_config)?.to_vec2::<f64>()?;
    // Mean 1/3; deviations −0.23333, −0.13333, 0.36667; Σ (r − mean)² = 0.054444 + 0.017778
    // + 0.134444 = 0.206667 (= 0.62/3); unbiased variance 0.206667/2 = 0.103333, std
    // 0.3214550; advantages −0.7258662, −0.4147807, 1.1406468.
    for (got, want) in a64[0].iter().zip([-0.725_866_2, -0.414_780_7, 1.140_646_8]) {
        assert!((got - want).abs() < 1e-7, "{a64:?}");
    }
    for (x, y) in a64[0].iter().zip(&a32[0]) {
        assert!((x - y).abs() < 1e-6);
        assert_eq!(*y, *y as f32 as f64, "f32 results are f32 values");
    }
    Ok(())
}

fn no_kl_token_mean() -> LossConfig {
    LossConfig {
        beta: 0.0,
        reduction: LossReduction::Token,
        ..Default::default()
    }
}

fn single_token(log_ratio: f64, advantage: f64) -> Batch {
    Batch {
        logprobs: vec![vec![-30.0 + log_ratio]],
        old: vec![vec![-30.0]],
        reference: None,
        advantages: vec![advantage],
        mask: vec![vec![1.0]],
    }
}

#[test]
fn verl_token_log_ratio_clamp() {
    let clamped = LossConfig {
        log_ratio_clamp: Some(20.0),
        ..no_kl_token_mean()
    };
    // log π − log π_old = 25: ratio e^25 = 7.2004899e10 is held at e^20 = 485165195.41.
    // A = −1 is not clipped from above (no dual clip): loss = −A · e^20, no gradient.
    let (loss, grad, m) = single_token(25.0, -1.0).loss_and_grad(&clamped);
    let e20 = 20f64.exp();
    assert!((loss - e20).abs() < 1e-6 * e20, "{loss}");
    assert_eq!(grad[0][0], 0.0);
    assert!((m.mean_ratio - e20).abs() < 1e-6 * e20);
    // Unclamped (the default), the same token gives e^25 and a gradient of the same size.
    let (loss, grad, _) = single_token(25.0, -1.0).loss_and_grad(&no_kl_token_mean());
    let e25 = 25f64.exp();
    assert!((loss - e25).abs() < 1e-6 * e25 && (grad[0][0] - e25).abs() < 1e-6 * e25);
    // −25 with A = +1: ratio held at e^−20 = 2.0611536e−9, loss −e^−20, no gradient.
    let (loss, grad, _) = single_token(-25.0, 1.0).loss_and_grad(&clamped);
    assert!((loss + (-20f64).exp()).abs() < 1e-18, "{loss}");
    assert_eq!(grad[0][0], 0.0);
    // Inside the range nothing changes: 0.1 → ratio 1.1051709 < 1.2, loss = grad = −1.1051709.
    let (loss, grad, _) = single_token(0.1, 1.0).loss_and_grad(&clamped);
    let r = 0.1f64.exp();
    assert!((loss + r).abs() < 1e-12 && (grad[0][0] + r).abs() < 1e-12);
    // The clamp applies to token ratios only: a sequence-level config ignores it.
    let sequence = LossConfig {
        ratio_level: RatioLevel::Sequence,
        ..clamped.clone()
    };
    let (loss, _, _) = single_token(25.0, -1.0).loss_and_grad(&sequence);
    assert!((loss - e25).abs() < 1e-6 * e25);
}

#[test]
fn verl_gspo_sequence_log_ratio_clamp() {
    // Two sequences of two tokens, A = −1 each, sequence ratios, sequence-mean reduction.
    // Sequence 0: token log-ratios 11 and 13, mean 12 > 10: s_0 held at e^10 = 22026.466.
    // Sequence 1: log-ratios 8 and 10, mean 9: s_1 = e^9 = 8103.0839, unclamped.
    // Every token of a sequence carries s_i, so its token mean is s_i; loss = −A · mean_i s_i
    // = (e^10 + e^9)/2 = 15064.775. Gradient: 0 on sequence 0; on each token of sequence 1,
    // −A · s_1 / (2 tokens · 2 sequences) = e^9/4 = 2025.7710.
    let batch = Batch {
        logprobs: vec![vec![-9.0, -7.0], vec![-12.0, -10.0]],
        old: vec![vec![-20.0, -20.0], vec![-20.0, -20.0]],
        reference: None,
        advantages: vec![-1.0, -1.0],
        mask: vec![vec![1.0, 1.0], vec![1.0, 1.0]],
    };
    let gspo = LossConfig {
        ratio_level: RatioLevel::Sequence,
        beta: 0.0,
        reduction: LossReduction::Sequence,
        sequence_log_ratio_clamp: Some(10.0),
        ..Default::default()
    };
    let (loss, grad, _) = batch.loss_and_grad(&gspo);
    let (e9, e10, e12) = (9f64.exp(), 10f64.exp(), 12f64.exp());
    assert!((loss - (e10 + e9) / 2.0).abs() < 1e-9 * e10, "{loss}");
    assert_eq!(grad[0], vec![0.0, 0.0]);
    for g in &grad[1] {
        assert!((g - e9 / 4.0).abs() < 1e-9 * e9, "{grad:?}");
    }
    // Unclamped: (e^12 + e^9)/2, and sequence 0's tokens get e^12/4 each.
    let (loss, grad, _) = batch.loss_and_grad(&LossConfig {
        sequence_log_ratio_clamp: None,
        ..gspo.clone()
    });
    assert!((loss - (e12 + e9) / 2.0).abs() < 1e-9 * e12);
    assert!((grad[0][0] - e12 / 4.0).abs() < 1e-9 * e12);
    // The clamp is one-sided: a very negative sequence log-ratio passes (A = +1 so the low
    // clip does not hold it: ratio e^−12 < 1 − ε only clips negative advantages).
    let low = Batch {
        logprobs: vec![vec![-32.0, -32.0]],
        old: vec![vec![-20.0, -20.0]],
        reference: None,
        advantages: vec![1.0],
        mask: vec![vec![1.0, 1.0]],
    };
    let (loss, _, _) = low.loss_and_grad(&gspo);
    assert!((loss + (-12f64).exp()).abs() < 1e-15, "{loss}");
}

#[test]
fn token_sum_reduction_on_a_masked_batch() {
    // k3 at d = ln 0.5: 0.5 − ln 0.5 − 1 = ln 2 − 0.5 = 0.19314718; β = 0.1.
    // ℓ00 = −1.1·1 + 0.1·0.19314718 = −1.08068528   (1.1 < 1.2: unclipped)
    // ℓ01 = −1.0
    // ℓ10 = −(−0.5 · 0.8) = 0.4                       (0.7 < 0.8: clipped low)
    // ℓ11: padding, left out.
    // Token sum: −1.08068528 − 1 + 0.4 = −1.68068528, three times the token mean −0.56022843.
    let config = LossConfig {
        beta: 0.1,
        kl_estimator: KlEstimator::K3,
        reduction: LossReduction::TokenSum,
        ..Default::default()
    };
    let (loss, grad, m) = hand_batch().loss_and_grad(&config);
    let want = -1.1 + 0.1 * (2f64.ln() - 0.5) - 1.0 + 0.4;
    assert!((loss - want).abs() < 1e-12, "{loss} vs {want}");
    assert!((loss + 1.680_685_28).abs() < 1e-8);
    assert_eq!(m.loss, loss);
    // Its gradient is the token mean's times the number of valid tokens.
    let (_, mean_grad, _) = hand_batch().loss_and_grad(&LossConfig {
        reduction: LossReduction::Token,
        ..config.clone()
    });
    for (a, b) in grad.iter().flatten().zip(mean_grad.iter().flatten()) {
        assert!((a - 3.0 * b).abs() < 1e-12, "{a} vs 3 · {b}");
    }
    assert_eq!(grad[1][1], 0.0);
}

#[test]
fn token_sum_accumulates_over_micro_batches() -> TestResult {
    // Sum is additive: the losses and gradients of micro-batches add up to the whole batch's.
    let mut rng = StdRng::seed_from_u64(21);
    let config = LossConfig {
        reduction: LossReduction::TokenSum,
        beta: 0.2,
        log_ratio_clamp: Some(0.5),
        ..Default::default()
    };
    let batch = random_batch(&mut rng, 5, 6, 0.9);
    let (full_loss, full_grad, _) = batch.loss_and_grad(&config);
    let var = Var::from_tensor(&t2(&batch.logprobs))?;
    let old = t2(&batch.old);
    let reference = t2(batch.reference.as_ref().ok_or("reference")?);
    let advantages = Tensor::new(batch.advantages.as_slice(), &CPU)?;
    let mask = t2(&batch.mask);
    let splits = [(0, 2), (2, 3)];
    let masks: Vec<Tensor> = splits
        .iter()
        .map(|&(s, n)| mask.narrow(0, s, n))
        .collect::<Result<_, _>>()?;
    let normalizer = Normalizer::from_masks(&masks)?;
    let mut loss_sum = 0.0;
    let mut grad_sum = Tensor::zeros((5, 6), DType::F64, &CPU)?;
    for (&(s, n), micro_mask) in splits.iter().zip(&masks) {
        let logp = var.as_tensor().narrow(0, s, n)?;
        let old = old.narrow(0, s, n)?;
        let reference = reference.narrow(0, s, n)?;
        let advantages = advantages.narrow(0, s, n)?;
        let inputs = LossInputs {
            logprobs: &logp,
            old_logprobs: &old,
            ref_logprobs: Some(&reference),
            advantages: &advantages,
            mask: micro_mask,
            logits: None,
            group_size: None,
        };
        let (loss, _) = policy_loss(&inputs, &config, &normalizer)?;
        loss_sum += loss.to_scalar::<f64>()?;
        grad_sum = (grad_sum + loss.backward()?.get(var.as_tensor()).ok_or("grad")?)?;
    }
    assert!((loss_sum - full_loss).abs() < 1e-12);
    for (a, b) in grad_sum
        .to_vec2::<f64>()?
        .iter()
        .flatten()
        .zip(full_grad.iter().flatten())
    {
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }
    Ok(())
}

fn random_batch(rng: &mut StdRng, batch: usize, seq: usize, spread: f64) -> Batch {
    let mut logprobs = vec![vec![0.0; seq]; batch];
    let mut old = vec![vec![0.0; seq]; batch];
    let mut reference = vec![vec![0.0; seq]; batch];
    let mut mask = vec![vec![0.0; seq]; batch];
    for i in 0..batch {
        let start = rng.gen_range(0..seq / 2);
        let len = rng.gen_range(1..=seq - start);
        for j in 0..seq {
            old[i][j] = -rng.gen_range(0.1..3.0);
            logprobs[i][j] = old[i][j] + rng.gen_range(-spread..spread);
            reference[i][j] = old[i][j] + rng.gen_range(-0.5..0.5);
            if j >= start && j < start + len {
                mask[i][j] = 1.0;
            }
        }
    }
    let advantages = (0..batch).map(|_| rng.gen_range(-2.0..2.0)).collect();
    Batch {
        logprobs,
        old,
        reference: Some(reference),
        advantages,
        mask,
    }
}

#[test]
fn new_paths_match_finite_differences() {
    // Clamps small enough that random log-ratios in ±0.9 fall on both sides of them, so the
    // check covers clamped (zero gradient) and free tokens and sequences. Central differences
    // with h = 1e-6 are exact to O(h²) away from the kinks, which random values miss.
    let mut configs = Vec::new();
    for reduction in [
        LossReduction::TokenSum,
        LossReduction::Sequence,
        LossReduction::Token,
    ] {
        configs.push(LossConfig {
            epsilon_high: 0.28,
            beta: 0.1,
            reduction,
            log_ratio_clamp: Some(0.5),
            ..Default::default()
        });
        configs.push(LossConfig {
            epsilon_low: 0.3,
            epsilon_high: 0.4,
            ratio_level: RatioLevel::Sequence,
            beta: 0.1,
            reduction,
            sequence_log_ratio_clamp: Some(0.02),
            ..Default::default()
        });
        configs.push(LossConfig {
            dual_clip: Some(1.5),
            beta: 0.0,
            reduction,
            ..Default::default()
        });
    }
    let mut rng = StdRng::seed_from_u64(17);
    for (k, config) in configs.iter().enumerate() {
        let batch = random_batch(&mut rng, 6, 6, 0.9);
        let (loss, grad, _) = batch.loss_and_grad(config);
        // The clamps hold some tokens or sequences of this batch: without them the loss differs.
        let unclamped = LossConfig {
            log_ratio_clamp: None,
            sequence_log_ratio_clamp: None,
            ..config.clone()
        };
        if unclamped != *config {
            let (free, _, _) = batch.loss_and_grad(&unclamped);
            assert!((free - loss).abs() > 1e-6, "config {k}: no clamp exercised");
        }
        let h = 1e-6;
        for (i, row) in grad.iter().enumerate() {
            for (j, &g) in row.iter().enumerate() {
                let shifted = |delta: f64| {
                    let mut b = batch.clone();
                    b.logprobs[i][j] += delta;
                    b.loss_and_grad(config).0
                };
                let numeric = (shifted(h) - shifted(-h)) / (2.0 * h);
                assert!(
                    (numeric - g).abs() < 1e-6,
                    "config {k} {config:?} at ({i},{j}): numeric {numeric} vs {g}"
                );
            }
        }
    }
}

#[test]
fn bad_clamps_are_rejected_naming_the_field() {
    for (config, field) in [
        (
            LossConfig {
                log_ratio_clamp: Some(0.0),
                ..Default::default()
            },
            "loss.log_ratio_clamp",
        ),
        (
            LossConfig {
                sequence_log_ratio_clamp: Some(f64::NAN),
                ..Default::default()
            },
            "loss.sequence_log_ratio_clamp",
        ),
    ] {
        match config.validate() {
            Err(Error::InvalidConfig { field: got, .. }) => assert_eq!(got, field),
            other => panic!("{field}: {other:?}"),
        }
    }
}

#[test]
fn new_options_round_trip_through_serde() {
    let config = GrpoConfig {
        loss: LossConfig {
            reduction: LossReduction::TokenSum,
            ..Default::default()
        },
        ..Default::default()
    }
    .with_conventions(Conventions::Verl);
    let json = serde_json::to_string(&config).unwrap();
    assert!(json.contains(r#""type":"token_sum""#), "{json}");
    assert!(json.contains(r#""std_estimator":"unbiased""#), "{json}");
    assert!(json.contains(r#""group_of_one":"raw_score""#), "{json}");
    let back: GrpoConfig = serde_json::from_str(&json).unwrap();
    assert_eq!(back, config);
    // A config written before these options existed still loads, with the defaults.
    let old: GrpoConfig =
        serde_json::from_str(r#"{"advantage": {"epsilon": 1e-8}, "loss": {"beta": 0.0}}"#).unwrap();
    assert_eq!(old.advantage, AdvantageConfig::default());
    assert_eq!(old.loss.log_ratio_clamp, None);
}
