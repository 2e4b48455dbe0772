//! What the service answers when it cannot serve a request: one error type, one JSON shape
//! (`{"detail": <message>, "code": <machine-readable code>}`, `detail` as FastAPI and so
//! SandboxFusion write it), and the status of each case.

use axum::Json;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;

/// A request the service refuses or could not serve.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    /// The body is not JSON (400).
    #[error("malformed JSON body: {reason}")]
    MalformedJson {
        /// The parser's message, with line and column.
        reason: String,
    },
    /// The body is JSON but a field has the wrong type or value (422).
    #[error("invalid request: {reason}")]
    Invalid {
        /// What is wrong, naming the field.
        reason: String,
    },
    /// A language other than Python was asked for (422).
    #[error(
        "language {language:?} is not supported by this server; it runs \"python\", \"cpp\", \"c\", \"nodejs\" and \"typescript\""
    )]
    UnsupportedLanguage {
        /// The language asked for.
        language: String,
    },
    /// The body is larger than the configured limit (413).
    #[error("request body larger than the server's limit (`grpo serve --max-body-bytes`)")]
    TooLarge,
    /// The body did not arrive in full within the server's body read timeout (408).
    #[error(
        "the request body did not arrive within {timeout_ms} ms \
         (`grpo serve --body-read-timeout-ms`)"
    )]
    BodyTimeout {
        /// The timeout, in milliseconds.
        timeout_ms: u64,
    },
    /// The body could not be read (client went away, bad framing) (400).
    #[error("could not read the request body: {reason}")]
    Body {
        /// Why.
        reason: String,
    },
    /// The admission queue did not admit the request in time (504; clients retry).
    #[error("server overloaded: not admitted within {waited_ms} ms; retry later")]
    Overloaded {
        /// How long the request waited.
        waited_ms: u64,
    },
    /// A SandboxFusion route this server does not implement (501).
    #[error(
        "{route} is not implemented by this server (it serves /run_code, /v1/ping and /v1/score)"
    )]
    NotImplemented {
        /// The route.
        route: String,
    },
    /// No such route (404).
    #[error("no route {path}")]
    NotFound {
        /// The path asked for.
        path: String,
    },
    /// The sandbox failed while scoring (503; clients retry). Never reported as a 0 reward.
    #[error("the sandbox failed while scoring; retry: {reason}")]
    SandboxFault {
        /// What failed.
        reason: String,
    },
    /// The request lacks the service's bearer token, or carries another one (401).
    #[error(
        "this server requires a bearer token: send `Authorization: Bearer <token>` \
         (the token `grpo serve` was given with --auth-token-file or GRPO_AUTH_TOKEN)"
    )]
    Unauthorized,
    /// No open interpreter session has this id (404).
    #[error("no interpreter session {id}; open one with POST /v1/sessions")]
    UnknownSession {
        /// The id asked for.
        id: String,
    },
    /// The interpreter session was closed: deleted, expired, or its CPU budget spent (410).
    #[error("interpreter session {id} is closed: {reason}; open a new one with POST /v1/sessions")]
    SessionClosed {
        /// The session's id.
        id: String,
        /// Why it was closed.
        reason: String,
    },
    /// The cap on open interpreter sessions is reached (429; retry once one closes).
    #[error(
        "{max} interpreter sessions are open, the most this server keeps; \
         close one with DELETE /v1/sessions/{{id}} or retry later"
    )]
    TooManySessions {
        /// The cap.
        max: usize,
    },
    /// The server is shutting down (503).
    #[error("the server is shutting down")]
    ShuttingDown,
    /// A fault on our side (500).
    #[error("internal error: {reason}")]
    Internal {
        /// What failed.
        reason: String,
    },
}

impl ApiError {
    /// The HTTP status of this error.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::MalformedJson { .. } | ApiError::Body { .. } => StatusCode::BAD_REQUEST,
            ApiError::Invalid { .. } | ApiError::UnsupportedLanguage { .. } => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            ApiError::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::BodyTimeout { .. } => StatusCode::REQUEST_TIMEOUT,
            ApiError::Overloaded { .. } => StatusCode::GATEWAY_TIMEOUT,
            ApiError::NotImplemented { .. } => StatusCode::NOT_IMPLEMENTED,
            ApiError::NotFound { .. } | ApiError::UnknownSession { .. } => StatusCode::NOT_FOUND,
            ApiError::SessionClosed { .. } => StatusCode::GONE,
            ApiError::TooManySessions { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::ShuttingDown | ApiError::SandboxFault { .. } => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            ApiError::Internal { .. } => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The machine-readable code in the JSON body.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::MalformedJson { .. } => "malformed_json",
            ApiError::Invalid { .. } => "invalid_request",
            ApiError::UnsupportedLanguage { .. } => "unsupported_language",
            ApiError::TooLarge => "body_too_large",
            ApiError::BodyTimeout { .. } => "body_timeout",
            ApiError::Body { .. } => "bad_body",
            ApiError::Overloaded { .. } => "overloaded",
            ApiError::NotImplemented { .. } => "not_implemented",
            ApiError::NotFound { .. } => "not_found",
            ApiError::UnknownSession { .. } => "unknown_session",
            ApiError::SessionClosed { .. } => "session_closed",
            ApiError::TooManySessions { .. } => "too_many_sessions",
            ApiError::Unauthorized => "unauthorized",
            ApiError::ShuttingDown => "shutting_down",
            ApiError::SandboxFault { .. } => "sandbox_error",
            ApiError::Internal { .. } => "internal",
        }
    }

    /// An [`ApiError::Invalid`].
    pub fn invalid(reason: impl Into<String>) -> Self {
        ApiError::Invalid {
            reason: reason.into(),
        }
    }

    /// A scoring error of `task` on `route`: a fault is ours, not the completions' (answering
    /// 0 for it would corrupt the group's advantages), so it is a 503 clients retry, logged;
    /// anything else is internal. The one rule every scoring route follows.
    pub fn from_scoring(error: grpo_rewards::error::RewardError, task: &str, route: &str) -> Self {
        if error.is_fault() {
            tracing::error!(task, route, error = %error, "scoring fault");
            ApiError::SandboxFault {
                reason: error.to_string(),
            }
        } else {
            ApiError::Internal {
                reason: error.to_string(),
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "detail": self.to_string(), "code": self.code() });
        if self == ApiError::Unauthorized {
            // RFC 6750: a 401 names the scheme it wants.
            let challenge = [(axum::http::header::WWW_AUTHENTICATE, "Bearer")];
            return (self.status(), challenge, Json(body)).into_response();
        }
        if let ApiError::TooManySessions { .. } = self {
            let retry = [(axum::http::header::RETRY_AFTER, "1")];
            return (self.status(), retry, Json(body)).into_response();
        }
        (self.status(), Json(body)).into_response()
    }
}

/// A JSON body parsed with the service's own error answers: 400 for text that is not JSON,
/// 422 for JSON of the wrong shape (naming the field), 413 past the body limit, 408 when the
/// body is not in by the request's [`BodyDeadline`]. Unlike axum's `Json`, any content type
/// is accepted.
#[derive(Debug, Clone)]
pub struct JsonBody<T>(pub T);

/// When the body of a request must have arrived in full: set by the service when the
/// request's head is in, as a request extension that [`JsonBody`] honours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyDeadline {
    /// The instant the body must be in by.
    pub at: tokio::time::Instant,
    /// The timeout it was computed from, in milliseconds (reported in the 408).
    pub timeout_ms: u64,
}

impl BodyDeadline {
    /// The deadline `timeout` from now.
    pub fn after(timeout: std::time::Duration) -> Self {
        BodyDeadline {
            at: tokio::time::Instant::now() + timeout,
            timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        }
    }
}

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let deadline = req.extensions().get::<BodyDeadline>().copied();
        let read = bytes::Bytes::from_request(req, state);
        let read = match deadline {
            Some(deadline) => {
                tokio::time::timeout_at(deadline.at, read)
                    .await
                    .map_err(|_elapsed| ApiError::BodyTimeout {
                        timeout_ms: deadline.timeout_ms,
                    })?
            }
            None => read.await,
        };
        let bytes = read.map_err(|rejection| match &rejection {
            BytesRejection::FailedToBufferBody(_)
                if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE =>
            {
                ApiError::TooLarge
            }
            _ => ApiError::Body {
                reason: rejection.body_text(),
            },
        })?;
        parse_json(&bytes).map(JsonBody)
    }
}

/// Parses a JSON document, classifying the failure as 400 (syntax) or 422 (shape); a shape
/// error names the field as a path (`completions[0]: invalid type: …`).
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut json = serde_json::Deserializer::from_slice(bytes);
    let value: T = serde_path_to_error::deserialize(&mut json).map_err(|e| {
        let path = e.path().to_string();
        let e = e.into_inner();
        let shape = match e.classify() {
            serde_json::error::Category::Data => true,
            // serde_json reports some wrong types (a number where an enum's name goes) as
            // syntax; a document that parses as JSON, within the recursion limit, is well-formed.
            serde_json::error::Category::Syntax => {
                !e.to_string().starts_with("recursion limit")
                    && serde_json::from_slice::<serde_json::Value>(bytes).is_ok()
            }
            _ => false,
        };
        match (shape, path.as_str()) {
            (true, ".") => ApiError::invalid(e.to_string()),
            (true, path) => ApiError::invalid(format!("{path}: {e}")),
            (false, _) => ApiError::MalformedJson {
                reason: e.to_string(),
            },
        }
    })?;
    json.end().map_err(|e| ApiError::MalformedJson {
        reason: e.to_string(),
    })?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code, reason = "only deserialised, to exercise the error mapping")]
    struct Shape {
        code: String,
    }

    #[test]
    fn syntax_errors_are_400_and_shape_errors_422() {
        let cases: &[(&[u8], StatusCode)] = &[
            (b"{", StatusCode::BAD_REQUEST),
            (b"", StatusCode::BAD_REQUEST),
            (b"not json", StatusCode::BAD_REQUEST),
            // A lone surrogate escape is not a Unicode string.
            (br#"{"code": "\ud800"}"#, StatusCode::BAD_REQUEST),
            // Raw invalid UTF-8 inside a string.
            (b"{\"code\": \"\xff\xfe\"}", StatusCode::BAD_REQUEST),
            (br#"{"code": 5}"#, StatusCode::UNPROCESSABLE_ENTITY),
            (br#"{}"#, StatusCode::UNPROCESSABLE_ENTITY),
            (br#"[1]"#, StatusCode::UNPROCESSABLE_ENTITY),
        ];
        for (body, status) in cases {
            let err = parse_json::<Shape>(body).unwrap_err();
            assert_eq!(
                err.status(),
                *status,
                "{:?}: {err}",
                String::from_utf8_lossy(body)
            );
        }
        assert!(parse_json::<Shape>(br#"{"code": "x"}"#).is_ok());
    }

    #[test]
    fn invalid_names_the_field() {
        let err = parse_json::<Shape>(br#"{"code": 5}"#).unwrap_err();
        assert!(err.to_string().contains("expected a string"), "{err}");
        assert!(err.to_string().contains("code: "), "{err}");
        let err = parse_json::<Shape>(br#"{}"#).unwrap_err();
        assert!(err.to_string().contains("missing field `code`"), "{err}");
        // serde_json calls a number where an enum's name goes a syntax error; it is a 422.
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code, reason = "only deserialised, to exercise the error mapping")]
        enum Mode {
            Fast,
        }
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code, reason = "only deserialised, to exercise the error mapping")]
        struct WithMode {
            mode: Mode,
        }
        let err = parse_json::<WithMode>(br#"{"mode": 5}"#).unwrap_err();
        assert_eq!(err.status(), StatusCode::UNPROCESSABLE_ENTITY, "{err}");
        assert!(err.to_string().contains("mode: "), "{err}");
        // Trailing text after the document is a syntax error.
        let err = parse_json::<Shape>(br#"{"code": "x"} {"#).unwrap_err();
        assert_eq!(err.status(), StatusCode::BAD_REQUEST, "{err}");
    }
}
