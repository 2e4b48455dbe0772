//! Faults on our side of compilation: a missing or damaged toolchain, a download that fails
//! or does not match its pin, a compiler that cannot be started or confined. A user's source
//! that does not compile is never one of these: it is [`Compiled::Failed`](super::Compiled).

use std::path::PathBuf;

/// A fault of the toolchain or of the host side of compilation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CcError {
    /// No toolchain is installed where it is looked for.
    #[error(
        "the C/C++ toolchain (zig {version}) is not installed in {}: run `grpo toolchain install` \
         (downloads {url}; it installs itself on first use unless GRPO_NO_DOWNLOAD is set), or on \
         a host without network `grpo toolchain install --from-file WHEEL` with that wheel copied \
         there (or GRPO_ZIG_WHEEL=WHEEL)",
        dir.display()
    )]
    Missing {
        /// Where it was looked for.
        dir: PathBuf,
        /// The pinned zig version.
        version: &'static str,
        /// The pinned wheel's URL for this host.
        url: &'static str,
    },
    /// Neither `$XDG_CACHE_HOME` nor `$HOME` is set, so there is no cache directory.
    #[error("no cache directory: set XDG_CACHE_HOME or HOME")]
    NoCacheDir,
    /// No wheel is pinned for this operating system and architecture.
    #[error("no pinned zig toolchain for {os}-{arch} (x86_64-linux and aarch64-linux are)")]
    UnsupportedHost {
        /// `std::env::consts::OS`.
        os: &'static str,
        /// `std::env::consts::ARCH`.
        arch: &'static str,
    },
    /// The download failed.
    #[error("downloading {url}: {reason}")]
    Download {
        /// The URL.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// The wheel's SHA-256 is not the pinned one (nothing was unpacked).
    #[error("{what}: SHA-256 {actual} does not match the pinned {expected}")]
    HashMismatch {
        /// The file or URL.
        what: String,
        /// The pinned digest.
        expected: &'static str,
        /// The digest of what was read.
        actual: String,
    },
    /// The wheel could not be unpacked, or does not hold what a toolchain needs.
    #[error("unpacking {}: {reason}", path.display())]
    Unpack {
        /// The wheel.
        path: PathBuf,
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
    /// The compiler could not be started (or waited for).
    #[error("starting the compiler {}: {source}", path.display())]
    Spawn {
        /// The compiler binary.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Compiling a known-good program failed: the toolchain is broken, not the source.
    #[error("the toolchain failed to compile a known-good {what}: {stderr}")]
    WarmUp {
        /// Which program.
        what: &'static str,
        /// The compiler's messages.
        stderr: String,
    },
    /// The compiler would run without filesystem confinement and that is not allowed.
    #[error(
        "refusing to compile: no filesystem confinement (Landlock) is available on this kernel \
         ({reason}); set `CompilerOptions::require_filesystem_confinement` to false only where the source is trusted"
    )]
    Unconfined {
        /// Why Landlock is unavailable.
        reason: String,
    },
    /// A limit is out of range.
    #[error("invalid compile limit `{field}`: {reason}")]
    InvalidLimit {
        /// The field of [`CompileLimits`](super::CompileLimits).
        field: &'static str,
        /// Why it is invalid.
        reason: String,
    },
}

impl CcError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        CcError::Io {
            path: path.into(),
            source,
        }
    }
}
