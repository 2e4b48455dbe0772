//! Task packs for reinforcement learning with verifiable rewards.
//!
//! A task pack is a set of problems, one JSON object per line, whose answers a program can
//! check: math problems with a reference answer, code problems with tests, and countdown
//! puzzles. This crate owns
//! - the schema ([`Task`], read with the field at fault by [`read`]) and strict loading ([`Pack::load`]): every problem of a pack is
//!   reported at once, with file, line and field, because a pack that fails on line 9,000 of
//!   a long run wastes the run;
//! - prompt templates ([`Template`]): R1-Zero, compact, plain, and custom with placeholders;
//! - seeded generators ([`generate`]): `arith`, `countdown` and `code`;
//! - importers ([`import`]): HumanEval, MBPP, GSM8K, MATH-style, generic JSONL, the code-RL
//!   data sets (TACO, APPS, CodeContests, LiveCodeBench, Codeforces, PrimeIntellect, KodCode,
//!   EvalPlus) and verl's Parquet rows, JSONL or Parquet; and the export to verl's rows
//!   ([`import::parquet::write_verl`]);
//! - exact arithmetic expressions ([`expr`]), the language of countdown answers, with a solver;
//! - the built-in packs ([`builtin`]): `arith`, `arith-digits`, `arith-small`, `countdown`, `python`, `pyfunc`.
//!
//! The rewards that check completions live in `grpo-rewards`.
//!
//! ```
//! use grpo_tasks::{Pack, Template};
//! let pack = Pack::load("builtin:arith").unwrap();
//! let task = &pack.train()[0];
//! let text = pack.manifest.template.render(task);
//! assert!(text.starts_with(task.prompt()));
//! assert_eq!(Template::Plain.render(task), task.prompt());
//! ```
#![deny(clippy::unwrap_used)]
#![warn(missing_docs)]

pub mod builtin;
pub mod error;
pub mod expr;
pub mod generate;
pub mod import;
pub mod judging;
pub mod pack;
pub mod read;
pub mod task;
pub mod template;
pub mod validate;

pub use error::{
    ExportError, ExprError, GenerateError, ImportError, PackError, Problem, TemplateError,
};
pub use pack::{CodeOptions, Manifest, MathOptions, Pack, RewardWeights, Split, TimeLimits};
pub use task::{
    AssertTests, CallCase, CallTests, CodeMode, CodeTask, CodeTests, CountdownTask, Language,
    MathTask, Metadata, StdioCase, StdioTests, Task, TaskKind,
};
pub use template::Template;
pub use validate::{FieldProblem, MIN_MEMORY_MB};
