//! `grpo_rewards.Interpreter`: a Python interpreter in the sandbox that keeps its globals
//! from one call to the next ([`grpo_sandbox::Session`]), for code-interpreter tools in
//! multi-turn rollouts (TRL's `tools=` and `environment_factory`, verl's agent loop).
//!
//! Every call runs on the package's runtime with the GIL released, so other Python threads
//! run meanwhile; calls on one interpreter from several threads take turns. Limits are the
//! host's timers and caps: no signal handler, no main thread needed, so it works in Ray
//! workers. A closed interpreter (by `close()`, the end of a `with` block, or a spent CPU
//! budget or lifetime) raises `InterpreterClosed`.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use grpo_rewards::code::Limits;
use grpo_sandbox::{SandboxError, Session, SessionLimits};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};

use crate::{RewardFault, block_on, sandbox};

create_exception!(
    grpo_rewards,
    InterpreterClosed,
    PyRuntimeError,
    "The interpreter is closed: by close() or the end of its `with` block, or because its CPU \
     budget or lifetime is spent. Open a new one."
);

/// What one call printed and how it ended.
#[pyclass(frozen, eq, get_all, module = "grpo_rewards")]
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RunResult {
    /// `ok`, `error` (an uncaught exception or a non-zero `sys.exit`), `timeout`,
    /// `memory_limit`, `output_limit` (output cut) or `crash`.
    status: String,
    /// What the call printed (the last expression's value too, as in the REPL).
    stdout: String,
    /// What the call wrote to stderr (an uncaught exception's traceback, the sandbox's notes).
    stderr: String,
    /// The call's exit code (0 for `ok`, non-zero for an error or `sys.exit(n)`); `None` when
    /// the interpreter was stopped (a timeout, a crash).
    exit_code: Option<i32>,
    /// Wall-clock time of the call, in milliseconds.
    duration_ms: f64,
    /// Whether stdout or stderr was cut at the output cap.
    truncated: bool,
    /// CPU time the call received, in milliseconds: what its time limit is charged with.
    cpu_ms: f64,
}

#[pymethods]
impl RunResult {
    #[new]
    #[pyo3(signature = (status, stdout, stderr, exit_code, duration_ms, truncated, cpu_ms = 0.0))]
    fn new(
        status: String,
        stdout: String,
        stderr: String,
        exit_code: Option<i32>,
        duration_ms: f64,
        truncated: bool,
        cpu_ms: f64,
    ) -> Self {
        RunResult {
            status,
            stdout,
            stderr,
            exit_code,
            duration_ms,
            truncated,
            cpu_ms,
        }
    }

    /// Whether the call ran to its end without an error (`status == "ok"`).
    #[getter]
    fn ok(&self) -> bool {
        self.status == "ok"
    }

    /// Pickles as the constructor's arguments (Ray ships results between processes).
    #[allow(clippy::type_complexity, reason = "the constructor's argument tuple")]
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> (
        Bound<'py, PyType>,
        (String, String, String, Option<i32>, f64, bool, f64),
    ) {
        let r = slf.get();
        (
            slf.get_type(),
            (
                r.status.clone(),
                r.stdout.clone(),
                r.stderr.clone(),
                r.exit_code,
                r.duration_ms,
                r.truncated,
                r.cpu_ms,
            ),
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "RunResult(status={:?}, stdout={:?}, stderr={:?})",
            self.status, self.stdout, self.stderr
        )
    }
}

impl From<grpo_rewards::RunResult> for RunResult {
    fn from(r: grpo_rewards::RunResult) -> Self {
        RunResult {
            status: r.status.as_str().to_owned(),
            stdout: r.stdout,
            stderr: r.stderr,
            exit_code: r.exit_code,
            duration_ms: r.duration_ms,
            truncated: r.truncated,
            cpu_ms: r.cpu_ms,
        }
    }
}

/// A stateful Python interpreter in the sandbox (see the module docs).
#[pyclass(frozen, module = "grpo_rewards")]
pub(crate) struct Interpreter {
    limits: SessionLimits,
    /// `None` once closed by its owner (other closings are the session's own).
    session: Mutex<Option<Arc<Session>>>,
}

fn closed_error(reason: &str) -> PyErr {
    InterpreterClosed::new_err(format!("the interpreter is closed: {reason}"))
}

fn sandbox_error(e: SandboxError) -> PyErr {
    match e {
        SandboxError::SessionClosed { reason } => closed_error(&reason),
        SandboxError::InvalidLimit(e) => PyValueError::new_err(e.to_string()),
        e => RewardFault::new_err(format!("the sandbox failed: {e}")),
    }
}

impl Interpreter {
    fn session(&self) -> Option<Arc<Session>> {
        self.session
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[pymethods]
impl Interpreter {
    /// Opens an interpreter (waiting at most `open_timeout_s` for one of the sandbox's
    /// instance slots when every one is taken).
    #[new]
    #[pyo3(signature = (
        *,
        time_limit_ms = None,
        wall_limit_ms = None,
        memory_mb = None,
        output_bytes = None,
        file_quota_bytes = None,
        session_cpu_ms = None,
        lifetime_ms = None,
        open_timeout_s = 60.0,
    ))]
    #[allow(clippy::too_many_arguments, reason = "Python keyword arguments")]
    fn new(
        py: Python<'_>,
        time_limit_ms: Option<u64>,
        wall_limit_ms: Option<u64>,
        memory_mb: Option<u64>,
        output_bytes: Option<usize>,
        file_quota_bytes: Option<u64>,
        session_cpu_ms: Option<u64>,
        lifetime_ms: Option<u64>,
        open_timeout_s: f64,
    ) -> PyResult<Self> {
        let defaults = SessionLimits::default();
        let call = Limits {
            time_limit_ms: time_limit_ms.unwrap_or(defaults.call.time_limit_ms),
            wall_limit_ms: wall_limit_ms.or(defaults.call.wall_limit_ms),
            memory_mb: memory_mb.unwrap_or(defaults.call.memory_mb),
            output_bytes: output_bytes.unwrap_or(defaults.call.output_bytes),
            file_quota_bytes: file_quota_bytes.unwrap_or(defaults.call.file_quota_bytes),
        };
        let limits = SessionLimits {
            call,
            session_cpu_ms: session_cpu_ms.unwrap_or(defaults.session_cpu_ms),
            lifetime_ms: lifetime_ms.unwrap_or(defaults.lifetime_ms),
        };
        limits.validate().map_err(sandbox_error)?;
        if !open_timeout_s.is_finite() || open_timeout_s <= 0.0 {
            return Err(PyValueError::new_err(format!(
                "open_timeout_s: must be a positive number of seconds, got {open_timeout_s}"
            )));
        }
        let wait = Duration::from_secs_f64(open_timeout_s);
        let sandbox = sandbox(py)?;
        let opening = limits.clone();
        let session = block_on(py, async move {
            tokio::time::timeout(wait, Session::open(&sandbox, opening)).await
        })?
        .map_err(|_elapsed| {
            RewardFault::new_err(format!(
                "no interpreter could start within {open_timeout_s} s: every instance slot of \
                 the sandbox is taken (by other open interpreters); close some"
            ))
        })?
        .map_err(sandbox_error)?;
        Ok(Interpreter {
            limits,
            session: Mutex::new(Some(Arc::new(session))),
        })
    }

    /// Runs `code` in the interpreter's namespace and returns what it printed and how it
    /// ended. A program's own failure (an exception, a timeout, an output flood) is the
    /// result's `status`, never an exception; after a timeout the next call starts a fresh
    /// interpreter. Raises `InterpreterClosed` once closed, `RewardFault` when the sandbox
    /// fails.
    fn run(&self, py: Python<'_>, code: String) -> PyResult<RunResult> {
        let session = self
            .session()
            .ok_or_else(|| closed_error("it was closed"))?;
        let ran = block_on(py, async move { session.run(&code).await })?;
        ran.map(RunResult::from).map_err(sandbox_error)
    }

    /// Closes the interpreter and frees it; later calls raise `InterpreterClosed`. Closing
    /// twice is harmless. A call in progress on another thread finishes first.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let taken = self
            .session
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(session) = taken {
            block_on(py, async move { session.close().await })?;
        }
        Ok(())
    }

    /// Whether the interpreter is closed (by `close()`, or a spent CPU budget or lifetime).
    #[getter]
    fn closed(&self, py: Python<'_>) -> PyResult<bool> {
        match self.session() {
            None => Ok(true),
            Some(session) => block_on(py, async move { session.is_closed().await }),
        }
    }

    /// The limits in effect, as a dict.
    #[getter]
    fn limits<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let l = &self.limits;
        let d = PyDict::new(py);
        d.set_item("time_limit_ms", l.call.time_limit_ms)?;
        d.set_item("wall_limit_ms", l.call.wall_limit_ms())?;
        d.set_item("memory_mb", l.call.memory_mb)?;
        d.set_item("output_bytes", l.call.output_bytes)?;
        d.set_item("file_quota_bytes", l.call.file_quota_bytes)?;
        d.set_item("session_cpu_ms", l.session_cpu_ms)?;
        d.set_item("lifetime_ms", l.lifetime_ms)?;
        Ok(d)
    }

    /// What the interpreter has done: `calls`, `restarts`, `cpu_ms`, `busy_ms`.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let stats = match self.session() {
            None => return Err(closed_error("it was closed")),
            Some(session) => block_on(py, async move { session.stats().await })?,
        };
        let d = PyDict::new(py);
        d.set_item("calls", stats.calls)?;
        d.set_item("restarts", stats.restarts)?;
        d.set_item("cpu_ms", stats.cpu_ms)?;
        d.set_item("busy_ms", stats.busy_ms)?;
        Ok(d)
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _exc_type: Option<Bound<'_, PyAny>>,
        _exc: Option<Bound<'_, PyAny>>,
        _traceback: Option<Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        let state = if self.session().is_some() {
            "open"
        } else {
            "closed"
        };
        format!(
            "Interpreter({state}, time_limit_ms={}, memory_mb={})",
            self.limits.call.time_limit_ms, self.limits.call.memory_mb
        )
    }
}
