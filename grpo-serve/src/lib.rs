//! The verifiers as an HTTP service: a drop-in SandboxFusion subset for verl, a batch
//! scoring endpoint for any trainer, and the operational endpoints a deployment needs.
//!
//! | route | what |
//! |---|---|
//! | `POST /run_code` | SandboxFusion's request and response shapes ([`run_code`]): Python, C, C++, JavaScript, TypeScript |
//! | `GET /v1/ping` | `"pong"` (SandboxFusion's health check) |
//! | `POST /v1/score` | one task + a group of completions → one scored result each ([`score`]) |
//! | `POST /get_reward` | OpenRLHF's remote reward model: `query`, `prompts`, `labels` → `rewards` ([`remote`]) |
//! | `POST /v1/reward` | slime's remote reward: `prompt`, `response`, `label` → the reward ([`remote`]) |
//! | `POST /v1/sessions` | opens a Python interpreter session that keeps its state across calls ([`sessions`]) |
//! | `POST /v1/sessions/{id}/run` | runs `{"code": …}` in the session → a run result |
//! | `DELETE /v1/sessions/{id}` | closes the session and frees its interpreter |
//! | `GET /healthz` | 200 while the process serves |
//! | `GET /readyz` | 200 when ready for work, 503 once shutdown began |
//! | `GET /metrics` | Prometheus text ([`metrics`]) |
//! | `/openenv/python/…`, `/openenv/tasks/…` | OpenEnv environments: interpreter sessions, and the tasks of `grpo serve --pack` (`openenv`) |
//! | `POST /verify`, `/seed_session`, `/close_session`, `/aggregate_metrics` | NeMo Gym's resource-server routes, also under `/ng-rollout/{rollout_id}` (`nemo_gym`) |
//! | other SandboxFusion routes | 501 with a message |
//!
//! Apart from interpreter sessions the server is stateless: one shared [`Sandbox`] (one
//! engine, one compiled runtime) serves every request, so scaling out is running more
//! replicas behind any load balancer (a session lives in the replica that opened it: route
//! its calls there, by the id or a sticky connection).
//! Requests past `max_inflight` wait in a bounded queue for a bounded time (at least the
//! request's own `run_timeout`) and are then answered 504, which verl's client retries.
//! A scoring fault (the sandbox failed) answers 503 `sandbox_error` (retried by clients),
//! never a reward of 0 that would corrupt the group's advantages; a client's mistake (a task
//! that breaks the schema's rules, such as `time_limit_ms: 0`) is a 422 naming the field.
//! `/v1/score` scores through one [`Scorer`], built with the service, as every `grpo` command
//! scores through its own; a task's
//! own `time_limit_ms` and `memory_mb` above `max_run_timeout_s` and `max_memory_mb` are
//! clamped to them, as `/run_code` clamps its `run_timeout` and `memory_limit_MB`.
//! Bad input gets a JSON 4xx (`{"detail", "code"}`, see [`error`]); handlers never panic, and
//! a panic would be answered 500 without taking the server down.
//!
//! With an [`AuthToken`] in the configuration, every route but `/healthz` and `/readyz`
//! answers 401 unless the request carries `Authorization: Bearer <token>` ([`auth`]).
//!
//! Abusive clients are bounded at the connection too. A body whose `Content-Length` is over
//! `max_body_bytes` is answered 413 from the header, before any of it is read. Request heads
//! must arrive within `header_read_timeout` (hyper closes the connection otherwise; the same
//! timer closes a keep-alive connection idle for that long), and a body within
//! `body_read_timeout` of its head (408). At most `max_connections` connections are served at
//! once; more wait in the listen backlog until one closes. Admission to the sandbox is per
//! request, so an open connection, idle or trickling, never holds a worker.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use grpo_sandbox::{RunRequest, Sandbox};
//! use grpo_serve::{Service, ServiceConfig};
//! let service = Service::new(Sandbox::shared()?, ServiceConfig::default())?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! service.serve(listener, async { let _ = tokio::signal::ctrl_c().await; }).await?;
//! # Ok(()) }
//! ```
#![deny(clippy::unwrap_used)]
#![warn(missing_docs)]

pub mod admission;
pub mod auth;
pub mod error;
pub mod metrics;
mod nemo_gym;
mod openenv;
pub mod remote;
pub mod run_code;
pub mod score;
pub mod sessions;

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::header;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::sync::Semaphore;
use tower_http::LatencyUnit;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::trace::{DefaultMakeSpan, DefaultOnResponse, TraceLayer};
use tracing::Level;

pub use admission::Admission;
pub use auth::AuthToken;
pub use error::{ApiError, BodyDeadline, JsonBody};
use grpo_rewards::code::{LimitCaps, Limits};
use grpo_rewards::{ScoreOptions, Scorer, ScoringConfig, Weights};
use grpo_sandbox::{RunRequest, Sandbox};
pub use metrics::Metrics;
use run_code::{RunCodeRequest, RunCodeResponse};
use score::{PreparedScore, ScoreRequest, ScoreResponse};
pub use sessions::SessionConfig;

/// How the service behaves.
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceConfig {
    /// Requests served at once; more wait in the queue.
    pub max_inflight: usize,
    /// Requests that may wait; more are answered 504 at once.
    pub max_queue: usize,
    /// The shortest time a waiting request waits before its 504 (a `/run_code` request
    /// waits at least its own `run_timeout`).
    pub queue_wait: Duration,
    /// The largest request body, in bytes (larger bodies get 413, from the `Content-Length`
    /// header when it declares one).
    pub max_body_bytes: usize,
    /// The longest time a client may take to send a request's head (request line and
    /// headers), and the longest a keep-alive connection may sit idle; past it the connection
    /// is closed.
    pub header_read_timeout: Duration,
    /// The longest time a client may take to send a request's body, counted from its head
    /// (slower bodies get 408).
    pub body_read_timeout: Duration,
    /// Connections served at once; more wait in the listen backlog until one closes.
    pub max_connections: usize,
    /// The most completions in one `/v1/score` request.
    pub max_completions: usize,
    /// The most sandbox programs one `/v1/score` request may need (completions × stdio cases).
    pub max_sandbox_runs: u64,
    /// The longest `run_timeout` a `/run_code` request may ask for, in seconds.
    pub max_run_timeout_s: f64,
    /// The largest `memory_limit_MB` a `/run_code` request may ask for (larger asks are capped).
    pub max_memory_mb: u64,
    /// Default limits for programs (code tasks of `/v1/score` may lower or raise time and
    /// memory, up to `max_run_timeout_s` and `max_memory_mb`).
    pub limits: Limits,
    /// The name reported as `executor_pod_name` in `/run_code` answers.
    pub executor: Option<String>,
    /// The bearer token every route but the health checks requires; `None` serves anyone.
    pub auth_token: Option<AuthToken>,
    /// Interpreter sessions: the cap on open ones, their time-to-live and default limits.
    pub sessions: SessionConfig,
}

impl ServiceConfig {
    /// The caps on a task's own limits: `max_run_timeout_s` and `max_memory_mb`.
    pub fn caps(&self) -> LimitCaps {
        LimitCaps {
            time_limit_ms: (self.max_run_timeout_s * 1000.0).ceil().max(1.0) as u64,
            memory_mb: self.max_memory_mb,
        }
    }
}

impl Default for ServiceConfig {
    fn default() -> Self {
        ServiceConfig {
            max_inflight: 64,
            max_queue: 1024,
            queue_wait: Duration::from_secs(10),
            max_body_bytes: 16 << 20,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            max_connections: 1024,
            max_completions: 1024,
            max_sandbox_runs: 16_384,
            max_run_timeout_s: 60.0,
            max_memory_mb: 1024,
            limits: Limits::default(),
            executor: std::env::var("HOSTNAME").ok().filter(|h| !h.is_empty()),
            auth_token: None,
            sessions: SessionConfig::default(),
        }
    }
}

/// The HTTP service; cheap to clone.
#[derive(Clone)]
pub struct Service {
    state: Arc<ServiceState>,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("config", &self.state.config)
            .finish_non_exhaustive()
    }
}

pub(crate) struct ServiceState {
    config: ServiceConfig,
    sandbox: Sandbox,
    /// Built once: a request brings only its [`ScoreOptions`].
    scorer: Scorer,
    admission: Admission,
    metrics: Arc<Metrics>,
    sessions: Arc<sessions::Sessions>,
    /// The pack served at `/openenv/tasks`, with its scorer.
    tasks: Option<openenv::TaskPack>,
    shutting_down: AtomicBool,
}

impl Service {
    /// A service running programs on `sandbox`. Errors: default limits that cannot run.
    pub fn new(sandbox: Sandbox, config: ServiceConfig) -> grpo_rewards::Result<Service> {
        Service::build(sandbox, config, None)
    }

    /// A service that also serves `pack`'s tasks at `/openenv/tasks`, scored by the pack's
    /// own scorer, built here once as `grpo score --tasks` builds it (its weights, math and
    /// code options), with the service's caps on a task's limits. Errors: default limits
    /// that cannot run, or the pack's rewards are invalid.
    pub fn with_pack(
        sandbox: Sandbox,
        config: ServiceConfig,
        pack: grpo_tasks::Pack,
    ) -> grpo_rewards::Result<Service> {
        let tasks = openenv::TaskPack::new(
            pack,
            sandbox.clone(),
            config.caps(),
            config.sessions.max_sessions,
        )?;
        Service::build(sandbox, config, Some(tasks))
    }

    fn build(
        sandbox: Sandbox,
        config: ServiceConfig,
        tasks: Option<openenv::TaskPack>,
    ) -> grpo_rewards::Result<Service> {
        let metrics = Arc::new(Metrics::default());
        let admission = Admission::new(config.max_inflight, config.max_queue, metrics.clone());
        // Accuracy 1; the format reward is reported always and weighted per request.
        let scoring = ScoringConfig {
            weights: Weights {
                accuracy: 1.0,
                format: 0.0,
            },
            limits: config.limits.clone(),
            caps: Some(config.caps()),
            ..ScoringConfig::default()
        };
        let scorer = grpo_sandbox::scorer(&scoring, Some(sandbox.clone()))?;
        let sessions = Arc::new(sessions::Sessions::new(
            config.sessions.clone(),
            metrics.clone(),
        ));
        Ok(Service {
            state: Arc::new(ServiceState {
                config,
                sandbox,
                scorer,
                admission,
                metrics,
                sessions,
                tasks,
                shutting_down: AtomicBool::new(false),
            }),
        })
    }

    /// The service's configuration.
    pub fn config(&self) -> &ServiceConfig {
        &self.state.config
    }

    /// The service's metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.state.metrics
    }

    /// Marks the service as shutting down: `/readyz` answers 503 from now on, so load
    /// balancers stop sending work while in-flight requests finish.
    pub fn begin_shutdown(&self) {
        self.state.shutting_down.store(true, Ordering::SeqCst);
    }

    /// The routes, with body limit, metrics and panic guard.
    pub fn router(&self) -> Router {
        let mut router = Router::new()
            .route("/run_code", post(run_code_handler))
            .route("/v1/ping", get(|| async { axum::Json("pong") }))
            .route("/v1/languages", get(languages_handler))
            .route("/v1/score", post(score_handler))
            .route("/get_reward", post(remote::get_reward_handler))
            .route("/v1/reward", post(remote::reward_handler))
            .route("/v1/sessions", post(sessions::open_handler))
            .route("/v1/sessions/{id}/run", post(sessions::run_handler))
            .route(
                "/v1/sessions/{id}",
                axum::routing::delete(sessions::delete_handler),
            )
            .route("/healthz", get(|| async { "ok\n" }))
            .route("/readyz", get(readyz))
            .route("/metrics", get(metrics_handler))
            .nest("/openenv", openenv::router(self.state.tasks.is_some()))
            .merge(nemo_gym::router())
            .nest("/ng-rollout/{rollout_id}", nemo_gym::router());
        for route in UNSUPPORTED_ROUTES {
            router = router.route(
                route,
                any(move || async move {
                    ApiError::NotImplemented {
                        route: route.to_owned(),
                    }
                }),
            );
        }
        router
            .fallback(|request: Request| async move {
                ApiError::NotFound {
                    path: request.uri().path().to_owned(),
                }
            })
            // Innermost first: the body guard, the token check (a refused request's body is
            // never read), the panic guard, the metrics (which see their 401, 413 and 500),
            // the request log.
            .layer(middleware::from_fn_with_state(
                self.state.clone(),
                guard_body,
            ))
            .layer(middleware::from_fn_with_state(
                self.state.clone(),
                authorize,
            ))
            .layer(CatchPanicLayer::custom(panic_response))
            .layer(middleware::from_fn_with_state(self.state.clone(), observe))
            .layer(
                TraceLayer::new_for_http()
                    .make_span_with(DefaultMakeSpan::new().level(Level::INFO))
                    .on_response(
                        DefaultOnResponse::new()
                            .level(Level::INFO)
                            .latency_unit(LatencyUnit::Micros),
                    ),
            )
            .layer(DefaultBodyLimit::max(self.state.config.max_body_bytes))
            .with_state(self.state.clone())
    }

    /// Serves on `listener` until `shutdown` completes, then stops accepting, marks itself
    /// not ready, and returns once every in-flight request has been answered.
    ///
    /// HTTP/1.1 with the connection limits of [`ServiceConfig`]: at most `max_connections`
    /// at once (the next connection is accepted when one closes), each closed when a request
    /// head takes longer than `header_read_timeout` or the connection idles that long.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let config = &self.state.config;
        let router = self.router();
        let mut http = hyper::server::conn::http1::Builder::new();
        http.timer(TokioTimer::new())
            .header_read_timeout(config.header_read_timeout);
        let slots = Arc::new(Semaphore::new(config.max_connections.max(1)));
        // Shutdown: `stop` tells every connection to finish its request in flight and close;
        // each holds a clone of `live` until it has, so `finished` ends when all have.
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let (live, mut finished) = tokio::sync::mpsc::channel::<()>(1);
        let mut shutdown = pin!(shutdown);
        loop {
            // A slot first, then the connection: past the cap, clients wait in the backlog.
            let slot = tokio::select! {
                slot = slots.clone().acquire_owned() => slot,
                () = &mut shutdown => break,
            };
            // The semaphore is never closed.
            let Ok(slot) = slot else { break };
            // Shared with the requests of this connection: an upgraded one (an OpenEnv
            // WebSocket) keeps the slot after hyper hands its socket over.
            let slot = ConnectionSlot(Arc::new(slot));
            let (stream, peer) = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        if !is_connection_error(&e) {
                            // Out of file descriptors, most likely: wait for some to close.
                            tracing::error!(error = %e, "accept failed; retrying in 1 s");
                            tokio::select! {
                                () = tokio::time::sleep(Duration::from_secs(1)) => {}
                                () = &mut shutdown => break,
                            }
                        }
                        continue;
                    }
                },
                () = &mut shutdown => break,
            };
            // Upgrades on: OpenEnv's sessions are WebSockets.
            let connection = http
                .serve_connection(
                    TokioIo::new(stream),
                    // `Extension` as a layer wraps the router as it is (`Router::layer`
                    // would rebuild every route for each connection).
                    TowerToHyperService::new(tower_layer::Layer::layer(
                        &axum::Extension(slot.clone()),
                        router.clone(),
                    )),
                )
                .with_upgrades();
            let metrics = self.state.metrics.clone();
            metrics.add_connections(1);
            let mut stopped = stopped.clone();
            let live = live.clone();
            tokio::spawn(async move {
                let mut connection = pin!(connection);
                let ended = tokio::select! {
                    ended = connection.as_mut() => ended,
                    () = async {
                        // The guard it returns is dropped here, before the await below.
                        let _ = stopped.wait_for(|stop| *stop).await;
                    } => {
                        connection.as_mut().graceful_shutdown();
                        connection.await
                    }
                };
                if let Err(e) = ended {
                    // Header timeouts, resets and malformed requests end here.
                    tracing::debug!(%peer, error = %e, "connection closed with an error");
                }
                metrics.add_connections(-1);
                drop(slot);
                drop(live);
            });
        }
        drop(listener);
        self.begin_shutdown();
        tracing::info!("shutting down: finishing in-flight requests");
        let _ = stop.send(true);
        drop(live);
        let _ = finished.recv().await;
        self.state.sessions.close_all().await;
        Ok(())
    }
}

/// Errors of one connection that `accept` reports; the listener itself is fine.
fn is_connection_error(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}

/// SandboxFusion routes this server does not implement (answered 501).
pub const UNSUPPORTED_ROUTES: [&str; 8] = [
    "/run_jupyter",
    "/submit",
    "/get_prompts",
    "/get_prompt_by_id",
    "/list_datasets",
    "/list_ids",
    "/get_metrics",
    "/get_metrics_function",
];

pub(crate) type AppState = Arc<ServiceState>;

async fn readyz(State(state): State<AppState>) -> Response {
    if state.shutting_down.load(Ordering::SeqCst) {
        return ApiError::ShuttingDown.into_response();
    }
    "ready\n".into_response()
}

async fn metrics_handler(State(state): State<AppState>) -> Response {
    (
        [(header::CONTENT_TYPE, metrics::CONTENT_TYPE)],
        state.metrics.render(),
    )
        .into_response()
}

/// Records every request's count, latency and status by matched route (the panic guard
/// inside it has already turned a panic into a 500).
async fn observe(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let response = next.run(request).await;
    state
        .metrics
        .record_request(&route, response.status().as_u16(), started.elapsed());
    response
}

/// Answers 401 to a request without the configured bearer token (health checks excepted).
async fn authorize(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if let Some(token) = &state.config.auth_token
        && !auth::OPEN_ROUTES.contains(&request.uri().path())
    {
        let presented = request
            .headers()
            .get(header::AUTHORIZATION)
            .map(|v| v.as_bytes());
        if !token.admits(presented) {
            tracing::debug!(
                path = request.uri().path(),
                "refused: no valid bearer token"
            );
            return ApiError::Unauthorized.into_response();
        }
    }
    next.run(request).await
}

/// Refuses a body whose declared `Content-Length` is over the limit before reading any of
/// it (413), and gives the others their [`BodyDeadline`].
async fn guard_body(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(declared) = declared
        && declared > u64::try_from(state.config.max_body_bytes).unwrap_or(u64::MAX)
    {
        tracing::debug!(
            declared,
            limit = state.config.max_body_bytes,
            "body too large"
        );
        return ApiError::TooLarge.into_response();
    }
    request
        .extensions_mut()
        .insert(BodyDeadline::after(state.config.body_read_timeout));
    next.run(request).await
}

/// The answer to a handler that panicked: a 500 in the service's error shape, logged.
fn panic_response(panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let reason = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".to_owned());
    tracing::error!(%reason, "handler panicked");
    ApiError::Internal { reason }.into_response()
}

pub(crate) async fn admit(
    state: &ServiceState,
    wait: Duration,
) -> Result<admission::Admitted, ApiError> {
    if state.shutting_down.load(Ordering::SeqCst) {
        return Err(ApiError::ShuttingDown);
    }
    state
        .admission
        .admit(wait)
        .await
        .map_err(|_| ApiError::Overloaded {
            waited_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
        })
}

/// `GET /v1/languages`: the languages `/run_code` runs in this build, with versions.
async fn languages_handler(
    State(state): State<AppState>,
) -> Result<axum::Json<serde_json::Value>, ApiError> {
    let languages = state.sandbox.languages().await.map_err(|e| {
        tracing::error!(error = %e, "sandbox failure on /v1/languages");
        ApiError::SandboxFault {
            reason: e.to_string(),
        }
    })?;
    let listed: Vec<serde_json::Value> = languages
        .into_iter()
        .filter_map(|(language, version)| {
            let version = version?;
            let runtime = match language {
                grpo_tasks::Language::Python => "CPython for WASI in wasmtime",
                grpo_tasks::Language::Javascript => {
                    "QuickJS-NG for WASI in wasmtime, Node.js prelude"
                }
                grpo_tasks::Language::Typescript => "types stripped, then as nodejs",
                grpo_tasks::Language::C => "zig cc to wasm32-wasi, run in wasmtime",
                grpo_tasks::Language::Cpp => "zig c++ to wasm32-wasi, run in wasmtime",
            };
            Some(serde_json::json!({
                "language": language.sandbox_fusion_name(),
                "version": version,
                "compiled": language.is_compiled(),
                "runtime": runtime,
            }))
        })
        .collect();
    Ok(axum::Json(serde_json::json!({ "languages": listed })))
}

async fn run_code_handler(
    State(state): State<AppState>,
    JsonBody(request): JsonBody<RunCodeRequest>,
) -> Result<axum::Json<RunCodeResponse>, ApiError> {
    let limits = request.limits(
        &state.config.limits,
        state.config.max_run_timeout_s,
        state.config.max_memory_mb,
    )?;
    let files = request.job_files()?;
    if files.put_bytes() > limits.file_quota_bytes {
        return Err(ApiError::invalid(format!(
            "`files`: {} bytes in all, over the file quota of {} bytes",
            files.put_bytes(),
            limits.file_quota_bytes
        )));
    }
    let _admitted = admit(&state, request.queue_wait(state.config.queue_wait)).await?;
    let started = Instant::now();
    let stdin = request.stdin.as_deref().unwrap_or("").as_bytes();
    let executor = state.config.executor.clone();
    let language = request.language()?;
    let compile = request.compile_limits(state.config.max_run_timeout_s);
    let program = RunRequest {
        language,
        source: &request.code,
        stdin,
        limits,
        compile,
        files,
        args: Vec::new(),
    };
    let outcome = state.sandbox.run_program(&program).await;
    let response = match outcome {
        Ok(run) => RunCodeResponse::from_source(run, executor),
        Err(e) => {
            tracing::error!(error = %e, "sandbox failure on /run_code");
            RunCodeResponse::sandbox_error(format!("sandbox failure: {e}"), executor)
        }
    };
    state.metrics.add_sandbox_runs(1);
    state
        .metrics
        .record_run_code(response.status.as_str(), started.elapsed());
    Ok(axum::Json(response))
}

async fn score_handler(
    State(state): State<AppState>,
    JsonBody(request): JsonBody<ScoreRequest>,
) -> Result<axum::Json<ScoreResponse>, ApiError> {
    let prepared = request.prepare(state.config.max_completions)?;
    let runs = prepared.sandbox_runs(request.completions.len());
    if runs > state.config.max_sandbox_runs {
        return Err(ApiError::invalid(format!(
            "this request needs {runs} sandbox runs (completions × test cases); the limit is {}",
            state.config.max_sandbox_runs
        )));
    }
    let _admitted = admit(&state, state.config.queue_wait).await?;
    let options = state.score_options(&prepared);
    // A fault fails the whole request with a status clients retry.
    let results = state
        .scorer
        .score_group(&prepared.task, &request.completions, &options)
        .await
        .map_err(|e| ApiError::from_scoring(e, prepared.task.id(), "/v1/score"))?;
    state.metrics.add_sandbox_runs(runs);
    for result in &results {
        state.metrics.record_verdict(result.verdict.kind);
    }
    Ok(axum::Json(ScoreResponse { results }))
}

impl ServiceState {
    /// The options of one `/v1/score` request: its credit and format weight (no format
    /// reward when absent), the service's maxima as caps (a task's own `time_limit_ms` or
    /// `memory_mb` above them is clamped, as `/run_code` clamps `run_timeout` and
    /// `memory_limit_MB`).
    fn score_options(&self, prepared: &PreparedScore) -> ScoreOptions {
        ScoreOptions {
            credit: prepared.credit,
            format_weight: Some(prepared.format_weight.unwrap_or(0.0)),
            caps: Some(self.config.caps()),
            test_seed: None,
        }
    }
}

/// A connection's place under `max_connections`, held by the connection and by a WebSocket it
/// was upgraded to, and given back when both have ended.
#[derive(Clone)]
pub(crate) struct ConnectionSlot(
    #[allow(dead_code, reason = "held, never read")] Arc<tokio::sync::OwnedSemaphorePermit>,
);

#[cfg(test)]
mod test_server;

#[cfg(test)]
mod tests {
    use super::*;

    /// A `/v1/score` request builds nothing but itself: the scorer is the service's, built
    /// once in [`Service::new`] (no other test of this binary builds one).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn score_requests_build_no_scorer() {
        let service = Service::new(
            Sandbox::shared().expect("sandbox"),
            ServiceConfig::default(),
        )
        .expect("service");
        let built = grpo_rewards::scorer::built_count();
        let requests = [
            serde_json::json!({"ground_truth": "42", "completions": ["\\boxed{42}", "41"]}),
            serde_json::json!({"task": {"id": "m", "kind": "math", "prompt": "p", "answer": "1/2"},
                "completions": ["<think>x</think><answer>0.5</answer>"], "format_weight": 0.5}),
            serde_json::json!({"ground_truth": {"inputs": ["1 2\n"], "outputs": ["3\n"]},
                "completions": ["a, b = map(int, input().split())\nprint(a + b)"],
                "credit": "partial"}),
        ];
        for _ in 0..3 {
            for body in &requests {
                let request: ScoreRequest =
                    serde_json::from_value(body.clone()).expect("a valid request");
                let scored = score_handler(State(service.state.clone()), JsonBody(request))
                    .await
                    .expect("scored");
                assert!(
                    scored.0.results[0].correct,
                    "{body}: {:?}",
                    scored.0.results
                );
            }
        }
        assert_eq!(grpo_rewards::scorer::built_count(), built);
    }
}
