//! Seeded, deterministic problem generators.
//!
//! The same settings and seed always give the same problems, in the same order, on every
//! machine (ChaCha8 from `rand_chacha`). Problems are distinct: a generator draws until it has
//! the number asked for, skipping repeats, so a train/eval split drawn from one stream
//! ([`generate_split`]) never shares a problem.
//!
//! ```
//! use grpo_tasks::generate::{self, ArithSettings, Difficulty, Generator};
//! let g = Generator::Arith(ArithSettings { difficulty: Difficulty::Easy, ..Default::default() });
//! let a = generate::generate(&g, 5, 7).unwrap();
//! let b = generate::generate(&g, 5, 7).unwrap();
//! assert_eq!(a, b);
//! ```

pub mod arith;
pub mod code;
pub mod countdown;

use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::GenerateError;
use crate::task::Task;

pub use arith::ArithSettings;
pub use code::{CodeFamily, CodeSettings};
pub use countdown::CountdownSettings;

/// How hard the generated problems are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Difficulty {
    /// Small numbers, one or two steps.
    #[default]
    Easy,
    /// Two or three steps, precedence matters.
    Medium,
    /// Three or four steps, parentheses, larger numbers.
    Hard,
}

impl Difficulty {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Difficulty::Easy => "easy",
            Difficulty::Medium => "medium",
            Difficulty::Hard => "hard",
        }
    }
}

impl fmt::Display for Difficulty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Difficulty {
    type Err = GenerateError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "easy" => Ok(Difficulty::Easy),
            "medium" => Ok(Difficulty::Medium),
            "hard" => Ok(Difficulty::Hard),
            other => Err(GenerateError::Setting {
                field: "difficulty",
                message: format!("unknown difficulty `{other}` (easy, medium or hard)"),
            }),
        }
    }
}

/// A generator and its settings.
#[derive(Debug, Clone, PartialEq)]
pub enum Generator {
    /// Multi-step integer arithmetic with exact answers (math tasks).
    Arith(ArithSettings),
    /// The countdown game (countdown tasks with a reference solution).
    Countdown(CountdownSettings),
    /// Small Python function-writing problems (code tasks with call or stdio tests).
    Code(CodeSettings),
}

impl Generator {
    /// The generator's name (`arith`, `countdown`, `code`).
    pub fn name(&self) -> &'static str {
        match self {
            Generator::Arith(_) => "arith",
            Generator::Countdown(_) => "countdown",
            Generator::Code(_) => "code",
        }
    }
}

/// One drawn problem before it gets its id: the dedup key and the task builder.
pub(crate) struct Draft {
    /// Two drafts with the same key are the same problem.
    pub key: String,
    /// Builds the task with its id.
    pub build: Box<dyn FnOnce(String) -> Task>,
}

/// Draws at most this many times per problem wanted before giving up.
const ATTEMPTS_PER_PROBLEM: usize = 200;

/// Generates `n` distinct problems from `seed`.
pub fn generate(generator: &Generator, n: usize, seed: u64) -> Result<Vec<Task>, GenerateError> {
    let (mut tasks, _) = generate_split(generator, n, 0, seed)?;
    tasks.shrink_to_fit();
    Ok(tasks)
}

/// Generates `n_train + n_eval` distinct problems from one seeded stream: the first `n_train`
/// are the train split (the same tasks [`generate`] gives for `n_train`), the next `n_eval` the
/// eval split. No problem is in both. Ids are `{name}-{index:05}` over the whole stream.
pub fn generate_split(
    generator: &Generator,
    n_train: usize,
    n_eval: usize,
    seed: u64,
) -> Result<(Vec<Task>, Vec<Task>), GenerateError> {
    match generator {
        Generator::Arith(s) => s.check()?,
        Generator::Countdown(s) => s.check()?,
        Generator::Code(s) => s.check()?,
    }
    let wanted = n_train + n_eval;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut seen = HashSet::new();
    let mut tasks = Vec::with_capacity(wanted);
    let max_attempts = wanted.saturating_mul(ATTEMPTS_PER_PROBLEM).max(1000);
    let mut attempts = 0;
    while tasks.len() < wanted {
        if attempts == max_attempts {
            return Err(GenerateError::Exhausted {
                found: tasks.len(),
                wanted,
                attempts,
            });
        }
        attempts += 1;
        let draft = match generator {
            Generator::Arith(s) => arith::draw(s, seed, &mut rng),
            Generator::Countdown(s) => countdown::draw(s, seed, &mut rng),
            Generator::Code(s) => code::draw(s, seed, &mut rng),
        };
        let Some(draft) = draft else { continue };
        if seen.insert(draft.key) {
            let id = format!("{}-{:05}", generator.name(), tasks.len());
            tasks.push((draft.build)(id));
        }
    }
    let eval = tasks.split_off(n_train);
    tracing::debug!(
        generator = generator.name(),
        n_train,
        n_eval,
        attempts,
        "generated problems"
    );
    Ok((tasks, eval))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_tasks_other_seed_other_tasks() {
        for g in [
            Generator::Arith(ArithSettings::default()),
            Generator::Countdown(CountdownSettings::default()),
            Generator::Code(CodeSettings::default()),
        ] {
            let a = generate(&g, 50, 1).unwrap();
            assert_eq!(a, generate(&g, 50, 1).unwrap());
            assert_ne!(a, generate(&g, 50, 2).unwrap());
        }
    }

    #[test]
    fn train_prefix_is_stable_and_splits_are_disjoint() {
        let g = Generator::Arith(ArithSettings::default());
        let (train, eval) = generate_split(&g, 300, 100, 9).unwrap();
        assert_eq!(train, generate(&g, 300, 9).unwrap());
        let prompts: HashSet<&str> = train.iter().map(Task::prompt).collect();
        assert!(eval.iter().all(|t| !prompts.contains(t.prompt())));
        assert_eq!(eval.len(), 100);
    }

    #[test]
    fn impossible_counts_fail_instead_of_looping() {
        // Easy countdown with at most 3 numbers from 1..=2 has only a handful of puzzles.
        let g = Generator::Countdown(CountdownSettings {
            min_numbers: 2,
            max_numbers: 2,
            max_number: 2,
            max_target: 4,
            ..Default::default()
        });
        let err = generate(&g, 100, 0).unwrap_err();
        assert!(
            matches!(err, GenerateError::Exhausted { wanted: 100, .. }),
            "{err}"
        );
    }

    #[test]
    fn difficulty_parses_its_names() {
        for d in [Difficulty::Easy, Difficulty::Medium, Difficulty::Hard] {
            assert_eq!(d.as_str().parse::<Difficulty>().unwrap(), d);
        }
        assert!("extreme".parse::<Difficulty>().is_err());
    }
}
