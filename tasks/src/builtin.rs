//! Packs compiled into the crate, loadable as `builtin:NAME` with no files around.
//!
//! | name | kind | splits | for |
//! |---|---|---|---|
//! | `arith` | math | train 2000, eval 200 | easy arithmetic with numbers 0–99, for models larger than the default tiny one |
//! | `arith-digits` | math | train 2000, eval 200 | the default tiny CPU run: single-digit arithmetic a 109k-parameter model partly learns in its warm-up |
//! | `arith-small` | math | train 472, eval 200 | a real checkpoint's RL task: `a + b` and `a - b` with 0–20, where SmolLM2-135M-Instruct answers 35% greedily and 60% within 8 samples |
//! | `countdown` | countdown | train 1000, eval 200 | the TinyZero task |
//! | `python` | code | train 37, eval 14 (hand-written) | checking the code reward and small code-RL runs |
//! | `pyfunc` | code | train 2000, eval 200 | code RL for the tiny model: one-line Python functions and stdio programs from short prompts with single-digit constants |
//! | `polyglot` | code | train 15, eval 5 (hand-written) | stdio problems in C, C++, JavaScript and TypeScript: checking the compiled and JavaScript sandboxes |
//!
//! The generated packs are reproducible: [`regenerate`] rebuilds their split files from the
//! generator, and a test checks the files match byte for byte.

use crate::error::GenerateError;
use crate::generate::{
    self, ArithSettings, CodeSettings, CountdownSettings, Difficulty, Generator,
};
use crate::pack::to_jsonl;

/// A pack compiled into the crate.
#[derive(Debug, Clone, Copy)]
pub struct BuiltinPack {
    /// Its name, as in `builtin:NAME`.
    pub name: &'static str,
    /// The text of its `pack.toml`.
    pub manifest: &'static str,
    /// Its README.
    pub readme: &'static str,
    /// Split files: (file name, text).
    pub files: &'static [(&'static str, &'static str)],
}

const PACKS: &[BuiltinPack] = &[
    BuiltinPack {
        name: "arith",
        manifest: include_str!("../packs/arith/pack.toml"),
        readme: include_str!("../packs/arith/README.md"),
        files: &[
            ("train.jsonl", include_str!("../packs/arith/train.jsonl")),
            ("eval.jsonl", include_str!("../packs/arith/eval.jsonl")),
        ],
    },
    BuiltinPack {
        name: "arith-digits",
        manifest: include_str!("../packs/arith-digits/pack.toml"),
        readme: include_str!("../packs/arith-digits/README.md"),
        files: &[
            (
                "train.jsonl",
                include_str!("../packs/arith-digits/train.jsonl"),
            ),
            (
                "eval.jsonl",
                include_str!("../packs/arith-digits/eval.jsonl"),
            ),
        ],
    },
    BuiltinPack {
        name: "arith-small",
        manifest: include_str!("../packs/arith-small/pack.toml"),
        readme: include_str!("../packs/arith-small/README.md"),
        files: &[
            (
                "train.jsonl",
                include_str!("../packs/arith-small/train.jsonl"),
            ),
            (
                "eval.jsonl",
                include_str!("../packs/arith-small/eval.jsonl"),
            ),
        ],
    },
    BuiltinPack {
        name: "countdown",
        manifest: include_str!("../packs/countdown/pack.toml"),
        readme: include_str!("../packs/countdown/README.md"),
        files: &[
            (
                "train.jsonl",
                include_str!("../packs/countdown/train.jsonl"),
            ),
            ("eval.jsonl", include_str!("../packs/countdown/eval.jsonl")),
        ],
    },
    BuiltinPack {
        name: "python",
        manifest: include_str!("../packs/python/pack.toml"),
        readme: include_str!("../packs/python/README.md"),
        files: &[
            ("train.jsonl", include_str!("../packs/python/train.jsonl")),
            ("eval.jsonl", include_str!("../packs/python/eval.jsonl")),
        ],
    },
    BuiltinPack {
        name: "pyfunc",
        manifest: include_str!("../packs/pyfunc/pack.toml"),
        readme: include_str!("../packs/pyfunc/README.md"),
        files: &[
            ("train.jsonl", include_str!("../packs/pyfunc/train.jsonl")),
            ("eval.jsonl", include_str!("../packs/pyfunc/eval.jsonl")),
        ],
    },
    BuiltinPack {
        name: "polyglot",
        manifest: include_str!("../packs/polyglot/pack.toml"),
        readme: include_str!("../packs/polyglot/README.md"),
        files: &[
            ("train.jsonl", include_str!("../packs/polyglot/train.jsonl")),
            ("eval.jsonl", include_str!("../packs/polyglot/eval.jsonl")),
        ],
    },
];

/// The names of the built-in packs.
pub fn names() -> Vec<&'static str> {
    PACKS.iter().map(|p| p.name).collect()
}

/// The built-in pack with this name.
pub fn get(name: &str) -> Option<&'static BuiltinPack> {
    PACKS.iter().find(|p| p.name == name)
}

/// The recipe of a generated built-in pack: generator, seed, train and eval sizes.
#[derive(Debug, Clone, PartialEq)]
pub struct Recipe {
    /// The generator and its settings.
    pub generator: Generator,
    /// The seed.
    pub seed: u64,
    /// Train split size.
    pub n_train: usize,
    /// Eval split size.
    pub n_eval: usize,
}

/// The recipe of a generated built-in pack (`arith`, `arith-digits`, `arith-small`,
/// `countdown`, `pyfunc`);
/// `None` for hand-written ones.
pub fn recipe(name: &str) -> Option<Recipe> {
    match name {
        "arith" => Some(Recipe {
            generator: Generator::Arith(ArithSettings {
                difficulty: Difficulty::Easy,
                ..Default::default()
            }),
            seed: 20_260_101,
            n_train: 2000,
            n_eval: 200,
        }),
        "arith-digits" => Some(Recipe {
            generator: Generator::Arith(ArithSettings {
                difficulty: Difficulty::Easy,
                max_operand: 9,
                steps: None,
            }),
            seed: 20_260_103,
            n_train: 2000,
            n_eval: 200,
        }),
        // Every problem of its kind (672): 472 to train on, 200 held out.
        "arith-small" => Some(Recipe {
            generator: Generator::Arith(ArithSettings {
                difficulty: Difficulty::Easy,
                max_operand: 20,
                steps: Some(1),
            }),
            seed: 20_260_105,
            n_train: 472,
            n_eval: 200,
        }),
        "countdown" => Some(Recipe {
            generator: Generator::Countdown(CountdownSettings::for_difficulty(Difficulty::Medium)),
            seed: 20_260_102,
            n_train: 1000,
            n_eval: 200,
        }),
        "pyfunc" => Some(Recipe {
            generator: Generator::Code(CodeSettings::default()),
            seed: 20_260_104,
            n_train: 2000,
            n_eval: 200,
        }),
        _ => None,
    }
}

/// Rebuilds a generated pack's split files: `[("train.jsonl", text), ("eval.jsonl", text)]`.
pub fn regenerate(name: &str) -> Option<Result<Vec<(&'static str, String)>, GenerateError>> {
    let r = recipe(name)?;
    Some(
        generate::generate_split(&r.generator, r.n_train, r.n_eval, r.seed).map(|(train, eval)| {
            vec![
                ("train.jsonl", to_jsonl(&train)),
                ("eval.jsonl", to_jsonl(&eval)),
            ]
        }),
    )
}
