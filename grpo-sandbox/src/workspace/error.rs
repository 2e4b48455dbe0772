//! Why a workspace call failed on the host's side (a command's own failure is an
//! [`ExecResult`](super::ExecResult) with a non-zero exit code, never an error).

use std::path::PathBuf;

use crate::error::SandboxError;

/// A failure of a workspace call.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkspaceError {
    /// A path is not inside the workspace.
    #[error("path {path:?} refused: {reason}")]
    Path {
        /// The path as given.
        path: String,
        /// Why.
        reason: String,
    },
    /// A file asked for does not exist.
    #[error("no file {path:?} in the workspace")]
    NotFound {
        /// The path as given.
        path: String,
    },
    /// A write would take the workspace past its byte quota.
    #[error(
        "writing {path:?} would take the workspace to {total} bytes, over its quota of {quota} bytes"
    )]
    Quota {
        /// The file written.
        path: String,
        /// The workspace's size after the write.
        total: u64,
        /// `quota_bytes`.
        quota: u64,
    },
    /// The workspace is closed: by its owner, or its lifetime or CPU budget is spent.
    #[error("the workspace is closed: {reason}")]
    Closed {
        /// Why.
        reason: String,
    },
    /// A limit is out of range.
    #[error("workspace limit {field}: {reason}")]
    InvalidLimit {
        /// The field of [`WorkspaceLimits`](super::WorkspaceLimits).
        field: &'static str,
        /// Why.
        reason: String,
    },
    /// The workspace's directory could not be used.
    #[error("workspace file {path:?} (under {}): {source}", root.display())]
    Io {
        /// The path inside the workspace.
        path: String,
        /// The workspace's directory.
        root: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The sandbox failed under a command.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
}
