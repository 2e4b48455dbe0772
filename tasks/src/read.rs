//! Reading one task from JSON, naming the field at fault.
//!
//! The serde types in [`crate::task`] are the only schema. Serde's derived errors say *what*
//! is wrong but, inside the `kind`- and `type`-tagged enums, not *where*; this module reads
//! the tag itself and deserializes the tagged struct with its path tracked
//! (`serde_path_to_error`), so a problem names its field as a dotted path
//! (`tests.cases[0].stdout`). The rules about values that types cannot say are
//! [`Task::validate`]'s.
//!
//! ```
//! use grpo_tasks::read::task_from_str;
//! let err = task_from_str(r#"{"id":"x","kind":"code","prompt":"p","language":"python",
//!     "mode":"full","tests":{"type":"stdio","cases":[{"stdin":"1"}]}}"#).unwrap_err();
//! assert_eq!(err.field.as_deref(), Some("tests.cases[0].stdout"));
//! assert!(err.message.contains("missing field `stdout`"));
//! ```

use std::fmt;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::task::{AssertTests, CallTests, CodeTask, CountdownTask, MathTask, StdioTests, Task};

/// Why a JSON value is not a task: the field (a dotted path; `None` for the whole value) and
/// what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    /// The field at fault, as a dotted path (`alternatives[1]`, `tests.type`).
    pub field: Option<String>,
    /// What is wrong, in serde's words where serde found it.
    pub message: String,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(f, "field `{field}`: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for SchemaError {}

impl SchemaError {
    fn at(field: impl Into<String>, message: impl Into<String>) -> Self {
        SchemaError {
            field: Some(field.into()),
            message: message.into(),
        }
    }

    /// The same error one level down, under `parent`.
    fn under(self, parent: &str) -> Self {
        let field = match self.field {
            Some(f) if f.starts_with('[') => format!("{parent}{f}"),
            Some(f) => format!("{parent}.{f}"),
            None => parent.to_owned(),
        };
        SchemaError {
            field: Some(field),
            message: self.message,
        }
    }
}

/// Reads a task from one line of JSON text.
pub fn task_from_str(text: &str) -> Result<Task, SchemaError> {
    let value: Value = serde_json::from_str(text).map_err(|e| SchemaError {
        field: None,
        message: format!("broken JSON at column {}: {e}", e.column()),
    })?;
    task_from_value(value)
}

/// Reads a task from a JSON value: the first schema problem found, with its field.
pub fn task_from_value(value: Value) -> Result<Task, SchemaError> {
    let mut obj = match value {
        Value::Object(obj) => obj,
        other => {
            return Err(SchemaError {
                field: None,
                message: format!("a task must be a JSON object, found {}", json_type(&other)),
            });
        }
    };
    let kind = tag(&mut obj, "kind")?;
    let rest = Value::Object(obj);
    match kind.as_str() {
        "math" => typed::<MathTask>(rest).map(Task::Math),
        "countdown" => typed::<CountdownTask>(rest).map(Task::Countdown),
        "code" => {
            let tests = rest.get("tests").cloned();
            typed::<CodeTask>(rest)
                .map(Task::Code)
                .map_err(|e| match tests {
                    // Inside the `type`-tagged tests serde loses the path: find it again.
                    Some(tests) if e.field.as_deref().is_some_and(|f| f.starts_with("tests")) => {
                        tests_problem(tests).unwrap_or(e)
                    }
                    _ => e,
                })
        }
        other => Err(SchemaError::at(
            "kind",
            format!("unknown kind `{other}` (expected math, code or countdown)"),
        )),
    }
}

/// The problem inside a code task's `tests` object, with its full path; `None` when the
/// object reads fine on its own.
fn tests_problem(tests: Value) -> Option<SchemaError> {
    let Value::Object(mut obj) = tests else {
        return Some(SchemaError::at(
            "tests",
            format!("expected a tests object, found {}", json_type(&tests)),
        ));
    };
    let kind = match tag(&mut obj, "type") {
        Ok(kind) => kind,
        Err(e) => return Some(e.under("tests")),
    };
    let rest = Value::Object(obj);
    let problem = match kind.as_str() {
        "assert" => typed::<AssertTests>(rest).err(),
        "stdio" => typed::<StdioTests>(rest).err(),
        "call" => typed::<CallTests>(rest).err(),
        other => Some(SchemaError::at(
            "type",
            format!("unknown tests type `{other}` (expected assert, stdio or call)"),
        )),
    };
    problem.map(|e| e.under("tests"))
}

/// Removes and returns the string tag `name` from `obj`.
fn tag(obj: &mut Map<String, Value>, name: &str) -> Result<String, SchemaError> {
    match obj.remove(name) {
        Some(Value::String(tag)) => Ok(tag),
        Some(other) => Err(SchemaError::at(
            name,
            format!("expected a string, found {}", json_type(&other)),
        )),
        None => Err(SchemaError::at(name, format!("missing field `{name}`"))),
    }
}

/// Deserializes `value` as `T`, naming the field of the first problem.
fn typed<T: DeserializeOwned>(value: Value) -> Result<T, SchemaError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let message = e.inner().to_string();
        let path = e.path().to_string();
        let parent = (path != ".").then_some(path);
        // serde reports a missing field at its parent object; name the field itself.
        let missing = message
            .strip_prefix("missing field `")
            .and_then(|m| m.strip_suffix('`'));
        let field = match (parent, missing) {
            (Some(parent), Some(name)) => Some(format!("{parent}.{name}")),
            (None, Some(name)) => Some(name.to_owned()),
            (parent, None) => parent,
        };
        SchemaError { field, message }
    })
}

/// A value's JSON type, with the value when it is short.
pub(crate) fn json_type(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("{b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) if s.chars().count() > 20 => "a string".into(),
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field_of(text: &str) -> Option<String> {
        task_from_str(text).unwrap_err().field
    }

    #[test]
    fn round_trip_of_every_kind_reads_back_equal() {
        for line in [
            r#"{"id":"m","kind":"math","prompt":"p","answer":"1","alternatives":["1.0"]}"#,
            r#"{"id":"c","kind":"countdown","prompt":"p","numbers":[1,2],"target":3,"use_all":false}"#,
            r#"{"id":"s","kind":"code","prompt":"p","language":"python","mode":"full","tests":{"type":"stdio","cases":[{"stdin":"1","stdout":"2"}],"float_tolerance":0.001},"memory_mb":64}"#,
            r#"{"id":"a","kind":"code","prompt":"def f():","language":"python","mode":"prefix","tests":{"type":"assert","code":"assert f() == 1","entry_point":"f"}}"#,
            r#"{"id":"k","kind":"code","prompt":"p","language":"python","mode":"full","tests":{"type":"call","entry_point":"f","cases":[{"args":[1,[2]],"expected":{"a":1}}]}}"#,
        ] {
            let task = task_from_str(line).unwrap();
            // The same types read through serde's own tagged enum agree.
            assert_eq!(task, serde_json::from_str::<Task>(line).unwrap());
            let again = serde_json::to_string(&task).unwrap();
            assert_eq!(task_from_str(&again).unwrap(), task, "{again}");
        }
    }

    #[test]
    fn tagged_enums_keep_the_path() {
        let code = |tests: &str| {
            format!(
                r#"{{"id":"x","kind":"code","prompt":"p","language":"python","mode":"full","tests":{tests}}}"#
            )
        };
        let cases = [
            (code(r#"{"cases":[]}"#), "tests.type"),
            (code(r#"{"type":3}"#), "tests.type"),
            (code(r#"{"type":"fuzz"}"#), "tests.type"),
            (code(r#"[1]"#), "tests"),
            (code(r#"{"type":"call","cases":[]}"#), "tests.entry_point"),
            (
                code(r#"{"type":"call","entry_point":"f","cases":[{"args":1,"expected":1}]}"#),
                "tests.cases[0].args",
            ),
            (
                code(r#"{"type":"stdio","cases":[],"float_tolerance":"x"}"#),
                "tests.float_tolerance",
            ),
        ];
        for (line, field) in cases {
            assert_eq!(field_of(&line).as_deref(), Some(field), "{line}");
        }
        assert_eq!(
            field_of(r#"{"id":"x","prompt":"p","answer":"1"}"#).as_deref(),
            Some("kind")
        );
        assert_eq!(field_of(r#"[1]"#), None);
    }
}
