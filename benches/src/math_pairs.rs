//! The math-checker bench pairs (`benches/data/math_pairs.jsonl`), shared with the
//! Math-Verify baseline script so both sides check the same inputs.

/// One gold/prediction pair.
#[derive(Debug, Clone, PartialEq)]
pub struct MathPair {
    /// What the pair exercises: generated (`integer`, `fraction`, `decimal`, `latex`, `set`,
    /// `interval`, `tuple`, `gsm8k`, `long_cot`, `near_miss`) or hand-judged per answer kind
    /// (`numbers`, `relations`, `matrices`, `several_answers`, `decimals`, `delimiters`,
    /// `text_symbols`, `variable_names`, `must_differ`).
    pub category: String,
    /// The reference answer.
    pub gold: String,
    /// The completion.
    pub pred: String,
    /// Whether the prediction is equivalent, by construction.
    pub expected: bool,
}

/// The pairs file, compiled in.
pub const MATH_PAIRS_JSONL: &str = include_str!("../data/math_pairs.jsonl");

/// The bench pairs, in file order. Lines that are not valid pairs are skipped (the file is
/// written by `benches/baselines/make_math_pairs.py`: generated pairs, then hand-judged ones).
pub fn math_pairs() -> Vec<MathPair> {
    MATH_PAIRS_JSONL
        .lines()
        .filter_map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).ok()?;
            Some(MathPair {
                category: v["category"].as_str()?.to_string(),
                gold: v["gold"].as_str()?.to_string(),
                pred: v["pred"].as_str()?.to_string(),
                expected: v["expected"].as_bool()?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_pairs_load_and_our_checker_agrees_with_the_construction() {
        let pairs = math_pairs();
        assert_eq!(pairs.len(), MATH_PAIRS_JSONL.lines().count());
        let checker = grpo_rewards::MathChecker::default();
        for p in &pairs {
            assert_eq!(checker.check(&p.gold, &p.pred).correct, p.expected, "{p:?}");
        }
    }
}
