//! [`Workspace`]: a private directory that persists across the commands run in it, with the
//! shape the RL frameworks' sandboxes share: create, `exec(command, timeout)` to
//! `{stdout, stderr, exit_code}`, read and write files, close.
//!
//! A command line is simple commands joined by `&&` ([`command`] has the grammar), each one
//! of:
//!
//! | command | runs |
//! |---|---|
//! | `python3 FILE [ARGS]`, `python3 -c CODE [ARGS]` | CPython in the sandbox |
//! | `node FILE` (`.js`, or `.ts` with its types stripped) | QuickJS-NG with the Node.js prelude |
//! | `gcc`/`g++`/`cc`/`c++`/`clang`/`clang++` `[-o OUT] FILE` | the pinned compiler to a `wasm32-wasi` module, written to `OUT` (`a.out`) |
//! | `./OUT [ARGS]` | a module built by such a command in this workspace |
//! | `true`, `false` | nothing (exit 0, exit 1): a liveness probe |
//!
//! with `< FILE` and `> FILE` on any of them. Anything else exits 127 with
//! `unsupported command: NAME` on stderr; syntax outside the subset exits 2.
//!
//! Every program runs through [`Sandbox::run_program`], the one run path: the workspace's
//! files are placed in the run's directory (the program's `/tmp` and current directory) and
//! read back after it, with those its arguments name. The workspace itself is a directory
//! under the sandbox's temporary root; the program never sees the host's files. What is not
//! carried back: files a program makes under names that are neither in the workspace nor on
//! its command line, and deletions.
//!
//! Limits ([`WorkspaceLimits`]): CPU, memory and output per command, a timeout per `exec`
//! (its wall clock, all commands together), a byte quota on the workspace, a CPU budget and a
//! lifetime for the workspace. Closing is idempotent and removes the directory; so does
//! dropping the workspace. A workspace holds no instance slot between commands: creating one
//! costs a directory.

pub mod command;
mod error;
mod exec;
pub mod tree;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use grpo_rewards::code::limits::MIN_MEMORY_MB;
use grpo_tasks::Language;

pub use error::WorkspaceError;
pub use tree::WorkPath;

use crate::sandbox::Sandbox;

/// The limits of one workspace and of each command run in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceLimits {
    /// CPU time each command may spend, in milliseconds.
    pub cpu_ms: u64,
    /// Memory each command may use, in MiB.
    pub memory_mb: u64,
    /// Bytes kept of each of an `exec`'s stdout and stderr.
    pub output_bytes: usize,
    /// The longest `exec` (all its commands, their compiles included), in milliseconds, and
    /// the timeout of one that names none.
    pub timeout_ms: u64,
    /// Bytes the workspace's files may hold in all.
    pub quota_bytes: u64,
    /// CPU time all the workspace's commands may spend, in milliseconds; then it closes.
    pub cpu_budget_ms: u64,
    /// How long the workspace lives after its creation (`None`: until closed or dropped).
    pub lifetime: Option<Duration>,
}

impl Default for WorkspaceLimits {
    fn default() -> Self {
        WorkspaceLimits {
            cpu_ms: 10_000,
            memory_mb: 256,
            output_bytes: 1 << 20,
            timeout_ms: 60_000,
            quota_bytes: 16 << 20,
            cpu_budget_ms: 600_000,
            lifetime: Some(Duration::from_secs(3600)),
        }
    }
}

impl WorkspaceLimits {
    /// Checks every field; the error names the one out of range.
    pub fn validate(&self) -> Result<(), WorkspaceError> {
        let positive = [
            ("cpu_ms", self.cpu_ms),
            ("output_bytes", self.output_bytes as u64),
            ("timeout_ms", self.timeout_ms),
            ("quota_bytes", self.quota_bytes),
            ("cpu_budget_ms", self.cpu_budget_ms),
        ];
        for (field, value) in positive {
            if value == 0 {
                return Err(WorkspaceError::InvalidLimit {
                    field,
                    reason: "must be positive".into(),
                });
            }
        }
        if self.memory_mb < MIN_MEMORY_MB {
            return Err(WorkspaceError::InvalidLimit {
                field: "memory_mb",
                reason: format!("{} is under the minimum of {MIN_MEMORY_MB}", self.memory_mb),
            });
        }
        if self.lifetime == Some(Duration::ZERO) {
            return Err(WorkspaceError::InvalidLimit {
                field: "lifetime",
                reason: "must be positive (or none)".into(),
            });
        }
        Ok(())
    }
}

/// What an `exec` printed and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecResult {
    /// The last command's exit code: 0 on success; 124 past the timeout or CPU limit, 137
    /// past the memory limit, 127 for a command outside the subset, 2 for syntax outside it.
    pub exit_code: i32,
    /// What the commands wrote to stdout (not the redirected parts), at most `output_bytes`.
    pub stdout: String,
    /// What they wrote to stderr (tracebacks, compiler messages, the sandbox's notes).
    pub stderr: String,
    /// A command was stopped by its time limit or the `exec`'s timeout.
    pub timed_out: bool,
    /// stdout or stderr was cut at `output_bytes`.
    pub truncated: bool,
    /// CPU time the commands received, in milliseconds.
    pub cpu_ms: u64,
}

/// A program built by a compile command in this workspace: its language and source (the
/// module is the compile cache's; running it again is a cache hit).
#[derive(Debug, Clone)]
struct Executable {
    language: Language,
    source: Arc<str>,
}

/// An open workspace's state.
struct Open {
    dir: tempfile::TempDir,
    executables: BTreeMap<WorkPath, Executable>,
    cpu_spent_ms: u64,
}

enum State {
    Open(Box<Open>),
    Closed(String),
}

/// A private directory of files and the commands run over it (see the module docs). Cheap to
/// create; `Send + Sync`: commands on one workspace take turns.
pub struct Workspace {
    sandbox: Sandbox,
    limits: WorkspaceLimits,
    created: Instant,
    state: tokio::sync::Mutex<State>,
    /// The directory, for [`Workspace::path`] without the lock.
    path: Mutex<Option<std::path::PathBuf>>,
}

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace")
            .field("path", &self.path())
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Workspace {
    /// A new, empty workspace on `sandbox`, its directory under the sandbox's temporary root.
    pub fn create(sandbox: &Sandbox, limits: WorkspaceLimits) -> Result<Workspace, WorkspaceError> {
        limits.validate()?;
        let root = sandbox.temp_dir();
        let dir = tempfile::Builder::new()
            .prefix("grpo-workspace-")
            .tempdir_in(&root)
            .map_err(|source| WorkspaceError::Io {
                path: String::new(),
                root: root.clone(),
                source,
            })?;
        let path = dir.path().to_path_buf();
        Ok(Workspace {
            sandbox: sandbox.clone(),
            limits,
            created: Instant::now(),
            state: tokio::sync::Mutex::new(State::Open(Box::new(Open {
                dir,
                executables: BTreeMap::new(),
                cpu_spent_ms: 0,
            }))),
            path: Mutex::new(Some(path)),
        })
    }

    /// The workspace's limits.
    pub fn limits(&self) -> &WorkspaceLimits {
        &self.limits
    }

    /// The workspace's directory on the host, `None` once closed.
    pub fn path(&self) -> Option<std::path::PathBuf> {
        self.path
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Runs `command` (see the module docs) with a timeout on its wall clock (`None`: the
    /// limits' `timeout_ms`; never more).
    pub async fn exec(
        &self,
        command: &str,
        timeout: Option<Duration>,
    ) -> Result<ExecResult, WorkspaceError> {
        let max = Duration::from_millis(self.limits.timeout_ms);
        let timeout = timeout.map_or(max, |t| t.min(max));
        let mut state = self.state.lock().await;
        let open = self.open(&mut state)?;
        let result = exec::run_line(&self.sandbox, &self.limits, open, command, timeout).await?;
        open.cpu_spent_ms = open.cpu_spent_ms.saturating_add(result.cpu_ms);
        if open.cpu_spent_ms > self.limits.cpu_budget_ms {
            let reason = format!(
                "its CPU budget of {} ms is spent",
                self.limits.cpu_budget_ms
            );
            tracing::debug!(%reason, "closing a workspace");
            self.close_locked(&mut state, reason);
        }
        Ok(result)
    }

    /// The bytes of the file at `path`.
    pub async fn read(&self, path: &str) -> Result<Vec<u8>, WorkspaceError> {
        let at = WorkPath::parse(path)?;
        let mut state = self.state.lock().await;
        let open = self.open(&mut state)?;
        tree::read(open.dir.path(), &at)?.ok_or_else(|| WorkspaceError::NotFound {
            path: path.to_owned(),
        })
    }

    /// Writes `bytes` to the file at `path` (parents created), within the quota.
    pub async fn write(&self, path: &str, bytes: &[u8]) -> Result<(), WorkspaceError> {
        let at = WorkPath::parse(path)?;
        let mut state = self.state.lock().await;
        let quota = self.limits.quota_bytes;
        let open = self.open(&mut state)?;
        let root = open.dir.path();
        let others: u64 = tree::list(root)?
            .iter()
            .filter(|(p, _)| *p != at)
            .map(|(_, n)| n)
            .sum();
        let total = others.saturating_add(bytes.len() as u64);
        if total > quota {
            return Err(WorkspaceError::Quota {
                path: path.to_owned(),
                total,
                quota,
            });
        }
        tree::write(root, &at, bytes)?;
        open.executables.remove(&at);
        Ok(())
    }

    /// The workspace's files and their sizes, in path order.
    pub async fn list(&self) -> Result<Vec<(String, u64)>, WorkspaceError> {
        let mut state = self.state.lock().await;
        let open = self.open(&mut state)?;
        Ok(tree::list(open.dir.path())?
            .into_iter()
            .map(|(p, n)| (p.as_str().to_owned(), n))
            .collect())
    }

    /// Closes the workspace and removes its directory. Closing a closed one does nothing.
    pub async fn close(&self) {
        let mut state = self.state.lock().await;
        self.close_locked(&mut state, "closed by its owner".into());
    }

    /// Whether the workspace is closed (by its owner, its lifetime or its CPU budget).
    pub async fn is_closed(&self) -> bool {
        let mut state = self.state.lock().await;
        self.open(&mut state).is_err()
    }

    /// The open state, closing it first when the lifetime is spent.
    fn open<'s>(&self, state: &'s mut State) -> Result<&'s mut Open, WorkspaceError> {
        if let (State::Open(_), Some(lifetime)) = (&*state, self.limits.lifetime)
            && self.created.elapsed() >= lifetime
        {
            let reason = format!("its lifetime of {} s is spent", lifetime.as_secs_f64());
            self.close_locked(state, reason);
        }
        match state {
            State::Open(open) => Ok(open),
            State::Closed(reason) => Err(WorkspaceError::Closed {
                reason: reason.clone(),
            }),
        }
    }

    fn close_locked(&self, state: &mut State, reason: String) {
        if let State::Open(open) = std::mem::replace(state, State::Closed(reason)) {
            let dir = open.dir.path().to_path_buf();
            if let Err(e) = open.dir.close() {
                tracing::warn!(dir = %dir.display(), error = %e, "could not remove a workspace directory");
            }
            *self.path.lock().unwrap_or_else(PoisonError::into_inner) = None;
        }
    }
}
