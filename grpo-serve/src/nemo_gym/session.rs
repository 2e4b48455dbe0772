//! `POST /seed_session` and `POST /close_session`. The service keeps no state per rollout,
//! so both acknowledge, in NeMo Gym's shapes:
//!
//! - an environment server's seed `{resources_session_id, episode_id, task_id, task_data}`
//!   is answered `{"resources_session_id": …}`; an agent's legacy seed (any other object) is
//!   answered `{}`;
//! - a close `{resources_session_id, episode_id}` is answered `{"resources_session_id": …}`,
//!   whether or not the session was seeded.

use axum::Json;
use serde_json::{Map, Value, json};

use crate::error::{ApiError, JsonBody};

/// `POST /seed_session`, either body form.
pub(crate) async fn seed(
    JsonBody(body): JsonBody<Map<String, Value>>,
) -> Result<Json<Value>, ApiError> {
    if !body.contains_key("resources_session_id") {
        return Ok(Json(json!({})));
    }
    let id = session_id(&body)?;
    required(&body, "episode_id")?;
    required(&body, "task_id")?;
    match body.get("task_data") {
        Some(Value::Object(_)) => {}
        Some(_) => return Err(ApiError::invalid("`task_data` must be an object")),
        None => return Err(ApiError::invalid("`task_data` is missing")),
    }
    Ok(Json(json!({ "resources_session_id": id })))
}

/// `POST /close_session`.
pub(crate) async fn close(
    JsonBody(body): JsonBody<Map<String, Value>>,
) -> Result<Json<Value>, ApiError> {
    let id = session_id(&body)?;
    required(&body, "episode_id")?;
    Ok(Json(json!({ "resources_session_id": id })))
}

/// The non-empty `resources_session_id`.
fn session_id(body: &Map<String, Value>) -> Result<&str, ApiError> {
    match body.get("resources_session_id") {
        Some(Value::String(id)) if !id.is_empty() => Ok(id),
        Some(_) => Err(ApiError::invalid(
            "`resources_session_id` must be a non-empty string",
        )),
        None => Err(ApiError::invalid("`resources_session_id` is missing")),
    }
}

/// A field that must be present and not null.
fn required(body: &Map<String, Value>, field: &str) -> Result<(), ApiError> {
    match body.get(field) {
        Some(Value::Null) | None => Err(ApiError::invalid(format!("`{field}` is missing"))),
        Some(_) => Ok(()),
    }
}
