//! Errors of the sandbox itself (never of the program it runs: that is a
//! [`RunResult`](grpo_rewards::RunResult)).

use std::path::PathBuf;

/// A failure on the host side of the sandbox.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// The engine could not be built, or the runtime could not be compiled or instantiated.
    #[error("sandbox engine: {reason}")]
    Engine {
        /// What went wrong.
        reason: String,
    },
    /// wasmtime refused or failed a step of ours: building the engine, compiling, linking,
    /// serialising or starting a module (never a program's own trap: that is its verdict).
    #[error("{what}: {source}")]
    Wasm {
        /// The step.
        what: &'static str,
        /// wasmtime's error, with its chain.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Work the sandbox handed to tokio's blocking pool (a compile, a toolchain install)
    /// panicked or was cancelled.
    #[error("{what}: {source}")]
    Blocking {
        /// The work.
        what: &'static str,
        /// Why it did not finish.
        #[source]
        source: tokio::task::JoinError,
    },
    /// The sandbox was closed while a run waited for a slot.
    #[error("the sandbox is closed")]
    Closed(#[source] tokio::sync::AcquireError),
    /// A host file or directory could not be used.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A limit is out of range.
    #[error(transparent)]
    InvalidLimit(#[from] grpo_rewards::code::LimitError),
    /// The C/C++ toolchain is missing or could not compile on our side (never the program's
    /// own compile error: that is a failed [`CompileStep`](crate::run_program::CompileStep)).
    #[error("{0}")]
    Toolchain(#[from] crate::guest::cc::CcError),
    /// A request asks for something its language does not offer.
    #[error("{reason}")]
    Unsupported {
        /// What and why.
        reason: String,
    },
    /// An interpreter session is closed: closed by its owner, or its CPU budget or lifetime
    /// is spent.
    #[error("the session is closed: {reason}")]
    SessionClosed {
        /// Why.
        reason: String,
    },
    /// A code task cannot be run as given.
    #[error("task {task_id}: {reason}")]
    Task {
        /// The task's id.
        task_id: String,
        /// Why.
        reason: String,
    },
}

impl SandboxError {
    /// A [`SandboxError::Wasm`] for a failed `what`, keeping wasmtime's error as the source.
    pub(crate) fn wasm(what: &'static str) -> impl FnOnce(wasmtime::Error) -> SandboxError {
        move |e| SandboxError::Wasm {
            what,
            source: e.into_boxed_dyn_error(),
        }
    }

    /// A [`SandboxError::Blocking`] for `what`, keeping the join error as the source.
    pub(crate) fn blocking(
        what: &'static str,
    ) -> impl FnOnce(tokio::task::JoinError) -> SandboxError {
        move |source| SandboxError::Blocking { what, source }
    }
}

/// The sandbox's result alias.
pub type Result<T, E = SandboxError> = std::result::Result<T, E>;
