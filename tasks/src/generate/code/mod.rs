//! `code`: small Python function-writing problems with call or stdin/stdout tests.
//!
//! Every problem is one short sentence whose single-digit constants fix the behaviour, and its
//! reference is one line. The built-in `pyfunc` pack trains a 109k-parameter character-level
//! model on them (supervised warm-up on the references, then GRPO with sandbox rewards), so
//! prompts stay within 70 characters and the wording repeats across problems.
//!
//! | family | problems | example prompt | reference |
//! |---|---|---|---|
//! | `linear` | `x*a+b`, `x*a-b`, `(x+a)*b`, `(x-a)*b`, `x*x+a`, `(x+a)*b+c`, `(x*a+b)*c`, `x*a+y*b`, `x*a-y*b` | `Write f(x) that returns x times 3 plus 1.` | `def f(x): return x*3+1` |
//! | `conditional` | `a if x>b else c`, `x if x>a else b`, `x>a`, `max`, `min`, `abs` (comparisons `>` `<` `>=` `<=` `==`) | `Write f(x) that returns 7 if x is above 4, else 2.` | `def f(x): return 7 if x>4 else 2` |
//! | `list` | filtered sum (plus a constant), count and list; each item plus, minus or times a constant; `max`/`min`/`sum`/`len` plus, minus or times a constant | `Write f(a) that returns the sum of the items of a above 4.` | `def f(a): return sum(v for v in a if v>4)` |
//! | `string` | repeat, slices, length, digits added, inserted, replaced, removed or counted, starts/ends with, contains, index | `Write f(s) that returns s without its first 2 characters.` | `def f(s): return s[2:]` |
//! | `modulo` | `x%a`, divisibility, `x%a==b`, `x//a`, `a if x%b==0 else c`, `x%a+b`, `(x+a)%b`, `x*a%b`, `x%a*b`, `x//a+b`, `(x+a)%b+c` | `Write f(x) that returns x mod 3.` | `def f(x): return x%3` |
//! | `stdio` | read an integer and print a linear or modulo expression of it, or read a line and print it repeated or its length plus a constant | `Read an integer n and print n plus 5.` | `print(int(input())+5)` |
//!
//! A family is drawn uniformly, then one of its kinds (`x*a+b`, `(x+a)*b`, …) with weight
//! proportional to its number of problems, capped at 100, then one problem of the kind: no
//! single-constant kind is drawn over and over, and no family runs out of problems before a
//! 2000/200 split is drawn (each has more than 800). Booleans are asked for as "whether …"
//! (`Write f(x) that returns whether x is divisible by 3.` → `x%3==0`).
//!
//! Tests have 4 to 6 cases whose expected values are computed here with Python's semantics
//! (`%` and `//` round toward negative infinity, slices clamp), on arguments chosen so that a
//! wrong constant or a wrong operator fails at least one case (a unit test checks this for
//! every problem the generator can draw). `metadata.plan` is a short worked plan (`x*3+1`, `sum a>4`) for
//! the `<think>` part of a warm-up solution.

mod kinds;
mod shape;
#[cfg(test)]
mod tests;

use std::fmt;
use std::str::FromStr;

use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde_json::json;

use self::kinds::Kind;
use super::Draft;
use crate::error::GenerateError;
use crate::task::{CodeMode, CodeTask, Language, Task};

/// A family of `code` problems (see the module table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CodeFamily {
    /// Linear expressions of `x` (or `x` and `y`).
    Linear,
    /// A comparison of `x` with a constant picks the result.
    Conditional,
    /// Sums, counts, filters and maps over a list of integers.
    List,
    /// Slices, repeats and digit edits of a string.
    String,
    /// Remainders, floor division and divisibility.
    Modulo,
    /// A whole program: read stdin, print the result.
    Stdio,
}

impl CodeFamily {
    /// Every family, in the module table's order.
    pub const ALL: [CodeFamily; 6] = [
        CodeFamily::Linear,
        CodeFamily::Conditional,
        CodeFamily::List,
        CodeFamily::String,
        CodeFamily::Modulo,
        CodeFamily::Stdio,
    ];

    /// The lowercase name, as in `metadata.family`.
    pub fn as_str(self) -> &'static str {
        match self {
            CodeFamily::Linear => "linear",
            CodeFamily::Conditional => "conditional",
            CodeFamily::List => "list",
            CodeFamily::String => "string",
            CodeFamily::Modulo => "modulo",
            CodeFamily::Stdio => "stdio",
        }
    }

    /// The problem shapes of the family.
    fn kinds(self) -> &'static [Kind] {
        use Kind::*;
        match self {
            CodeFamily::Linear => &[
                MulAdd, MulSub, AddMul, SubMul, Square, TwoAdd, TwoSub, AddMulAdd, MulAddMul,
            ],
            CodeFamily::Conditional => &[IfElse, KeepIf, Test, Larger, Smaller, Distance],
            CodeFamily::List => &[
                SumIf, CountIf, Filter, FilterMap, Map, Largest, Smallest, Total, Length,
                SumIfPlus, MapMulAdd,
            ],
            CodeFamily::String => &[
                Repeat,
                DropFirst,
                DropLast,
                First,
                Last,
                Trim,
                StrLen,
                Append,
                Prepend,
                Replace,
                Count,
                Starts,
                Ends,
                CharAt,
                Between,
                RepeatAppend,
                FirstRepeat,
                CountPlus,
                LenCmp,
                Contains,
                Remove,
                Insert,
                Substr,
            ],
            CodeFamily::Modulo => &[
                Mod,
                Divisible,
                ModIs,
                FloorDiv,
                DivisibleIf,
                ModPlus,
                AddMod,
                TimesMod,
                ModTimes,
                FloorDivPlus,
                AddModPlus,
            ],
            CodeFamily::Stdio => &[
                ReadMulAdd,
                ReadMulSub,
                ReadAddMul,
                ReadAddMulAdd,
                ReadMulAddMul,
                ReadSubMul,
                ReadApply,
                ReadMod,
                ReadModPlus,
                ReadRepeat,
                ReadLength,
            ],
        }
    }
}

impl fmt::Display for CodeFamily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for CodeFamily {
    type Err = GenerateError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CodeFamily::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| GenerateError::Setting {
                field: "families",
                message: format!(
                    "unknown family `{s}` (linear, conditional, list, string, modulo or stdio)"
                ),
            })
    }
}

/// Settings of the `code` generator.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeSettings {
    /// The families to draw from, each equally often (default: all).
    pub families: Vec<CodeFamily>,
}

impl Default for CodeSettings {
    fn default() -> Self {
        CodeSettings {
            families: CodeFamily::ALL.to_vec(),
        }
    }
}

impl CodeSettings {
    pub(crate) fn check(&self) -> Result<(), GenerateError> {
        if self.families.is_empty() {
            return Err(GenerateError::Setting {
                field: "families",
                message: "no family is on: name at least one".into(),
            });
        }
        for (i, family) in self.families.iter().enumerate() {
            if self.families[..i].contains(family) {
                return Err(GenerateError::Setting {
                    field: "families",
                    message: format!("`{family}` is listed twice"),
                });
            }
        }
        Ok(())
    }
}

/// Draws one problem: a family, then one of its kinds (weighted by how many problems the kind
/// has, up to `KIND_WEIGHT_CAP`, so that small kinds are not drawn over and over), then one
/// problem of the kind. `None` only if a kind had no problem, which the tests rule out.
pub(crate) fn draw(settings: &CodeSettings, seed: u64, rng: &mut ChaCha8Rng) -> Option<Draft> {
    let family = *settings.families.choose(rng)?;
    let kind = *family
        .kinds()
        .choose_weighted(rng, |&kind| kind.weight())
        .ok()?;
    let shape = *kind.shapes().choose(rng)?;
    let tests = shape.tests()?;
    let key = format!("{shape:?}");
    Some(Draft {
        key,
        build: Box::new(move |id| {
            let metadata = json!({
                "source": "grpo-tasks generate code",
                "license": "Apache-2.0",
                "family": family.as_str(),
                "plan": shape.plan(),
                "seed": seed,
            });
            Task::Code(CodeTask {
                id,
                prompt: shape.prompt(),
                language: Language::Python,
                mode: CodeMode::Full,
                tests,
                reference: Some(shape.reference()),
                time_limit_ms: None,
                memory_mb: None,
                metadata: metadata.as_object().cloned(),
            })
        }),
    })
}
