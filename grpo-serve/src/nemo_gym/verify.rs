//! `POST /verify`: NeMo Gym's verify request (`responses_create_params`, the OpenAI
//! Responses `response`, the row's fields) answered with the same body and `reward` added,
//! the response's `output_text` scored against the row by the service's scorer. A math row's
//! answer also carries what `math_with_judge`'s response model requires: `library_reward`
//! (the symbolic checker's accuracy), `extracted_answer` and `judge_evaluations` (null: no
//! judge is asked).

use axum::Json;
use axum::extract::State;
use serde_json::{Map, Value};

use super::{output_text, row};
use crate::error::{ApiError, JsonBody};
use crate::{AppState, admit};

/// Scores one rollout. A request that is not NeMo Gym's (no `response`, no
/// `responses_create_params`, a row of no known shape) is a 422 naming the field; a scoring
/// fault is a 503, never a reward.
pub(crate) async fn verify(
    State(state): State<AppState>,
    JsonBody(mut body): JsonBody<Map<String, Value>>,
) -> Result<Json<Value>, ApiError> {
    match body.get("responses_create_params") {
        Some(Value::Object(_)) => {}
        Some(_) => {
            return Err(ApiError::invalid(
                "`responses_create_params` must be an object",
            ));
        }
        None => return Err(ApiError::invalid("`responses_create_params` is missing")),
    }
    let response = body.get("response").ok_or_else(|| {
        ApiError::invalid("`response` is missing: it holds the rollout to verify")
    })?;
    let completion = output_text::output_text(response)?;
    let prepared = row::prepare(&body)?;
    let runs = prepared.sandbox_runs(1);
    if runs > state.config.max_sandbox_runs {
        return Err(ApiError::invalid(format!(
            "this row needs {runs} sandbox runs; the limit is {}",
            state.config.max_sandbox_runs
        )));
    }
    let _admitted = admit(&state, state.config.queue_wait).await?;
    let options = state.score_options(&prepared);
    let results = state
        .scorer
        .score_group(&prepared.task, std::slice::from_ref(&completion), &options)
        .await
        .map_err(|e| ApiError::from_scoring(e, prepared.task.id(), "/verify"))?;
    let result = results
        .into_iter()
        .next()
        .ok_or_else(|| ApiError::Internal {
            reason: "the scorer gave no result".into(),
        })?;
    state.metrics.add_sandbox_runs(runs);
    state.metrics.record_verdict(result.verdict.kind);
    body.insert("reward".to_owned(), Value::from(result.reward));
    if body.contains_key("expected_answer") && !body.contains_key("task") {
        // The fields `math_with_judge`'s response model requires: the symbolic checker's
        // reward, no judge (and no extracted answer to report).
        let accuracy = result.components.accuracy.unwrap_or(0.0);
        body.insert("library_reward".to_owned(), Value::from(accuracy));
        body.entry("extracted_answer").or_insert(Value::Null);
        body.entry("judge_evaluations").or_insert(Value::Null);
    }
    Ok(Json(Value::Object(body)))
}
