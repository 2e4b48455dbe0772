//! The scorer's rules, case by case: weights, components, faults, options per call, tags.

use super::*;
use crate::result::{Verdict, VerdictKind};

fn weights(accuracy: Option<f64>, format: Option<f64>) -> RewardWeights {
    RewardWeights { accuracy, format }
}

fn math(id: &str, answer: &str) -> Task {
    serde_json::from_str(&format!(
        r#"{{"id":"{id}","kind":"math","prompt":"p","answer":"{answer}"}}"#
    ))
    .unwrap()
}

fn countdown() -> Task {
    serde_json::from_str(r#"{"id":"c","kind":"countdown","prompt":"p","numbers":[1,2],"target":3}"#)
        .unwrap()
}

fn code() -> Task {
    serde_json::from_str(
        r#"{"id":"k","kind":"code","prompt":"p","language":"python","mode":"full","tests":{"type":"stdio","cases":[]}}"#,
    )
    .unwrap()
}

/// A reward that gives each math completion its length, and no value elsewhere.
struct LengthReward;

impl Reward for LengthReward {
    fn name(&self) -> &str {
        "length"
    }
    fn score_group<'a>(
        &'a self,
        task: &'a Task,
        completions: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Score>>> {
        Box::pin(async move {
            Ok(completions
                .iter()
                .map(|c| Score {
                    value: (task.kind() == TaskKind::Math).then_some(c.len() as f64),
                    verdict: Verdict::new(VerdictKind::Correct, "length"),
                })
                .collect())
        })
    }
}

/// A judge that passes the programs equal to `want` and counts its calls.
struct Exact {
    want: String,
    calls: std::sync::atomic::AtomicUsize,
}

impl CodeJudge for Exact {
    fn judge<'a>(
        &'a self,
        _task: &'a CodeTask,
        programs: &'a [String],
        options: &'a ScoreOptions,
    ) -> BoxFuture<'a, Result<Vec<Score>>> {
        self.calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Box::pin(async move {
            Ok(programs
                .iter()
                .map(|p| {
                    let ok = *p == self.want;
                    let partial = options.credit == Credit::Partial;
                    Score {
                        value: Some(match (ok, partial) {
                            (true, _) => 1.0,
                            (false, true) => 0.5,
                            (false, false) => 0.0,
                        }),
                        verdict: Verdict::new(
                            if ok {
                                VerdictKind::Correct
                            } else {
                                VerdictKind::TestsFailed
                            },
                            "exact",
                        ),
                    }
                })
                .collect())
        })
    }
}

#[test]
fn explicit_weights_win_over_the_pack_and_the_defaults() {
    let pack = weights(Some(2.0), Some(0.5));
    assert_eq!(
        Weights::resolve(&weights(None, Some(0.0)), &pack),
        Weights {
            accuracy: 2.0,
            format: 0.0
        }
    );
    assert_eq!(
        Weights::resolve(&weights(None, None), &weights(None, None)),
        Weights::DEFAULT
    );
}

#[test]
fn bad_weights_name_the_field() {
    for (w, field) in [
        (weights(Some(f64::NAN), None), "rewards.accuracy"),
        (weights(None, Some(-1.0)), "rewards.format"),
        (weights(Some(0.0), Some(0.0)), "rewards"),
    ] {
        let err = ScoringConfig::with_weights(&w, &RewardWeights::default()).unwrap_err();
        assert!(
            matches!(&err, RewardError::InvalidConfig { field: f, .. } if f == field),
            "{err}"
        );
    }
}

#[test]
fn format_is_always_reported_and_weighted() {
    let scorer = Scorer::new(&ScoringConfig::default()).unwrap();
    let out = scorer
        .score_group_blocking(
            &math("m", "4"),
            &["<think>2+2</think><answer>4</answer>".to_string()],
            scorer.options(),
        )
        .unwrap();
    assert_eq!(out[0].components.format, Some(1.0));
    assert_eq!(out[0].reward, 1.0);
    // The format weight of one call, nothing rebuilt.
    let opts = ScoreOptions {
        format_weight: Some(0.5),
        ..*scorer.options()
    };
    let out = scorer
        .score_group_blocking(
            &math("m", "4"),
            &["<think>2+2</think><answer>4</answer>".to_string()],
            &opts,
        )
        .unwrap();
    assert_eq!(out[0].reward, 1.5);
}

#[test]
fn weighted_sum_and_missing_values() {
    let config = ScoringConfig {
        weights: Weights {
            accuracy: 2.0,
            format: 0.5,
        },
        ..ScoringConfig::default()
    };
    let scorer = Scorer::new(&config)
        .unwrap()
        .with_reward(Box::new(LengthReward), 0.1)
        .unwrap();
    let c = vec![
        "<think>x</think><answer>7</answer>".to_string(),
        "8".to_string(),
    ];
    let r = scorer
        .score_group_blocking(&math("m", "7"), &c, scorer.options())
        .unwrap();
    // 2·1 + 0.5·1 + 0.1·34 = 5.9 ; 2·0 + 0.5·0 + 0.1·1 = 0.1
    assert!((r[0].reward - 5.9).abs() < 1e-12, "{}", r[0].reward);
    assert!((r[1].reward - 0.1).abs() < 1e-12);
    assert!(r[0].correct && !r[1].correct);
    assert_eq!(r[1].verdict.kind, VerdictKind::WrongAnswer);
    assert_eq!(r[0].components.extra["length"], 34.0);
    // A reward that does not apply is missing and adds nothing.
    let r = scorer
        .score_group_blocking(&countdown(), &c, scorer.options())
        .unwrap();
    assert!(r[0].components.extra.is_empty());
    assert!((r[0].reward - 0.5).abs() < 1e-12, "{}", r[0].reward);
}

#[test]
fn a_code_task_without_a_judge_is_a_fault_not_a_zero() {
    let scorer = Scorer::new(&ScoringConfig::default()).unwrap();
    let c = vec!["<think>x</think><answer>print(1)</answer>".to_string()];
    let err = scorer
        .score_group_blocking(&code(), &c, scorer.options())
        .unwrap_err();
    assert!(err.is_fault(), "{err}");
    assert!(err.to_string().contains("code tasks"), "{err}");
}

#[test]
fn the_judge_gets_the_programs_and_the_options_of_the_call() {
    let judge = Arc::new(Exact {
        want: "print(1)\n".into(),
        calls: Default::default(),
    });
    let scorer = Scorer::new(&ScoringConfig::default())
        .unwrap()
        .with_code(judge.clone());
    let c = vec![
        "<think>x</think><answer>print(1)</answer>".to_string(),
        "```python\nprint(2)\n```".to_string(),
    ];
    let r = scorer
        .score_group_blocking(&code(), &c, scorer.options())
        .unwrap();
    assert!(r[0].correct && !r[1].correct);
    assert_eq!((r[0].reward, r[1].reward), (1.0, 0.0));
    let partial = ScoreOptions {
        credit: Credit::Partial,
        ..*scorer.options()
    };
    let r = scorer.score_group_blocking(&code(), &c, &partial).unwrap();
    assert_eq!(r[1].reward, 0.5);
    assert_eq!(judge.calls.load(std::sync::atomic::Ordering::Relaxed), 2);
}

#[test]
fn custom_tags_move_format_and_every_extractor_together() {
    let config = ScoringConfig {
        weights: Weights {
            accuracy: 1.0,
            format: 1.0,
        },
        tags: AnswerFormat {
            answer_open: "<response>".into(),
            answer_close: "</response>".into(),
            ..AnswerFormat::default()
        },
        ..ScoringConfig::default()
    };
    let judge = Arc::new(Exact {
        want: "print(1)\n".into(),
        calls: Default::default(),
    });
    let scorer = Scorer::new(&config).unwrap().with_code(judge);
    let opts = *scorer.options();
    let math_out = scorer
        .score_group_blocking(
            &math("m", "7"),
            &["<think>x</think><response>7</response>".into()],
            &opts,
        )
        .unwrap();
    assert_eq!(math_out[0].reward, 2.0);
    let cd = scorer
        .score_group_blocking(
            &countdown(),
            &["<think>x</think><response>1 + 2</response>".into()],
            &opts,
        )
        .unwrap();
    assert_eq!(cd[0].reward, 2.0);
    let code_out = scorer
        .score_group_blocking(
            &code(),
            &["<think>x</think><response>print(1)</response>".into()],
            &opts,
        )
        .unwrap();
    assert_eq!(code_out[0].reward, 2.0);
    // The default tags are now plain text: no format, and `<answer>` is not looked for.
    let plain = scorer
        .score_group_blocking(
            &math("m", "7"),
            &["<think>x</think><answer>7</answer> 8".into()],
            &opts,
        )
        .unwrap();
    assert_eq!(plain[0].reward, 0.0);
}

#[test]
fn an_open_answer_block_is_read_alike_by_every_extractor() {
    // One rule (answer.rs): `<answer>` left open runs to the end of the completion.
    let judge = Arc::new(Exact {
        want: "print(1)\n".into(),
        calls: Default::default(),
    });
    let scorer = Scorer::new(&ScoringConfig::default())
        .unwrap()
        .with_code(judge);
    let opts = *scorer.options();
    let one = |task: &Task, text: &str| {
        scorer
            .score_group_blocking(task, &[text.to_string()], &opts)
            .unwrap()
            .remove(0)
    };
    // Math: the open block's 7 wins over the 8 in the think block (before this rule,
    // the math extractor skipped an open block and took the last number, 8 here: wrong).
    let m = one(&math("m", "7"), "<think>8</think><answer>7");
    assert!(m.correct, "{:?}", m.verdict);
    assert_eq!(m.components.format, Some(0.0));
    let m = one(&math("m", "8"), "<think>8</think><answer>7");
    assert!(!m.correct);
    assert!(one(&countdown(), "<think>x</think><answer>1 + 2").correct);
    assert!(one(&code(), "<think>x</think><answer>print(1)").correct);
}

#[test]
fn invalid_components_are_refused() {
    let scorer = Scorer::new(&ScoringConfig::default()).unwrap();
    assert!(
        scorer
            .with_reward(Box::new(LengthReward), f64::NAN)
            .is_err()
    );
    let scorer = Scorer::new(&ScoringConfig::default())
        .unwrap()
        .with_reward(Box::new(LengthReward), 1.0)
        .unwrap();
    assert!(scorer.with_reward(Box::new(LengthReward), 1.0).is_err());
    let bad_limits = ScoringConfig {
        limits: Limits {
            time_limit_ms: 0,
            ..Limits::default()
        },
        ..ScoringConfig::default()
    };
    let err = Scorer::new(&bad_limits).unwrap_err();
    assert!(err.to_string().contains("limits.time_limit_ms"), "{err}");
}

/// A pack's `[math] evaluated_numbers` reaches the math check: repeating an arithmetic
/// question is not an answer to it, while the same scorer without the option accepts it.
#[test]
fn a_packs_math_options_reach_the_check() {
    let pack = grpo_tasks::Pack::load("builtin:arith").unwrap();
    assert!(pack.manifest.math.evaluated_numbers);
    let strict = Scorer::new(&ScoringConfig::for_pack(&pack.manifest).unwrap()).unwrap();
    let lax = Scorer::new(&ScoringConfig::default()).unwrap();
    let task = math("a", "91");
    let c = vec![
        "The answer is 60 - 1 + 32.".to_string(),
        "60 - 1 + 32 = 91, so the answer is 91.".to_string(),
        "<answer>60-1+32</answer>".to_string(),
    ];
    let correct = |scorer: &Scorer| -> Vec<bool> {
        let r = scorer
            .score_group_blocking(&task, &c, scorer.options())
            .unwrap();
        r.iter().map(|s| s.correct).collect()
    };
    assert_eq!(correct(&strict), [false, true, false]);
    assert_eq!(correct(&lax), [true, true, true]);
}
