//! Meaning checks on a typed [`Task`]: what the serde schema cannot say.
//!
//! The serde types in [`crate::task`] are the schema (field names, types, unknown fields);
//! [`Task::validate`] adds the rules about values: non-empty ids, prompts and answers,
//! countdown references that reach their target, test lists with at least one case, Python
//! identifiers as entry points, and usable limits (`time_limit_ms > 0`, `memory_mb` at least
//! [`MIN_MEMORY_MB`]). Pack loading and the HTTP service both call it, so a task is judged by
//! the same rules wherever it comes from.
//!
//! ```
//! use grpo_tasks::Task;
//! let task: Task = serde_json::from_str(
//!     r#"{"id":"c","kind":"code","prompt":"p","language":"python","mode":"full",
//!         "tests":{"type":"call","entry_point":"1f","cases":[]},"time_limit_ms":0}"#).unwrap();
//! let fields: Vec<String> = task.validate().into_iter().map(|p| p.field).collect();
//! assert_eq!(fields, ["tests.cases", "tests.entry_point", "time_limit_ms"]);
//! ```

use std::fmt;

use crate::expr::{self, Expr, Usage};
use crate::task::{CodeTests, Task};

/// The smallest memory cap, in MiB, a code task may ask for: the sandboxed interpreter's
/// snapshot alone takes about 26 MiB.
pub const MIN_MEMORY_MB: u64 = 32;

/// One value of a task that breaks a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldProblem {
    /// The field, as a dotted path (`tests.cases`, `alternatives[2]`).
    pub field: String,
    /// What is wrong, as a sentence.
    pub message: String,
}

impl fmt::Display for FieldProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "field `{}`: {}", self.field, self.message)
    }
}

impl Task {
    /// Every rule this task's values break, in field order; empty when the task is valid.
    pub fn validate(&self) -> Vec<FieldProblem> {
        let mut out = Vec::new();
        let mut need = |ok: bool, field: &str, message: &str| {
            if !ok {
                out.push(FieldProblem {
                    field: field.to_owned(),
                    message: message.to_owned(),
                });
            }
        };
        need(!self.id().trim().is_empty(), "id", "must not be empty");
        need(
            self.id().trim() == self.id(),
            "id",
            "must not start or end with whitespace",
        );
        need(
            !self.prompt().trim().is_empty(),
            "prompt",
            "must not be empty",
        );
        match self {
            Task::Math(t) => {
                need(!t.answer.trim().is_empty(), "answer", "must not be empty");
                for (i, alt) in t.alternatives.iter().enumerate() {
                    need(
                        !alt.trim().is_empty(),
                        &format!("alternatives[{i}]"),
                        "must not be empty",
                    );
                }
            }
            Task::Countdown(t) => {
                need(
                    !t.numbers.is_empty(),
                    "numbers",
                    "must hold at least one number",
                );
                need(
                    t.numbers.iter().all(|&n| n >= 0),
                    "numbers",
                    "must be non-negative integers",
                );
                if let Some(reference) = &t.reference
                    && let Some(message) =
                        countdown_reference_problem(reference, &t.numbers, t.target, t.use_all)
                {
                    out.push(FieldProblem {
                        field: "reference".into(),
                        message,
                    });
                }
            }
            Task::Code(t) => {
                need(
                    t.language == crate::task::Language::Python
                        || matches!(t.tests, CodeTests::Stdio(_)),
                    "tests.type",
                    "must be \"stdio\" for a language other than Python (assert and call tests run Python)",
                );
                match &t.tests {
                    CodeTests::Assert(a) => {
                        need(!a.code.trim().is_empty(), "tests.code", "must not be empty");
                        if let Some(e) = &a.entry_point {
                            need(
                                is_identifier(e),
                                "tests.entry_point",
                                "must be a Python identifier",
                            );
                        }
                    }
                    CodeTests::Stdio(s) => {
                        need(
                            !s.cases.is_empty(),
                            "tests.cases",
                            "must hold at least one case",
                        );
                        need(
                            s.float_tolerance.is_none_or(|t| t.is_finite() && t >= 0.0),
                            "tests.float_tolerance",
                            "must be a finite non-negative number",
                        );
                        if let Some(checker) = &s.checker {
                            use crate::task::Language;
                            need(
                                matches!(
                                    checker.language,
                                    Language::Python | Language::C | Language::Cpp
                                ),
                                "tests.checker.language",
                                "must be python, c or cpp",
                            );
                            need(
                                !checker.source.trim().is_empty(),
                                "tests.checker.source",
                                "must not be empty",
                            );
                            need(
                                checker.time_limit_ms != Some(0),
                                "tests.checker.time_limit_ms",
                                "must be positive",
                            );
                            if let Some(mb) = checker.memory_mb {
                                need(
                                    mb >= MIN_MEMORY_MB,
                                    "tests.checker.memory_mb",
                                    &format!(
                                        "{mb} MiB is below the minimum of {MIN_MEMORY_MB} MiB"
                                    ),
                                );
                            }
                        }
                        need(
                            s.plan.max_tests != Some(0),
                            "tests.plan.max_tests",
                            "must be positive",
                        );
                    }
                    CodeTests::Call(c) => {
                        need(
                            !c.cases.is_empty(),
                            "tests.cases",
                            "must hold at least one case",
                        );
                        need(
                            is_identifier(&c.entry_point),
                            "tests.entry_point",
                            "must be a Python identifier",
                        );
                        need(
                            c.float_tolerance.is_none_or(|t| t.is_finite() && t >= 0.0),
                            "tests.float_tolerance",
                            "must be a finite non-negative number",
                        );
                        need(
                            c.plan.max_tests != Some(0),
                            "tests.plan.max_tests",
                            "must be positive",
                        );
                    }
                }
                need(
                    t.time_limit_ms != Some(0),
                    "time_limit_ms",
                    "must be positive",
                );
                if let Some(mb) = t.memory_mb {
                    need(
                        mb >= MIN_MEMORY_MB,
                        "memory_mb",
                        &format!(
                            "{mb} MiB is below the interpreter's minimum of {MIN_MEMORY_MB} MiB"
                        ),
                    );
                }
            }
        }
        out
    }
}

/// Why a countdown reference is not a solution, or `None` when it is one.
pub fn countdown_reference_problem(
    reference: &str,
    numbers: &[i64],
    target: i64,
    use_all: bool,
) -> Option<String> {
    let expr = match Expr::parse(reference) {
        Ok(e) => e,
        Err(e) => return Some(format!("does not parse: {e}")),
    };
    match expr::check_usage(&expr.literals(), numbers, use_all) {
        Usage::Valid => {}
        Usage::NotAvailable(n) => return Some(format!("uses {n}, which is not available")),
        Usage::Unused(left) => {
            return Some(format!("leaves {left:?} unused although all must be used"));
        }
    }
    match expr.eval() {
        Ok(v) if v == num_rational::BigRational::from_integer(target.into()) => None,
        Ok(v) => Some(format!("evaluates to {v}, not the target {target}")),
        Err(e) => Some(format!("does not evaluate: {e}")),
    }
}

/// Whether `s` is a Python identifier (ASCII or Unicode letters, digits, underscores; not
/// starting with a digit).
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::Language;

    fn code(extra: &str) -> Task {
        serde_json::from_str(&format!(
            r#"{{"id":"c","kind":"code","prompt":"p","language":"python","mode":"full","tests":{{"type":"stdio","cases":[{{"stdin":"","stdout":"1"}}]}}{extra}}}"#
        ))
        .unwrap()
    }

    #[test]
    fn limits_are_checked_on_the_typed_task() {
        assert!(code("").validate().is_empty());
        assert!(
            code(r#","time_limit_ms":1,"memory_mb":32"#)
                .validate()
                .is_empty()
        );
        let problems = code(r#","time_limit_ms":0,"memory_mb":16"#).validate();
        let fields: Vec<&str> = problems.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(fields, ["time_limit_ms", "memory_mb"]);
        assert!(problems[1].message.contains("16 MiB"), "{}", problems[1]);
    }

    #[test]
    fn languages_parse_by_sandbox_fusion_names_and_take_stdio_tests() {
        for (name, language) in [
            ("cpp", Language::Cpp),
            ("c++", Language::Cpp),
            ("c", Language::C),
            ("nodejs", Language::Javascript),
            ("javascript", Language::Javascript),
            ("typescript", Language::Typescript),
            ("ts", Language::Typescript),
        ] {
            let task: Task = serde_json::from_str(&format!(
                r#"{{"id":"c","kind":"code","prompt":"p","language":"{name}","mode":"full","tests":{{"type":"stdio","cases":[{{"stdin":"","stdout":"1"}}]}}}}"#
            ))
            .unwrap();
            let Task::Code(t) = &task else { panic!() };
            assert_eq!(t.language, language, "{name}");
            assert!(task.validate().is_empty(), "{name}");
            assert_eq!(Language::parse(name), Some(language));
        }
        let task: Task = serde_json::from_str(
            r#"{"id":"c","kind":"code","prompt":"p","language":"cpp","mode":"full","tests":{"type":"assert","code":"assert(f() == 1);"}}"#,
        )
        .unwrap();
        let fields: Vec<String> = task.validate().into_iter().map(|p| p.field).collect();
        assert_eq!(fields, ["tests.type"]);
        assert!(serde_json::from_str::<Task>(r#"{"id":"c","kind":"code","prompt":"p","language":"cobol","mode":"full","tests":{"type":"stdio","cases":[]}}"#).is_err());
    }

    #[test]
    fn identifiers() {
        for (name, ok) in [
            ("f", true),
            ("_a1", true),
            ("maxSum", true),
            ("1a", false),
            ("", false),
            ("a-b", false),
        ] {
            assert_eq!(is_identifier(name), ok, "{name}");
        }
    }
}
