//! The task schema: one problem per JSONL line, tagged by `kind`.
//!
//! ```
//! use grpo_tasks::Task;
//! let line = r#"{"id":"a1","kind":"math","prompt":"What is 2+3?","answer":"5"}"#;
//! let task: Task = serde_json::from_str(line).unwrap();
//! assert_eq!(task.id(), "a1");
//! assert_eq!(task.kind_name(), "math");
//! ```

use serde::{Deserialize, Serialize};

use crate::judging::{Checker, Compare, TestPlan};

/// Free-form information about a task: source, license, difficulty, anything else.
pub type Metadata = serde_json::Map<String, serde_json::Value>;

/// One problem of a task pack.
///
/// Unknown fields are rejected everywhere except under `metadata`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Task {
    /// A math problem with a reference answer checked for equivalence.
    Math(MathTask),
    /// A program to write, checked by running tests in the sandbox.
    Code(CodeTask),
    /// The TinyZero countdown game: combine `numbers` to reach `target`.
    Countdown(CountdownTask),
}

/// A math problem: the completion's final answer must be equivalent to `answer`
/// (or to one of `alternatives`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MathTask {
    /// Unique id within the pack.
    pub id: String,
    /// The problem as a person would read it, without template.
    pub prompt: String,
    /// The reference answer (plain math or LaTeX).
    pub answer: String,
    /// Other accepted answers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<String>,
    /// Source, license, difficulty, anything else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// The countdown game: an arithmetic expression over `numbers` that evaluates, exactly in
/// rationals, to `target`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CountdownTask {
    /// Unique id within the pack.
    pub id: String,
    /// The problem as a person would read it, without template.
    pub prompt: String,
    /// The numbers available.
    pub numbers: Vec<i64>,
    /// The value to reach.
    pub target: i64,
    /// `true` (default, the TinyZero rule): each number exactly once; `false`: at most once.
    #[serde(default = "default_true")]
    pub use_all: bool,
    /// A known solution expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// Source, license, difficulty, anything else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

fn default_true() -> bool {
    true
}

/// A programming problem checked by running tests in the sandbox.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodeTask {
    /// Unique id within the pack.
    pub id: String,
    /// The problem as a person would read it (for `prefix` mode: the code the completion continues).
    pub prompt: String,
    /// The programming language (only Python today).
    pub language: Language,
    /// How the program is assembled from prompt and completion.
    pub mode: CodeMode,
    /// The tests that decide correctness.
    pub tests: CodeTests,
    /// A reference solution (in `prefix` mode: the body that continues the prompt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// CPU time limit for one run, overriding the sandbox default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_limit_ms: Option<u64>,
    /// Memory cap for one run, overriding the sandbox default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
    /// Source, license, difficulty, anything else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Languages the sandbox runs. Names are SandboxFusion's where it has one (`python`, `cpp`,
/// `nodejs`, `typescript`), with `c`, `javascript`/`js`, `c++` and `ts` also accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// CPython 3.14 for WASI.
    Python,
    /// JavaScript on QuickJS-NG, with the Node.js surface programs use.
    #[serde(alias = "nodejs", alias = "js")]
    Javascript,
    /// TypeScript: types stripped, then run as JavaScript.
    #[serde(alias = "ts")]
    Typescript,
    /// C, compiled to `wasm32-wasi`.
    C,
    /// C++, compiled to `wasm32-wasi`.
    #[serde(alias = "c++")]
    Cpp,
}

impl Language {
    /// Every language, in the order listings show them.
    pub const ALL: [Language; 5] = [
        Language::Python,
        Language::C,
        Language::Cpp,
        Language::Javascript,
        Language::Typescript,
    ];

    /// The canonical name (`python`, `c`, `cpp`, `javascript`, `typescript`).
    pub fn as_str(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Javascript => "javascript",
            Language::Typescript => "typescript",
            Language::C => "c",
            Language::Cpp => "cpp",
        }
    }

    /// The name SandboxFusion's `/run_code` uses (`nodejs` for JavaScript; `c` is ours, which
    /// SandboxFusion does not have). The one table of those names.
    pub fn sandbox_fusion_name(self) -> &'static str {
        match self {
            Language::Javascript => "nodejs",
            other => other.as_str(),
        }
    }

    /// Parses a canonical name or an alias (`nodejs`, `js`, `ts`, `c++`), case-insensitively.
    pub fn parse(name: &str) -> Option<Language> {
        match name.trim().to_ascii_lowercase().as_str() {
            "python" | "python3" | "py" => Some(Language::Python),
            "javascript" | "nodejs" | "node" | "js" => Some(Language::Javascript),
            "typescript" | "ts" => Some(Language::Typescript),
            "c" => Some(Language::C),
            "cpp" | "c++" | "cxx" => Some(Language::Cpp),
            _ => None,
        }
    }

    /// Whether programs are compiled before they run.
    pub fn is_compiled(self) -> bool {
        matches!(self, Language::C | Language::Cpp)
    }
}

impl std::fmt::Display for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the program is assembled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CodeMode {
    /// The completion continues `prompt` (HumanEval style): program = prompt + code + tests.
    Prefix,
    /// The completion holds the whole solution: program = code + tests.
    Full,
}

/// The tests of a code task, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum CodeTests {
    /// HumanEval/MBPP style: `code` defines `check(candidate)` (or plain asserts), called on
    /// `entry_point` when given.
    Assert(AssertTests),
    /// Program reads stdin and writes stdout; output lines are compared whitespace-normalised.
    Stdio(StdioTests),
    /// Function calls: `entry_point(*args) == expected`.
    Call(CallTests),
}

/// Assert-style tests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssertTests {
    /// Test code: asserts, or a `check(candidate)` function.
    pub code: String,
    /// The function under test, passed to `check` when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_point: Option<String>,
}

/// Stdin/stdout cases.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StdioTests {
    /// The cases, each run as a separate program execution.
    pub cases: Vec<StdioCase>,
    /// When set, numeric tokens match within this absolute-or-relative tolerance (shorthand
    /// for `compare`'s `abs_tol` and `rel_tol` both set to it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub float_tolerance: Option<f64>,
    /// How stdout is compared with the expected output (default: whitespace-normalised lines).
    #[serde(default, skip_serializing_if = "Compare::is_default")]
    pub compare: Compare,
    /// A checker program that judges each output instead of `compare` (a special judge, for
    /// problems with more than one right answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checker: Option<Checker>,
    /// Which cases decide the reward and how they run.
    #[serde(default, skip_serializing_if = "TestPlan::is_default")]
    pub plan: TestPlan,
}

impl StdioTests {
    /// The comparison in effect: `compare`, with `float_tolerance` filling tolerances it
    /// leaves unset.
    pub fn comparison(&self) -> Compare {
        let mut compare = self.compare.clone();
        if let Some(tol) = self.float_tolerance {
            compare.abs_tol = compare.abs_tol.or(Some(tol));
            compare.rel_tol = compare.rel_tol.or(Some(tol));
        }
        compare
    }
}

/// One stdin/stdout case.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StdioCase {
    /// Bytes fed to the program's stdin.
    pub stdin: String,
    /// The expected stdout.
    pub stdout: String,
    /// A public case (one the prompt may show): public cases decide the reward only when the
    /// task has no hidden one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub public: bool,
}

/// Function-call cases.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallTests {
    /// The function to call.
    pub entry_point: String,
    /// The cases.
    pub cases: Vec<CallCase>,
    /// When set, floats match within this absolute-or-relative tolerance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub float_tolerance: Option<f64>,
    /// Which cases decide the reward and how they run.
    #[serde(default, skip_serializing_if = "TestPlan::is_default")]
    pub plan: TestPlan,
}

/// One call case: `entry_point(*args)` must equal `expected`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallCase {
    /// Positional arguments, as JSON values.
    pub args: Vec<serde_json::Value>,
    /// The expected return value, as a JSON value.
    pub expected: serde_json::Value,
    /// A public case: see [`StdioCase::public`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub public: bool,
}

/// The kind of a task, without its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskKind {
    /// [`Task::Math`].
    Math,
    /// [`Task::Code`].
    Code,
    /// [`Task::Countdown`].
    Countdown,
}

impl Task {
    /// The task's unique id.
    pub fn id(&self) -> &str {
        match self {
            Task::Math(t) => &t.id,
            Task::Code(t) => &t.id,
            Task::Countdown(t) => &t.id,
        }
    }

    /// The problem text, without template.
    pub fn prompt(&self) -> &str {
        match self {
            Task::Math(t) => &t.prompt,
            Task::Code(t) => &t.prompt,
            Task::Countdown(t) => &t.prompt,
        }
    }

    /// The task's metadata, if any.
    pub fn metadata(&self) -> Option<&Metadata> {
        match self {
            Task::Math(t) => t.metadata.as_ref(),
            Task::Code(t) => t.metadata.as_ref(),
            Task::Countdown(t) => t.metadata.as_ref(),
        }
    }

    /// The task's kind.
    pub fn kind(&self) -> TaskKind {
        match self {
            Task::Math(_) => TaskKind::Math,
            Task::Code(_) => TaskKind::Code,
            Task::Countdown(_) => TaskKind::Countdown,
        }
    }

    /// The kind as written in JSONL (`math`, `code`, `countdown`).
    pub fn kind_name(&self) -> &'static str {
        match self.kind() {
            TaskKind::Math => "math",
            TaskKind::Code => "code",
            TaskKind::Countdown => "countdown",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sandbox_fusion_names_parse_back_to_their_language() {
        for language in Language::ALL {
            let name = language.sandbox_fusion_name();
            assert_eq!(Language::parse(name), Some(language), "{name}");
        }
        assert_eq!(Language::Javascript.sandbox_fusion_name(), "nodejs");
    }

    #[test]
    fn unknown_field_is_rejected_in_every_kind() {
        for line in [
            r#"{"id":"a","kind":"math","prompt":"p","answer":"1","extra":1}"#,
            r#"{"id":"a","kind":"countdown","prompt":"p","numbers":[1,2],"target":3,"extra":1}"#,
            r#"{"id":"a","kind":"code","prompt":"p","language":"python","mode":"full","tests":{"type":"stdio","cases":[]},"extra":1}"#,
        ] {
            let err = serde_json::from_str::<Task>(line).unwrap_err().to_string();
            assert!(err.contains("extra"), "{err}");
        }
    }

    #[test]
    fn metadata_takes_anything() {
        let line =
            r#"{"id":"a","kind":"math","prompt":"p","answer":"1","metadata":{"x":{"y":[1]}}}"#;
        let task: Task = serde_json::from_str(line).unwrap();
        assert_eq!(task.metadata().unwrap()["x"]["y"][0], 1);
    }

    #[test]
    fn code_task_round_trips() {
        let line = r#"{"id":"c","kind":"code","prompt":"def f(x):\n","language":"python","mode":"prefix","tests":{"type":"call","entry_point":"f","cases":[{"args":[1],"expected":2}]},"time_limit_ms":500}"#;
        let task: Task = serde_json::from_str(line).unwrap();
        let back: Task = serde_json::from_str(&serde_json::to_string(&task).unwrap()).unwrap();
        assert_eq!(task, back);
        assert_eq!(task.kind(), TaskKind::Code);
    }

    #[test]
    fn countdown_defaults_to_use_all() {
        let line = r#"{"id":"a","kind":"countdown","prompt":"p","numbers":[1,2],"target":3}"#;
        let Task::Countdown(t) = serde_json::from_str::<Task>(line).unwrap() else {
            panic!("not countdown")
        };
        assert!(t.use_all);
    }
}
