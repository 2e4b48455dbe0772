//! OpenEnv environments: the service's interpreter sessions (and, with a task pack, its
//! tasks) behind OpenEnv's protocol, so that OpenEnv's own client
//! (`GenericEnvClient(base_url="http://HOST:PORT/openenv/python")`) and the trainers built on
//! it drive them unchanged.
//!
//! | route (under each environment's base) | what |
//! |---|---|
//! | `WS /ws` | one session per connection: `reset`, `step`, `state`, `close` messages ([`ws`]) |
//! | `POST /reset`, `POST /step` | stateless: a fresh session for the one call ([`http`]) |
//! | `GET /state` | a fresh session's state |
//! | `GET /schema`, `GET /metadata`, `GET /health` | the environment's description |
//!
//! Environments: `/openenv/python`, a Python interpreter ([`python`]), and, when the service
//! was given a task pack, `/openenv/tasks`, its tasks scored as `grpo score` scores them
//! ([`tasks`]). Everything runs through the service's own handlers, so the caps, idle
//! time-to-live, limits, admission, token and metrics of `/v1/sessions` and `/v1/score` hold
//! here as well.

mod env;
mod error;
mod http;
mod protocol;
mod python;
mod tasks;
#[cfg(test)]
mod tests;
mod ws;

use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{Request, State};
use axum::routing::{get, post};
use axum::{Extension, Router};
use serde_json::Value;

use crate::error::JsonBody;
use crate::{AppState, ConnectionSlot};
use env::EnvKind;
pub(crate) use tasks::TaskPack;

/// The routes under `/openenv`: `/tasks` only when the service has a task pack.
pub(crate) fn router(with_tasks: bool) -> Router<AppState> {
    let router = Router::new().nest("/python", routes(EnvKind::Python));
    if with_tasks {
        router.nest("/tasks", routes(EnvKind::Tasks))
    } else {
        router
    }
}

/// The routes of one environment, relative to its base.
fn routes(kind: EnvKind) -> Router<AppState> {
    Router::new()
        .route(
            "/ws",
            get(
                move |State(state): State<AppState>,
                      slot: Option<Extension<ConnectionSlot>>,
                      upgrade: WebSocketUpgrade| {
                    ws::upgrade(kind, state, upgrade, slot.map(|Extension(slot)| slot))
                },
            ),
        )
        .route(
            "/reset",
            post(move |State(state): State<AppState>, request: Request| {
                http::reset(kind, state, request)
            }),
        )
        .route(
            "/step",
            post(
                move |State(state): State<AppState>, body: JsonBody<Value>| {
                    http::step(kind, state, body)
                },
            ),
        )
        .route("/state", get(move || http::state(kind)))
        .route("/schema", get(move || http::schema(kind)))
        .route("/metadata", get(move || http::metadata(kind)))
        .route("/health", get(http::health))
}
