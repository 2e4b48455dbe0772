//! Interpreter sessions over HTTP: a Python interpreter that keeps its globals from one call
//! to the next ([`grpo_sandbox::Session`]), for code-interpreter tools in multi-turn rollouts
//! run by a trainer in another process.
//!
//! | route | what |
//! |---|---|
//! | `POST /v1/sessions` | `{"language": "python", "limits": {…}}` → 201 `{"id", "language", "limits", "idle_ttl_ms"}` |
//! | `POST /v1/sessions/{id}/run` | `{"code": …}` → a run result: `status`, `stdout`, `stderr`, `exit_code`, `duration_ms`, `truncated` |
//! | `DELETE /v1/sessions/{id}` | closes the session and frees its interpreter → `{"id", "closed": true, "stats"}` |
//!
//! `limits` may set `time_limit_ms`, `wall_limit_ms`, `memory_mb`, `output_bytes` (each call;
//! memory for the whole session), `session_cpu_ms` and `lifetime_ms`; each is clamped to the
//! service's maxima ([`SessionConfig::clamp`]), as `/run_code` clamps its limits. A program's
//! faults (an exception, a timeout, an output flood) are the call's `status`, answered 200;
//! after a timeout the next call starts a fresh interpreter (the answer's `stderr` says so).
//!
//! A session lives until it is deleted, idles for `idle_ttl`, outlives its lifetime, or spends
//! its CPU budget. A background task reaps idle and expired sessions and frees their
//! interpreters. An unknown id is 404; the id of a session closed for any of those reasons is
//! 410, naming the reason (the service remembers the most recent closed ids). At most
//! `max_sessions` are open at once: one more is refused with 429. Each open session holds
//! one of the sandbox's live instance slots, so keep `max_sessions` below them (32 by
//! default, less the workers' needs).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use grpo_rewards::code::LimitCaps;
use grpo_rewards::result::RunResult;
use grpo_sandbox::{Sandbox, SandboxError, Session, SessionLimits, SessionStats};
use serde::{Deserialize, Serialize};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::{ApiError, JsonBody};
use crate::metrics::Metrics;
use crate::{AppState, admit};

/// How the service keeps interpreter sessions.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionConfig {
    /// Sessions open at once; one more is answered 429.
    pub max_sessions: usize,
    /// A session unused for this long is closed and freed.
    pub idle_ttl: Duration,
    /// The longest a session may live from its opening (a request's `lifetime_ms` may ask
    /// for less).
    pub max_lifetime: Duration,
    /// A session's limits when its request sets none. `session_cpu_ms` and `output_bytes`
    /// are also the most a request may ask for; its time and memory are capped by the
    /// service's `max_run_timeout_s` and `max_memory_mb`; its lifetime is `max_lifetime`
    /// (`lifetime_ms` here is not used).
    pub limits: SessionLimits,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            max_sessions: 16,
            idle_ttl: Duration::from_secs(300),
            max_lifetime: Duration::from_secs(1800),
            limits: SessionLimits::default(),
        }
    }
}

impl SessionConfig {
    /// The limits of a session that asks for `ask`, each clamped to the service's maxima
    /// (`caps` for time and memory). Errors: a value the sandbox cannot run (such as 0).
    pub fn clamp(&self, ask: &LimitsRequest, caps: LimitCaps) -> Result<SessionLimits, ApiError> {
        let base = &self.limits;
        let lifetime_cap = u64::try_from(self.max_lifetime.as_millis()).unwrap_or(u64::MAX);
        let asked = grpo_rewards::code::Limits {
            time_limit_ms: ask.time_limit_ms.unwrap_or(base.call.time_limit_ms),
            // A time limit asked for without a wall clock takes the default wall clock for it.
            wall_limit_ms: match (ask.wall_limit_ms, ask.time_limit_ms) {
                (Some(ms), _) => Some(ms),
                (None, Some(_)) => None,
                (None, None) => base.call.wall_limit_ms,
            },
            memory_mb: ask.memory_mb.unwrap_or(base.call.memory_mb),
            output_bytes: ask
                .output_bytes
                .map_or(base.call.output_bytes, |b| b.min(base.call.output_bytes)),
            file_quota_bytes: base.call.file_quota_bytes,
        };
        let limits = SessionLimits {
            call: asked.capped(caps),
            session_cpu_ms: ask
                .session_cpu_ms
                .map_or(base.session_cpu_ms, |ms| ms.min(base.session_cpu_ms)),
            lifetime_ms: ask.lifetime_ms.unwrap_or(lifetime_cap).min(lifetime_cap),
        };
        limits
            .validate()
            .map_err(|e| ApiError::invalid(format!("`limits`: {e}")))?;
        Ok(limits)
    }
}

/// The body of `POST /v1/sessions`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenRequest {
    /// The interpreter's language: `python` (the default).
    #[serde(default)]
    pub language: Option<String>,
    /// Limits asked for (each clamped to the service's maxima).
    #[serde(default)]
    pub limits: LimitsRequest,
}

/// The limits a `POST /v1/sessions` request may ask for; absent ones take the service's.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsRequest {
    /// CPU time of one call, in milliseconds.
    pub time_limit_ms: Option<u64>,
    /// Wall clock of one call, in milliseconds (default: three times `time_limit_ms`).
    pub wall_limit_ms: Option<u64>,
    /// The interpreter's memory, in MiB.
    pub memory_mb: Option<u64>,
    /// The cap on each of stdout and stderr of one call, in bytes.
    pub output_bytes: Option<usize>,
    /// CPU time of all calls together, in milliseconds.
    pub session_cpu_ms: Option<u64>,
    /// How long the session may live, in milliseconds.
    pub lifetime_ms: Option<u64>,
}

/// The answer to `POST /v1/sessions`.
#[derive(Debug, Clone, Serialize)]
pub struct Opened {
    /// The session's id, for the other routes.
    pub id: String,
    /// `python`.
    pub language: &'static str,
    /// The limits in effect, after clamping.
    pub limits: SessionLimits,
    /// How long the session may idle before it is closed, in milliseconds.
    pub idle_ttl_ms: u64,
}

/// The body of `POST /v1/sessions/{id}/run`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRequest {
    /// Python source to run in the session's namespace.
    pub code: String,
}

/// The answer to `DELETE /v1/sessions/{id}`.
#[derive(Debug, Clone, Serialize)]
pub struct Closed {
    /// The session's id.
    pub id: String,
    /// Always true.
    pub closed: bool,
    /// What the session did.
    pub stats: SessionStats,
}

/// One open session.
struct Entry {
    session: Arc<Session>,
    opened: Instant,
    lifetime: Duration,
    last_used: Mutex<Instant>,
    /// Calls being served now (a busy session is never idle).
    busy: AtomicUsize,
    /// The session's place under the cap, given back when the entry goes.
    _slot: OwnedSemaphorePermit,
}

impl Entry {
    fn touch(&self) {
        *self
            .last_used
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Instant::now();
    }

    fn idle_for(&self, now: Instant) -> Duration {
        now.saturating_duration_since(
            *self
                .last_used
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }
}

/// Counts a call as in progress until dropped (even when the client goes away).
struct Busy<'a>(&'a Entry);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.touch();
        self.0.busy.fetch_sub(1, Ordering::SeqCst);
    }
}

/// How many closed ids are remembered, to answer 410 rather than 404.
const REMEMBERED_CLOSED: usize = 4096;

/// The open sessions of a service, their cap, and the ids of recently closed ones.
pub(crate) struct Sessions {
    config: SessionConfig,
    slots: Arc<Semaphore>,
    open: Mutex<HashMap<String, Arc<Entry>>>,
    closed: Mutex<ClosedIds>,
    reaper: std::sync::Once,
    metrics: Arc<Metrics>,
}

#[derive(Default)]
struct ClosedIds {
    order: VecDeque<String>,
    reasons: HashMap<String, String>,
}

impl ClosedIds {
    fn remember(&mut self, id: String, reason: String) {
        if self.reasons.insert(id.clone(), reason).is_none() {
            self.order.push_back(id);
        }
        while self.order.len() > REMEMBERED_CLOSED {
            if let Some(old) = self.order.pop_front() {
                self.reasons.remove(&old);
            }
        }
    }
}

/// Why a session left the table, as counted in the metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Why {
    Deleted,
    Idle,
    Lifetime,
    Spent,
    Shutdown,
}

impl Why {
    fn label(self) -> &'static str {
        match self {
            Why::Deleted => "deleted",
            Why::Idle => "idle",
            Why::Lifetime => "lifetime",
            Why::Spent => "spent",
            Why::Shutdown => "shutdown",
        }
    }
}

impl Sessions {
    pub(crate) fn new(config: SessionConfig, metrics: Arc<Metrics>) -> Sessions {
        Sessions {
            slots: Arc::new(Semaphore::new(config.max_sessions)),
            config,
            open: Mutex::default(),
            closed: Mutex::default(),
            reaper: std::sync::Once::new(),
            metrics,
        }
    }

    fn table(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Entry>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The open session `id`: 404 when never seen, 410 when closed.
    fn get(&self, id: &str) -> Result<Arc<Entry>, ApiError> {
        if let Some(entry) = self.table().get(id) {
            return Ok(entry.clone());
        }
        let closed = self.closed.lock().unwrap_or_else(PoisonError::into_inner);
        match closed.reasons.get(id) {
            Some(reason) => Err(ApiError::SessionClosed {
                id: id.to_owned(),
                reason: reason.clone(),
            }),
            None => Err(ApiError::UnknownSession { id: id.to_owned() }),
        }
    }

    /// Takes `id` out of the table (when still there), remembers why, and frees its
    /// interpreter in the background (a call in progress finishes first).
    fn remove(&self, id: &str, why: Why, reason: String) -> Option<Arc<Entry>> {
        let entry = self.table().remove(id)?;
        tracing::debug!(session = id, reason = %reason, "interpreter session closed");
        self.closed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remember(id.to_owned(), reason);
        self.metrics.record_session_closed(why.label());
        let session = entry.session.clone();
        tokio::spawn(async move { session.close().await });
        Some(entry)
    }

    /// Closes every session unused for `idle_ttl` or past its lifetime.
    fn reap(&self) {
        let now = Instant::now();
        let expired: Vec<(String, Why, String)> = self
            .table()
            .iter()
            .filter_map(|(id, entry)| {
                if now.saturating_duration_since(entry.opened) >= entry.lifetime {
                    let ms = entry.lifetime.as_millis();
                    return Some((
                        id.clone(),
                        Why::Lifetime,
                        format!("its lifetime of {ms} ms is over"),
                    ));
                }
                let idle = self.config.idle_ttl;
                (entry.busy.load(Ordering::SeqCst) == 0 && entry.idle_for(now) >= idle).then(|| {
                    let ms = idle.as_millis();
                    (
                        id.clone(),
                        Why::Idle,
                        format!("it was idle for {ms} ms (the server's idle time-to-live)"),
                    )
                })
            })
            .collect();
        for (id, why, reason) in expired {
            self.remove(&id, why, reason);
        }
    }

    /// Starts the reaper on first use (a service may be built outside a runtime): it runs
    /// while the service lives.
    fn start_reaper(self: &Arc<Self>) {
        self.reaper.call_once(|| {
            let sessions: Weak<Sessions> = Arc::downgrade(self);
            let shortest = self.config.idle_ttl.min(self.config.max_lifetime);
            let every = (shortest / 4).clamp(Duration::from_millis(10), Duration::from_secs(1));
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(every);
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tick.tick().await;
                    let Some(sessions) = sessions.upgrade() else {
                        break;
                    };
                    sessions.reap();
                }
            });
        });
    }

    /// Closes every open session (the service is stopping).
    pub(crate) async fn close_all(&self) {
        let ids: Vec<String> = self.table().keys().cloned().collect();
        for id in ids {
            if let Some(entry) = self.remove(&id, Why::Shutdown, "the server shut down".into()) {
                entry.session.close().await;
            }
        }
    }

    async fn open(
        self: &Arc<Self>,
        sandbox: &Sandbox,
        limits: SessionLimits,
        wait: Duration,
    ) -> Result<String, ApiError> {
        self.start_reaper();
        // Expired sessions give their places back before the cap is judged.
        self.reap();
        let Ok(slot) = self.slots.clone().try_acquire_owned() else {
            self.metrics.record_session_refused();
            return Err(ApiError::TooManySessions {
                max: self.config.max_sessions,
            });
        };
        let lifetime = Duration::from_millis(limits.lifetime_ms);
        // The interpreter waits for one of the sandbox's live slots; not forever.
        let session = match tokio::time::timeout(wait, Session::open(sandbox, limits)).await {
            Ok(Ok(session)) => session,
            Ok(Err(SandboxError::InvalidLimit(e))) => {
                return Err(ApiError::invalid(format!("`limits`: {e}")));
            }
            Ok(Err(e)) => {
                tracing::error!(error = %e, "sandbox failure opening a session");
                return Err(ApiError::SandboxFault {
                    reason: e.to_string(),
                });
            }
            Err(_elapsed) => {
                return Err(ApiError::Overloaded {
                    waited_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                });
            }
        };
        let id = format!("{:032x}", rand::random::<u128>());
        let now = Instant::now();
        let entry = Entry {
            session: Arc::new(session),
            opened: now,
            lifetime,
            last_used: Mutex::new(now),
            busy: AtomicUsize::new(0),
            _slot: slot,
        };
        self.table().insert(id.clone(), Arc::new(entry));
        self.metrics.record_session_opened();
        Ok(id)
    }
}

/// `POST /v1/sessions`.
pub(crate) async fn open_handler(
    State(state): State<AppState>,
    JsonBody(request): JsonBody<OpenRequest>,
) -> Result<(StatusCode, Json<Opened>), ApiError> {
    let language = request.language.as_deref().unwrap_or("python");
    if !matches!(language.to_ascii_lowercase().as_str(), "python" | "python3") {
        return Err(ApiError::invalid(format!(
            "`language`: sessions run \"python\" only, not {language:?}"
        )));
    }
    let sessions = &state.sessions;
    let limits = sessions
        .config
        .clamp(&request.limits, state.config.caps())?;
    let _admitted = admit(&state, state.config.queue_wait).await?;
    let id = sessions
        .open(&state.sandbox, limits.clone(), state.config.queue_wait)
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(Opened {
            id,
            language: "python",
            limits,
            idle_ttl_ms: u64::try_from(sessions.config.idle_ttl.as_millis()).unwrap_or(u64::MAX),
        }),
    ))
}

/// `POST /v1/sessions/{id}/run`.
pub(crate) async fn run_handler(
    State(state): State<AppState>,
    Path(id): Path<String>,
    JsonBody(request): JsonBody<RunRequest>,
) -> Result<Json<RunResult>, ApiError> {
    let entry = state.sessions.get(&id)?;
    entry.busy.fetch_add(1, Ordering::SeqCst);
    let _busy = Busy(&entry);
    let wait = state.config.queue_wait.max(Duration::from_millis(
        entry.session.limits().call.wall_limit_ms(),
    ));
    let _admitted = admit(&state, wait).await?;
    // The call runs to its end even if the client goes away: a call cut midway would leave
    // the interpreter running it while the next call waits.
    let session = entry.session.clone();
    let ran = tokio::spawn(async move { session.run(&request.code).await })
        .await
        .map_err(|e| ApiError::Internal {
            reason: format!("session call failed: {e}"),
        })?;
    match ran {
        Ok(result) => {
            state.metrics.record_session_call(result.status.as_str());
            Ok(Json(result))
        }
        Err(SandboxError::SessionClosed { reason }) => {
            let why = if reason.contains("lifetime") {
                Why::Lifetime
            } else {
                Why::Spent
            };
            state.sessions.remove(&id, why, reason.clone());
            Err(ApiError::SessionClosed { id, reason })
        }
        Err(e) => {
            tracing::error!(session = %id, error = %e, "sandbox failure in a session call");
            Err(ApiError::SandboxFault {
                reason: e.to_string(),
            })
        }
    }
}

/// `DELETE /v1/sessions/{id}`.
pub(crate) async fn delete_handler(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Closed>, ApiError> {
    state.sessions.get(&id)?;
    let Some(entry) = state
        .sessions
        .remove(&id, Why::Deleted, "it was deleted".into())
    else {
        // Deleted by a request racing this one.
        return Err(state
            .sessions
            .get(&id)
            .err()
            .unwrap_or(ApiError::UnknownSession { id }));
    };
    entry.session.close().await;
    let stats = entry.session.stats().await;
    Ok(Json(Closed {
        id,
        closed: true,
        stats,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAPS: LimitCaps = LimitCaps {
        time_limit_ms: 10_000,
        memory_mb: 512,
    };

    #[test]
    fn asks_are_clamped_to_the_service_maxima() {
        let config = SessionConfig::default();
        let ask = LimitsRequest {
            time_limit_ms: Some(3_600_000),
            memory_mb: Some(1 << 20),
            output_bytes: Some(1 << 30),
            session_cpu_ms: Some(u64::MAX),
            lifetime_ms: Some(u64::MAX),
            ..LimitsRequest::default()
        };
        let limits = config.clamp(&ask, CAPS).expect("clamped");
        assert_eq!(limits.call.time_limit_ms, 10_000);
        assert_eq!(limits.call.memory_mb, 512);
        assert_eq!(limits.call.output_bytes, config.limits.call.output_bytes);
        assert_eq!(limits.session_cpu_ms, config.limits.session_cpu_ms);
        assert_eq!(limits.lifetime_ms, 1_800_000);
    }

    #[test]
    fn no_ask_takes_the_defaults_and_lower_asks_stand() {
        let config = SessionConfig::default();
        let limits = config
            .clamp(&LimitsRequest::default(), CAPS)
            .expect("defaults");
        // The same limits; the capped ones spell their wall clock out.
        assert_eq!(
            grpo_rewards::code::Limits {
                wall_limit_ms: None,
                ..limits.call.clone()
            },
            config.limits.call
        );
        assert_eq!(
            limits.call.wall_limit_ms(),
            config.limits.call.wall_limit_ms()
        );
        assert_eq!(limits.lifetime_ms, 1_800_000);
        let ask = LimitsRequest {
            time_limit_ms: Some(200),
            lifetime_ms: Some(1_000),
            ..LimitsRequest::default()
        };
        let limits = config.clamp(&ask, CAPS).expect("lower");
        assert_eq!(
            (
                limits.call.time_limit_ms,
                limits.call.wall_limit_ms(),
                limits.lifetime_ms
            ),
            (200, 200 * grpo_rewards::code::WALL_FACTOR, 1_000)
        );
    }

    #[test]
    fn unusable_asks_are_422_naming_the_field() {
        let ask = LimitsRequest {
            memory_mb: Some(1),
            ..LimitsRequest::default()
        };
        let err = SessionConfig::default().clamp(&ask, CAPS).unwrap_err();
        assert_eq!(err.status(), StatusCode::UNPROCESSABLE_ENTITY);
        assert!(err.to_string().contains("memory_mb"), "{err}");
    }

    #[test]
    fn closed_ids_are_remembered_up_to_a_bound() {
        let mut closed = ClosedIds::default();
        for i in 0..REMEMBERED_CLOSED + 10 {
            closed.remember(i.to_string(), "gone".into());
        }
        assert_eq!(closed.order.len(), REMEMBERED_CLOSED);
        assert!(!closed.reasons.contains_key("0"));
        assert!(
            closed
                .reasons
                .contains_key(&(REMEMBERED_CLOSED + 9).to_string())
        );
    }
}
