//! Why a reset, step or state of an OpenEnv environment failed, and how each failure is
//! answered: as an error frame on the WebSocket, as a status over HTTP.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};

use super::protocol::{ErrorCode, Issue, error_frame};
use crate::error::ApiError;

/// A failed environment call.
#[derive(Debug)]
pub(crate) enum EnvError {
    /// The action or the reset arguments break the schema (OpenEnv's validation error).
    Invalid(Vec<Issue>),
    /// A step came before any reset.
    NotReset,
    /// The service refused or failed the call (capacity, a closed interpreter, overload, a
    /// sandbox fault, a field naming nothing).
    Api(ApiError),
}

impl From<ApiError> for EnvError {
    fn from(e: ApiError) -> Self {
        EnvError::Api(e)
    }
}

impl EnvError {
    /// The message of the error.
    fn message(&self) -> String {
        match self {
            EnvError::Invalid(_) => "Invalid message".into(),
            EnvError::NotReset => "no episode: send a reset before the first step".into(),
            EnvError::Api(e) => e.to_string(),
        }
    }

    /// The error frame of a WebSocket session; `prefix` locates validation errors.
    pub(crate) fn frame(&self, max_sessions: usize) -> Value {
        let mut extra = Map::new();
        let code = match self {
            EnvError::Invalid(issues) => {
                extra.insert(
                    "errors".into(),
                    Value::Array(issues.iter().map(|i| i.to_json(&[])).collect()),
                );
                ErrorCode::ValidationError
            }
            EnvError::NotReset => ErrorCode::ExecutionError,
            EnvError::Api(ApiError::TooManySessions { max }) => {
                // Refused because every place is taken: the active sessions are the cap.
                extra.insert("active_sessions".into(), Value::from(*max));
                extra.insert("max_sessions".into(), Value::from(max_sessions));
                ErrorCode::CapacityReached
            }
            EnvError::Api(ApiError::SessionClosed { .. } | ApiError::UnknownSession { .. }) => {
                ErrorCode::SessionError
            }
            EnvError::Api(_) => ErrorCode::ExecutionError,
        };
        error_frame(code, &self.message(), extra)
    }

    /// The HTTP answer; `prefix` locates validation errors in the body (`["body"]` for a
    /// reset, `["body", "action"]` for a step), as FastAPI does.
    pub(crate) fn response(self, prefix: &[&str]) -> Response {
        match self {
            EnvError::Invalid(issues) => {
                let detail: Vec<Value> = issues.iter().map(|i| i.to_json(prefix)).collect();
                (
                    StatusCode::UNPROCESSABLE_ENTITY,
                    Json(serde_json::json!({ "detail": detail })),
                )
                    .into_response()
            }
            EnvError::Api(e) => e.into_response(),
            other => ApiError::invalid(other.message()).into_response(),
        }
    }
}
