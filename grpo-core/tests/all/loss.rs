//! The policy loss against hand-derived numbers, finite differences, gradient accumulation and
//! the GSPO sequence objective.

use candle_core::{DType, Tensor, Var};
use grpo_core::{
    Error, KlEstimator, LossConfig, LossInputs, LossReduction, Normalizer, RatioLevel, StepMetrics,
    policy_loss, token_logprobs,
};
use proptest::prelude::*;
use rand::{Rng, SeedableRng, rngs::StdRng};

use crate::common::*;

fn no_kl() -> LossConfig {
    LossConfig {
        beta: 0.0,
        reduction: LossReduction::Token,
        ..Default::default()
    }
}

fn single_token(p_old: f64, p_new: f64, advantage: f64) -> Batch {
    Batch {
        logprobs: vec![vec![p_new.ln()]],
        old: vec![vec![p_old.ln()]],
        reference: None,
        advantages: vec![advantage],
        mask: vec![vec![1.0]],
    }
}

#[test]
fn design_ratio_and_clipping_table() {
    // DESIGN.md: 0.2 → 0.3 is ratio 1.5, 0.2 → 0.1 is 0.5; with ε = 0.2 a positive advantage
    // stops gaining past 1.2 and a negative one below 0.8. Loss = −A·ρ̃, gradient w.r.t. logπ is
    // −A·ρ where unclipped (dρ/dlogπ = ρ) and 0 where clipped.
    let cases = [
        // (p_old, p_new, A, ratio, loss, grad, clip_low, clip_high)
        (0.2, 0.3, 1.0, 1.5, -1.2, 0.0, 0.0, 1.0),
        (0.2, 0.1, -1.0, 0.5, 0.8, 0.0, 1.0, 0.0),
        (0.2, 0.3, -1.0, 1.5, 1.5, 1.5, 0.0, 0.0),
        (0.2, 0.1, 1.0, 0.5, -0.5, -0.5, 0.0, 0.0),
        (0.2, 0.22, 2.0, 1.1, -2.2, -2.2, 0.0, 0.0),
        (0.2, 0.3, 0.0, 1.5, 0.0, 0.0, 0.0, 0.0),
    ];
    for (p_old, p_new, a, ratio, loss, grad, low, high) in cases {
        let (got_loss, got_grad, m) = single_token(p_old, p_new, a).loss_and_grad(&no_kl());
        let label = format!("{p_old}→{p_new}, A={a}");
        assert!(
            (m.mean_ratio - ratio).abs() < 1e-12,
            "{label}: ratio {}",
            m.mean_ratio
        );
        assert!((got_loss - loss).abs() < 1e-12, "{label}: loss {got_loss}");
        assert!(
            (got_grad[0][0] - grad).abs() < 1e-12,
            "{label}: grad {got_grad:?}"
        );
        assert_eq!(
            (m.clip_fraction_low, m.clip_fraction_high),
            (low, high),
            "{label}"
        );
    }
}

#[test]
fn clip_higher_and_dual_clip() {
    // DAPO clip-higher: ε_high = 0.28 lets a positive token gain up to 1.28.
    let dapo = LossConfig {
        epsilon_high: 0.28,
        ..no_kl()
    };
    assert!((single_token(0.2, 0.3, 1.0).loss(&dapo) + 1.28).abs() < 1e-12);
    assert!((single_token(0.2, 0.25, 1.0).loss(&dapo) + 1.25).abs() < 1e-12);
    // Dual clip c = 3: a negative token with ratio 4 is held at 3·A, without gradient; ratio
    // 2.5 is below c and passes.
    let dual = LossConfig {
        dual_clip: Some(3.0),
        ..no_kl()
    };
    let (loss, grad, m) = single_token(0.1, 0.4, -1.0).loss_and_grad(&dual);
    assert!((loss - 3.0).abs() < 1e-12 && grad[0][0] == 0.0 && m.dual_clip_fraction == 1.0);
    let (loss, grad, m) = single_token(0.1, 0.25, -1.0).loss_and_grad(&dual);
    assert!((loss - 2.5).abs() < 1e-12 && (grad[0][0] - 2.5).abs() < 1e-12);
    assert_eq!(m.dual_clip_fraction, 0.0);
    // Without dual clip the same token is unbounded.
    assert!((single_token(0.1, 0.4, -1.0).loss(&no_kl()) - 4.0).abs() < 1e-12);
}

#[test]
fn hand_derived_loss_for_every_reduction() {
    // k3 at d = ln 0.5: 0.5 − ln 0.5 − 1 = ln 2 − 0.5 = 0.19314718; β = 0.1.
    // ℓ00 = −1.1·1 + 0.1·0.19314718 = −1.08068528      (1.1 < 1.2: unclipped)
    // ℓ01 = −1.0
    // ℓ10 = −(−0.5 · 0.8) = 0.4                          (0.7 < 0.8: clipped low)
    // Sequence: ((−1.08068528 − 1)/2 + 0.4)/2 = −0.32017132
    // Token:    (−2.08068528 + 0.4)/3         = −0.56022843
    // Constant: (−2.08068528 + 0.4)/(2·4)     = −0.21008566
    let k3 = 2f64.ln() - 0.5;
    let l00 = -1.1 + 0.1 * k3;
    let total = l00 - 1.0 + 0.4;
    for (reduction, want) in [
        (LossReduction::Sequence, ((l00 - 1.0) / 2.0 + 0.4) / 2.0),
        (LossReduction::Token, total / 3.0),
        (LossReduction::Constant { max_len: 4 }, total / 8.0),
    ] {
        let config = LossConfig {
            beta: 0.1,
            reduction,
            ..Default::default()
        };
        let (loss, grad, m) = hand_batch().loss_and_grad(&config);
        assert!(
            (loss - want).abs() < 1e-12,
            "{reduction:?}: {loss} vs {want}"
        );
        assert!(grad.iter().flatten().all(|g| g.is_finite()), "{grad:?}");
        assert_eq!(grad[1][1], 0.0);
        assert!((m.mean_ratio - (1.1 + 1.0 + 0.7) / 3.0).abs() < 1e-12);
        assert!((m.kl.unwrap() - k3 / 3.0).abs() < 1e-12);
        assert!((m.clip_fraction_low - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(
            (m.clip_fraction_high, m.tokens, m.sequences),
            (0.0, 3.0, 2.0)
        );
        assert_eq!(m.loss, loss);
    }
}

#[test]
fn kl_estimators_in_the_loss() {
    // Same batch at β = 1, token reduction: only ℓ00's KL term changes with the estimator.
    // d = ln 0.5: k1 = −d = 0.69314718, k2 = d²/2 = 0.24022651, k3 = 0.19314718.
    let d = 0.5f64.ln();
    for (estimator, kl) in [
        (KlEstimator::K1, -d),
        (KlEstimator::K2, d * d / 2.0),
        (KlEstimator::K3, d.exp() - d - 1.0),
    ] {
        let config = LossConfig {
            beta: 1.0,
            kl_estimator: estimator,
            reduction: LossReduction::Token,
            ..Default::default()
        };
        let want = (-1.1 + kl - 1.0 + 0.4) / 3.0;
        let got = hand_batch().loss(&config);
        assert!((got - want).abs() < 1e-12, "{estimator:?}");
    }
}

fn random_batch(rng: &mut StdRng, batch: usize, seq: usize, spread: f64) -> Batch {
    let mut logprobs = vec![vec![0.0; seq]; batch];
    let mut old = vec![vec![0.0; seq]; batch];
    let mut reference = vec![vec![0.0; seq]; batch];
    let mut mask = vec![vec![0.0; seq]; batch];
    for i in 0..batch {
        let start = rng.gen_range(0..seq / 2);
        let len = if i == 1 {
            0
        } else {
            rng.gen_range(1..=seq - start)
        };
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

fn all_configs() -> Vec<LossConfig> {
    let mut configs = Vec::new();
    for ratio_level in [RatioLevel::Token, RatioLevel::Sequence] {
        for reduction in [
            LossReduction::Sequence,
            LossReduction::Token,
            LossReduction::Constant { max_len: 9 },
        ] {
            for (beta, estimator, dual_clip) in [
                (0.0, KlEstimator::K3, None),
                (0.3, KlEstimator::K3, Some(2.0)),
                (0.2, KlEstimator::K2, None),
                (0.1, KlEstimator::K1, None),
            ] {
                configs.push(LossConfig {
                    epsilon_low: 0.2,
                    epsilon_high: 0.28,
                    dual_clip,
                    ratio_level,
                    beta,
                    kl_estimator: estimator,
                    reduction,
                    ..Default::default()
                });
            }
        }
    }
    configs
}

#[test]
fn gradient_wrt_logprobs_matches_finite_differences() {
    // Log-ratios spread over ±0.9 put tokens on both sides of every clip bound; a central
    // difference with h = 1e-6 is exact up to O(h²) away from the kinks, which random f64
    // values miss.
    let mut rng = StdRng::seed_from_u64(7);
    for (k, config) in all_configs().iter().enumerate() {
        let batch = random_batch(&mut rng, 4, 6, 0.9);
        let (_, grad, _) = batch.loss_and_grad(config);
        let h = 1e-6;
        for (i, grad_row) in grad.iter().enumerate() {
            for (j, &g) in grad_row.iter().enumerate() {
                let shifted = |delta: f64| {
                    let mut b = Batch {
                        logprobs: batch.logprobs.clone(),
                        old: batch.old.clone(),
                        reference: batch.reference.clone(),
                        advantages: batch.advantages.clone(),
                        mask: batch.mask.clone(),
                    };
                    b.logprobs[i][j] += delta;
                    b.loss(config)
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
fn gradient_wrt_logits_matches_finite_differences() -> TestResult {
    // Full path: logits → token_logprobs → policy_loss (token ratio, k3, β = 0.2, sequence mean).
    let (b, t, v) = (2, 3, 4);
    let mut rng = StdRng::seed_from_u64(11);
    let values: Vec<f64> = (0..b * t * v).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let ids = Tensor::new(&[[0u32, 3, 1], [2, 2, 0]], &CPU)?;
    let base = Tensor::from_vec(values.clone(), (b, t, v), &CPU)?;
    // Old and reference log-probs: the base policy's, shifted so ratios are not 1.
    let base_logp = token_logprobs(&base, &ids)?;
    let old = (&base_logp + 0.1)?;
    let reference = (&base_logp - 0.3)?;
    let advantages = t1(&[1.5, -0.7]);
    let mask = t2(&[vec![1., 1., 0.], vec![0., 1., 1.]]);
    let config = LossConfig {
        epsilon_high: 0.28,
        beta: 0.2,
        ..Default::default()
    };
    let loss_of = |logits: &Tensor| -> Result<Tensor, Error> {
        let logp = token_logprobs(logits, &ids)?;
        let inputs = LossInputs {
            logprobs: &logp,
            old_logprobs: &old,
            ref_logprobs: Some(&reference),
            advantages: &advantages,
            mask: &mask,
            logits: Some(logits),
            group_size: Some(2),
        };
        Ok(policy_loss(&inputs, &config, &Normalizer::from_mask(&mask)?)?.0)
    };
    let var = Var::from_tensor(&base)?;
    let grads = loss_of(var.as_tensor())?.backward()?;
    let analytic = grads
        .get(var.as_tensor())
        .ok_or("no gradient")?
        .flatten_all()?
        .to_vec1::<f64>()?;
    let h = 1e-6;
    let mut nonzero = 0;
    for (k, &g) in analytic.iter().enumerate() {
        let eval = |delta: f64| -> Result<f64, Box<dyn std::error::Error>> {
            let mut shifted = values.clone();
            shifted[k] += delta;
            let logits = Tensor::from_vec(shifted, (b, t, v), &CPU)?;
            Ok(loss_of(&logits)?.to_scalar::<f64>()?)
        };
        let numeric = (eval(h)? - eval(-h)?) / (2.0 * h);
        assert!((numeric - g).abs() < 1e-6, "logit {k}: {numeric} vs {g}");
        if g.abs() > 1e-3 {
            nonzero += 1;
        }
    }
    // Masked positions (2 of 6) give zero gradient to their 4 logits each; the rest do not.
    assert_eq!(nonzero, 16);
    Ok(())
}

#[test]
fn gradient_accumulation_equals_one_batch_for_every_config() -> TestResult {
    let mut rng = StdRng::seed_from_u64(3);
    let splits = [(0, 2), (2, 1), (3, 3)];
    for config in all_configs() {
        let batch = random_batch(&mut rng, 6, 7, 0.6);
        let (full_loss, full_grad, _) = batch.loss_and_grad(&config);

        let var = Var::from_tensor(&t2(&batch.logprobs))?;
        let old = t2(&batch.old);
        let reference = t2(batch.reference.as_ref().ok_or("reference")?);
        let advantages = t1(&batch.advantages);
        let mask = t2(&batch.mask);
        let micro_masks: Vec<Tensor> = splits
            .iter()
            .map(|&(s, n)| mask.narrow(0, s, n))
            .collect::<Result<_, _>>()?;
        let normalizer = Normalizer::from_masks(&micro_masks)?;
        assert_eq!(normalizer, Normalizer::from_mask(&mask)?);

        let mut loss_sum = 0.0;
        let mut grad_sum = Tensor::zeros((6, 7), DType::F64, &CPU)?;
        let mut parts = Vec::new();
        for (&(s, n), micro_mask) in splits.iter().zip(&micro_masks) {
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
            let (loss, metrics) = policy_loss(&inputs, &config, &normalizer)?;
            loss_sum += loss.to_scalar::<f64>()?;
            grad_sum = (grad_sum + loss.backward()?.get(var.as_tensor()).ok_or("grad")?)?;
            parts.push(metrics);
        }
        assert!((loss_sum - full_loss).abs() < 1e-12, "{config:?}");
        let merged = StepMetrics::merge(&parts);
        assert!((merged.loss - full_loss).abs() < 1e-12);
        for (a, b) in grad_sum
            .to_vec2::<f64>()?
            .iter()
            .flatten()
            .zip(full_grad.iter().flatten())
        {
            assert!((a - b).abs() < 1e-12, "{config:?}: {a} vs {b}");
        }
    }
    Ok(())
}

#[test]
fn gspo_matches_the_sequence_objective_in_value_and_gradient() -> TestResult {
    // GSPO: J = (1/G) Σ_i min(s_i A_i, clip(s_i) A_i), s_i = exp(mean over valid t of
    // logπ − logπ_old), written directly here and compared with the stop-gradient token form.
    let mut rng = StdRng::seed_from_u64(5);
    let config = LossConfig {
        epsilon_low: 0.05,
        epsilon_high: 0.08,
        ratio_level: RatioLevel::Sequence,
        beta: 0.0,
        reduction: LossReduction::Sequence,
        ..Default::default()
    };
    let batch = random_batch(&mut rng, 5, 6, 0.3);
    let (loss, grad, metrics) = batch.loss_and_grad(&config);

    let var = Var::from_tensor(&t2(&batch.logprobs))?;
    let mask = t2(&batch.mask);
    let lengths = mask.sum_keepdim(1)?.maximum(1.0)?;
    let log_ratio = ((var.as_tensor() - t2(&batch.old))? * &mask)?;
    let s = log_ratio
        .sum_keepdim(1)?
        .div(&lengths)?
        .exp()?
        .flatten_all()?; // [b]
    let mut objective = Vec::new();
    let s_values = s.to_vec1::<f64>()?;
    for (i, &a) in batch.advantages.iter().enumerate() {
        let si = s.narrow(0, i, 1)?;
        let clipped = (a > 0.0 && s_values[i] > 1.08) || (a < 0.0 && s_values[i] < 0.95);
        let empty = batch.mask[i].iter().all(|&m| m == 0.0);
        let term = if empty {
            // A sequence without valid tokens has no objective term.
            Tensor::new(&[0.0f64], &CPU)?
        } else if clipped {
            let bound = if a > 0.0 { 1.08 } else { 0.95 };
            Tensor::new(&[bound * a], &CPU)?
        } else {
            (si * a)?
        };
        objective.push(term);
    }
    let direct = Tensor::cat(&objective, 0)?
        .sum_all()?
        .neg()?
        .affine(1.0 / 5.0, 0.0)?;
    let direct_grad = direct
        .backward()?
        .get(var.as_tensor())
        .ok_or("grad")?
        .to_vec2::<f64>()?;
    assert!((direct.to_scalar::<f64>()? - loss).abs() < 1e-12);
    for (a, b) in direct_grad.iter().flatten().zip(grad.iter().flatten()) {
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }
    // Every token of a sequence reports that sequence's ratio.
    let valid: Vec<(f64, f64)> = batch
        .mask
        .iter()
        .zip(&s_values)
        .map(|(m, &s)| (m.iter().sum::<f64>(), s))
        .collect();
    let tokens: f64 = valid.iter().map(|(n, _)| n).sum();
    let mean_ratio: f64 = valid.iter().map(|(n, s)| n * s).sum::<f64>() / tokens;
    assert!((metrics.mean_ratio - mean_ratio).abs() < 1e-12);
    Ok(())
}

#[test]
fn entropy_and_zero_advantage_group_metrics() -> TestResult {
    // Uniform logits over 4 tokens: entropy ln 4 at every position. Advantages of two groups of
    // two: the first all zero, the second not, so the fraction is 1/2.
    let logits = Tensor::zeros((4, 2, 4), DType::F64, &CPU)?;
    let ids = Tensor::zeros((4, 2), DType::U32, &CPU)?;
    let logp = token_logprobs(&logits, &ids)?;
    let advantages = t1(&[0.0, 0.0, 1.0, -1.0]);
    let mask = Tensor::ones((4, 2), DType::F64, &CPU)?;
    let mut inputs = LossInputs {
        logprobs: &logp,
        old_logprobs: &logp,
        ref_logprobs: None,
        advantages: &advantages,
        mask: &mask,
        logits: Some(&logits),
        group_size: Some(2),
    };
    let config = no_kl();
    let normalizer = Normalizer::from_mask(&mask)?;
    let (_, m) = policy_loss(&inputs, &config, &normalizer)?;
    assert!((m.entropy.ok_or("entropy")? - 4f64.ln()).abs() < 1e-12);
    assert_eq!(m.zero_advantage_group_fraction, Some(0.5));
    assert_eq!(m.kl, None);
    inputs.group_size = Some(3);
    assert!(matches!(
        policy_loss(&inputs, &config, &normalizer),
        Err(Error::Shape {
            name: "advantages",
            ..
        })
    ));
    Ok(())
}

#[test]
fn f32_mask_of_any_dtype_and_empty_sequences() -> TestResult {
    // A u8 mask works like a float one; a row without valid tokens adds nothing to the sum
    // but counts as a sequence: Sequence reduction = (−1·1 + 0)/2 = −0.5.
    let logp = Tensor::new(&[[-1f32, -2.], [-1., -1.]], &CPU)?;
    let advantages = Tensor::new(&[1f32, 5.], &CPU)?;
    let mask = Tensor::new(&[[1u8, 1], [0, 0]], &CPU)?;
    let inputs = LossInputs {
        logprobs: &logp,
        old_logprobs: &logp,
        ref_logprobs: None,
        advantages: &advantages,
        mask: &mask,
        logits: None,
        group_size: None,
    };
    let config = LossConfig {
        beta: 0.0,
        ..Default::default()
    };
    let (loss, m) = policy_loss(&inputs, &config, &Normalizer::from_mask(&mask)?)?;
    assert_eq!(loss.dtype(), DType::F32);
    assert!((loss.to_scalar::<f32>()? + 0.5).abs() < 1e-7);
    assert_eq!((m.tokens, m.sequences), (2.0, 2.0));
    // An all-masked batch gives a zero loss and zero metrics, not NaN.
    let none = Tensor::zeros((2, 2), DType::U8, &CPU)?;
    let inputs = LossInputs {
        mask: &none,
        ..inputs
    };
    for reduction in [LossReduction::Sequence, LossReduction::Token] {
        let config = LossConfig {
            reduction,
            ..config.clone()
        };
        let (loss, m) = policy_loss(&inputs, &config, &Normalizer::from_mask(&none)?)?;
        assert_eq!(loss.to_scalar::<f32>()?, 0.0);
        assert_eq!(m.mean_ratio, 0.0);
    }
    Ok(())
}

#[test]
fn loss_input_errors() -> TestResult {
    let logp = Tensor::zeros((2, 3), DType::F32, &CPU)?;
    let wrong = Tensor::zeros((2, 4), DType::F32, &CPU)?;
    let advantages = Tensor::zeros(2, DType::F32, &CPU)?;
    let three = Tensor::zeros(3, DType::F32, &CPU)?;
    let mask = Tensor::ones((2, 3), DType::F32, &CPU)?;
    let ok = LossInputs {
        logprobs: &logp,
        old_logprobs: &logp,
        ref_logprobs: None,
        advantages: &advantages,
        mask: &mask,
        logits: None,
        group_size: None,
    };
    let config = no_kl();
    let n = Normalizer::from_mask(&mask)?;
    assert!(policy_loss(&ok, &config, &n).is_ok());
    let shape_error =
        |inputs: LossInputs<'_>, config: &LossConfig| match policy_loss(&inputs, config, &n) {
            Err(Error::Shape { name, .. }) => name,
            other => panic!("expected a shape error, got {other:?}"),
        };
    assert_eq!(
        shape_error(
            LossInputs {
                old_logprobs: &wrong,
                ..ok
            },
            &config
        ),
        "old_logprobs"
    );
    assert_eq!(
        shape_error(LossInputs { mask: &wrong, ..ok }, &config),
        "mask"
    );
    assert_eq!(
        shape_error(
            LossInputs {
                ref_logprobs: Some(&wrong),
                ..ok
            },
            &config
        ),
        "ref_logprobs"
    );
    assert_eq!(
        shape_error(
            LossInputs {
                advantages: &three,
                ..ok
            },
            &config
        ),
        "advantages"
    );
    let flat = Tensor::zeros(6, DType::F32, &CPU)?;
    assert_eq!(
        shape_error(
            LossInputs {
                logprobs: &flat,
                ..ok
            },
            &config
        ),
        "logprobs"
    );
    let bad_logits = Tensor::zeros((2, 2, 5), DType::F32, &CPU)?;
    assert_eq!(
        shape_error(
            LossInputs {
                logits: Some(&bad_logits),
                ..ok
            },
            &config
        ),
        "logits"
    );

    let ints = Tensor::zeros((2, 3), DType::U32, &CPU)?;
    assert!(matches!(
        policy_loss(
            &LossInputs {
                logprobs: &ints,
                ..ok
            },
            &config,
            &n
        ),
        Err(Error::DType {
            name: "logprobs",
            ..
        })
    ));
    let with_kl = LossConfig {
        beta: 0.04,
        ..config.clone()
    };
    assert!(matches!(
        policy_loss(&ok, &with_kl, &n),
        Err(Error::MissingReference { .. })
    ));
    let bad = LossConfig {
        epsilon_low: -0.1,
        ..config
    };
    assert!(matches!(
        policy_loss(&ok, &bad, &n),
        Err(Error::InvalidConfig {
            field: "loss.epsilon_low",
            ..
        })
    ));
    assert!(matches!(
        Normalizer::from_mask(&advantages),
        Err(Error::Shape { name: "mask", .. })
    ));
    Ok(())
}

proptest! {
    #[test]
    fn loss_is_minus_advantage_at_ratio_one(
        advantage in -5f64..5.,
        logps in prop::collection::vec(-10f64..0., 1..12),
    ) {
        // On-policy (ρ = 1), β = 0: every token's surrogate is A, and both the sequence mean
        // and the token mean of a single sequence are A.
        let n = logps.len();
        for reduction in [LossReduction::Sequence, LossReduction::Token, LossReduction::Constant { max_len: 16 }] {
            let batch = Batch {
                logprobs: vec![logps.clone()],
                old: vec![logps.clone()],
                reference: None,
                advantages: vec![advantage],
                mask: vec![vec![1.0; n]],
            };
            let config = LossConfig { beta: 0.0, reduction, ..Default::default() };
            let (loss, grad, m) = batch.loss_and_grad(&config);
            let want = match reduction {
                LossReduction::Constant { max_len } => -advantage * n as f64 / max_len as f64,
                _ => -advantage,
            };
            prop_assert!((loss - want).abs() < 1e-12);
            prop_assert_eq!(m.mean_ratio, 1.0);
            // Each token's gradient is −A/n (sequence and token mean of one sequence).
            if reduction != (LossReduction::Constant { max_len: 16 }) {
                for g in &grad[0] {
                    prop_assert!((g + advantage / n as f64).abs() < 1e-12);
                }
            }
        }
    }

    #[test]
    fn kl_metric_is_non_negative_and_zero_at_the_reference(
        logps in prop::collection::vec(-8f64..-0.01, 2..10),
        shift in -2f64..2.,
    ) {
        let n = logps.len();
        let shifted: Vec<f64> = logps.iter().map(|x| x + shift).collect();
        let mk = |reference: Vec<f64>| Batch {
            logprobs: vec![logps.clone()],
            old: vec![logps.clone()],
            reference: Some(vec![reference]),
            advantages: vec![0.0],
            mask: vec![vec![1.0; n]],
        };
        let config = LossConfig::default();
        let (_, _, m) = mk(shifted).loss_and_grad(&config);
        prop_assert!(m.kl.unwrap() >= -1e-15);
        let (loss, _, m) = mk(logps.clone()).loss_and_grad(&config);
        prop_assert_eq!(m.kl, Some(0.0));
        prop_assert_eq!(loss, 0.0);
    }
}
