//! The text of an OpenAI Responses `response` that NeMo Gym's verifiers score: the
//! `output_text` parts of its `message` items, joined, as the `output_text` property of
//! OpenAI's `Response` joins them. Reasoning items, tool calls and refusals are left out.

use serde_json::Value;

use crate::error::ApiError;

/// The `output_text` of `response` (the request's `response` field). Errors name the field
/// that breaks the Responses shape.
pub(crate) fn output_text(response: &Value) -> Result<String, ApiError> {
    let Value::Object(response) = response else {
        return Err(ApiError::invalid(
            "`response` must be an OpenAI Responses object",
        ));
    };
    let output = match response.get("output") {
        Some(Value::Array(items)) => items,
        Some(_) => return Err(ApiError::invalid("`response.output` must be a list")),
        None => return Err(ApiError::invalid("`response.output` is missing")),
    };
    let mut text = String::new();
    for (i, item) in output.iter().enumerate() {
        if item.get("type").and_then(Value::as_str) != Some("message") {
            continue;
        }
        let Some(Value::Array(content)) = item.get("content") else {
            return Err(ApiError::invalid(format!(
                "`response.output[{i}].content` must be a list"
            )));
        };
        for (j, part) in content.iter().enumerate() {
            if part.get("type").and_then(Value::as_str) != Some("output_text") {
                continue;
            }
            match part.get("text") {
                Some(Value::String(t)) => text.push_str(t),
                _ => {
                    return Err(ApiError::invalid(format!(
                        "`response.output[{i}].content[{j}].text` must be a string"
                    )));
                }
            }
        }
    }
    Ok(text)
}
