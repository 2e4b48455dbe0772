//! Files around one sandboxed run: placed in its working directory before it starts and read
//! back after it ends (SandboxFusion's `files` and `fetch_files`).
//!
//! The working directory is the run's own temporary directory on the host, which the program
//! sees as `/tmp` and as its current directory. A path names a place inside it: relative
//! (`data/in.txt`) or under `/tmp/` (`/tmp/data/in.txt`); `..`, other absolute paths and empty
//! names are refused before anything is written. Reading back never follows a symbolic link
//! (a program may make one that points at a host file) and reads regular files only, up to a
//! size cap.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// A path inside a run's working directory.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct JobPath {
    name: String,
    relative: PathBuf,
}

impl JobPath {
    /// Checks `path`: relative, or under `/tmp/`, with no `..` and no empty name.
    pub fn parse(path: &str) -> Result<JobPath, String> {
        let trimmed = path.strip_prefix("/tmp/").unwrap_or(path);
        if trimmed.is_empty() || trimmed.contains('\0') {
            return Err(format!("{path:?} is not a file name"));
        }
        let mut relative = PathBuf::new();
        for component in Path::new(trimmed).components() {
            match component {
                Component::Normal(part) => relative.push(part),
                Component::CurDir => {}
                Component::ParentDir => {
                    return Err(format!("{path:?} leaves the run's directory (`..`)"));
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(format!(
                        "{path:?} is outside the run's directory (use a relative path or /tmp/…)"
                    ));
                }
            }
        }
        if relative.as_os_str().is_empty() {
            return Err(format!("{path:?} is not a file name"));
        }
        Ok(JobPath {
            name: path.to_owned(),
            relative,
        })
    }

    /// The path as the caller wrote it.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// What to place before a run and what to read back after it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobFiles {
    /// Files written into the working directory before the run (parents created).
    pub put: Vec<(JobPath, Vec<u8>)>,
    /// Files read back after the run.
    pub fetch: Vec<JobPath>,
}

impl JobFiles {
    /// Whether there is nothing to place or fetch.
    pub fn is_empty(&self) -> bool {
        self.put.is_empty() && self.fetch.is_empty()
    }

    /// Total bytes placed.
    pub fn put_bytes(&self) -> u64 {
        self.put.iter().map(|(_, b)| b.len() as u64).sum()
    }
}

/// Writes the files into `workdir`.
pub(crate) fn place(workdir: &Path, files: &JobFiles) -> std::io::Result<()> {
    for (path, bytes) in &files.put {
        let target = workdir.join(&path.relative);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&target, bytes)?;
    }
    Ok(())
}

/// Reads the requested files back from `workdir`: each one that is a regular file reached
/// without a symbolic link, at most `max_bytes` in all; the others are left out.
pub(crate) fn fetch(
    workdir: &Path,
    paths: &[JobPath],
    max_bytes: u64,
) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut left = max_bytes;
    for path in paths {
        let mut at = workdir.to_path_buf();
        let mut safe = true;
        for part in path.relative.components() {
            at.push(part);
            match std::fs::symlink_metadata(&at) {
                Ok(meta) if !meta.file_type().is_symlink() => {}
                _ => {
                    safe = false;
                    break;
                }
            }
        }
        let Ok(meta) = std::fs::symlink_metadata(&at) else {
            continue;
        };
        if !safe || !meta.is_file() || meta.len() > left {
            tracing::debug!(
                path = path.name(),
                "not fetched: missing, not a regular file, a link, or over the cap"
            );
            continue;
        }
        let mut bytes = Vec::new();
        let read = std::fs::File::open(&at).and_then(|f| f.take(left).read_to_end(&mut bytes));
        if read.is_ok() {
            left -= bytes.len() as u64;
            out.insert(path.name().to_owned(), bytes);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside_the_run_directory() {
        for ok in ["a.txt", "data/in.txt", "./x", "/tmp/x.txt", "/tmp/d/e"] {
            assert!(JobPath::parse(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "/tmp/../etc/passwd",
            "/tmp/",
            "a\0b",
            ".",
        ] {
            assert!(JobPath::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn fetch_skips_links_directories_and_what_is_over_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let p = |s: &str| JobPath::parse(s).unwrap();
        let files = JobFiles {
            put: vec![
                (p("a.txt"), b"hello".to_vec()),
                (p("d/b.txt"), b"0123456789".to_vec()),
            ],
            fetch: Vec::new(),
        };
        place(dir.path(), &files).unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "host secret").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("link")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("dirlink")).unwrap();
        let got = fetch(
            dir.path(),
            &[
                p("a.txt"),
                p("/tmp/d/b.txt"),
                p("link"),
                p("dirlink/secret"),
                p("d"),
                p("none"),
            ],
            100,
        );
        assert_eq!(got.len(), 2);
        assert_eq!(got["a.txt"], b"hello");
        assert_eq!(got["/tmp/d/b.txt"], b"0123456789");
        let capped = fetch(dir.path(), &[p("a.txt"), p("d/b.txt")], 12);
        assert_eq!(capped.keys().collect::<Vec<_>>(), ["a.txt"]);
    }
}
