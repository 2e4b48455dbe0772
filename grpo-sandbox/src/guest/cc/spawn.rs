//! Starting the confined compiler without copying this process.
//!
//! `fork` copies the serving process's page tables (hundreds of KiB: the wasm pools, the
//! compiled modules) into a child that throws them away at `exec`, and write-protects every
//! page the parent then writes again: two of those per C compile (clang, then the linker) were
//! most of the service's own kernel time on distinct C programs. Here the child is made the way
//! `posix_spawn` makes it: `clone(CLONE_VM | CLONE_VFORK)`, sharing this process's memory while
//! the calling thread waits, until the child calls `execve` (or exits). The namespaces come from
//! the same `clone` call (`unshare(CLONE_NEWUSER)` is refused to a process sharing its memory),
//! and the child's pidfd (`CLONE_PIDFD`) is what the caller waits on and reaps.
//!
//! The child runs on its own small stack (with a guard page) in the caller's memory, so it only
//! makes raw syscalls on values the parent prepared: no allocation, no lock, no Rust panic. All
//! signals are blocked across the `clone`; the child sets every handled signal back to its
//! default before unblocking them for `execve`, so no handler of this process ever runs in it.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicI32, Ordering};

use super::confine::{self, ChildPlan};

/// The child's stack, besides its guard page: `confine::enter` and the set-up around it need a
/// few KiB.
const STACK_BYTES: usize = 64 << 10;

/// What to run and where its output goes.
#[derive(Debug)]
pub(super) struct Spec<'a> {
    /// An absolute path (no `PATH` search).
    pub program: &'a Path,
    pub args: &'a [String],
    /// The whole environment.
    pub env: &'a [(&'a str, &'a OsStr)],
    /// The working directory (before the plan's view, which returns to it).
    pub cwd: &'a Path,
    /// Pipe stdout back (else it goes to `/dev/null`); stdin is always `/dev/null`.
    pub stdout: bool,
    /// Pipe stderr back (else it goes to `/dev/null`).
    pub stderr: bool,
}

/// A started child, in its own process group. Dropping it before [`Child::wait`] has returned
/// kills the group and reaps the child.
#[derive(Debug)]
pub(super) struct Child {
    pid: libc::pid_t,
    pidfd: Option<OwnedFd>,
    reaped: bool,
    pub stdout: Option<OwnedFd>,
    pub stderr: Option<OwnedFd>,
}

/// Everything the child reads, by pointer into the parent's (shared) memory.
struct ChildArgs {
    program: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    cwd: *const libc::c_char,
    /// stdin, stdout, stderr, as descriptors to move to 0, 1, 2.
    stdio: [RawFd; 3],
    plan: ChildPlan,
    /// The errno of the step that failed (0: none); written by the child, read after `clone`.
    error: AtomicI32,
}

fn c_string(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::other("a NUL byte in an argument"))
}

fn cvt(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: a valid two-element array for pipe2 to fill.
    cvt(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    // SAFETY: both descriptors are fresh and owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn dev_null(flags: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: a NUL-terminated path.
    let fd = cvt(unsafe { libc::open(c"/dev/null".as_ptr(), flags | libc::O_CLOEXEC) })?;
    // SAFETY: a fresh descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A stack for the child: an anonymous mapping whose lowest page is a guard.
struct Stack {
    base: *mut libc::c_void,
    len: usize,
}

impl Stack {
    fn new() -> io::Result<Stack> {
        let page = 4096;
        let len = STACK_BYTES + page;
        // SAFETY: a fresh private anonymous mapping.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let stack = Stack { base, len };
        // SAFETY: the first page of the mapping just made.
        cvt(unsafe { libc::mprotect(base, page, libc::PROT_NONE) })?;
        Ok(stack)
    }

    fn top(&self) -> *mut libc::c_void {
        // SAFETY: one past the end of the mapping, where a downward stack starts.
        unsafe { self.base.cast::<u8>().add(self.len).cast() }
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, no longer used (the child has exec'd or exited).
        unsafe {
            libc::munmap(self.base, self.len);
        }
    }
}

/// Blocks every signal in the calling thread until dropped.
struct SignalsBlocked(libc::sigset_t);

impl SignalsBlocked {
    fn new() -> io::Result<SignalsBlocked> {
        // SAFETY: sigset_t is plain data that sigfillset / pthread_sigmask initialise.
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            let rc = libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
            if rc != 0 {
                return Err(io::Error::from_raw_os_error(rc));
            }
            Ok(SignalsBlocked(old))
        }
    }
}

impl Drop for SignalsBlocked {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved in `new`.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.0, std::ptr::null_mut());
        }
    }
}

/// Starts `spec` confined by `plan`: its namespaces from the `clone`, the rest
/// ([`confine::enter`]) in the child before `execve`.
pub(super) fn spawn(spec: &Spec<'_>, plan: &ChildPlan) -> io::Result<Child> {
    let program = c_string(spec.program.as_os_str().as_bytes())?;
    let mut argv_owned = vec![program.clone()];
    for arg in spec.args {
        argv_owned.push(c_string(arg.as_bytes())?);
    }
    let env_owned = spec
        .env
        .iter()
        .map(|(key, value)| {
            let mut entry = key.as_bytes().to_vec();
            entry.push(b'=');
            entry.extend_from_slice(value.as_bytes());
            c_string(&entry)
        })
        .collect::<io::Result<Vec<_>>>()?;
    let null_terminated = |strings: &[CString]| {
        let mut pointers: Vec<*const libc::c_char> = strings.iter().map(|s| s.as_ptr()).collect();
        pointers.push(std::ptr::null());
        pointers
    };
    let argv = null_terminated(&argv_owned);
    let envp = null_terminated(&env_owned);
    let cwd = c_string(spec.cwd.as_os_str().as_bytes())?;

    let stdin = dev_null(libc::O_RDONLY)?;
    let output = |piped: bool| -> io::Result<(Option<OwnedFd>, OwnedFd)> {
        if piped {
            let (read, write) = pipe()?;
            Ok((Some(read), write))
        } else {
            Ok((None, dev_null(libc::O_WRONLY)?))
        }
    };
    let (stdout, child_out) = output(spec.stdout)?;
    let (stderr, child_err) = output(spec.stderr)?;

    let args = ChildArgs {
        program: program.as_ptr(),
        argv: argv.as_ptr(),
        envp: envp.as_ptr(),
        cwd: cwd.as_ptr(),
        stdio: [
            stdin.as_raw_fd(),
            child_out.as_raw_fd(),
            child_err.as_raw_fd(),
        ],
        plan: *plan,
        error: AtomicI32::new(0),
    };
    let stack = Stack::new()?;
    let mut flags = libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PIDFD | libc::SIGCHLD;
    if plan.user_ns {
        flags |= libc::CLONE_NEWUSER;
        if plan.net_ns {
            flags |= libc::CLONE_NEWNET;
        }
        if plan.view.is_some() {
            flags |= libc::CLONE_NEWNS;
        }
    }
    let mut pidfd: libc::c_int = -1;
    let pid = {
        let _blocked = SignalsBlocked::new()?;
        // SAFETY: `child_main` only reads `args` (alive: this thread is suspended until the
        // child execs or exits) and makes raw syscalls on its own stack; CLONE_PIDFD stores
        // the pidfd through the parent_tid pointer.
        unsafe {
            libc::clone(
                child_main,
                stack.top(),
                flags,
                (&args as *const ChildArgs).cast_mut().cast(),
                &mut pidfd as *mut libc::c_int,
            )
        }
    };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: CLONE_PIDFD gave us this descriptor (close-on-exec) and nothing else owns it.
    let pidfd = (pidfd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(pidfd) });
    let mut child = Child {
        pid,
        pidfd,
        reaped: false,
        stdout,
        stderr,
    };
    let error = args.error.load(Ordering::Acquire);
    if error != 0 {
        // The child failed before or at execve and has exited: reap it, report why.
        let _ = child.wait_blocking();
        return Err(io::Error::from_raw_os_error(error));
    }
    Ok(child)
}

/// The child, on its own stack in the parent's memory.
extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `ChildArgs` the parent keeps alive until we exec or exit.
    let args = unsafe { &*arg.cast::<ChildArgs>() };
    // SAFETY: raw syscalls with values the parent prepared.
    let errno = match unsafe { child_setup(args) } {
        Ok(()) => {
            // SAFETY: NUL-terminated program path, argv and envp arrays.
            unsafe { libc::execve(args.program, args.argv, args.envp) };
            io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EINVAL)
        }
        Err(e) => e.raw_os_error().unwrap_or(libc::EINVAL),
    };
    args.error.store(errno.max(1), Ordering::Release);
    // SAFETY: ends this child only (no CLONE_THREAD), without running anything of the parent's.
    unsafe { libc::_exit(127) }
}

/// # Safety
/// Only from `child_main`.
unsafe fn child_setup(args: &ChildArgs) -> io::Result<()> {
    // SAFETY: plain syscalls on descriptors and strings the parent prepared.
    unsafe {
        // Move the three descriptors out of the way of 0..2 first, so none is overwritten
        // before it is used (the parent may run with a standard descriptor closed).
        let mut moved = [0 as RawFd; 3];
        for (slot, &fd) in moved.iter_mut().zip(&args.stdio) {
            *slot = cvt(libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3))?;
        }
        for (target, &fd) in moved.iter().enumerate() {
            cvt(libc::dup2(fd, target as RawFd))?;
        }
        cvt(libc::chdir(args.cwd))?;
        cvt(libc::setpgid(0, 0))?;
        confine::enter(&args.plan)?;
        // Every handled signal back to its default (ignored ones stay ignored across exec,
        // except SIGPIPE, which this process ignores for itself), then unblock all.
        for signal in 1..libc::SIGRTMAX() {
            if signal == libc::SIGKILL || signal == libc::SIGSTOP {
                continue;
            }
            let mut current: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut current) != 0 {
                continue;
            }
            if current.sa_sigaction != libc::SIG_IGN || signal == libc::SIGPIPE {
                let mut default: libc::sigaction = std::mem::zeroed();
                default.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(signal, &default, std::ptr::null_mut());
            }
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        let rc = libc::pthread_sigmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
    }
    Ok(())
}

impl Child {
    /// Waits for the child to end and reaps it, blocking this thread.
    pub(super) fn wait_blocking(&mut self) -> io::Result<ExitStatus> {
        self.reap()
    }

    /// Waits for the child to end (its pidfd turns readable), then reaps it. Any process the
    /// child left in its group is killed first (the exited leader still holds the group id).
    pub(super) async fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(pidfd) = self.pidfd.take() {
            // SAFETY: the AsyncFd owns the OwnedFd, which stays open on the same descriptor
            // until `into_inner` gives it back.
            let ready = unsafe {
                tokio::io::unix::AsyncFd::register_with_interest(
                    pidfd,
                    tokio::io::Interest::READABLE,
                )
            }?;
            let guard = ready.readable().await?;
            drop(guard);
            self.pidfd = Some(ready.into_inner());
        }
        self.kill_group();
        self.reap()
    }

    fn kill_group(&self) {
        // SAFETY: signals the group this child leads; the unreaped leader keeps its id ours.
        unsafe {
            libc::kill(-self.pid, libc::SIGKILL);
        }
    }

    fn reap(&mut self) -> io::Result<ExitStatus> {
        let mut status: libc::c_int = 0;
        loop {
            // SAFETY: waits for our own child, by pid.
            let rc = unsafe { libc::waitpid(self.pid, &mut status, 0) };
            if rc == self.pid {
                break;
            }
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::Interrupted {
                return Err(err);
            }
        }
        self.reaped = true;
        self.pidfd = None;
        Ok(ExitStatus::from_raw(status))
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if self.reaped {
            return;
        }
        self.kill_group();
        let pid = self.pid;
        let reap = move || {
            let mut status = 0;
            // SAFETY: reaps our own child, killed above.
            unsafe { libc::waitpid(pid, &mut status, 0) };
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn_blocking(reap);
            }
            Err(_) => reap(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    fn plan() -> ChildPlan {
        ChildPlan {
            parent: std::process::id() as libc::pid_t,
            cpu_s: 10,
            address_space: 1 << 30,
            file_size: 1 << 20,
            open_files: 64,
            user_ns: false,
            net_ns: false,
            view: None,
            ruleset: None,
            seccomp: false,
            join: None,
        }
    }

    fn sh(script: &str) -> io::Result<Child> {
        let args = ["-c".to_owned(), script.to_owned()];
        let env = [("GREETING", OsStr::new("hello"))];
        spawn(
            &Spec {
                program: Path::new("/bin/sh"),
                args: &args,
                env: &env,
                cwd: Path::new("/"),
                stdout: true,
                stderr: true,
            },
            &plan(),
        )
    }

    fn read_all(fd: Option<OwnedFd>) -> String {
        let mut text = String::new();
        if let Some(fd) = fd {
            std::fs::File::from(fd).read_to_string(&mut text).unwrap();
        }
        text
    }

    #[test]
    fn the_child_gets_its_arguments_environment_directory_and_limits() {
        let mut child =
            sh("echo \"$GREETING $(pwd) $(ulimit -n)\"; echo oops >&2; exit 3").unwrap();
        let out = read_all(child.stdout.take());
        let err = read_all(child.stderr.take());
        let status = child.wait_blocking().unwrap();
        assert_eq!(out, "hello / 64\n");
        assert_eq!(err, "oops\n");
        assert_eq!(status.code(), Some(3));
    }

    #[test]
    fn no_signal_of_this_process_is_blocked_or_caught_in_the_child() {
        // SIGPIPE is ignored by Rust programs; the child must get the default back.
        let mut child = sh("grep -E '^Sig(Blk|Ign|Cgt)' /proc/self/status").unwrap();
        let out = read_all(child.stdout.take());
        child.wait_blocking().unwrap();
        for line in out.lines() {
            let mask = line.split_whitespace().nth(1).unwrap();
            let mask = u64::from_str_radix(mask, 16).unwrap();
            match line {
                l if l.starts_with("SigBlk") => assert_eq!(mask, 0, "{line}"),
                l if l.starts_with("SigIgn") => {
                    assert_eq!(mask & (1 << (libc::SIGPIPE - 1)), 0, "{line}")
                }
                _ => {}
            }
        }
        assert_eq!(out.lines().count(), 3, "{out}");
    }

    #[test]
    fn a_program_that_cannot_start_is_an_error_naming_why() {
        let args = [];
        let err = spawn(
            &Spec {
                program: Path::new("/nonexistent/grpo-no-such-program"),
                args: &args,
                env: &[],
                cwd: Path::new("/"),
                stdout: false,
                stderr: false,
            },
            &plan(),
        )
        .unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENOENT), "{err}");
        // A failed start in the child, not in the parent: also reported, also reaped.
        let args: [String; 0] = [];
        let err = spawn(
            &Spec {
                program: Path::new("/bin/sh"),
                args: &args,
                env: &[],
                cwd: Path::new("/nonexistent-directory"),
                stdout: false,
                stderr: false,
            },
            &plan(),
        )
        .unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENOENT), "{err}");
    }

    #[test]
    fn dropping_a_running_child_kills_its_group_and_reaps_it() {
        let mut child = sh("sleep 30 & echo $!; wait").unwrap();
        let mut out = child.stdout.take().map(std::fs::File::from).unwrap();
        let mut line = Vec::new();
        let mut byte = [0u8; 1];
        while out.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
            line.push(byte[0]);
        }
        let grandchild: libc::pid_t = String::from_utf8(line).unwrap().parse().unwrap();
        let pid = child.pid;
        drop(child);
        // SAFETY: signal 0 only checks whether the process exists.
        let alive = |pid| unsafe { libc::kill(pid, 0) } == 0;
        assert!(!alive(pid), "the child is still there (unreaped?)");
        for _ in 0..200 {
            if !alive(grandchild) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("the child's own child survived");
    }

    #[test]
    fn the_seccomp_filter_leaves_the_child_no_socket_of_any_family() {
        let script = r#"
import socket
for make in (
    lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM),
    lambda: socket.socket(socket.AF_UNIX),
    lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW),
    socket.socketpair,
):
    try:
        make()
        print("made")
    except OSError as e:
        print(e.errno)
"#;
        let run = |seccomp: bool| {
            let args = ["-c".to_owned(), script.to_owned()];
            let mut child = spawn(
                &Spec {
                    program: Path::new("/usr/bin/python3"),
                    args: &args,
                    env: &[],
                    cwd: Path::new("/"),
                    stdout: true,
                    stderr: true,
                },
                &ChildPlan { seccomp, ..plan() },
            )
            .unwrap();
            let out = read_all(child.stdout.take());
            let err = read_all(child.stderr.take());
            assert!(child.wait_blocking().unwrap().success(), "{err}");
            out
        };
        let denied = format!("{0}\n{0}\n{0}\n{0}\n", libc::EACCES);
        assert_eq!(run(true), denied);
        // The same program makes all four without the filter: the test can fail.
        assert_eq!(run(false), "made\nmade\nmade\nmade\n");
    }

    #[tokio::test]
    async fn waiting_asynchronously_reaps_the_child() {
        let mut child = sh("exit 7").unwrap();
        let status = child.wait().await.unwrap();
        assert_eq!(status.code(), Some(7));
    }
}
