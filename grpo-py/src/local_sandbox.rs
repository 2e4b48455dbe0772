//! `grpo_rewards.LocalSandbox`: a [`grpo_sandbox::Workspace`] from Python, the shape the RL
//! frameworks' sandboxes share (create, `exec(command, timeout)`, `read`, `write`, `close`).
//!
//! Every call runs on the package's runtime with the GIL released. A closed sandbox (by
//! `close()`, its `with` block, its lifetime or CPU budget) raises `SandboxClosed`; closing
//! twice is fine, and dropping the object removes its directory too.

use std::sync::Arc;
use std::time::Duration;

use grpo_sandbox::{Workspace, WorkspaceError, WorkspaceLimits};
use pyo3::create_exception;
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};

use crate::{RewardFault, block_on, sandbox};

create_exception!(
    grpo_rewards,
    SandboxClosed,
    PyRuntimeError,
    "The local sandbox is closed: by close() or the end of its `with` block, or because its \
     lifetime or CPU budget is spent."
);

/// What one `exec` printed and how it ended.
#[pyclass(frozen, eq, get_all, module = "grpo_rewards")]
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ExecResult {
    /// 0 on success; 124 past the timeout, 137 past the memory cap, 127 for a command
    /// outside the subset, 2 for syntax outside it.
    exit_code: i32,
    /// What the commands printed (not the redirected parts).
    stdout: String,
    /// Tracebacks, compiler messages, the sandbox's notes.
    stderr: String,
    /// A command was stopped by its time limit or the timeout.
    timed_out: bool,
    /// stdout or stderr was cut at the output cap.
    truncated: bool,
}

#[pymethods]
impl ExecResult {
    #[new]
    fn new(
        exit_code: i32,
        stdout: String,
        stderr: String,
        timed_out: bool,
        truncated: bool,
    ) -> Self {
        ExecResult {
            exit_code,
            stdout,
            stderr,
            timed_out,
            truncated,
        }
    }

    /// Pickles as the constructor's arguments.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> (Bound<'py, PyType>, (i32, String, String, bool, bool)) {
        let r = slf.get().clone();
        (
            slf.get_type(),
            (r.exit_code, r.stdout, r.stderr, r.timed_out, r.truncated),
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "ExecResult(exit_code={}, stdout={:?}, stderr={:?})",
            self.exit_code, self.stdout, self.stderr
        )
    }
}

fn error(e: WorkspaceError) -> PyErr {
    match e {
        WorkspaceError::Closed { .. } => SandboxClosed::new_err(e.to_string()),
        WorkspaceError::Path { .. } | WorkspaceError::InvalidLimit { .. } => {
            PyValueError::new_err(e.to_string())
        }
        WorkspaceError::NotFound { .. } => PyFileNotFoundError::new_err(e.to_string()),
        WorkspaceError::Quota { .. } => PyOSError::new_err(e.to_string()),
        e => RewardFault::new_err(format!("the sandbox failed: {e}")),
    }
}

fn seconds(field: &str, s: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(s)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "{field}: expected a positive number of seconds, got {s}"
            ))
        })
}

/// A private workspace directory in the wasm sandbox (see the module docs).
#[pyclass(frozen, module = "grpo_rewards")]
pub(crate) struct LocalSandbox {
    workspace: Arc<Workspace>,
}

#[pymethods]
impl LocalSandbox {
    /// A new, empty sandbox. Limits: `cpu_s` and `memory_mb` per command, `timeout_s` the
    /// longest `exec` (and the default), `output_bytes` per `exec`, `quota_bytes` for the
    /// files, `cpu_budget_s` and `lifetime_s` (`None`: unlimited) for the sandbox.
    #[new]
    #[pyo3(signature = (*, cpu_s = 10.0, memory_mb = 256, timeout_s = 60.0, output_bytes = 1 << 20, quota_bytes = 16 << 20, cpu_budget_s = 600.0, lifetime_s = Some(3600.0)))]
    #[allow(clippy::too_many_arguments, reason = "keyword-only limits")]
    fn new(
        py: Python<'_>,
        cpu_s: f64,
        memory_mb: u64,
        timeout_s: f64,
        output_bytes: usize,
        quota_bytes: u64,
        cpu_budget_s: f64,
        lifetime_s: Option<f64>,
    ) -> PyResult<Self> {
        let millis = |field, s| seconds(field, s).map(|d| d.as_millis() as u64);
        let limits = WorkspaceLimits {
            cpu_ms: millis("cpu_s", cpu_s)?,
            memory_mb,
            output_bytes,
            timeout_ms: millis("timeout_s", timeout_s)?,
            quota_bytes,
            cpu_budget_ms: millis("cpu_budget_s", cpu_budget_s)?,
            lifetime: lifetime_s.map(|s| seconds("lifetime_s", s)).transpose()?,
        };
        let workspace = Workspace::create(&sandbox(py)?, limits).map_err(error)?;
        Ok(LocalSandbox {
            workspace: Arc::new(workspace),
        })
    }

    /// Runs `command` (simple commands joined by `&&`: `python3 FILE|-c CODE [ARGS]`,
    /// `node FILE`, `gcc`/`g++ [-o OUT] FILE`, `./OUT [ARGS]`, with `< FILE` and `> FILE`)
    /// within `timeout` seconds (`None`: the sandbox's `timeout_s`).
    #[pyo3(signature = (command, timeout = None))]
    fn exec(&self, py: Python<'_>, command: String, timeout: Option<f64>) -> PyResult<ExecResult> {
        let timeout = timeout.map(|s| seconds("timeout", s)).transpose()?;
        let workspace = Arc::clone(&self.workspace);
        let r =
            block_on(py, async move { workspace.exec(&command, timeout).await })?.map_err(error)?;
        Ok(ExecResult {
            exit_code: r.exit_code,
            stdout: r.stdout,
            stderr: r.stderr,
            timed_out: r.timed_out,
            truncated: r.truncated,
        })
    }

    /// The bytes of the file at `path` (relative, or under `/tmp/`).
    fn read<'py>(&self, py: Python<'py>, path: String) -> PyResult<Bound<'py, PyBytes>> {
        let workspace = Arc::clone(&self.workspace);
        let bytes = block_on(py, async move { workspace.read(&path).await })?.map_err(error)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Writes `data` (bytes, or text as UTF-8) to the file at `path`.
    fn write(&self, py: Python<'_>, path: String, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let bytes: Vec<u8> = match data.extract::<String>() {
            Ok(text) => text.into_bytes(),
            Err(_) => data
                .extract::<Vec<u8>>()
                .map_err(|_| PyValueError::new_err("data: expected bytes or str"))?,
        };
        let workspace = Arc::clone(&self.workspace);
        block_on(py, async move { workspace.write(&path, &bytes).await })?.map_err(error)
    }

    /// The files and their sizes, in path order.
    fn list(&self, py: Python<'_>) -> PyResult<Vec<(String, u64)>> {
        let workspace = Arc::clone(&self.workspace);
        block_on(py, async move { workspace.list().await })?.map_err(error)
    }

    /// Closes the sandbox and removes its directory; closing twice is fine.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let workspace = Arc::clone(&self.workspace);
        block_on(py, async move { workspace.close().await })
    }

    /// Whether the sandbox is closed.
    #[getter]
    fn closed(&self, py: Python<'_>) -> PyResult<bool> {
        let workspace = Arc::clone(&self.workspace);
        block_on(py, async move { workspace.is_closed().await })
    }

    /// The workspace's directory on the host (`None` once closed), for inspection.
    #[getter]
    fn path(&self) -> Option<String> {
        self.workspace.path().map(|p| p.display().to_string())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        match self.workspace.path() {
            Some(p) => format!("LocalSandbox({:?})", p.display().to_string()),
            None => "LocalSandbox(closed)".into(),
        }
    }
}
