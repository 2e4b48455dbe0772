//! The workspace's files on the host: paths confined to its directory, and the walk, the
//! reads and the writes that never follow a symbolic link.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use super::error::WorkspaceError;

/// A checked path inside a workspace, relative to its directory. A program sees the
/// workspace as `/tmp` (its current directory too), so `/tmp/x` and `x` are the same file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WorkPath(PathBuf);

impl WorkPath {
    /// Checks `path`: relative or under `/tmp/`, no `..`, no empty name, no NUL.
    pub fn parse(path: &str) -> Result<WorkPath, WorkspaceError> {
        let refused = |reason: &str| WorkspaceError::Path {
            path: path.to_owned(),
            reason: reason.to_owned(),
        };
        let trimmed = path.strip_prefix("/tmp/").unwrap_or(path);
        if trimmed.contains('\0') {
            return Err(refused("a NUL byte in the name"));
        }
        let mut relative = PathBuf::new();
        for component in Path::new(trimmed).components() {
            match component {
                Component::Normal(part) => relative.push(part),
                Component::CurDir => {}
                Component::ParentDir => return Err(refused("`..` would leave the workspace")),
                Component::RootDir | Component::Prefix(_) => {
                    return Err(refused(
                        "an absolute path outside the workspace (use a relative path or /tmp/…)",
                    ));
                }
            }
        }
        if relative.as_os_str().is_empty() {
            return Err(refused("not a file name"));
        }
        Ok(WorkPath(relative))
    }

    /// The path relative to the workspace, `/`-separated.
    pub fn as_str(&self) -> &str {
        self.0.to_str().unwrap_or_default()
    }

    fn under(&self, root: &Path) -> PathBuf {
        root.join(&self.0)
    }
}

/// Whether every component of `path` under `root` that exists is a real directory or file
/// (no symbolic link on the way).
fn no_links(root: &Path, path: &WorkPath) -> std::io::Result<bool> {
    let mut at = root.to_path_buf();
    for part in path.0.components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => return Ok(false),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(true),
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

fn io_error(root: &Path, path: &WorkPath, source: std::io::Error) -> WorkspaceError {
    WorkspaceError::Io {
        path: path.as_str().to_owned(),
        source,
        root: root.to_path_buf(),
    }
}

/// The bytes of the regular file `path`, or `None` when there is none (or a link is on the
/// way).
pub fn read(root: &Path, path: &WorkPath) -> Result<Option<Vec<u8>>, WorkspaceError> {
    if !no_links(root, path).map_err(|e| io_error(root, path, e))? {
        return Ok(None);
    }
    let at = path.under(root);
    match std::fs::symlink_metadata(&at) {
        Ok(meta) if meta.is_file() => {
            let mut bytes = Vec::new();
            std::fs::File::open(&at)
                .and_then(|mut f| f.read_to_end(&mut bytes))
                .map_err(|e| io_error(root, path, e))?;
            Ok(Some(bytes))
        }
        Ok(_) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error(root, path, e)),
    }
}

/// Writes `bytes` to `path` (parents created), replacing a regular file there.
pub fn write(root: &Path, path: &WorkPath, bytes: &[u8]) -> Result<(), WorkspaceError> {
    if !no_links(root, path).map_err(|e| io_error(root, path, e))? {
        return Err(WorkspaceError::Path {
            path: path.as_str().to_owned(),
            reason: "a symbolic link is on the way".into(),
        });
    }
    let at = path.under(root);
    if at.is_dir() {
        return Err(WorkspaceError::Path {
            path: path.as_str().to_owned(),
            reason: "a directory".into(),
        });
    }
    if let Some(parent) = at.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io_error(root, path, e))?;
    }
    std::fs::write(&at, bytes).map_err(|e| io_error(root, path, e))
}

/// Every regular file under `root` with its size, in path order (links and other kinds left
/// out).
pub fn list(root: &Path) -> Result<Vec<(WorkPath, u64)>, WorkspaceError> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = root.join(&rel);
        let entries = std::fs::read_dir(&dir).map_err(|source| WorkspaceError::Io {
            path: rel.display().to_string(),
            source,
            root: root.to_path_buf(),
        })?;
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let child = rel.join(entry.file_name());
            if kind.is_dir() {
                stack.push(child);
            } else if kind.is_file() {
                let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
                out.push((WorkPath(child), size));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Total bytes of the regular files under `root`.
pub fn size(root: &Path) -> Result<u64, WorkspaceError> {
    Ok(list(root)?.iter().map(|(_, n)| n).sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_confined() {
        for (ok, rel) in [
            ("a.txt", "a.txt"),
            ("d/e.txt", "d/e.txt"),
            ("./x", "x"),
            ("/tmp/x", "x"),
        ] {
            assert_eq!(WorkPath::parse(ok).unwrap().as_str(), rel);
        }
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "/tmp/../etc",
            ".",
            "a\0b",
        ] {
            let e = WorkPath::parse(bad).unwrap_err().to_string();
            assert!(e.contains(&format!("{bad:?}")), "{e}");
        }
    }

    #[test]
    fn links_are_neither_read_nor_written_through() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "host").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("out")).unwrap();
        let p = WorkPath::parse("out/secret").unwrap();
        assert_eq!(read(root.path(), &p).unwrap(), None);
        assert!(write(root.path(), &p, b"x").is_err());
        assert_eq!(
            std::fs::read(outside.path().join("secret")).unwrap(),
            b"host"
        );
        let q = WorkPath::parse("d/f.txt").unwrap();
        write(root.path(), &q, b"abc").unwrap();
        assert_eq!(read(root.path(), &q).unwrap().unwrap(), b"abc");
        assert_eq!(list(root.path()).unwrap(), vec![(q, 3)]);
    }
}
