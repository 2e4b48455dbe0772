//! Task shapes of other projects' data sets, converted to our schema: verl's `ground_truth`
//! and open-r1's `verification_info`. The HTTP service's `/v1/score` and the Python adapters
//! read them through these functions, so a foreign task means the same everywhere.
//!
//! - verl's `ground_truth`: a JSON object (or a string holding one) with `inputs`, `outputs`
//!   and optional `fn_name` is a code task (stdin/stdout cases; with `fn_name`, call cases
//!   whose arguments are the input's JSON lines, as verl's wrapper reads them); any other
//!   string or a number is a math answer;
//! - open-r1's `verification_info`: `{"language": "python", "test_cases": [{"input",
//!   "output", "type": "stdin_stdout"}]}` (or `test_cases` as a JSON string of the verl
//!   object); PrimeIntellect's `{"type": "function_call", "fn_name", "input": [args...],
//!   "output": [value]}` cases become call cases, the output unwrapped from its one-element
//!   list as APPS-derived data wraps it (see [`unwrap_apps_output`]).
//!
//! Errors name the field (`` `ground_truth.inputs` is missing ``). Tasks come without a prompt
//! (the foreign shapes carry none); `id` is the caller's.
//!
//! ```
//! use grpo_tasks::Task;
//! use grpo_tasks::import::foreign::from_ground_truth;
//! let task = from_ground_truth(&serde_json::json!({"inputs": ["1 2\n"], "outputs": ["3\n"]}), "t")?;
//! assert!(matches!(task, Task::Code(_)));
//! let math = from_ground_truth(&serde_json::json!("72"), "m")?;
//! assert!(matches!(math, Task::Math(m) if m.answer == "72"));
//! # Ok::<(), grpo_tasks::import::foreign::ForeignError>(())
//! ```

use serde_json::Value;

use crate::{
    CallCase, CallTests, CodeMode, CodeTask, CodeTests, Language, MathTask, StdioCase, StdioTests,
    Task,
};

/// A foreign task that cannot be converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ForeignError {
    /// The shape breaks its rules; the message names the field.
    #[error("{0}")]
    Invalid(String),
    /// open-r1's `language` names a language we do not run.
    #[error("language `{language}` is not supported")]
    UnsupportedLanguage {
        /// The language asked for.
        language: String,
    },
}

impl ForeignError {
    fn invalid(message: impl Into<String>) -> ForeignError {
        ForeignError::Invalid(message.into())
    }
}

/// verl's `ground_truth`: a code test object (or its JSON text), else a math answer.
pub fn from_ground_truth(gt: &Value, id: &str) -> Result<Task, ForeignError> {
    match gt {
        Value::Object(object) => code_from_in_outs(object, id, "ground_truth"),
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(object)) if object.contains_key("inputs") => {
                code_from_in_outs(&object, id, "ground_truth")
            }
            _ => Ok(math(id, text.clone())),
        },
        Value::Number(n) => Ok(math(id, n.to_string())),
        other => Err(ForeignError::invalid(format!(
            "`ground_truth` must be a string, a number or an object with `inputs` and `outputs`, got {}",
            kind(other)
        ))),
    }
}

/// open-r1's `verification_info`.
pub fn from_verification_info(info: &Value, id: &str) -> Result<Task, ForeignError> {
    let Value::Object(info) = info else {
        return Err(ForeignError::invalid(format!(
            "`verification_info` must be an object, got {}",
            kind(info)
        )));
    };
    let language = match info.get("language") {
        None => Language::Python,
        Some(language) => match language.as_str() {
            Some(name) => {
                Language::parse(name).ok_or_else(|| ForeignError::UnsupportedLanguage {
                    language: name.to_owned(),
                })?
            }
            None => {
                return Err(ForeignError::invalid(
                    "`verification_info.language` must be a string",
                ));
            }
        },
    };
    let mut task = code_from_cases(info, id)?;
    if let Task::Code(code) = &mut task {
        code.language = language;
    }
    Ok(task)
}

/// `verification_info.test_cases` as a Python task (the caller sets the language).
fn code_from_cases(info: &serde_json::Map<String, Value>, id: &str) -> Result<Task, ForeignError> {
    let cases = match info.get("test_cases") {
        Some(Value::String(text)) => serde_json::from_str::<Value>(text).map_err(|e| {
            ForeignError::invalid(format!(
                "`verification_info.test_cases` is a string but not JSON: {e}"
            ))
        })?,
        Some(other) => other.clone(),
        None => {
            return Err(ForeignError::invalid(
                "`verification_info.test_cases` is missing",
            ));
        }
    };
    match cases {
        Value::Object(object) => code_from_in_outs(&object, id, "verification_info.test_cases"),
        Value::Array(items) => {
            let mut stdio = Vec::with_capacity(items.len());
            let mut calls = Vec::new();
            let mut fn_name: Option<String> = None;
            for (i, item) in items.iter().enumerate() {
                let field = |name: &str| format!("`verification_info.test_cases[{i}].{name}`");
                let Value::Object(case) = item else {
                    return Err(ForeignError::invalid(format!(
                        "`verification_info.test_cases[{i}]` must be an object"
                    )));
                };
                let function_call = match case.get("type") {
                    None => false,
                    Some(t) if t.as_str() == Some("stdin_stdout") => false,
                    Some(t) if t.as_str() == Some("function_call") => true,
                    Some(t) => {
                        return Err(ForeignError::invalid(format!(
                            "{} {t} is not supported; only \"stdin_stdout\" and \"function_call\" are",
                            field("type")
                        )));
                    }
                };
                let input = case.get("input").ok_or_else(|| {
                    ForeignError::invalid(format!("{} is missing", field("input")))
                })?;
                let output = case.get("output").ok_or_else(|| {
                    ForeignError::invalid(format!("{} is missing", field("output")))
                })?;
                if function_call {
                    let name = match case.get("fn_name").or_else(|| info.get("fn_name")) {
                        Some(Value::String(name)) if is_identifier(name) => name.clone(),
                        _ => {
                            return Err(ForeignError::invalid(format!(
                                "{} must name the function (a Python identifier)",
                                field("fn_name")
                            )));
                        }
                    };
                    if fn_name.as_ref().is_some_and(|f| *f != name) {
                        return Err(ForeignError::invalid(format!(
                            "{} names another function than the cases before it",
                            field("fn_name")
                        )));
                    }
                    fn_name = Some(name);
                    calls.push(CallCase {
                        args: call_args(input, &field("input"))?,
                        expected: unwrap_apps_output(expected(output)),
                        ..Default::default()
                    });
                } else {
                    stdio.push(StdioCase {
                        stdin: text_of(input),
                        stdout: text_of(output),
                        ..Default::default()
                    });
                }
            }
            match fn_name {
                Some(_) if !stdio.is_empty() => Err(ForeignError::invalid(
                    "`verification_info.test_cases` mixes stdin_stdout and function_call cases",
                )),
                Some(entry_point) => Ok(code(
                    id,
                    CodeTests::Call(CallTests {
                        entry_point,
                        cases: calls,
                        ..Default::default()
                    }),
                )),
                None => Ok(code(
                    id,
                    CodeTests::Stdio(StdioTests {
                        cases: stdio,
                        float_tolerance: None,
                        ..Default::default()
                    }),
                )),
            }
        }
        other => Err(ForeignError::invalid(format!(
            "`verification_info.test_cases` must be a list of cases or an object, got {}",
            kind(&other)
        ))),
    }
}

/// `{"inputs": [...], "outputs": [...], "fn_name"?: str}` as a code task.
fn code_from_in_outs(
    object: &serde_json::Map<String, Value>,
    id: &str,
    at: &str,
) -> Result<Task, ForeignError> {
    let list = |name: &str| -> Result<&Vec<Value>, ForeignError> {
        match object.get(name) {
            Some(Value::Array(items)) => Ok(items),
            Some(other) => Err(ForeignError::invalid(format!(
                "`{at}.{name}` must be a list, got {}",
                kind(other)
            ))),
            None => Err(ForeignError::invalid(format!("`{at}.{name}` is missing"))),
        }
    };
    let (inputs, outputs) = (list("inputs")?, list("outputs")?);
    if inputs.len() != outputs.len() {
        return Err(ForeignError::invalid(format!(
            "`{at}` has {} inputs but {} outputs",
            inputs.len(),
            outputs.len()
        )));
    }
    if object
        .get("assert_case")
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|c| c.as_str() != Some("")))
    {
        return Err(ForeignError::invalid(format!(
            "`{at}.assert_case` is not supported"
        )));
    }
    let tests = match object.get("fn_name") {
        None | Some(Value::Null) => stdio_from_in_outs(inputs, outputs),
        Some(Value::String(name)) if is_identifier(name) => {
            let mut cases = Vec::with_capacity(inputs.len());
            for (i, (input, output)) in inputs.iter().zip(outputs).enumerate() {
                cases.push(CallCase {
                    args: call_args(input, &format!("`{at}.inputs[{i}]`"))?,
                    expected: expected(output),
                    ..Default::default()
                });
            }
            CodeTests::Call(CallTests {
                entry_point: name.clone(),
                cases,
                float_tolerance: None,
                ..Default::default()
            })
        }
        Some(other) => {
            return Err(ForeignError::invalid(format!(
                "`{at}.fn_name` must be a Python identifier, got {other}"
            )));
        }
    };
    Ok(code(id, tests))
}

/// Paired `inputs` and `outputs` (strings, or other JSON written as text) as stdio tests.
pub(crate) fn stdio_from_in_outs(inputs: &[Value], outputs: &[Value]) -> CodeTests {
    CodeTests::Stdio(StdioTests {
        cases: inputs
            .iter()
            .zip(outputs)
            .map(|(i, o)| StdioCase {
                stdin: text_of(i),
                stdout: text_of(o),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    })
}

/// APPS, TACO and the data sets derived from them write a call's expected value wrapped in a
/// one-element list (their checker accepts a result equal to the list or to its element). The
/// element is the value the function returns, so a one-element list is unwrapped; any other
/// value is kept. A function whose true result is itself a one-element list `[x]` is written
/// `[[x]]` there and unwraps to `[x]`, as it should.
pub fn unwrap_apps_output(value: Value) -> Value {
    match value {
        Value::Array(mut items) if items.len() == 1 => items.pop().unwrap_or(Value::Null),
        other => other,
    }
}

/// A call's arguments: a list as given, or (verl's convention) one JSON value per line.
pub(crate) fn call_args(input: &Value, at: &str) -> Result<Vec<Value>, ForeignError> {
    match input {
        Value::Array(args) => Ok(args.clone()),
        Value::String(text) => text
            .split('\n')
            .filter(|line| !line.trim().is_empty())
            .map(|line| {
                serde_json::from_str(line).map_err(|e| {
                    ForeignError::invalid(format!("{at}: line {line:?} is not a JSON value: {e}"))
                })
            })
            .collect(),
        other => Ok(vec![other.clone()]),
    }
}

/// An expected return value: JSON text is decoded, other text is the string itself.
pub(crate) fn expected(output: &Value) -> Value {
    match output {
        Value::String(text) => serde_json::from_str(text.trim()).unwrap_or_else(|_| output.clone()),
        other => other.clone(),
    }
}

/// Stdin or stdout text: strings as they are, a list of strings as lines, other JSON as text.
pub(crate) fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) if items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn math(id: &str, answer: String) -> Task {
    Task::Math(MathTask {
        id: id.to_owned(),
        prompt: String::new(),
        answer,
        alternatives: Vec::new(),
        metadata: None,
    })
}

fn code(id: &str, tests: CodeTests) -> Task {
    Task::Code(CodeTask {
        id: id.to_owned(),
        prompt: String::new(),
        language: Language::Python,
        mode: CodeMode::Full,
        tests,
        reference: None,
        time_limit_ms: None,
        memory_mb: None,
        metadata: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_and_expected_values() {
        assert_eq!(text_of(&json!("a\n")), "a\n");
        assert_eq!(text_of(&json!(["1 2", "3"])), "1 2\n3");
        assert_eq!(text_of(&json!(5)), "5");
        assert_eq!(expected(&json!("abc")), json!("abc"));
        assert_eq!(expected(&json!(" 3 ")), json!(3));
        assert_eq!(expected(&json!("\"x\"")), json!("x"));
        assert_eq!(expected(&json!([1])), json!([1]));
        assert!(
            is_identifier("_a1")
                && is_identifier("maxSum")
                && !is_identifier("1a")
                && !is_identifier("")
        );
    }
}
