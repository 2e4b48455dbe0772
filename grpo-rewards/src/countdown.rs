//! The countdown reward (the TinyZero task): is the answer an expression over the given
//! numbers that evaluates, exactly, to the target?
//!
//! 1. **Find the answer**: the last `<answer>…</answer>` block, else the completion's last
//!    non-empty line. A trailing `= target` (or a leading `target =`) is dropped, as are
//!    surrounding `$` and a final period.
//! 2. **Parse and evaluate** with [`grpo_tasks::expr`] (the language the countdown generator
//!    and pack validation use): integers, `+ - * /` (also `×`, `÷`), parentheses, unary
//!    minus; exact rationals, so `8 / (3 - 8 / 3)` is exactly 24 and `7 / 2 * 2` is 7.
//! 3. **Check the numbers**: the literals must be the task's numbers as a multiset — each
//!    exactly once when `use_all` (the default), at most once otherwise.
//!
//! Value 1 when all hold, else 0, with a verdict saying which step failed. Tasks of other
//! kinds get no value (`None`).
//!
//! ```
//! use grpo_rewards::countdown::CountdownReward;
//! use grpo_tasks::Task;
//! let task: Task = serde_json::from_str(
//!     r#"{"id":"c","kind":"countdown","prompt":"p","numbers":[3,3,8,8],"target":24}"#).unwrap();
//! let r = CountdownReward::new();
//! assert!(r.check(&task, "<think>…</think><answer>8 / (3 - 8 / 3)</answer>").is_correct());
//! assert!(!r.check(&task, "<answer>8 * 3</answer>").is_correct());
//! ```

use grpo_tasks::ExprError;
use grpo_tasks::expr::{Expr, Usage, check_usage};
use grpo_tasks::{CountdownTask, Task};
use num_bigint::BigInt;
use num_rational::BigRational;

use crate::answer::AnswerFormat;
use crate::result::{Verdict, VerdictKind, clip};
use crate::reward::Score;

/// The countdown accuracy reward (name `accuracy`).
#[derive(Debug, Clone, Default)]
pub struct CountdownReward {
    tags: AnswerFormat,
}

impl CountdownReward {
    /// The reward, reading the default `<answer>` tags.
    pub fn new() -> Self {
        CountdownReward::default()
    }

    /// The same reward reading the answer block of `tags`.
    pub fn with_tags(tags: AnswerFormat) -> Self {
        CountdownReward { tags }
    }

    /// Checks one completion; for a task that is not countdown the verdict says so.
    pub fn check(&self, task: &Task, completion: &str) -> Verdict {
        match task {
            Task::Countdown(t) => check_countdown(t, completion, &self.tags),
            other => Score::not_applicable("countdown", other).verdict,
        }
    }

    /// Scores the completions of a countdown task: 1 or 0, with the verdict.
    pub fn score_all(&self, task: &CountdownTask, completions: &[String]) -> Vec<Score> {
        completions
            .iter()
            .map(|c| {
                let verdict = check_countdown(task, c, &self.tags);
                let value = Some(if verdict.is_correct() { 1.0 } else { 0.0 });
                Score { value, verdict }
            })
            .collect()
    }
}

/// Checks one completion of a countdown task, reading the answer block of `tags`.
pub fn check_countdown(task: &CountdownTask, completion: &str, tags: &AnswerFormat) -> Verdict {
    let Some(answer) = extract_expression(completion, task.target, tags) else {
        return Verdict::new(
            VerdictKind::NoAnswer,
            "no answer: no <answer> block and no non-empty line",
        );
    };
    let expr = match Expr::parse(&answer) {
        Ok(expr) => expr,
        Err(e) => {
            return Verdict::new(
                VerdictKind::Unparsable,
                format!("`{}` is not an arithmetic expression: {e}", clip(&answer)),
            );
        }
    };
    let value = match expr.eval() {
        Ok(value) => value,
        Err(ExprError::DivisionByZero) => {
            return Verdict::new(
                VerdictKind::WrongAnswer,
                format!("`{answer}` is undefined: division by zero"),
            );
        }
        Err(e) => {
            return Verdict::new(
                VerdictKind::Unparsable,
                format!("`{}` cannot be evaluated: {e}", clip(&answer)),
            );
        }
    };
    match check_usage(&expr.literals(), &task.numbers, task.use_all) {
        Usage::Valid => {}
        Usage::NotAvailable(n) => {
            return Verdict::new(
                VerdictKind::WrongAnswer,
                format!(
                    "`{answer}` uses {n}, which is not available (numbers: {:?}, each at most once)",
                    task.numbers
                ),
            );
        }
        Usage::Unused(left) => {
            return Verdict::new(
                VerdictKind::WrongAnswer,
                format!(
                    "`{answer}` leaves {left:?} unused; every number must be used exactly once"
                ),
            );
        }
    }
    let target = BigRational::from_integer(BigInt::from(task.target));
    if value == target {
        Verdict::new(
            VerdictKind::Correct,
            format!("`{answer}` = {}", task.target),
        )
    } else {
        Verdict::new(
            VerdictKind::WrongAnswer,
            format!(
                "`{answer}` evaluates to {}, not the target {}",
                value, task.target
            ),
        )
    }
}

/// The answer expression of a completion: the last answer block's content (a block left open
/// runs to the end, [`AnswerFormat::answer_block`]), else the last non-empty line, without
/// `= target`, `$` and a final period.
pub fn extract_expression(completion: &str, target: i64, tags: &AnswerFormat) -> Option<String> {
    let raw = match tags.answer_block(completion) {
        Some(block) => block.content,
        None => completion.lines().rev().find(|l| !l.trim().is_empty())?,
    };
    // Peel `$…$` and a final period in any order: `$8 / 2$.` and `$8 / 2.$` both give `8 / 2`.
    let mut peeled = raw.trim();
    loop {
        let next = peeled.trim_end_matches('.').trim_matches('$').trim();
        if next == peeled {
            break;
        }
        peeled = next;
    }
    let mut text = peeled.to_owned();
    if let Some((left, right)) = text.split_once('=')
        && !right.contains('=')
    {
        let (left, right) = (left.trim(), right.trim());
        let is_target = |s: &str| s.parse::<i64>().is_ok_and(|n| n == target);
        text = if is_target(right) {
            left.to_owned()
        } else if is_target(left) {
            right.to_owned()
        } else {
            // `expr = other`: keep the expression; its value decides.
            left.to_owned()
        };
    }
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(numbers: &[i64], target: i64, use_all: bool) -> Task {
        Task::Countdown(CountdownTask {
            id: "c".into(),
            prompt: "p".into(),
            numbers: numbers.to_vec(),
            target,
            use_all,
            reference: None,
            metadata: None,
        })
    }

    #[test]
    fn verdict_table() {
        let t = task(&[3, 3, 8, 8], 24, true);
        let cases: &[(&str, VerdictKind)] = &[
            ("<answer>8 / (3 - 8 / 3)</answer>", VerdictKind::Correct), // exact: 8 / (1/3) = 24
            (
                "<think>hmm</think>\n<answer> 8/(3-8/3) = 24 </answer>",
                VerdictKind::Correct,
            ),
            ("24 = 8 / (3 - 8 / 3)", VerdictKind::Correct), // last line, target on the left
            ("<answer>$8 / (3 - 8 / 3)$.</answer>", VerdictKind::Correct),
            (
                "<answer>(8 / 3 - 3) * -8 * -3 * ... </answer>",
                VerdictKind::Unparsable,
            ),
            ("<answer>8 * 3</answer>", VerdictKind::WrongAnswer), // 3 and 8 unused
            (
                "<answer>8 * 3 + 8 - 8 + 3 - 3</answer>",
                VerdictKind::WrongAnswer,
            ), // 8 used three times
            ("<answer>8 + 8 + 3 + 3</answer>", VerdictKind::WrongAnswer), // = 22
            ("<answer>8 / (3 - 3) + 8</answer>", VerdictKind::WrongAnswer), // division by zero
            ("<answer>8 * 3 ^ 1</answer>", VerdictKind::Unparsable),
            ("<answer></answer>", VerdictKind::NoAnswer),
            ("", VerdictKind::NoAnswer),
            (
                "<answer>8*3</answer> then later <answer>8 / (3 - 8 / 3)</answer>",
                VerdictKind::Correct,
            ), // last block wins
        ];
        let r = CountdownReward::new();
        for (completion, want) in cases {
            let v = r.check(&t, completion);
            assert_eq!(v.kind, *want, "{completion:?}: {}", v.reason);
        }
    }

    #[test]
    fn at_most_once_allows_unused_numbers() {
        let r = CountdownReward::new();
        let t = task(&[50, 2, 9], 52, false);
        assert!(r.check(&t, "<answer>50 + 2</answer>").is_correct());
        assert!(!r.check(&t, "<answer>50 + 2 + 2 - 2</answer>").is_correct());
        let t = task(&[50, 2, 9], 52, true);
        let v = r.check(&t, "<answer>50 + 2</answer>");
        assert_eq!(v.kind, VerdictKind::WrongAnswer);
        assert!(v.reason.contains("[9] unused"), "{}", v.reason);
    }

    #[test]
    fn scores_a_group_in_order() {
        let r = CountdownReward::new();
        let Task::Countdown(t) = task(&[1, 2], 3, true) else {
            unreachable!()
        };
        let group = vec![
            "<answer>1 + 2</answer>".to_string(),
            "<answer>2 - 1</answer>".to_string(),
        ];
        let values: Vec<Option<f64>> = r.score_all(&t, &group).iter().map(|s| s.value).collect();
        assert_eq!(values, [Some(1.0), Some(0.0)]);
        let math: Task =
            serde_json::from_str(r#"{"id":"m","kind":"math","prompt":"p","answer":"3"}"#).unwrap();
        assert_eq!(r.check(&math, &group[0]).kind, VerdictKind::NoAnswer);
    }

    #[test]
    fn generated_references_earn_full_reward() {
        let pack = grpo_tasks::Pack::load("builtin:countdown").unwrap();
        let r = CountdownReward::new();
        for t in pack.tasks().take(300) {
            let Task::Countdown(c) = t else { panic!() };
            let reference = c.reference.clone().unwrap();
            let v = r.check(
                t,
                &format!("<think>search</think><answer>{reference}</answer>"),
            );
            assert!(v.is_correct(), "{}: {}", c.id, v.reason);
        }
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            /// Whatever the solver finds is accepted by the reward.
            #[test]
            fn solver_answers_are_accepted(numbers in proptest::collection::vec(1i64..20, 2..5), target in 1i64..40) {
                if let Some(found) = grpo_tasks::expr::solve(&numbers, target, true) {
                    let t = task(&numbers, target, true);
                    let v = CountdownReward::new().check(&t, &format!("<answer>{found}</answer>"));
                    prop_assert!(v.is_correct(), "{found}: {}", v.reason);
                }
            }

            /// Arbitrary text never panics the reward.
            #[test]
            fn any_text_gets_a_verdict(text in ".{0,80}") {
                let t = task(&[1, 2, 3], 6, true);
                let _ = CountdownReward::new().check(&t, &text);
            }
        }
    }
}
