//! `grpo serve`: Serve the verifiers over HTTP (SandboxFusion-compatible subset and a batch API).
//!
//! Prints one JSON line `{"listening": "<addr>"}` on stdout once it accepts connections (so
//! `--addr 127.0.0.1:0` can be used by scripts), logs to stderr, and on Ctrl-C or SIGTERM stops
//! accepting, answers `/readyz` 503, finishes in-flight requests and exits 0.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use grpo_rewards::code::Limits;
use grpo_sandbox::{Sandbox, SandboxOptions};
use grpo_serve::{AuthToken, Service, ServiceConfig, SessionConfig};

/// Serve the verifiers over HTTP (SandboxFusion-compatible subset and a batch API).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address to listen on (port 0 picks a free port; the chosen address is printed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: String,
    /// Sandbox worker count: programs run at once (default: the number of cores).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Requests admitted at once before queueing (default: `ServiceConfig`'s, 64).
    #[arg(long)]
    pub max_inflight: Option<usize>,
    /// Requests that may wait for admission; more are answered 504 at once.
    #[arg(long, default_value_t = ServiceConfig::default().max_queue)]
    pub max_queue: usize,
    /// Shortest wait, in milliseconds, before a queued request is answered 504
    /// (a `/run_code` request waits at least its own `run_timeout`).
    #[arg(long, default_value_t = ServiceConfig::default().queue_wait.as_millis() as u64)]
    pub queue_wait_ms: u64,
    /// Largest request body in bytes (larger bodies get 413, from the `Content-Length`
    /// header when it declares one).
    #[arg(long, default_value_t = ServiceConfig::default().max_body_bytes)]
    pub max_body_bytes: usize,
    /// Longest time, in milliseconds, a client may take to send a request's head, and the
    /// longest a keep-alive connection may idle; past it the connection is closed.
    #[arg(long, default_value_t = ServiceConfig::default().header_read_timeout.as_millis() as u64)]
    pub header_read_timeout_ms: u64,
    /// Longest time, in milliseconds, a client may take to send a request's body after its
    /// head (slower bodies get 408).
    #[arg(long, default_value_t = ServiceConfig::default().body_read_timeout.as_millis() as u64)]
    pub body_read_timeout_ms: u64,
    /// Connections served at once; more wait in the listen backlog until one closes.
    #[arg(long, default_value_t = ServiceConfig::default().max_connections)]
    pub max_connections: usize,
    /// Most completions in one `/v1/score` request.
    #[arg(long, default_value_t = ServiceConfig::default().max_completions)]
    pub max_completions: usize,
    /// Most sandbox programs one `/v1/score` request may need (completions × stdio cases).
    #[arg(long, default_value_t = ServiceConfig::default().max_sandbox_runs)]
    pub max_sandbox_runs: u64,
    /// Default CPU time limit of one program, in milliseconds (`/v1/score` code tasks).
    #[arg(long, default_value_t = Limits::default().time_limit_ms)]
    pub time_limit_ms: u64,
    /// Default memory cap of one program, in MiB.
    #[arg(long, default_value_t = Limits::default().memory_mb)]
    pub memory_mb: u64,
    /// The longest time one program may ask for, in seconds: `/run_code`'s `run_timeout` and
    /// a `/v1/score` task's `time_limit_ms` above it are clamped to it.
    #[arg(long, default_value_t = ServiceConfig::default().max_run_timeout_s)]
    pub max_run_timeout_s: f64,
    /// The most memory one program may ask for, in MiB (clamped like the time).
    #[arg(long, default_value_t = ServiceConfig::default().max_memory_mb)]
    pub max_memory_mb: u64,
    /// A file holding a bearer token (the token and a newline): every route but /healthz and
    /// /readyz then answers 401 without `Authorization: Bearer <token>`. The environment
    /// variable GRPO_AUTH_TOKEN holds the token itself instead.
    #[arg(long, value_name = "FILE")]
    pub auth_token_file: Option<std::path::PathBuf>,
    /// Interpreter sessions (`/v1/sessions`) open at once; one more is answered 429. The
    /// sandbox gets an instance slot for each, on top of what its workers need.
    #[arg(long, default_value_t = SessionConfig::default().max_sessions)]
    pub max_sessions: usize,
    /// A session unused for this many seconds is closed and its interpreter freed.
    #[arg(long, default_value_t = SessionConfig::default().idle_ttl.as_secs_f64())]
    pub session_idle_ttl_s: f64,
    /// A task pack to serve as the OpenEnv environment `/openenv/tasks`, as for `grpo score
    /// --tasks`: a .jsonl file, a pack directory, or `builtin:NAME`.
    #[arg(long, value_name = "PACK")]
    pub pack: Option<String>,
    /// The longest a session may live from its opening, in seconds.
    #[arg(long, default_value_t = SessionConfig::default().max_lifetime.as_secs_f64())]
    pub session_lifetime_s: f64,
}

/// The environment variable holding the service's bearer token (the token itself).
pub const AUTH_TOKEN_ENV: &str = "GRPO_AUTH_TOKEN";

impl Args {
    /// Runs the command.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        let workers = self
            .workers
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .max(1);
        let limits = Limits {
            time_limit_ms: self.time_limit_ms,
            memory_mb: self.memory_mb,
            ..Limits::default()
        };
        limits
            .validate()
            .context("invalid --time-limit-ms or --memory-mb")?;
        anyhow::ensure!(
            self.max_run_timeout_s.is_finite() && self.max_run_timeout_s > 0.0,
            "--max-run-timeout-s must be a positive number of seconds"
        );
        anyhow::ensure!(
            self.max_memory_mb >= grpo_tasks::MIN_MEMORY_MB,
            "--max-memory-mb must be at least {} MiB",
            grpo_tasks::MIN_MEMORY_MB
        );
        anyhow::ensure!(
            self.header_read_timeout_ms > 0 && self.body_read_timeout_ms > 0,
            "--header-read-timeout-ms and --body-read-timeout-ms must be positive"
        );
        anyhow::ensure!(
            self.max_connections > 0,
            "--max-connections must be at least 1"
        );
        for (flag, seconds) in [
            ("--session-idle-ttl-s", self.session_idle_ttl_s),
            ("--session-lifetime-s", self.session_lifetime_s),
        ] {
            anyhow::ensure!(
                seconds.is_finite() && seconds > 0.0 && seconds < 1e9,
                "{flag} must be a positive number of seconds"
            );
        }
        anyhow::ensure!(self.max_sessions > 0, "--max-sessions must be at least 1");
        let auth_token = self.auth_token()?;
        let defaults = ServiceConfig::default();
        let config = ServiceConfig {
            max_inflight: self.max_inflight.unwrap_or(defaults.max_inflight).max(1),
            max_queue: self.max_queue,
            queue_wait: Duration::from_millis(self.queue_wait_ms),
            max_body_bytes: self.max_body_bytes,
            header_read_timeout: Duration::from_millis(self.header_read_timeout_ms),
            body_read_timeout: Duration::from_millis(self.body_read_timeout_ms),
            max_connections: self.max_connections,
            max_completions: self.max_completions,
            max_sandbox_runs: self.max_sandbox_runs,
            max_run_timeout_s: self.max_run_timeout_s,
            max_memory_mb: self.max_memory_mb,
            limits,
            auth_token,
            sessions: SessionConfig {
                max_sessions: self.max_sessions,
                idle_ttl: Duration::from_secs_f64(self.session_idle_ttl_s),
                max_lifetime: Duration::from_secs_f64(self.session_lifetime_s),
                ..defaults.sessions.clone()
            },
            ..defaults
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("grpo-serve")
            .build()
            .context("starting the async runtime")?;
        let pack = self
            .pack
            .as_deref()
            .map(|spec| {
                grpo_tasks::Pack::load(spec).with_context(|| format!("loading pack {spec}"))
            })
            .transpose()?;
        runtime.block_on(serve(self.addr, workers, config, pack))?;
        Ok(ExitCode::SUCCESS)
    }
}

impl Args {
    /// The bearer token from --auth-token-file or GRPO_AUTH_TOKEN (both at once is an error:
    /// which one wins would be a guess).
    fn auth_token(&self) -> anyhow::Result<Option<AuthToken>> {
        let from_env = std::env::var_os(AUTH_TOKEN_ENV);
        match (&self.auth_token_file, from_env) {
            (Some(_), Some(_)) => anyhow::bail!(
                "both --auth-token-file and {AUTH_TOKEN_ENV} are set; give the token one way"
            ),
            (Some(path), None) => Ok(Some(AuthToken::from_file(path)?)),
            (None, Some(value)) => {
                let value = value
                    .into_string()
                    .map_err(|_| anyhow::anyhow!("{AUTH_TOKEN_ENV} is not valid UTF-8"))?;
                Ok(Some(AuthToken::new(&value, AUTH_TOKEN_ENV)?))
            }
            (None, None) => Ok(None),
        }
    }
}

async fn serve(
    addr: String,
    workers: usize,
    config: ServiceConfig,
    pack: Option<grpo_tasks::Pack>,
) -> anyhow::Result<()> {
    // Each open session holds an instance slot on top of the workers' programs' (the
    // sandbox sizes its pool for them).
    let options = SandboxOptions {
        concurrency: workers,
        sessions: config.sessions.max_sessions,
        ..SandboxOptions::default()
    };
    let sandbox = tokio::task::spawn_blocking(move || Sandbox::new(&options))
        .await
        .context("building the sandbox")?
        .context("building the sandbox")?;
    // One run up front compiles the test harness, so the first request is not slower.
    let warm = sandbox
        .run("pass", b"", &Limits::default())
        .await
        .context("warming up the sandbox")?;
    tracing::debug!(status = ?warm.status, ms = warm.duration_ms, "sandbox warm");
    let listener = bind(&addr)
        .await
        .with_context(|| format!("binding {addr}"))?;
    let local = listener.local_addr().context("reading the bound address")?;
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "{}",
        serde_json::json!({ "listening": local.to_string() })
    )
    .context("writing to stdout")?;
    stdout.flush().context("writing to stdout")?;
    drop(stdout);
    tracing::info!(
        %local,
        workers,
        max_inflight = config.max_inflight,
        max_connections = config.max_connections,
        auth = config.auth_token.is_some(),
        "serving"
    );
    let service = match pack {
        Some(pack) => Service::with_pack(sandbox, config, pack),
        None => Service::new(sandbox, config),
    };
    service
        .context("the service's scorer")?
        .serve(listener, shutdown_signal())
        .await
        .context("serving")?;
    tracing::info!("stopped");
    Ok(())
}

/// Connections the kernel completes and queues before the server accepts them (it caps the
/// number at `net.core.somaxconn`). Past `--max-connections` new clients wait in this queue; a
/// short queue would drop their handshakes instead (the default of `bind` is 128).
const LISTEN_BACKLOG: u32 = 4096;

/// A listener on the first address `addr` resolves to that can be bound.
async fn bind(addr: &str) -> std::io::Result<tokio::net::TcpListener> {
    let mut last = None;
    for resolved in tokio::net::lookup_host(addr).await? {
        let socket = if resolved.is_ipv4() {
            tokio::net::TcpSocket::new_v4()?
        } else {
            tokio::net::TcpSocket::new_v6()?
        };
        #[cfg(unix)]
        socket.set_reuseaddr(true)?;
        match socket.bind(resolved) {
            Ok(()) => return socket.listen(LISTEN_BACKLOG),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the address resolves to nothing",
        )
    }))
}

/// Completes on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %e, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}
