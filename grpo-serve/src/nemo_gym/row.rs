//! The row fields of a NeMo Gym verify request, as the task they stand for:
//!
//! - math (`math_with_judge`'s rows): `expected_answer` (a string or a number) is the
//!   reference answer; the `question` is not scored;
//! - code (`code_gen`'s rows, LiveCodeBench's format): `verifier_metadata.unit_tests`
//!   `{inputs, outputs, fn_name?}`, stdin/stdout cases or, with `fn_name`, calls of
//!   `Solution().fn_name` or the function `fn_name` ([`call_tests`](super::call_tests)), judged
//!   by the sandbox with binary credit (every test passes); also the packed form
//!   `{packed, fn_name?}`, where `packed` is base64 of zlib of the JSON `{inputs, outputs}`;
//! - our own task shape: `task`, a task of the pack schema.
//!
//! Each becomes a task as `/v1/score` builds it from verl's `ground_truth` or our `task`
//! ([`TaskShape`]), so a row means what the same answer or tests mean everywhere else.

use std::io::Read;

use base64::Engine;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::error::ApiError;
use crate::score::{PreparedScore, TaskShape};

/// LiveCodeBench's unit tests, as `code_gen` reads them.
#[derive(Debug, Deserialize)]
struct UnitTests {
    inputs: Vec<String>,
    outputs: Vec<String>,
    #[serde(default)]
    fn_name: Option<String>,
}

/// The decoded text of a packed `unit_tests` larger than this is refused (a zlib bomb is
/// small on the wire).
const MAX_UNPACKED_BYTES: u64 = 64 << 20;

/// The task of a verify request's row, checked, with binary credit and no format reward.
pub(crate) fn prepare(body: &Map<String, Value>) -> Result<PreparedScore, ApiError> {
    if let Some(task) = body.get("task") {
        return TaskShape {
            task: Some(task),
            ..TaskShape::default()
        }
        .prepare("task", None, None);
    }
    if let Some(answer) = body.get("expected_answer") {
        if !(answer.is_string() || answer.is_number()) {
            return Err(ApiError::invalid(
                "`expected_answer` must be a string or a number",
            ));
        }
        return TaskShape {
            ground_truth: Some(answer),
            ..TaskShape::default()
        }
        .prepare("expected_answer", None, None);
    }
    if let Some(metadata) = body.get("verifier_metadata") {
        let tests = metadata.get("unit_tests").ok_or_else(|| {
            ApiError::invalid(
                "`verifier_metadata.unit_tests` is missing: it holds a code row's tests",
            )
        })?;
        let tests = unit_tests(tests)?;
        let ground_truth = json!({
            "inputs": tests.inputs,
            "outputs": tests.outputs,
            "fn_name": tests.fn_name,
        });
        let mut prepared = TaskShape {
            ground_truth: Some(&ground_truth),
            ..TaskShape::default()
        }
        .prepare("unit_tests", None, None)
        .map_err(|e| match e {
            ApiError::Invalid { reason } => {
                ApiError::invalid(format!("`verifier_metadata.unit_tests`: {reason}"))
            }
            other => other,
        })?;
        super::call_tests::as_live_code_bench(&mut prepared.task);
        return Ok(prepared);
    }
    Err(ApiError::invalid(
        "no row to verify against: give `expected_answer` (math), `verifier_metadata.unit_tests` (code) or `task` (a task of the pack schema)",
    ))
}

/// `unit_tests`, plain or packed, checked.
fn unit_tests(tests: &Value) -> Result<UnitTests, ApiError> {
    const FIELD: &str = "verifier_metadata.unit_tests";
    let plain = match tests.get("packed") {
        Some(packed) => {
            let packed = packed
                .as_str()
                .ok_or_else(|| ApiError::invalid(format!("`{FIELD}.packed` must be a string")))?;
            let mut decoded = unpack(packed)
                .map_err(|reason| ApiError::invalid(format!("`{FIELD}.packed`: {reason}")))?;
            if let (Value::Object(decoded), Some(name)) = (&mut decoded, tests.get("fn_name")) {
                decoded.insert("fn_name".to_owned(), name.clone());
            }
            decoded
        }
        None => tests.clone(),
    };
    let tests: UnitTests =
        serde_json::from_value(plain).map_err(|e| ApiError::invalid(format!("`{FIELD}`: {e}")))?;
    if tests.inputs.len() != tests.outputs.len() {
        return Err(ApiError::invalid(format!(
            "`{FIELD}`: {} inputs but {} outputs",
            tests.inputs.len(),
            tests.outputs.len()
        )));
    }
    if tests.inputs.is_empty() {
        return Err(ApiError::invalid(format!("`{FIELD}` has no tests")));
    }
    Ok(tests)
}

/// base64 → zlib → JSON, as `code_gen` unpacks its tests.
fn unpack(packed: &str) -> Result<Value, String> {
    let compressed = base64::engine::general_purpose::STANDARD
        .decode(packed.trim())
        .map_err(|e| format!("not base64: {e}"))?;
    let mut text = Vec::new();
    flate2::read::ZlibDecoder::new(compressed.as_slice())
        .take(MAX_UNPACKED_BYTES + 1)
        .read_to_end(&mut text)
        .map_err(|e| format!("base64 but not zlib data: {e}"))?;
    if text.len() as u64 > MAX_UNPACKED_BYTES {
        return Err(format!("unpacks to more than {MAX_UNPACKED_BYTES} bytes"));
    }
    serde_json::from_slice(&text).map_err(|e| format!("unpacks to text that is not JSON: {e}"))
}
