//! The stateless HTTP routes of an environment, as OpenEnv defines them: `POST /reset` and
//! `POST /step` each build a fresh session, carry out the one call and close it; `GET
//! /state` is a fresh session's state; `GET /schema`, `GET /metadata` and `GET /health`
//! describe the environment.
//!
//! A body that breaks the schema is answered 422 with FastAPI's `{"detail": [{"type", "loc",
//! "msg", "input"}]}`; the service's own refusals keep their statuses and `{"detail",
//! "code"}` bodies (429 when the cap on sessions is full, 504 when overloaded, 401 without
//! the token).

use axum::Json;
use axum::extract::{FromRequest, Request};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use super::env::{Env, EnvKind};
use super::error::EnvError;
use super::protocol::{Issue, ResetArgs};
use crate::AppState;
use crate::error::JsonBody;

/// `POST /reset`: `{seed?, episode_id?, …}` (or no body) → the first observation.
pub(crate) async fn reset(kind: EnvKind, state: AppState, request: Request) -> Response {
    let empty = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .is_some_and(|v| v.as_bytes() == b"0");
    let body = if empty {
        Value::Object(Map::new())
    } else {
        match JsonBody::<Value>::from_request(request, &()).await {
            Ok(JsonBody(body)) => body,
            Err(e) => return e.into_response(),
        }
    };
    let args = match ResetArgs::parse(&body) {
        Ok(args) => args,
        Err(issues) => return EnvError::Invalid(issues).response(&["body"]),
    };
    let outcome = async {
        let mut env = Env::open(kind, &state).await?;
        let result = env.reset(&state, args).await;
        env.close(&state).await;
        result
    }
    .await;
    match outcome {
        Ok(result) => Json(result.to_json()).into_response(),
        Err(e) => e.response(&["body"]),
    }
}

/// `POST /step`: `{"action": {…}, "timeout_s"?, "request_id"?}` → the step's result, in a
/// fresh session.
pub(crate) async fn step(
    kind: EnvKind,
    state: AppState,
    JsonBody(body): JsonBody<Value>,
) -> Response {
    let action = match body.as_object().map(|b| b.get("action")) {
        Some(Some(action @ Value::Object(_))) => action.clone(),
        Some(Some(other)) => {
            return EnvError::Invalid(vec![Issue {
                kind: "dict_type",
                loc: vec!["action".into()],
                msg: "Input should be a valid dictionary".into(),
                input: other.clone(),
            }])
            .response(&["body"]);
        }
        Some(None) | None => {
            return EnvError::Invalid(vec![Issue {
                kind: "missing",
                loc: vec!["action".into()],
                msg: "Field required".into(),
                input: body.clone(),
            }])
            .response(&["body"]);
        }
    };
    match Env::stateless_step(kind, &state, &action).await {
        Ok(result) => Json(result.to_json()).into_response(),
        Err(e) => e.response(&["body", "action"]),
    }
}

/// `GET /state`: a fresh session's state.
pub(crate) async fn state(kind: EnvKind) -> Json<Value> {
    Json(kind.fresh_state())
}

/// `GET /schema`.
pub(crate) async fn schema(kind: EnvKind) -> Json<Value> {
    Json(kind.schema())
}

/// `GET /metadata`.
pub(crate) async fn metadata(kind: EnvKind) -> Json<Value> {
    Json(kind.metadata())
}

/// `GET /health`: OpenEnv's `{"status": "healthy"}`.
pub(crate) async fn health() -> Json<Value> {
    Json(json!({"status": "healthy"}))
}
