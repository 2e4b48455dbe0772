//! `WS /ws`: one environment session per connection, OpenEnv's messages (`reset`, `step`,
//! `state`, `close`) answered one by one in order.
//!
//! The session is opened with the connection; when that is refused (the cap on sessions is
//! full) the server sends a `CAPACITY_REACHED` error frame and closes, as OpenEnv's server
//! does. A message that is not JSON, of an unknown type, or breaking the schema gets an error
//! frame and the session goes on. The session is closed, and its resources freed, when the
//! client sends `close`, when the connection closes, and when no message arrives for the
//! service's session idle time-to-live. Frames are capped at the service's body limit.

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::response::Response;
use serde_json::{Map, Value};
use tokio::time::Instant;

use super::env::{Env, EnvKind};
use super::error::EnvError;
use super::protocol::{ErrorCode, ResetArgs, error_frame, observation_frame, state_frame};
use crate::{AppState, ConnectionSlot};

/// `GET /ws`: upgrades to a WebSocket serving one session of `kind`.
/// The socket keeps its connection's slot (`slot`), so open WebSockets count toward
/// `max_connections` as the connections they came from did.
pub(crate) async fn upgrade(
    kind: EnvKind,
    state: AppState,
    upgrade: WebSocketUpgrade,
    slot: Option<ConnectionSlot>,
) -> Response {
    let limit = state.config.max_body_bytes;
    upgrade
        .max_message_size(limit)
        .max_frame_size(limit)
        .on_upgrade(move |socket| async move {
            let _slot = slot;
            serve(kind, state, socket).await
        })
}

/// What to do after a message.
enum Next {
    /// Send this frame and read the next message.
    Reply(Value),
    /// End the session.
    Close,
}

async fn serve(kind: EnvKind, state: AppState, mut socket: WebSocket) {
    let max_sessions = state.config.sessions.max_sessions;
    let mut env = match Env::open(kind, &state).await {
        Ok(env) => env,
        Err(e) => {
            tracing::debug!(env = kind.name(), error = ?e, "environment session refused");
            let _ = send(&mut socket, &e.frame(max_sessions)).await;
            let _ = socket.send(Message::Close(None)).await;
            return;
        }
    };
    let idle = state.config.sessions.idle_ttl;
    let mut deadline = Instant::now() + idle;
    loop {
        let message = match tokio::time::timeout_at(deadline, socket.recv()).await {
            Err(_idle) => {
                tracing::debug!(env = kind.name(), "environment session idle: closed");
                break;
            }
            Ok(None | Some(Err(_))) => break,
            Ok(Some(Ok(message))) => message,
        };
        let text = match message {
            Message::Text(text) => text.as_str().to_owned(),
            Message::Binary(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Message::Close(_) => break,
            // Keep-alives (answered by the WebSocket layer) do not count as use.
            Message::Ping(_) | Message::Pong(_) => continue,
        };
        match handle(&mut env, &state, &text).await {
            Next::Reply(frame) => {
                if send(&mut socket, &frame).await.is_err() {
                    break;
                }
            }
            Next::Close => break,
        }
        // Idle time counts from the answer: a step that ran longer than the time-to-live
        // was use, not idling.
        deadline = Instant::now() + idle;
    }
    env.close(&state).await;
    let _ = socket.send(Message::Close(None)).await;
}

async fn send(socket: &mut WebSocket, frame: &Value) -> Result<(), axum::Error> {
    socket.send(Message::Text(frame.to_string().into())).await
}

/// One message of the session.
async fn handle(env: &mut Env, state: &AppState, text: &str) -> Next {
    let max_sessions = state.config.sessions.max_sessions;
    let message: Value = match serde_json::from_str(text) {
        Ok(message) => message,
        Err(e) => {
            return Next::Reply(error_frame(
                ErrorCode::InvalidJson,
                &format!("Invalid JSON: {e}"),
                Map::new(),
            ));
        }
    };
    let kind = message.get("type").and_then(Value::as_str).unwrap_or("");
    let outcome = match kind {
        "reset" => match check_keys(&message, &["type", "data"]) {
            Err(e) => Err(e),
            Ok(()) => {
                let data = message
                    .get("data")
                    .cloned()
                    .unwrap_or(Value::Object(Map::new()));
                match ResetArgs::parse(&data) {
                    Ok(args) => env.reset(state, args).await.map(|r| observation_frame(&r)),
                    Err(issues) => Err(EnvError::Invalid(prefixed("data", issues))),
                }
            }
        },
        "step" => match (check_keys(&message, &["type", "data"]), message.get("data")) {
            (Err(e), _) => Err(e),
            (Ok(()), None) => Err(EnvError::Invalid(vec![super::protocol::Issue {
                kind: "missing",
                loc: vec!["data".into()],
                msg: "Field required".into(),
                input: message.clone(),
            }])),
            (Ok(()), Some(action)) => env.step(state, action).await.map(|r| observation_frame(&r)),
        },
        "state" => check_keys(&message, &["type"]).map(|()| state_frame(env.state())),
        "close" => return Next::Close,
        other => {
            return Next::Reply(error_frame(
                ErrorCode::UnknownType,
                &format!("Unknown message type: {other}"),
                Map::new(),
            ));
        }
    };
    Next::Reply(outcome.unwrap_or_else(|e| e.frame(max_sessions)))
}

/// A message with keys besides `allowed` breaks OpenEnv's message models (`extra="forbid"`).
fn check_keys(message: &Value, allowed: &[&str]) -> Result<(), EnvError> {
    let extra: Vec<super::protocol::Issue> = message
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(key, _)| !allowed.contains(&key.as_str()))
        .map(|(key, value)| super::protocol::Issue {
            kind: "extra_forbidden",
            loc: vec![key.clone()],
            msg: "Extra inputs are not permitted".into(),
            input: value.clone(),
        })
        .collect();
    if extra.is_empty() {
        Ok(())
    } else {
        Err(EnvError::Invalid(extra))
    }
}

/// Validation errors located under `field`.
fn prefixed(field: &str, issues: Vec<super::protocol::Issue>) -> Vec<super::protocol::Issue> {
    issues
        .into_iter()
        .map(|mut issue| {
            issue.loc.insert(0, field.to_owned());
            issue
        })
        .collect()
}
