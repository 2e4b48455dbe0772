//! Properties of the one normalisation pipeline and of equivalence: `equal(a, b) ==
//! equal(b, a)`, `equal(a, a)`, and `normalize(normalize(s)) == normalize(s)`, over generated
//! answers and over the real answers of the bench pairs (both sides of each pair, extracted as
//! the checker extracts them).

use grpo_rewards::math::normalize::normalize_answer;
use grpo_rewards::math::{DEFAULT_RULES, MathChecker, extract};
use proptest::prelude::*;

const CASES: u32 = 2_000;

/// One answer as people write them: numbers, fractions, decimals, collections, relations,
/// units and times, with LaTeX decorations.
fn answer() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        (-40i32..40).prop_map(|n| n.to_string()),
        (1i32..30, 1i32..12).prop_map(|(a, b)| format!(r"\frac{{{a}}}{{{b}}}")),
        (1i32..30, 1i32..12).prop_map(|(a, b)| format!("{a}/{b}")),
        (0i32..999, 1u32..5).prop_map(|(a, k)| format!(
            "{}.{:0>width$}",
            a / 10,
            a,
            width = k as usize
        )),
        Just(r"\sqrt{2}".to_string()),
        Just(r"2\sqrt{3}".to_string()),
        Just(r"\pi".to_string()),
        Just("x".to_string()),
        Just("x^2+1".to_string()),
        Just(r"\infty".to_string()),
        Just("12,500".to_string()),
        Just(r"12,\!500".to_string()),
        Just("3,75".to_string()),
    ];
    let atom = atom.boxed();
    let shaped = (atom.clone(), atom.clone(), 0usize..12).prop_map(|(a, b, shape)| match shape {
        0 => a,
        1 => format!("({a}, {b})"),
        2 => format!(r"\{{{a}, {b}\}}"),
        3 => format!("[{a}, {b})"),
        4 => format!("x = {a}"),
        5 => format!(r"{a} \le x \le {b}"),
        6 => format!(r"{a} \text{{ cm}}"),
        7 => format!(r"\text{{{a} cm}}"),
        8 => format!("{a}, {b}"),
        9 => format!(r"(1,4) \cup ({a}, {b})"),
        10 => format!(r"{a}^\circ"),
        _ => format!(r"\\frac{{{a}}}{{{b}}}"),
    });
    let decorated = (shaped, 0usize..5).prop_map(|(s, d)| match d {
        0 => s,
        1 => format!("${s}$"),
        2 => format!(r"\boxed{{{s}}}"),
        3 => format!(r"\({s}\)."),
        _ => format!(r"\text{{4:30 p.m.}} {s}"),
    });
    decorated.boxed()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn equality_is_symmetric_and_reflexive(a in answer(), b in answer()) {
        let checker = MathChecker::default();
        prop_assert!(checker.equal(&a, &a), "not reflexive: {a:?}");
        prop_assert_eq!(checker.equal(&a, &b), checker.equal(&b, &a), "{:?} vs {:?}", a, b);
    }

    #[test]
    fn normalisation_is_idempotent(a in answer()) {
        let once = normalize_answer(&a);
        prop_assert_eq!(normalize_answer(&once), once.clone(), "{:?}", a);
    }
}

/// The extracted answers of the bench pairs, in file order, two per pair.
fn real_answers() -> Vec<String> {
    include_str!("../../../benches/data/math_pairs.jsonl")
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .flat_map(|v| {
            ["gold", "pred"].map(|k| {
                v[k].as_str()
                    .and_then(|t| extract(t, DEFAULT_RULES))
                    .map(|e| e.text)
            })
        })
        .flatten()
        .collect()
}

#[test]
fn real_answers_are_symmetric_reflexive_and_normalised_once() {
    let answers = real_answers();
    assert!(answers.len() > 1_000, "{} answers", answers.len());
    let checker = MathChecker::default();
    let mut asymmetric = Vec::new();
    for (k, a) in answers.iter().enumerate() {
        assert!(checker.equal(a, a), "not reflexive: {a:?}");
        let once = normalize_answer(a);
        assert_eq!(normalize_answer(&once), once, "{a:?}");
        // Its pair partner, and a few others spread over the file.
        let partner = (k ^ 1).min(answers.len() - 1);
        for j in [
            partner,
            (k * 7 + 13) % answers.len(),
            (k * 31 + 5) % answers.len(),
        ] {
            let b = &answers[j];
            if checker.equal(a, b) != checker.equal(b, a) {
                asymmetric.push(format!("{a:?} vs {b:?}"));
            }
        }
    }
    assert!(
        asymmetric.is_empty(),
        "asymmetric:\n{}",
        asymmetric.join("\n")
    );
}
