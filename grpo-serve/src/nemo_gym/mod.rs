//! NeMo Gym's resource-server routes, at the root (NeMo Gym composes `http://HOST:PORT` and
//! the route, and cannot use a prefix) and again under `/ng-rollout/{rollout_id}`, the prefix
//! its agents put before every call of a rollout they correlate.
//!
//! | route | what |
//! |---|---|
//! | `POST /verify` | a rollout (`responses_create_params`, the OpenAI Responses `response`, the row's fields) → the same with `reward` added ([`verify`]) |
//! | `POST /seed_session` | acknowledges a session; both of NeMo Gym's body forms ([`session`]) |
//! | `POST /close_session` | acknowledges the close ([`session`]) |
//! | `POST /aggregate_metrics` | the verify responses of a run → reward statistics per task and overall ([`aggregate`]) |
//!
//! A row is math (`expected_answer`, next to the `question`), code
//! (`verifier_metadata.unit_tests`, plain or packed) or a task in our pack schema (`task`);
//! see [`row`]. The text scored is the response's `output_text` ([`output_text`]). Scoring
//! is the service's own [`Scorer`](grpo_rewards::Scorer), with the admission, caps and
//! metrics of `/v1/score`; the server keeps no state per session.

mod aggregate;
mod call_tests;
mod output_text;
mod row;
mod session;
#[cfg(test)]
mod tests;
mod verify;

use axum::Router;
use axum::routing::post;

use crate::AppState;

/// The four routes, relative to the root or to a `/ng-rollout/{rollout_id}` prefix.
pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/seed_session", post(session::seed))
        .route("/close_session", post(session::close))
        .route("/verify", post(verify::verify))
        .route("/aggregate_metrics", post(aggregate::aggregate))
}
