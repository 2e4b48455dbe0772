//! Interpreter sessions: a Python interpreter that keeps its globals from one call to the
//! next, like a notebook kernel, for code-interpreter tools inside multi-turn rollouts.
//!
//! ```no_run
//! # async fn demo() -> Result<(), grpo_sandbox::SandboxError> {
//! use grpo_sandbox::{Sandbox, Session, SessionLimits};
//! let sandbox = Sandbox::shared()?;
//! let session = Session::open(&sandbox, SessionLimits::default()).await?;
//! session.run("x = 6 * 7").await?;
//! assert_eq!(session.run("print(x)").await?.stdout, "42\n");
//! // The last expression's value is shown, as in the interactive interpreter.
//! assert_eq!(session.run("x + 1").await?.stdout, "43\n");
//! # Ok(()) }
//! ```
//!
//! A session is one instance of the sandbox's interpreter snapshot, started with the harness
//! in its session loop: each call is written to the guest's stdin, runs in the session's
//! namespace, and ends with a line on stderr that carries the call's nonce, which the host
//! takes out of the stream. Between calls the guest waits on stdin: it holds memory and one
//! of the sandbox's live slots, never a CPU worker.
//!
//! Limits ([`SessionLimits`]): each call has its own CPU time, wall clock and output caps;
//! the session has a CPU budget for all its calls, a lifetime, and one memory cap and file
//! quota (the interpreter's heap and `/tmp` persist across calls). Output past a call's cap
//! is cut and the call reads `output_limit`, but the session goes on; an uncaught exception
//! (`MemoryError` included) is the call's outcome and the session goes on. A call that runs
//! out of time, or a guest that exits or traps, loses the interpreter: the call says so on
//! stderr, and the next call starts a fresh interpreter (files in `/tmp` stay). A session
//! whose CPU budget or lifetime is spent is closed; its calls then fail with
//! [`SandboxError::SessionClosed`]. Nothing is shared between sessions: each has its own
//! instance, memory and directory, and dropping a session frees them.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc::UnboundedReceiver;
use wasmtime_wasi::cli::{IsTerminal, StdinStream};
use wasmtime_wasi::p2::{InputStream, Pollable, StreamError, StreamResult};

use std::future::Future;
use std::path::Path;

use wasmtime::Store;

use crate::engine::budget::{Budget, CallMeter, HasBudget};
use crate::engine::ended::Ended;
use crate::engine::pipe::{CALL_DONE_TAG, CappedPipe};
use crate::engine::run::{self, Guest as _};
use crate::engine::slot::QueueClock;
use crate::error::{Result, SandboxError};
use crate::guest::python::PythonGuest;
use crate::guest::python::harness;
use crate::guest::python::harness::Job;
use crate::sandbox::Sandbox;
use grpo_rewards::code::limits::Limits;
use grpo_rewards::result::{RunResult, RunStatus};

/// The limits of an interpreter session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SessionLimits {
    /// Per call: CPU time (`time_limit_ms`), wall clock (`wall_limit_ms`) and the cap on each
    /// of stdout and stderr (`output_bytes`). For the whole session: the interpreter's memory
    /// (`memory_mb`) and the size of its `/tmp` (`file_quota_bytes`).
    pub call: Limits,
    /// CPU time for all the session's calls together, in milliseconds.
    pub session_cpu_ms: u64,
    /// How long the session may live from its opening, in milliseconds of wall clock.
    pub lifetime_ms: u64,
}

impl Default for SessionLimits {
    fn default() -> Self {
        SessionLimits {
            call: Limits {
                time_limit_ms: 5_000,
                output_bytes: 64 << 10,
                ..Limits::default()
            },
            session_cpu_ms: 60_000,
            lifetime_ms: 600_000,
        }
    }
}

impl SessionLimits {
    /// Checks the limits.
    pub fn validate(&self) -> Result<()> {
        self.call.validate()?;
        for (field, value) in [
            ("session_cpu_ms", self.session_cpu_ms),
            ("lifetime_ms", self.lifetime_ms),
        ] {
            if value == 0 {
                return Err(SandboxError::InvalidLimit(grpo_rewards::code::LimitError {
                    field,
                    reason: "must be positive".into(),
                }));
            }
        }
        Ok(())
    }
}

/// What a session has done so far.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionStats {
    /// Calls run.
    pub calls: u64,
    /// Times the interpreter was started again after it was lost.
    pub restarts: u64,
    /// CPU time of all calls, in milliseconds (the interpreter's own CPU time).
    pub cpu_ms: u64,
    /// Wall-clock time spent in calls, in milliseconds.
    pub busy_ms: f64,
}

/// A stateful Python interpreter in the sandbox (see the module docs). Calls on one session
/// run one at a time, in the order they take its lock; it is `Send + Sync`.
pub struct Session {
    sandbox: Sandbox,
    limits: SessionLimits,
    opened: Instant,
    state: tokio::sync::Mutex<State>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

struct State {
    live: Option<Live>,
    closed: Option<String>,
    stats: SessionStats,
    meter: Arc<CallMeter>,
    workdir: tempfile::TempDir,
}

/// A running interpreter and the host's ends of its streams.
/// The interpreter's future: how it ended.
type Guest = std::pin::Pin<Box<dyn std::future::Future<Output = Ended> + Send>>;

struct Live {
    input: SessionInput,
    stdout: CappedPipe,
    stderr: CappedPipe,
    done: UnboundedReceiver<Bytes>,
    /// The interpreter, run to its end: polled only while a call (or the start) waits on it,
    /// on the caller's own thread, so a call costs no hand-over between threads.
    guest: Guest,
    /// How long the interpreter has waited, runnable, for a CPU slot.
    queued: Arc<QueueClock>,
}

impl Drop for Live {
    fn drop(&mut self) {
        // Dropping the guest future drops its store and frees the instance.
        self.input.close();
    }
}

/// The harness's end-of-call report.
#[derive(Deserialize)]
struct Done {
    status: CallStatus,
    #[serde(default)]
    exit_code: Option<i32>,
}

/// How the harness says a call (or the interpreter's start) ended: `harness.py` writes these
/// names after [`CALL_DONE_TAG`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum CallStatus {
    /// The interpreter has started and waits for its first call.
    Ready,
    /// The call ran to its end.
    Ok,
    /// The call ended in a `MemoryError`.
    Memory,
    /// The call raised, or exited with a non-zero code.
    Error,
    /// A name this host does not know (a harness newer than the host): read as an error.
    #[serde(other)]
    Unknown,
}

/// How waiting for a call ended.
enum Waited {
    Done(Done),
    Exited(Ended),
}

impl Session {
    /// Opens a session: starts its interpreter (waiting for a live slot of `sandbox` when all
    /// are taken).
    pub async fn open(sandbox: &Sandbox, limits: SessionLimits) -> Result<Session> {
        limits.validate()?;
        let root = sandbox.temp_dir();
        let workdir = tempfile::Builder::new()
            .prefix("grpo-session-")
            .tempdir_in(&root)
            .map_err(|source| SandboxError::Io { path: root, source })?;
        let session = Session {
            sandbox: sandbox.clone(),
            limits,
            opened: Instant::now(),
            state: tokio::sync::Mutex::new(State {
                live: None,
                closed: None,
                stats: SessionStats::default(),
                meter: Arc::new(CallMeter::default()),
                workdir,
            }),
        };
        {
            let mut state = session.state.lock().await;
            let live = session
                .start(state.meter.clone(), state.workdir.path().to_path_buf())
                .await?;
            state.live = Some(live);
        }
        Ok(session)
    }

    /// The session's limits.
    pub fn limits(&self) -> &SessionLimits {
        &self.limits
    }

    /// Runs `code` in the session's namespace. The result's `stdout` and `stderr` are what
    /// this call printed (an uncaught exception's traceback on stderr); `status` is `ok`,
    /// `error` (an uncaught exception, or `sys.exit` with a non-zero code), `memory_limit`
    /// (`MemoryError`), `output_limit` (output cut), `timeout`, or `crash`. Errors: the
    /// session is closed, or the sandbox could not start an interpreter.
    pub async fn run(&self, code: &str) -> Result<RunResult> {
        let mut state = self.state.lock().await;
        if let Some(reason) = &state.closed {
            return Err(SandboxError::SessionClosed {
                reason: reason.clone(),
            });
        }
        if self.opened.elapsed() >= Duration::from_millis(self.limits.lifetime_ms) {
            return Err(close(
                &mut state,
                format!("its lifetime of {} ms is over", self.limits.lifetime_ms),
            ));
        }
        let spent_ms = millis(state.meter.total());
        let left_ms = self.limits.session_cpu_ms.saturating_sub(spent_ms);
        if left_ms == 0 {
            return Err(close(
                &mut state,
                format!(
                    "its CPU budget of {} ms is spent",
                    self.limits.session_cpu_ms
                ),
            ));
        }
        if state.live.is_none() {
            let live = self
                .start(state.meter.clone(), state.workdir.path().to_path_buf())
                .await?;
            state.live = Some(live);
            state.stats.restarts += 1;
        }
        let started = Instant::now();
        let call_ms = self.limits.call.time_limit_ms.min(left_ms);
        state.meter.start_call(Duration::from_millis(call_ms));
        let nonce = harness::nonce();
        // Held here while the call runs: if this call is abandoned (its future dropped),
        // the interpreter goes with it rather than stay mid-call, and the next call starts a
        // fresh one.
        let Some(mut live) = state.live.take() else {
            return Err(SandboxError::Engine {
                reason: "the session's interpreter did not start".into(),
            });
        };
        // Whatever the guest wrote between calls is not this call's.
        live.stdout.take();
        live.stderr.take();
        while live.done.try_recv().is_ok() {}
        let request = serde_json::json!({ "nonce": nonce, "code": code }).to_string();
        live.input
            .push(format!("{}\n{request}", request.len()).as_bytes());
        let wall = Duration::from_millis(self.limits.call.wall_limit_ms());
        let waited = wait_on_the_clock(&mut live, &nonce, wall).await;
        state.live = Some(live);
        state.stats.calls += 1;
        state.stats.cpu_ms = millis(state.meter.total());
        let call_cpu_ms = state.meter.call_spent().as_secs_f64() * 1e3;
        let mut result = {
            let live = state.live.as_ref();
            let (stdout, out_cut) = live.map(|l| l.stdout.take()).unwrap_or_default();
            let (stderr, err_cut) = live.map(|l| l.stderr.take()).unwrap_or_default();
            RunResult {
                status: RunStatus::Ok,
                exit_code: None,
                stdout: String::from_utf8_lossy(&stdout).into_owned(),
                stderr: String::from_utf8_lossy(&stderr).into_owned(),
                duration_ms: 0.0,
                cpu_ms: call_cpu_ms,
                truncated: out_cut || err_cut,
            }
        };
        let lost = match waited {
            Ok(Waited::Done(done)) => {
                result.exit_code = done.exit_code;
                result.status = match done.status {
                    CallStatus::Ok => RunStatus::Ok,
                    CallStatus::Memory => RunStatus::MemoryLimit,
                    CallStatus::Ready | CallStatus::Error | CallStatus::Unknown => RunStatus::Error,
                };
                None
            }
            Ok(Waited::Exited(ended)) => {
                result.status = ended.status;
                result.exit_code = ended.exit_code;
                Some(if ended.detail.is_empty() {
                    "the interpreter exited".to_owned()
                } else {
                    ended.detail
                })
            }
            Err(_elapsed) => {
                result.status = RunStatus::Timeout;
                Some(format!(
                    "wall-clock limit of {} ms",
                    self.limits.call.wall_limit_ms()
                ))
            }
        };
        if result.truncated && result.status.with_output_cut() != result.status {
            result.status = result.status.with_output_cut();
            result.stderr.push_str(&format!(
                "\n[sandbox] output cut at {} bytes\n",
                self.limits.call.output_bytes
            ));
        }
        if let Some(detail) = lost {
            // Dropping the interpreter frees its instance.
            state.live = None;
            tracing::debug!(%detail, status = ?result.status, "session lost its interpreter");
            result.stderr.push_str(&format!(
                "\n[sandbox] {detail}; the interpreter was stopped, and the next call starts a fresh one (earlier state is lost)\n"
            ));
        }
        result.duration_ms = started.elapsed().as_secs_f64() * 1e3;
        state.stats.busy_ms += result.duration_ms;
        Ok(result)
    }

    /// Closes the session: stops its interpreter and frees it (its directory goes when the
    /// session is dropped). Later calls fail with [`SandboxError::SessionClosed`].
    pub async fn close(&self) {
        let mut state = self.state.lock().await;
        if state.closed.is_none() {
            close(&mut state, "it was closed".into());
        }
    }

    /// Whether the session is closed (by [`Session::close`], or a spent budget or lifetime).
    pub async fn is_closed(&self) -> bool {
        self.state.lock().await.closed.is_some()
    }

    /// What the session has done so far.
    pub async fn stats(&self) -> SessionStats {
        self.state.lock().await.stats.clone()
    }

    /// Starts an interpreter with what is left of the session's CPU budget.
    async fn start(&self, meter: Arc<CallMeter>, workdir: std::path::PathBuf) -> Result<Live> {
        let (done_tx, done) = tokio::sync::mpsc::unbounded_channel();
        let cap = self.limits.call.output_bytes;
        let stdout = CappedPipe::for_session(cap, done_tx.clone());
        let stderr = CappedPipe::for_session(cap, done_tx);
        let input = SessionInput::default();
        let left_ms = self
            .limits
            .session_cpu_ms
            .saturating_sub(millis(meter.total()))
            .max(1);
        let limits = Limits {
            time_limit_ms: left_ms,
            ..self.limits.call.clone()
        };
        // The interpreter's start (the harness's set-up) runs under one call's CPU limit.
        let call_ms = self.limits.call.time_limit_ms.min(left_ms);
        meter.start_call(Duration::from_millis(call_ms));
        let queued = Arc::new(QueueClock::default());
        let (guest, ready) = start_interpreter(
            &self.sandbox,
            input.clone(),
            (stdout.clone(), stderr.clone()),
            meter,
            queued.clone(),
            &limits,
            &workdir,
        )
        .await?;
        let mut live = Live {
            input,
            stdout,
            stderr,
            done,
            guest,
            queued,
        };
        // The first call's clock starts once the interpreter is ready, not while it starts.
        let not_started = |detail: String| SandboxError::Engine {
            reason: format!("the session's interpreter did not start: {detail}"),
        };
        match tokio::time::timeout(START_LIMIT, wait(&mut live, &ready)).await {
            Ok(Waited::Done(done)) if done.status == CallStatus::Ready => {}
            Ok(Waited::Done(done)) => {
                return Err(not_started(format!(
                    "the harness answered {:?} before it was ready",
                    done.status
                )));
            }
            Ok(Waited::Exited(ended)) => {
                let (stderr, _) = live.stderr.take();
                return Err(not_started(format!(
                    "{ended:?}: {}",
                    String::from_utf8_lossy(&stderr)
                )));
            }
            Err(_) => {
                return Err(not_started(format!(
                    "not ready after {} s",
                    START_LIMIT.as_secs()
                )));
            }
        }
        live.stdout.take();
        live.stderr.take();
        Ok(live)
    }
}

/// How long the interpreter may take to start before the session gives up on it (it may
/// have to wait for an instance slot and a CPU slot; this is not a call's limit).
/// The interpreter of a session, as a future for the session to
/// poll: the harness's session loop, reading calls from `input`, in `workdir`, under `limits` (the
/// session's: its CPU for all calls, memory and file quota) with each call's CPU counted
/// by `meter` and its waits for a CPU slot timed on `queued`. Returns the
/// future and the nonce of the harness's ready line. It holds one live slot for the
/// interpreter's life and a CPU slot only
/// while it computes; it ends when the guest does (how it ended is its output), and
/// dropping it frees the instance.
async fn start_interpreter(
    sandbox: &Sandbox,
    input: SessionInput,
    streams: (CappedPipe, CappedPipe),
    meter: Arc<crate::engine::budget::CallMeter>,
    queued: Arc<crate::engine::slot::QueueClock>,
    limits: &Limits,
    workdir: &Path,
) -> Result<(
    std::pin::Pin<Box<dyn Future<Output = Ended> + Send>>,
    String,
)> {
    limits.validate()?;
    let live = sandbox.host().live_slot().await?;
    let nonce = harness::nonce();
    input.push(&Job::session().encode(
        &nonce,
        b"",
        sandbox.python().harness(sandbox.host()).await?,
    ));
    sandbox.host().count_run();
    let sandbox = sandbox.clone();
    let (stdout, stderr) = streams;
    let mut budget = Budget::on_clock(limits, workdir, meter.clock());
    let cpu = meter.clock();
    budget.meter = Some(meter);
    let workdir = workdir.to_path_buf();
    let guest = Box::pin(async move {
        let _live = live;
        let guest = PythonGuest {
            pre: sandbox.python().pre(),
        };
        let builder = match run::context(&guest, &workdir, input, &stdout, &stderr) {
            Ok(builder) => builder,
            Err(e) => return Ended::stopped(RunStatus::Crash, e.to_string()),
        };
        let mut store = Store::new(sandbox.host().engine(), guest.state(builder, budget));
        crate::engine::budget::arm(&mut store);
        let called = crate::engine::slot::on_cpu_counting(
            sandbox.host().cpu_slots(),
            crate::engine::cpu_clock::metered(cpu, run::instantiate_and_call(&guest, &mut store)),
            Some(queued),
        )
        .await;
        match called {
            Ok(Ok(outcome)) => run::ended(outcome, store.data_mut().budget(), guest.traps()),
            // Only a plain run's waits are charged, so a session's metering never stops it.
            Ok(Err(crate::engine::cpu_clock::OverTime)) => {
                Ended::stopped(RunStatus::Timeout, "time limit reached")
            }
            Err(e) => Ended::stopped(RunStatus::Crash, format!("sandbox closed: {e}")),
        }
    });
    Ok((guest, nonce))
}

const START_LIMIT: Duration = Duration::from_secs(120);

/// [`wait`] under a wall clock of `wall` that leaves out the time the interpreter spent
/// waiting for a CPU slot: a call is not cut because other programs held the cores.
async fn wait_on_the_clock(
    live: &mut Live,
    nonce: &str,
    wall: Duration,
) -> std::result::Result<Waited, tokio::time::error::Elapsed> {
    let started = tokio::time::Instant::now();
    let queued_before = live.queued.queued();
    loop {
        let queued = live.queued.queued().saturating_sub(queued_before);
        let deadline = started + wall + queued;
        match tokio::time::timeout_at(deadline, wait(live, nonce)).await {
            Ok(waited) => return Ok(waited),
            Err(elapsed) => {
                // Past the deadline only if no more waiting for a slot came meanwhile.
                if started + wall + live.queued.queued().saturating_sub(queued_before)
                    <= tokio::time::Instant::now()
                {
                    return Err(elapsed);
                }
            }
        }
    }
}

/// Waits for the end of the call with `nonce`: its report, or the end of the interpreter.
/// After the report, the interpreter is run on until it waits on stdin again.
async fn wait(live: &mut Live, nonce: &str) -> Waited {
    loop {
        tokio::select! {
            line = live.done.recv() => {
                if let Some(done) = line.as_deref().and_then(|l| report(l, nonce)) {
                    return match settle(live).await {
                        Some(ended) => Waited::Exited(ended),
                        None => Waited::Done(done),
                    };
                }
            }
            ended = &mut live.guest => return Waited::Exited(ended),
        }
    }
}

/// Polls the interpreter until it is parked (waiting on stdin, holding no CPU slot and not
/// queued for one), or ends (its outcome). Nothing polls it between calls: left runnable, it
/// would keep a CPU slot (or its place in the slots' queue) from every other program.
async fn settle(live: &mut Live) -> Option<Ended> {
    std::future::poll_fn(|cx| match live.guest.as_mut().poll(cx) {
        std::task::Poll::Ready(ended) => std::task::Poll::Ready(Some(ended)),
        std::task::Poll::Pending if live.queued.is_parked() => std::task::Poll::Ready(None),
        std::task::Poll::Pending => std::task::Poll::Pending,
    })
    .await
}

/// The report in an end-of-call line, when the line carries `nonce`.
fn report(line: &[u8], nonce: &str) -> Option<Done> {
    let rest = line.strip_prefix(CALL_DONE_TAG)?;
    let rest = rest.strip_prefix(nonce.as_bytes())?.strip_prefix(b" ")?;
    serde_json::from_slice(rest.trim_ascii_end()).ok()
}

fn close(state: &mut State, reason: String) -> SandboxError {
    state.live = None;
    state.closed = Some(reason.clone());
    SandboxError::SessionClosed { reason }
}

/// Whole milliseconds of `d`.
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A session's stdin: the host pushes calls, the guest's reads wait for them.
#[derive(Clone, Default)]
pub(crate) struct SessionInput {
    shared: Arc<Mutex<InputState>>,
}

#[derive(Default)]
struct InputState {
    buffer: VecDeque<u8>,
    closed: bool,
    wakers: Vec<Waker>,
}

impl SessionInput {
    fn lock(&self) -> std::sync::MutexGuard<'_, InputState> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends `bytes` and wakes a waiting reader.
    pub(crate) fn push(&self, bytes: &[u8]) {
        let mut state = self.lock();
        state.buffer.extend(bytes);
        for waker in state.wakers.drain(..) {
            waker.wake();
        }
    }

    /// Ends the stream: a reader then sees end of file.
    pub(crate) fn close(&self) {
        let mut state = self.lock();
        state.closed = true;
        for waker in state.wakers.drain(..) {
            waker.wake();
        }
    }

    fn poll_ready(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.lock();
        if !state.buffer.is_empty() || state.closed {
            return Poll::Ready(());
        }
        if !state.wakers.iter().any(|w| w.will_wake(cx.waker())) {
            state.wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }

    /// Up to `size` bytes; `None` at end of file.
    fn take(&self, size: usize) -> Option<Bytes> {
        let mut state = self.lock();
        if state.buffer.is_empty() && state.closed {
            return None;
        }
        let n = size.min(state.buffer.len());
        Some(state.buffer.drain(..n).collect::<Vec<u8>>().into())
    }
}

impl IsTerminal for SessionInput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdinStream for SessionInput {
    fn p2_stream(&self) -> Box<dyn InputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncRead + Send + Sync> {
        Box::new(self.clone())
    }
}

impl InputStream for SessionInput {
    fn read(&mut self, size: usize) -> StreamResult<Bytes> {
        self.take(size).ok_or(StreamError::Closed)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for SessionInput {
    async fn ready(&mut self) {
        std::future::poll_fn(|cx| self.poll_ready(cx)).await
    }
}

impl tokio::io::AsyncRead for SessionInput {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.poll_ready(cx).is_pending() {
            return Poll::Pending;
        }
        if let Some(bytes) = self.take(buf.remaining()) {
            buf.put_slice(&bytes);
        }
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_need_the_calls_nonce() {
        let line = b"\x1egrpo-done abc {\"status\":\"ok\",\"exit_code\":0}\n";
        assert_eq!(report(line, "abc").map(|d| d.status), Some(CallStatus::Ok));
        assert!(report(line, "abd").is_none());
        assert!(report(line, "ab").is_none());
        assert!(report(b"grpo-done abc {}", "abc").is_none());
    }

    #[test]
    fn every_status_the_harness_writes_has_its_name() {
        for (name, status) in [
            ("ready", CallStatus::Ready),
            ("ok", CallStatus::Ok),
            ("memory", CallStatus::Memory),
            ("error", CallStatus::Error),
            ("something newer", CallStatus::Unknown),
        ] {
            let line = format!("\x1egrpo-done n {{\"status\":\"{name}\"}}\n");
            assert_eq!(
                report(line.as_bytes(), "n").map(|d| d.status),
                Some(status),
                "{name}"
            );
            // The harness writes each of the known names.
            if status != CallStatus::Unknown {
                assert!(
                    include_str!("guest/python/harness.py").contains(&format!("\"{name}\"")),
                    "harness.py does not write {name:?}"
                );
            }
        }
    }

    #[test]
    fn input_hands_out_what_was_pushed_then_end_of_file() {
        let mut input = SessionInput::default();
        assert_eq!(input.read(10).ok(), Some(Bytes::new()));
        input.push(b"hello");
        assert_eq!(input.read(3).ok(), Some(Bytes::from_static(b"hel")));
        input.close();
        assert_eq!(input.read(10).ok(), Some(Bytes::from_static(b"lo")));
        assert!(matches!(input.read(10), Err(StreamError::Closed)));
    }
}
