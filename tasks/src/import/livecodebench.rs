//! LiveCodeBench's code-generation problems (`code_generation_lite`).
//!
//! `public_test_cases` is JSON text: a list of `{input, output, testtype}` with `testtype`
//! `stdin` or `functional`. `private_test_cases` is the same list, either as JSON text or
//! compressed: base64, then zlib, then a pickle of the JSON text. The pickle is read by
//! [`super::pickle`], which builds plain data only.
//!
//! LiveCodeBench grades on the public and the private cases together (`get_evaluation_sample`
//! in `lcb_runner/benchmarks/code_generation.py`), so every case decides the reward here too.
//! Stdin problems become stdio tests (public cases `public`, the plan counting them). Functional
//! problems are LeetCode-style: a `class Solution` method named by `metadata.func_name`, each
//! input line one JSON argument, the output the JSON of the result. They become assert tests
//! that call the method on a fresh `Solution()` for every case, public ones first, and compare
//! the result, tuples read as lists, with `==` (LiveCodeBench's own rule), refusing results
//! that are not plain data.

use std::io::Read;

use base64::Engine;
use serde_json::Value;

use super::{Record, short};
use crate::error::ImportError;
use crate::judging::{Compare, PublicTests, TestPlan};
use crate::task::{
    AssertTests, CodeMode, CodeTask, CodeTests, Language, StdioCase, StdioTests, Task,
};

/// Decompressed private tests larger than this are refused (a zlib bomb is small).
const MAX_DECOMPRESSED: u64 = 1 << 30;

struct Case {
    input: String,
    output: String,
    functional: bool,
    public: bool,
}

pub(super) fn livecodebench(r: &Record<'_>) -> Result<Task, ImportError> {
    let source_id = r.text("question_id")?;
    let mut cases = test_cases(r, "public_test_cases", true)?;
    cases.extend(test_cases(r, "private_test_cases", false)?);
    if cases.is_empty() {
        return Err(r.error("public_test_cases", "no test cases"));
    }
    let functional = cases[0].functional;
    if cases.iter().any(|c| c.functional != functional) {
        return Err(r.error(
            "private_test_cases",
            "mixes `stdin` and `functional` test cases",
        ));
    }
    let starter = r.opt_text("starter_code")?.filter(|s| !s.trim().is_empty());
    let tests = if functional {
        let func_name = match r.json("metadata")? {
            Some(m) => m
                .get("func_name")
                .and_then(Value::as_str)
                .filter(|f| super::foreign::is_identifier(f))
                .map(str::to_owned),
            None => None,
        }
        .ok_or_else(|| {
            r.error(
                "metadata.func_name",
                "a functional problem needs the method's name",
            )
        })?;
        let public_count = cases.iter().filter(|c| c.public).count();
        let mut calls = Vec::new();
        for (n, case) in cases.iter().enumerate() {
            // The error names the case by its place in its own field.
            let (field, i) = if case.public {
                ("public_test_cases", n)
            } else {
                ("private_test_cases", n - public_count)
            };
            let args = case
                .input
                .split('\n')
                .filter(|l| !l.trim().is_empty())
                .map(serde_json::from_str)
                .collect::<Result<Vec<Value>, _>>()
                .map_err(|e| {
                    r.error(
                        &format!("{field}[{i}].input"),
                        format!("a line is not JSON: {e}"),
                    )
                })?;
            let expected: Value = serde_json::from_str(case.output.trim())
                .map_err(|e| r.error(&format!("{field}[{i}].output"), format!("not JSON: {e}")))?;
            calls.push((args, expected));
        }
        CodeTests::Assert(AssertTests {
            code: live_code_bench_asserts(&func_name, &calls),
            entry_point: None,
        })
    } else {
        CodeTests::Stdio(StdioTests {
            cases: cases
                .into_iter()
                .map(|c| StdioCase {
                    stdin: c.input,
                    stdout: c.output,
                    public: c.public,
                })
                .collect(),
            compare: Compare::live_code_bench(),
            plan: TestPlan {
                public_tests: PublicTests::Always,
                ..TestPlan::default()
            },
            ..StdioTests::default()
        })
    };
    let mut prompt = r.text("question_content")?;
    if let Some(starter) = &starter {
        prompt.push_str(&format!(
            "\n\nUse this starter code:\n```python\n{}\n```\n",
            starter.trim_end()
        ));
    }
    let mut metadata = r.metadata("livecodebench", &source_id, None);
    for key in [
        "question_title",
        "platform",
        "contest_id",
        "contest_date",
        "difficulty",
    ] {
        if let Some(v) = r.fields.get(key).filter(|v| !v.is_null()) {
            metadata.insert(key.into(), v.clone());
        }
    }
    Ok(Task::Code(CodeTask {
        id: format!("livecodebench/{source_id}"),
        prompt,
        language: Language::Python,
        mode: CodeMode::Full,
        tests,
        reference: None,
        time_limit_ms: None,
        memory_mb: None,
        metadata: Some(metadata),
    }))
}

/// The cases of one field: JSON text, or (private tests) the compressed form.
fn test_cases(r: &Record<'_>, field: &str, public: bool) -> Result<Vec<Case>, ImportError> {
    let value = match r.fields.get(field) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::String(text)) if text.trim().is_empty() => return Ok(Vec::new()),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(v) => v,
            Err(_) => decompress(text).map_err(|m| r.error(field, m))?,
        },
        Some(other) => other.clone(),
    };
    let Value::Array(items) = value else {
        return Err(r.error(
            field,
            format!("expected a list of test cases, found {}", short(&value)),
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let text = |k: &str| {
                item.get(k)
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .ok_or_else(|| r.error(&format!("{field}[{i}].{k}"), "missing or not a string"))
            };
            let functional = match text("testtype")?.as_str() {
                "stdin" => false,
                "functional" => true,
                other => {
                    return Err(r.error(
                        &format!("{field}[{i}].testtype"),
                        format!("`{other}` is neither `stdin` nor `functional`"),
                    ));
                }
            };
            Ok(Case {
                input: text("input")?,
                output: text("output")?,
                functional,
                public,
            })
        })
        .collect()
}

/// base64 → zlib → pickle of a string → JSON.
fn decompress(text: &str) -> Result<Value, String> {
    let packed = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| format!("neither JSON nor base64: {e}"))?;
    let mut pickled = Vec::new();
    flate2::read::ZlibDecoder::new(packed.as_slice())
        .take(MAX_DECOMPRESSED + 1)
        .read_to_end(&mut pickled)
        .map_err(|e| format!("base64 but not zlib data: {e}"))?;
    if pickled.len() as u64 > MAX_DECOMPRESSED {
        return Err(format!(
            "decompresses to more than {MAX_DECOMPRESSED} bytes"
        ));
    }
    match super::pickle::loads(&pickled).map_err(|e| format!("compressed pickle: {e}"))? {
        Value::String(json) => {
            serde_json::from_str(&json).map_err(|e| format!("the pickled text is not JSON: {e}"))
        }
        other => Ok(other),
    }
}

/// Test code calling, as LiveCodeBench's grader does, `Solution().<name>(*args)` for each
/// case when the program defines a `Solution` class (LeetCode's form), else its module-level
/// function `<name>`, and comparing with `expected` after turning tuples into lists; a result
/// that is not plain data fails the test. Shared by the importers and the service's NeMo Gym
/// code rows.
pub fn live_code_bench_asserts(name: &str, cases: &[(Vec<Value>, Value)]) -> String {
    let literal = |v: &Value| {
        let text = serde_json::to_string(v).unwrap_or_else(|_| "null".into());
        format!(
            "_json.loads({})",
            serde_json::to_string(&text).unwrap_or_else(|_| "\"null\"".into())
        )
    };
    let name = serde_json::to_string(name).unwrap_or_default();
    let mut code = format!(
        r#"import json as _json


def _plain(value):
    kind = type(value)
    if kind is list or kind is tuple:
        return [_plain(v) for v in value]
    if kind is dict:
        return {{k: _plain(v) for k, v in value.items()}}
    if value is None or kind in (bool, int, float, str):
        return value
    raise AssertionError("the call returned a " + kind.__name__ + ", not plain data")


_callee = getattr(Solution(), {name}) if "Solution" in globals() else globals()[{name}]


def _case(args, expected):
    got = _plain(_callee(*args))
    assert got == expected, "expected " + repr(expected)[:120] + ", got " + repr(got)[:120]


"#
    );
    for (args, expected) in cases {
        code.push_str(&format!(
            "_case({}, {})\n",
            literal(&Value::Array(args.clone())),
            literal(expected)
        ));
    }
    code
}
