//! Directories named after the process that made them, so that a later process can remove
//! those whose owner is gone.
//!
//! Process-wide objects (the shared [`Sandbox`](crate::sandbox::Sandbox), the shared C
//! compiler) are statics and are never dropped, so directories they keep in the system's
//! temporary directory outlive the process. Each such directory is named
//! `<prefix><pid>-<random>`; whoever makes the first one of a kind in a directory first calls
//! [`remove_stale`], which removes the ones whose process no longer exists.

use std::io;
use std::path::Path;

/// `<prefix><this process's id>-`: the start of a directory name [`remove_stale`] can judge.
pub(crate) fn owned_prefix(prefix: &str) -> String {
    format!("{prefix}{}-", std::process::id())
}

/// Removes the directories in `dir` named `<prefix><pid>-…` whose process is gone (a process
/// id now used by another process keeps its directory until that one is gone too). Names
/// without a process id and a second `-` are not judged.
pub(crate) fn remove_stale(dir: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let me = std::process::id();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me || !gone(pid) {
            continue;
        }
        match std::fs::remove_dir_all(entry.path()) {
            Ok(()) => {
                tracing::debug!(path = %entry.path().display(), "removed a stale directory")
            }
            Err(e) => {
                tracing::debug!(path = %entry.path().display(), error = %e, "could not remove a stale directory")
            }
        }
    }
}

/// Whether no process has id `pid`.
fn gone(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only asks whether the process exists.
    unsafe {
        libc::kill(pid, 0) != 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_directories_of_processes_that_are_gone_are_removed() {
        let root = tempfile::tempdir().unwrap();
        let dir = |name: String| root.path().join(name);
        // No process has the largest pid; ours is alive.
        let dead = dir(format!("x-{}-a", libc::pid_t::MAX));
        let live = dir(owned_prefix("x-") + "b");
        let unjudged = dir(format!("x-{}", libc::pid_t::MAX));
        let other = dir(format!("y-{}-c", libc::pid_t::MAX));
        for dir in [&dead, &live, &unjudged, &other] {
            std::fs::create_dir_all(dir.join("jobs/sub")).unwrap();
            std::fs::write(dir.join("jobs/sub/main.c"), "int main(void){}").unwrap();
        }
        remove_stale(root.path(), "x-");
        assert!(
            !dead.exists(),
            "the gone process's directory is removed, files and all"
        );
        for kept in [&live, &unjudged, &other] {
            assert!(kept.exists(), "{} is kept", kept.display());
        }
    }
}
