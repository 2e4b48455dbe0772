//! `arith`: multi-step integer arithmetic with exact integer answers.
//!
//! | difficulty | problems | example |
//! |---|---|---|
//! | easy | `a + b`, `a - b`, `a ± b ± c` with 0–99, never negative | `What is 47 - 12 + 8?` → `43` |
//! | medium | two or three steps with `*` (one factor 2–12), negatives possible | `What is 35 - 7 * 9?` → `-28` |
//! | hard | three or four steps, `+ - * /`, parentheses, every division exact | `What is (84 - 12) / (3 + 5)?` → `9` |
//!
//! [`ArithSettings::steps`] fixes the number of operations instead (`--steps 1` with
//! `--max-operand 20` makes the one-step `arith-small` pack).
//!
//! Prompts are short on purpose: the built-in `arith` pack trains a tiny character-level
//! model from scratch. Each task's metadata carries its solution: `expression` (the problem
//! without spaces, `47-12+8`) and `work` (one operation per step, `["47-12=35", "35+8=43"]`,
//! from [`Expr::work`]), which the trainer's warm-up writes its solutions from.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{Signed, ToPrimitive};
use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde_json::json;

use super::{Difficulty, Draft};
use crate::error::GenerateError;
use crate::expr::{Expr, Op};
use crate::task::{MathTask, Task};

/// Settings of the `arith` generator.
#[derive(Debug, Clone, PartialEq)]
pub struct ArithSettings {
    /// How hard the problems are.
    pub difficulty: Difficulty,
    /// The largest operand (other than the small factors of `*` at medium); default 99.
    pub max_operand: i64,
    /// Operations per problem; `None` draws them as the difficulty says (easy 1–2, medium
    /// 2–3, hard 3–4).
    pub steps: Option<usize>,
}

impl Default for ArithSettings {
    fn default() -> Self {
        ArithSettings {
            difficulty: Difficulty::Easy,
            max_operand: 99,
            steps: None,
        }
    }
}

impl ArithSettings {
    pub(crate) fn check(&self) -> Result<(), GenerateError> {
        if !(9..=1_000_000).contains(&self.max_operand) {
            return Err(GenerateError::Setting {
                field: "max_operand",
                message: format!("{} is outside 9..=1000000", self.max_operand),
            });
        }
        if let Some(steps) = self.steps
            && !(1..=4).contains(&steps)
        {
            return Err(GenerateError::Setting {
                field: "steps",
                message: format!("{steps} is outside 1..=4"),
            });
        }
        Ok(())
    }
}

/// Draws one problem; `None` when the draw breaks a rule (negative easy result, inexact
/// division) and must be redrawn.
pub(crate) fn draw(settings: &ArithSettings, seed: u64, rng: &mut ChaCha8Rng) -> Option<Draft> {
    let max = settings.max_operand;
    let (expr, steps) = match settings.difficulty {
        Difficulty::Easy => {
            let steps = settings.steps.unwrap_or_else(|| rng.gen_range(1..=2));
            let text = chain(rng, steps, &[Op::Add, Op::Sub], |rng, _| {
                rng.gen_range(0..=max)
            });
            (Expr::parse(&text).ok()?, steps)
        }
        Difficulty::Medium => {
            let steps = settings.steps.unwrap_or_else(|| rng.gen_range(2..=3));
            let mut text;
            loop {
                let ops: Vec<Op> = (0..steps)
                    .map(|_| *[Op::Add, Op::Sub, Op::Mul].choose(rng).unwrap_or(&Op::Add))
                    .collect();
                if !ops.contains(&Op::Mul) {
                    continue;
                }
                text = rng.gen_range(1..=max).to_string();
                for op in ops {
                    let n = if op == Op::Mul {
                        rng.gen_range(2..=12)
                    } else {
                        rng.gen_range(1..=max)
                    };
                    text.push_str(&format!(" {} {n}", symbol(op)));
                }
                break;
            }
            (Expr::parse(&text).ok()?, steps)
        }
        Difficulty::Hard => {
            let steps = settings.steps.unwrap_or_else(|| rng.gen_range(3..=4));
            let leaves: Vec<Expr> = (0..=steps)
                .map(|_| Expr::Num(BigInt::from(rng.gen_range(1..=max))))
                .collect();
            (
                random_tree(rng, leaves, &[Op::Add, Op::Sub, Op::Mul, Op::Div]),
                steps,
            )
        }
    };
    // Every intermediate value must be an integer; easy problems never go negative.
    let value = integer_value(&expr, settings.difficulty == Difficulty::Easy)?;
    if value.abs() > BigInt::from(10_000_000) {
        return None;
    }
    let shown = expr.to_minimal_string();
    // The worked solution travels with the task, so a warm-up never re-reads the prompt.
    let work = expr.work().ok()?;
    let compact: String = shown.chars().filter(|c| !c.is_whitespace()).collect();
    let difficulty = settings.difficulty;
    let key = shown.clone();
    Some(Draft {
        key,
        build: Box::new(move |id| {
            let metadata = json!({
                "source": "grpo-tasks generate arith",
                "license": "Apache-2.0",
                "difficulty": difficulty.as_str(),
                "steps": steps,
                "seed": seed,
                "expression": compact,
                "work": work,
            });
            Task::Math(MathTask {
                id,
                prompt: format!("What is {shown}?"),
                answer: value.to_string(),
                alternatives: Vec::new(),
                metadata: metadata.as_object().cloned(),
            })
        }),
    })
}

fn symbol(op: Op) -> char {
    match op {
        Op::Add => '+',
        Op::Sub => '-',
        Op::Mul => '*',
        Op::Div => '/',
    }
}

/// `n0 op n1 op n2 …` with `steps` operators drawn from `ops`.
fn chain(
    rng: &mut ChaCha8Rng,
    steps: usize,
    ops: &[Op],
    mut number: impl FnMut(&mut ChaCha8Rng, usize) -> i64,
) -> String {
    let mut text = number(rng, 0).to_string();
    for i in 0..steps {
        let op = *ops.choose(rng).unwrap_or(&Op::Add);
        text.push_str(&format!(" {} {}", symbol(op), number(rng, i + 1)));
    }
    text
}

/// A random binary tree over the leaves, in their order, with random operators.
fn random_tree(rng: &mut ChaCha8Rng, mut leaves: Vec<Expr>, ops: &[Op]) -> Expr {
    while leaves.len() > 1 {
        let i = rng.gen_range(0..leaves.len() - 1);
        let right = leaves.remove(i + 1);
        let left = leaves.remove(i);
        let op = *ops.choose(rng).unwrap_or(&Op::Add);
        leaves.insert(i, Expr::Bin(op, Box::new(left), Box::new(right)));
    }
    leaves.pop().unwrap_or(Expr::Num(BigInt::from(0)))
}

/// The value when every node's value is an integer (and non-negative when asked), else `None`.
fn integer_value(expr: &Expr, non_negative: bool) -> Option<BigInt> {
    let value: BigRational = match expr {
        Expr::Num(n) => return Some(n.clone()),
        Expr::Neg(e) => -BigRational::from_integer(integer_value(e, non_negative)?),
        Expr::Bin(op, a, b) => {
            let a = BigRational::from_integer(integer_value(a, non_negative)?);
            let b = BigRational::from_integer(integer_value(b, non_negative)?);
            op.apply(&a, &b)?
        }
    };
    if !value.is_integer() || (non_negative && value.is_negative()) {
        return None;
    }
    value.to_integer().to_i64().map(BigInt::from)
}

#[cfg(test)]
mod tests {
    use super::super::{Generator, generate};
    use super::*;

    fn tasks(difficulty: Difficulty, n: usize) -> Vec<MathTask> {
        let g = Generator::Arith(ArithSettings {
            difficulty,
            ..Default::default()
        });
        generate(&g, n, 42)
            .unwrap()
            .into_iter()
            .map(|t| match t {
                Task::Math(m) => m,
                other => panic!("not math: {other:?}"),
            })
            .collect()
    }

    /// Recomputes the answer from the prompt with the expression evaluator.
    fn answer_of(prompt: &str) -> BigRational {
        let expr = prompt
            .strip_prefix("What is ")
            .and_then(|p| p.strip_suffix('?'))
            .unwrap();
        Expr::parse(expr).unwrap().eval().unwrap()
    }

    #[test]
    fn answers_are_exact_and_match_the_prompt() {
        for d in [Difficulty::Easy, Difficulty::Medium, Difficulty::Hard] {
            for t in tasks(d, 300) {
                let want = answer_of(&t.prompt);
                assert!(want.is_integer(), "{}", t.prompt);
                assert_eq!(want.to_integer().to_string(), t.answer, "{}", t.prompt);
            }
        }
    }

    #[test]
    fn easy_is_small_short_and_non_negative() {
        let all = tasks(Difficulty::Easy, 500);
        let mut one_step = 0;
        for t in &all {
            let expr = Expr::parse(
                t.prompt
                    .trim_start_matches("What is ")
                    .trim_end_matches('?'),
            )
            .unwrap();
            assert!(
                expr.literals().iter().all(|&n| (0..=99).contains(&n)),
                "{}",
                t.prompt
            );
            assert!(!t.answer.starts_with('-'), "{}", t.prompt);
            assert!(t.prompt.len() <= 30, "{}", t.prompt);
            if expr.literals().len() == 2 {
                one_step += 1;
            }
        }
        // Steps are drawn 50/50; with 500 draws both kinds are well represented.
        assert!((150..=350).contains(&one_step), "{one_step}");
    }

    #[test]
    fn steps_fixes_the_operations_per_problem_at_every_difficulty() {
        for (difficulty, steps) in [
            (Difficulty::Easy, 1),
            (Difficulty::Easy, 3),
            (Difficulty::Medium, 1),
            (Difficulty::Hard, 2),
        ] {
            let g = Generator::Arith(ArithSettings {
                difficulty,
                max_operand: 20,
                steps: Some(steps),
            });
            let all = generate(&g, 200, 7).unwrap();
            assert_eq!(all.len(), 200);
            for t in all {
                let Task::Math(t) = t else { panic!("not math") };
                let e = Expr::parse(
                    t.prompt
                        .trim_start_matches("What is ")
                        .trim_end_matches('?'),
                )
                .unwrap();
                assert_eq!(e.literals().len(), steps + 1, "{}", t.prompt);
                assert_eq!(t.metadata.unwrap()["steps"], steps, "{}", t.prompt);
            }
        }
        for bad in [0, 5] {
            let g = Generator::Arith(ArithSettings {
                steps: Some(bad),
                ..Default::default()
            });
            assert!(generate(&g, 10, 0).is_err(), "steps {bad}");
        }
    }

    #[test]
    fn medium_always_multiplies_and_hard_uses_more_steps() {
        assert!(
            tasks(Difficulty::Medium, 200)
                .iter()
                .all(|t| t.prompt.contains('*'))
        );
        assert!(tasks(Difficulty::Hard, 200).iter().all(|t| {
            let e = Expr::parse(
                t.prompt
                    .trim_start_matches("What is ")
                    .trim_end_matches('?'),
            )
            .unwrap();
            e.literals().len() >= 4
        }));
    }

    #[test]
    fn first_problems_are_pinned() {
        // Golden: the generator is part of the pack format; a change here changes every
        // generated pack and must be deliberate.
        let first: Vec<(String, String)> = tasks(Difficulty::Easy, 3)
            .into_iter()
            .map(|t| (t.prompt, t.answer))
            .collect();
        for (prompt, answer) in &first {
            assert_eq!(&answer_of(prompt).to_integer().to_string(), answer);
        }
        assert_eq!(first, pinned_first_three());
    }

    fn pinned_first_three() -> Vec<(String, String)> {
        PINNED
            .iter()
            .map(|(p, a)| ((*p).to_owned(), (*a).to_owned()))
            .collect()
    }

    // Seed 42, easy. Answers checked by hand: 58 - 57 + 98 = 1 + 98 = 99;
    // 37 + 26 + 33 = 63 + 33 = 96; 69 - 67 + 20 = 2 + 20 = 22.
    const PINNED: [(&str, &str); 3] = [
        ("What is 58 - 57 + 98?", "99"),
        ("What is 37 + 26 + 33?", "96"),
        ("What is 69 - 67 + 20?", "22"),
    ];

    #[test]
    fn bad_settings_are_rejected() {
        let g = Generator::Arith(ArithSettings {
            max_operand: 3,
            ..Default::default()
        });
        assert!(generate(&g, 1, 0).is_err());
    }
}
