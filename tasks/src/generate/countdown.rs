//! `countdown`: the TinyZero countdown game.
//!
//! Draw `k` numbers, combine all of them with a random expression tree, and keep the draw when
//! the value is a whole number in `1..=max_target`: the tree is the task's `reference`, so
//! every generated puzzle is solvable by construction (and pack validation re-checks it).
//!
//! | difficulty | numbers | each from | target up to |
//! |---|---|---|---|
//! | easy | 3 | 1–20 | 50 |
//! | medium (TinyZero) | 3–4 | 1–99 | 100 |
//! | hard | 4–5 | 1–99 | 999 |

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::ToPrimitive;
use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde_json::json;

use super::{Difficulty, Draft};
use crate::error::GenerateError;
use crate::expr::{Expr, Op};
use crate::task::{CountdownTask, Task};

/// Settings of the `countdown` generator.
#[derive(Debug, Clone, PartialEq)]
pub struct CountdownSettings {
    /// The fewest numbers in a puzzle.
    pub min_numbers: usize,
    /// The most numbers in a puzzle.
    pub max_numbers: usize,
    /// Each number is drawn from `1..=max_number`.
    pub max_number: i64,
    /// Targets are whole numbers in `1..=max_target`.
    pub max_target: i64,
    /// `true`: each number exactly once (TinyZero); `false`: at most once.
    pub use_all: bool,
}

impl Default for CountdownSettings {
    fn default() -> Self {
        CountdownSettings::for_difficulty(Difficulty::Medium)
    }
}

impl CountdownSettings {
    /// The preset of a difficulty (see the module table).
    pub fn for_difficulty(difficulty: Difficulty) -> Self {
        let (min_numbers, max_numbers, max_number, max_target) = match difficulty {
            Difficulty::Easy => (3, 3, 20, 50),
            Difficulty::Medium => (3, 4, 99, 100),
            Difficulty::Hard => (4, 5, 99, 999),
        };
        CountdownSettings {
            min_numbers,
            max_numbers,
            max_number,
            max_target,
            use_all: true,
        }
    }

    pub(crate) fn check(&self) -> Result<(), GenerateError> {
        let bad = |field, message: String| Err(GenerateError::Setting { field, message });
        if self.min_numbers < 2 || self.min_numbers > self.max_numbers {
            return bad(
                "min_numbers",
                format!(
                    "need 2 <= min_numbers ({}) <= max_numbers ({})",
                    self.min_numbers, self.max_numbers
                ),
            );
        }
        if self.max_numbers > 6 {
            return bad(
                "max_numbers",
                format!("{} is more than 6", self.max_numbers),
            );
        }
        if self.max_number < 1 {
            return bad("max_number", format!("{} is less than 1", self.max_number));
        }
        if self.max_target < 1 {
            return bad("max_target", format!("{} is less than 1", self.max_target));
        }
        Ok(())
    }
}

/// The problem text, adapted from TinyZero's countdown prompt.
pub fn prompt(numbers: &[i64], target: i64, use_all: bool) -> String {
    let list: Vec<String> = numbers.iter().map(i64::to_string).collect();
    let rule = if use_all {
        "each number exactly once"
    } else {
        "each number at most once"
    };
    format!(
        "Using the numbers [{}], write an equation that equals {target}. You may use + - * / and parentheses, {rule}.",
        list.join(", ")
    )
}

pub(crate) fn draw(s: &CountdownSettings, seed: u64, rng: &mut ChaCha8Rng) -> Option<Draft> {
    let k = rng.gen_range(s.min_numbers..=s.max_numbers);
    let numbers: Vec<i64> = (0..k).map(|_| rng.gen_range(1..=s.max_number)).collect();
    // With `use_all = false` the reference may leave numbers out: combine a random subset.
    let used = if s.use_all {
        k
    } else {
        rng.gen_range(2.min(k)..=k)
    };
    let mut order: Vec<i64> = numbers.clone();
    order.shuffle(rng);
    let mut leaves: Vec<Expr> = order[..used]
        .iter()
        .map(|&n| Expr::Num(BigInt::from(n)))
        .collect();
    while leaves.len() > 1 {
        let i = rng.gen_range(0..leaves.len() - 1);
        let right = leaves.remove(i + 1);
        let left = leaves.remove(i);
        let op = *[Op::Add, Op::Sub, Op::Mul, Op::Div]
            .choose(rng)
            .unwrap_or(&Op::Add);
        leaves.insert(i, Expr::Bin(op, Box::new(left), Box::new(right)));
    }
    let expr = leaves.pop()?;
    let value: BigRational = expr.eval().ok()?;
    if !value.is_integer() {
        return None;
    }
    let target = value.to_integer().to_i64()?;
    if !(1..=s.max_target).contains(&target) {
        return None;
    }
    let mut sorted = numbers.clone();
    sorted.sort_unstable();
    let key = format!("{sorted:?}->{target}");
    let reference = expr.to_minimal_string();
    let use_all = s.use_all;
    Some(Draft {
        key,
        build: Box::new(move |id| {
            let metadata = json!({
                "source": "grpo-tasks generate countdown",
                "license": "Apache-2.0",
                "seed": seed,
            });
            Task::Countdown(CountdownTask {
                id,
                prompt: prompt(&numbers, target, use_all),
                numbers,
                target,
                use_all,
                reference: Some(reference),
                metadata: metadata.as_object().cloned(),
            })
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::super::{Generator, generate};
    use super::*;
    use crate::pack::countdown_reference_problem;

    fn puzzles(settings: CountdownSettings, n: usize) -> Vec<CountdownTask> {
        generate(&Generator::Countdown(settings), n, 3)
            .unwrap()
            .into_iter()
            .map(|t| match t {
                Task::Countdown(c) => c,
                other => panic!("not countdown: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn every_reference_solves_its_puzzle() {
        for d in [Difficulty::Easy, Difficulty::Medium, Difficulty::Hard] {
            let s = CountdownSettings::for_difficulty(d);
            for t in puzzles(s.clone(), 200) {
                let r = t.reference.as_deref().unwrap();
                assert_eq!(
                    countdown_reference_problem(r, &t.numbers, t.target, true),
                    None,
                    "{t:?}"
                );
                assert!((s.min_numbers..=s.max_numbers).contains(&t.numbers.len()));
                assert!(t.numbers.iter().all(|&n| (1..=s.max_number).contains(&n)));
                assert!((1..=s.max_target).contains(&t.target));
            }
        }
    }

    #[test]
    fn at_most_once_references_may_leave_numbers_out() {
        let s = CountdownSettings {
            use_all: false,
            ..Default::default()
        };
        let all = puzzles(s, 200);
        let mut partial = 0;
        for t in &all {
            assert!(!t.use_all);
            assert!(t.prompt.contains("at most once"));
            let r = t.reference.as_deref().unwrap();
            assert_eq!(
                countdown_reference_problem(r, &t.numbers, t.target, false),
                None,
                "{t:?}"
            );
            if countdown_reference_problem(r, &t.numbers, t.target, true).is_some() {
                partial += 1;
            }
        }
        assert!(partial > 0);
    }

    #[test]
    fn prompt_wording() {
        assert_eq!(
            prompt(&[3, 7, 25], 46, true),
            "Using the numbers [3, 7, 25], write an equation that equals 46. You may use + - * / and parentheses, each number exactly once."
        );
    }

    #[test]
    fn bad_settings_are_rejected() {
        for s in [
            CountdownSettings {
                min_numbers: 1,
                ..Default::default()
            },
            CountdownSettings {
                min_numbers: 5,
                max_numbers: 4,
                ..Default::default()
            },
            CountdownSettings {
                max_numbers: 7,
                ..Default::default()
            },
            CountdownSettings {
                max_target: 0,
                ..Default::default()
            },
        ] {
            assert!(generate(&Generator::Countdown(s), 1, 0).is_err());
        }
    }
}
