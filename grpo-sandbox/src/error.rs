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

/// The sandbox's result alias.
pub type Result<T, E = SandboxError> = std::result::Result<T, E>;
