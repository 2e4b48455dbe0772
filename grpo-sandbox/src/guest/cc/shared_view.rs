//! One user and mount namespace per compiler, joined by every compile.
//!
//! A compile's child used to make its own user and mount namespace (`CLONE_NEWUSER |
//! CLONE_NEWNS`), bind the toolchain, its job directory and `/proc` into an empty root, and
//! `chroot` there. Measured on `zig version` (a process that does almost nothing), that cost
//! about 2.5 ms of wall time per process over a process in a user namespace alone (the view's
//! directories made and removed on the host, the mount table copied, the binds made, the
//! namespace torn down at exit; about 1 ms of it the child spent asleep). A C compile is two
//! such processes.
//!
//! Here the namespaces are made once: a short-lived holder process is cloned into a new user
//! and mount namespace, binds the toolchain, a jobs directory and `/proc` under an empty root
//! (the same [`View`] as before), opens its own `/proc/self/ns/{user,mnt}` into the file table
//! it shares with this process (`CLONE_FILES`), and exits. The descriptors keep both
//! namespaces alive. Each compile's child then `setns`es into them, `chroot`s into the root and
//! works in its job directory, which is made inside the jobs directory (so it is already in
//! the view, at its own path). What the child sees is what it saw before, with one
//! difference: other compiles' job directories exist in its view, under random names; Landlock
//! gives it neither listing nor reading of them (its ruleset covers only its own job).
//!
//! The view's root and the jobs directory live in one directory per compiler,
//! `$TMPDIR/grpo-cc-view-<pid>-*`, removed when the compiler is dropped. The process-wide
//! compiler is a static, never dropped, so each new one first removes the directories of
//! processes that are gone.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::confine::{RawJoin, View};

/// The namespaces and the view every compile of one compiler joins.
#[derive(Debug)]
pub struct SharedView {
    user_ns: OwnedFd,
    mnt_ns: OwnedFd,
    root: CString,
    jobs: std::path::PathBuf,
    // Dropped after the namespaces' descriptors (fields drop in order): removing the mount
    // points on the host is then harmless. The view's root is inside `_dir`.
    _view: View,
    _dir: tempfile::TempDir,
}

/// The name every compiler's directory starts with, then its process id and a `-`.
const PREFIX: &str = "grpo-cc-view-";

impl SharedView {
    /// Makes the namespaces: the toolchain (`toolchain`), a fresh jobs directory and `/proc`
    /// appear at their own paths under an empty root.
    pub fn new(toolchain: &Path) -> io::Result<SharedView> {
        let temp = std::env::temp_dir();
        crate::engine::stale::remove_stale(&temp, PREFIX);
        let dir = tempfile::Builder::new()
            .prefix(&crate::engine::stale::owned_prefix(PREFIX))
            .tempdir_in(&temp)?;
        let jobs = dir.path().join("jobs");
        std::fs::create_dir(&jobs)?;
        let view = View::new_in(dir.path(), &[toolchain, &jobs, Path::new("/proc")], &jobs)?;
        let (user_ns, mnt_ns) = hold_namespaces(&view)?;
        let root = CString::new(view.root().as_os_str().as_bytes()).map_err(io::Error::other)?;
        Ok(SharedView {
            user_ns,
            mnt_ns,
            root,
            jobs,
            _view: view,
            _dir: dir,
        })
    }

    /// Where job directories go (visible in the view at the same path).
    pub fn jobs_dir(&self) -> &Path {
        &self.jobs
    }

    /// What a child needs to join, working in `workdir` (a directory under
    /// [`jobs_dir`](Self::jobs_dir), or anywhere else the view shows).
    pub fn raw_join(&self, workdir: &CString) -> RawJoin {
        RawJoin {
            user_ns: self.user_ns.as_raw_fd(),
            mnt_ns: self.mnt_ns.as_raw_fd(),
            root: self.root.as_ptr(),
            workdir: workdir.as_ptr(),
        }
    }
}

/// What the holder reads (pointers into the parent's memory, copied by the clone) and where it
/// reports.
struct HolderArgs {
    view: super::confine::RawView,
    report: RawFd,
}

/// Clones the holder into new user and mount namespaces; returns descriptors of both.
fn hold_namespaces(view: &View) -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: a valid array for pipe2 to fill.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fresh descriptors owned by nothing else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let args = HolderArgs {
        view: view.raw(),
        report: write.as_raw_fd(),
    };
    let mut stack = vec![0u8; 64 << 10];
    // SAFETY: one past the end of the buffer (the stack grows down; 16-byte alignment is
    // restored by glibc's clone).
    let top = unsafe { stack.as_mut_ptr().add(stack.len()) };
    let flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_FILES | libc::SIGCHLD;
    // SAFETY: without CLONE_VM the child runs on its own copy of this memory (the stack
    // buffer and `args` included) and makes only raw syscalls before `_exit`.
    let pid = unsafe {
        libc::clone(
            holder_main,
            top.cast(),
            flags,
            (&args as *const HolderArgs).cast_mut().cast(),
        )
    };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut status = 0;
    // SAFETY: reaps the holder, which exits right after reporting. Only then is the pipe's
    // write end closed: the holder shares this file table, so closing it earlier would close
    // it under the holder.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    drop(write);
    let mut report = [0i32; 3];
    let mut bytes = [0u8; 12];
    let mut file = std::fs::File::from(read);
    std::io::Read::read_exact(&mut file, &mut bytes)
        .map_err(|e| io::Error::other(format!("the namespace holder died: {e}")))?;
    for (value, chunk) in report.iter_mut().zip(bytes.chunks_exact(4)) {
        *value = i32::from_ne_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
    }
    let [errno, user, mnt] = report;
    if errno != 0 {
        return Err(io::Error::from_raw_os_error(errno));
    }
    // SAFETY: the holder opened these in the file table it shared with us (CLONE_FILES), and
    // nothing else owns them.
    Ok(unsafe { (OwnedFd::from_raw_fd(user), OwnedFd::from_raw_fd(mnt)) })
}

extern "C" fn holder_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: our copy of the parent's `HolderArgs`.
    let args = unsafe { &*arg.cast::<HolderArgs>() };
    let open = |path: &std::ffi::CStr| {
        // SAFETY: a NUL-terminated path.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        if fd < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(fd)
        }
    };
    // SAFETY: raw syscalls in the new namespaces, on the view's strings.
    let result = unsafe { super::confine::bind_view(&args.view) }.and_then(|()| {
        let user = open(c"/proc/self/ns/user")?;
        match open(c"/proc/self/ns/mnt") {
            Ok(mnt) => Ok((user, mnt)),
            Err(e) => {
                // SAFETY: our own descriptor, in the shared table, that nobody else knows.
                unsafe { libc::close(user) };
                Err(e)
            }
        }
    });
    let report: [i32; 3] = match result {
        Ok((user, mnt)) => [0, user, mnt],
        Err(e) => [e.raw_os_error().unwrap_or(libc::EINVAL).max(1), -1, -1],
    };
    let mut bytes = [0u8; 12];
    for (chunk, value) in bytes.chunks_exact_mut(4).zip(report) {
        chunk.copy_from_slice(&value.to_ne_bytes());
    }
    // SAFETY: writes our report to the pipe, then ends this process only.
    unsafe {
        libc::write(args.report, bytes.as_ptr().cast(), bytes.len());
        libc::_exit(0)
    }
}
