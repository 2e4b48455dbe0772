//! Confining the compiler: it runs untrusted source (the preprocessor reads any path the
//! source names, `.incbin` and `#embed` pull files into the output), so the child is set up,
//! between `clone` and `exec` (see [`spawn`](super::spawn)), to see only the toolchain and its
//! job directory.
//!
//! What the child gets, in order before `exec` (fresh namespaces come from the `clone`
//! itself); each a raw syscall, async-signal-safe, no allocation:
//! 1. `PR_SET_PDEATHSIG(SIGKILL)`: the compiler dies with the thread that started it.
//! 2. rlimits: CPU seconds, address space, file size, open files, no core dumps.
//! 3. A user and a mount namespace: normally the compiler's own, made once and joined with
//!    `setns` (see [`shared_view`](super::shared_view)); else fresh ones from the `clone`
//!    that starts the child (`CLONE_NEWUSER | CLONE_NEWNS`). The user namespace (no uid
//!    map: the child is `nobody` inside it) is what lets an unprivileged process create the mount namespace, and also
//!    drops root's `CAP_DAC_OVERRIDE` over the host's files; in the mount namespace
//!    the child `chroot`s into an empty directory where only the toolchain, the job directory
//!    and `/proc` are bind-mounted at their own paths, so no other host path exists for it
//!    (Landlock alone hides contents, not names). Where the kernel refuses the mount
//!    namespace the child runs without it.
//! 4. `PR_SET_NO_NEW_PRIVS` and `landlock_restrict_self` with a ruleset built by the parent:
//!    read and execute beneath the toolchain, read-write beneath zig's global cache and the
//!    job directory, nothing else (not `/etc`, `/proc`, `/dev`, `/tmp`). From ABI 6 on the
//!    child also cannot signal processes or reach abstract Unix sockets outside its domain.
//! 5. No network: a seccomp filter makes `socket`, `socketpair` and `io_uring_setup` fail
//!    with `EACCES` (and every system call of a foreign ABI: x32, or 32-bit), so the compiler
//!    can open no socket of any family. A compiler needs none. Where the kernel has no seccomp
//!    filters, a fresh network namespace (`CLONE_NEWNET`, a loopback that is down) stands in;
//!    it was the first design, and creating and tearing one down per process cost about 1 ms
//!    of latency each (twice per C compile). Where the kernel refuses namespaces as well,
//!    Landlock's TCP rules (ABI 4 and later) deny TCP bind and connect (UDP stays open then).
//!
//! zig itself reads `/proc/self/exe` and `/proc/self/fd/N` with `readlink`, which Landlock does
//! not govern (so `/proc` is in the view), and opens `/dev/urandom` once, which is denied and
//! which it does without.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Which confinement the compiler runs under on this host (probed once per [`Compiler`]).
///
/// [`Compiler`]: super::Compiler
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Confinement {
    /// The compiler runs in a new user namespace (no uid map).
    pub user_ns: bool,
    /// The compiler runs in a new network namespace (no network at all): only where the
    /// kernel refuses the seccomp filter.
    pub net_ns: bool,
    /// The compiler runs in a new mount namespace whose root holds only the toolchain, its
    /// job directory and `/proc`: no other host path exists for it.
    pub mount_ns: bool,
    /// The user and mount namespaces are made once per compiler and joined by every compile
    /// (its view then also holds other compiles' job directories, which Landlock hides).
    pub shared_ns: bool,
    /// The Landlock ABI restricting the compiler's filesystem access, `None` when the kernel
    /// has no Landlock (then the compiler can read whatever this process can).
    pub landlock_abi: Option<u32>,
    /// Landlock's TCP rules deny bind and connect (whenever `net_ns` is false).
    pub landlock_net: bool,
    /// A seccomp filter denies creating any socket, and io_uring, which could make one:
    /// no network at all, not even a Unix socket.
    pub seccomp_net: bool,
    /// rlimits (CPU, address space, file size, files, core) are set: always true.
    pub rlimits: bool,
}

impl Confinement {
    /// Whether the compiler's filesystem access is confined (Landlock is active).
    pub fn filesystem(&self) -> bool {
        self.landlock_abi.is_some()
    }

    /// Whether the compiler can reach no network (the seccomp filter, a fresh namespace, or at
    /// least Landlock's TCP rules).
    pub fn network(&self) -> bool {
        self.net_ns || self.seccomp_net || self.landlock_net
    }
}

// Landlock's user API (include/uapi/linux/landlock.h).
const CREATE_RULESET_VERSION: u32 = 1;
const RULE_PATH_BENEATH: u32 = 1;

const FS_EXECUTE: u64 = 1 << 0;
const FS_WRITE_FILE: u64 = 1 << 1;
const FS_READ_FILE: u64 = 1 << 2;
const FS_READ_DIR: u64 = 1 << 3;
const FS_REMOVE_DIR: u64 = 1 << 4;
const FS_REMOVE_FILE: u64 = 1 << 5;
const FS_MAKE_DIR: u64 = 1 << 7;
const FS_MAKE_REG: u64 = 1 << 8;
/// Every filesystem right of ABI 1 (bits 0 to 12).
const FS_ABI1: u64 = (1 << 13) - 1;
/// Renaming or linking across directories (ABI 2); unhandled, it is always denied.
const FS_REFER: u64 = 1 << 13;
/// Truncating (ABI 3).
const FS_TRUNCATE: u64 = 1 << 14;
/// ioctl on devices (ABI 5).
const FS_IOCTL_DEV: u64 = 1 << 15;

const NET_BIND_TCP: u64 = 1 << 0;
const NET_CONNECT_TCP: u64 = 1 << 1;

const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
const SCOPE_SIGNAL: u64 = 1 << 1;

/// What the compiler may do beneath the toolchain: read and run it.
const READ_EXEC: u64 = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR;
/// What it may do beneath its caches and job directory: create, write, rename, remove files.
const READ_WRITE: u64 = FS_READ_FILE
    | FS_READ_DIR
    | FS_WRITE_FILE
    | FS_REMOVE_DIR
    | FS_REMOVE_FILE
    | FS_MAKE_DIR
    | FS_MAKE_REG
    | FS_REFER
    | FS_TRUNCATE;

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// The kernel's Landlock ABI version, `None` when Landlock is absent or disabled.
pub fn landlock_abi() -> Option<u32> {
    // SAFETY: the documented version query: null attribute, size 0, the VERSION flag.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(abi).ok().filter(|&abi| abi > 0)
}

/// The filesystem rights a kernel of this ABI knows.
fn handled_fs(abi: u32) -> u64 {
    let mut handled = FS_ABI1;
    if abi >= 2 {
        handled |= FS_REFER;
    }
    if abi >= 3 {
        handled |= FS_TRUNCATE;
    }
    if abi >= 5 {
        handled |= FS_IOCTL_DEV;
    }
    handled
}

/// A Landlock ruleset, built in the parent and enforced by the child before `exec`.
#[derive(Debug)]
pub struct Ruleset {
    fd: OwnedFd,
}

impl Ruleset {
    /// Read-and-execute beneath each of `read_exec`, read-write beneath each of `read_write`,
    /// nothing else; when `deny_tcp` and the ABI allows, no TCP bind or connect either.
    pub fn new(
        abi: u32,
        read_exec: &[&Path],
        read_write: &[&Path],
        deny_tcp: bool,
    ) -> io::Result<Ruleset> {
        let handled = handled_fs(abi);
        let attr = RulesetAttr {
            handled_access_fs: handled,
            handled_access_net: if deny_tcp && abi >= 4 {
                NET_BIND_TCP | NET_CONNECT_TCP
            } else {
                0
            },
            scoped: if abi >= 6 {
                SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
            } else {
                0
            },
        };
        // SAFETY: `attr` is a valid landlock_ruleset_attr; the kernel reads `size` bytes and
        // accepts trailing zero fields it does not know.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                &attr as *const RulesetAttr,
                std::mem::size_of::<RulesetAttr>(),
                0u32,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let fd = RawFd::try_from(fd).map_err(io::Error::other)?;
        let ruleset = Ruleset {
            // SAFETY: the syscall returned a fresh file descriptor that nothing else owns.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        };
        for path in read_exec {
            ruleset.allow(path, READ_EXEC & handled)?;
        }
        for path in read_write {
            ruleset.allow(path, READ_WRITE & handled)?;
        }
        Ok(ruleset)
    }

    /// The ruleset's descriptor, for the child (valid while `self` lives).
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    fn allow(&self, path: &Path, access: u64) -> io::Result<()> {
        let c_path = CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)?;
        // SAFETY: a NUL-terminated path; O_PATH opens nothing for reading.
        let dir = unsafe { libc::open(c_path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
        if dir < 0 {
            let err = io::Error::last_os_error();
            return Err(io::Error::new(
                err.kind(),
                format!("{}: {err}", path.display()),
            ));
        }
        // SAFETY: `open` returned a fresh descriptor.
        let dir = unsafe { OwnedFd::from_raw_fd(dir) };
        let rule = PathBeneathAttr {
            allowed_access: access,
            parent_fd: dir.as_raw_fd(),
        };
        // SAFETY: a valid ruleset fd and a valid landlock_path_beneath_attr.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                self.fd.as_raw_fd(),
                RULE_PATH_BENEATH,
                &rule as *const PathBeneathAttr,
                0u32,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// Everything the child needs between `clone` and `exec`, as plain values (the child may not
/// allocate: it shares the memory of a multi-threaded parent).
#[derive(Debug, Clone, Copy)]
pub struct ChildPlan {
    /// The spawning process, to detect that it died before `PR_SET_PDEATHSIG` took effect.
    pub parent: libc::pid_t,
    /// `RLIMIT_CPU` in seconds (the hard limit is one second more: SIGXCPU, then SIGKILL).
    pub cpu_s: u64,
    /// `RLIMIT_AS` in bytes.
    pub address_space: u64,
    /// `RLIMIT_FSIZE` in bytes.
    pub file_size: u64,
    /// `RLIMIT_NOFILE`.
    pub open_files: u64,
    /// Start in a new user namespace (failure fails the spawn).
    pub user_ns: bool,
    /// With `user_ns`: also a new network namespace.
    pub net_ns: bool,
    /// With `user_ns`: also a mount namespace whose root shows only these directories.
    pub view: Option<RawView>,
    /// Install the seccomp filter that denies sockets.
    pub seccomp: bool,
    /// Join these namespaces and enter their view instead of making new ones (`user_ns` and
    /// `view` are then false and `None`).
    pub join: Option<RawJoin>,
    /// The Landlock ruleset to enforce.
    pub ruleset: Option<RawFd>,
}

/// The most directories a [`View`] shows.
const MAX_BINDS: usize = 3;

/// A filesystem view for the compiler: an empty root directory in which the given host
/// directories appear at their own paths (bind mounts in a private mount namespace), so the
/// rest of the host's tree does not exist for it, not even as names.
#[derive(Debug)]
pub struct View {
    root: tempfile::TempDir,
    _paths: Vec<CString>,
    raw: RawView,
}

/// The view as raw C strings for the child (pointers into [`View`], which outlives the spawn).
#[derive(Debug, Clone, Copy)]
pub struct RawView {
    root: *const libc::c_char,
    workdir: *const libc::c_char,
    binds: [(*const libc::c_char, *const libc::c_char); MAX_BINDS],
    count: usize,
}

// SAFETY: the pointers are only read, in the child before it execs, while the `View` they point into is
// alive in the parent (the child has a copy of the parent's memory).
unsafe impl Send for RawView {}
// SAFETY: as above; nothing writes through them.
unsafe impl Sync for RawView {}

/// Namespaces to join and the view to enter, for the child: see
/// [`SharedView`](super::shared_view::SharedView).
#[derive(Debug, Clone, Copy)]
pub struct RawJoin {
    pub(super) user_ns: RawFd,
    pub(super) mnt_ns: RawFd,
    pub(super) root: *const libc::c_char,
    pub(super) workdir: *const libc::c_char,
}

// SAFETY: plain descriptors and pointers the child only reads before it execs, while what they
// point into is alive in the parent.
unsafe impl Send for RawJoin {}
// SAFETY: as above.
unsafe impl Sync for RawJoin {}

impl View {
    /// A fresh empty root (a temporary directory) with mount points for `dirs` (at most 3,
    /// absolute) and `workdir` the directory to start in.
    pub fn new(dirs: &[&Path], workdir: &Path) -> io::Result<View> {
        View::new_in(&std::env::temp_dir(), dirs, workdir)
    }

    /// [`View::new`] with the root made in `parent`.
    pub fn new_in(parent: &Path, dirs: &[&Path], workdir: &Path) -> io::Result<View> {
        if dirs.len() > MAX_BINDS {
            return Err(io::Error::other(
                "too many directories for the compiler's view",
            ));
        }
        let root = tempfile::Builder::new()
            .prefix("grpo-cc-root-")
            .tempdir_in(parent)?;
        let c_string =
            |path: &Path| CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other);
        let mut paths = vec![c_string(root.path())?, c_string(workdir)?];
        for dir in dirs {
            let relative = dir
                .strip_prefix("/")
                .map_err(|_| io::Error::other(format!("{} is not absolute", dir.display())))?;
            let target = root.path().join(relative);
            std::fs::create_dir_all(&target)?;
            paths.push(c_string(dir)?);
            paths.push(c_string(&target)?);
        }
        let null = std::ptr::null();
        let mut raw = RawView {
            root: paths[0].as_ptr(),
            workdir: paths[1].as_ptr(),
            binds: [(null, null); MAX_BINDS],
            count: dirs.len(),
        };
        for (i, pair) in paths[2..].chunks(2).enumerate() {
            raw.binds[i] = (pair[0].as_ptr(), pair[1].as_ptr());
        }
        Ok(View {
            root,
            _paths: paths,
            raw,
        })
    }

    /// The view for the child's plan.
    pub fn raw(&self) -> RawView {
        self.raw
    }

    /// The view's root directory.
    pub fn root(&self) -> &Path {
        self.root.path()
    }
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(target_env = "gnu")]
type Resource = libc::__rlimit_resource_t;
#[cfg(not(target_env = "gnu"))]
type Resource = libc::c_int;

fn set_limit(resource: Resource, soft: u64, hard: u64) -> io::Result<()> {
    let limit = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: a valid rlimit value.
    check(unsafe { libc::setrlimit(resource, &limit) })
}

/// Runs in the child before `exec`, in the namespaces its `clone` made (see
/// [`spawn`](super::spawn)): only async-signal-safe syscalls.
///
/// # Safety
/// Call only in a child that has not yet exec'd.
pub unsafe fn enter(plan: &ChildPlan) -> io::Result<()> {
    // SAFETY: plain syscalls (all calls below) with valid arguments in a single-threaded
    // child.
    unsafe {
        check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
        if libc::getppid() != plan.parent {
            // The parent died between clone and prctl: nobody will read our result.
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
    }
    set_limit(libc::RLIMIT_CPU, plan.cpu_s, plan.cpu_s.saturating_add(1))?;
    set_limit(libc::RLIMIT_AS, plan.address_space, plan.address_space)?;
    set_limit(libc::RLIMIT_FSIZE, plan.file_size, plan.file_size)?;
    set_limit(libc::RLIMIT_NOFILE, plan.open_files, plan.open_files)?;
    set_limit(libc::RLIMIT_CORE, 0, 0)?;
    // SAFETY: as above.
    unsafe {
        if let Some(join) = plan.join {
            check(libc::setns(join.user_ns, libc::CLONE_NEWUSER))?;
            check(libc::setns(join.mnt_ns, libc::CLONE_NEWNS))?;
            check(libc::chroot(join.root))?;
            check(libc::chdir(join.workdir))?;
        }
        if let (true, Some(view)) = (plan.user_ns, plan.view) {
            enter_view(&view)?;
        }
        check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
        if let Some(ruleset) = plan.ruleset {
            let rc = libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32);
            if rc != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        if plan.seccomp {
            deny_sockets()?;
        }
    }
    Ok(())
}

// Classic BPF, as seccomp runs it (linux/filter.h, linux/seccomp.h).
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
const BPF_JGE_K: u16 = 0x35;
const BPF_RET_K: u16 = 0x06;
const SECCOMP_SET_MODE_FILTER: libc::c_uint = 1;
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
/// `offsetof(struct seccomp_data, nr)` and `arch`.
const DATA_NR: u32 = 0;
const DATA_ARCH: u32 = 4;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xc000_003e;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xc000_00b7;
/// x86_64's x32 ABI numbers its system calls from here; no other ABI reaches it.
#[cfg(target_arch = "x86_64")]
const FOREIGN_NR: u32 = 0x4000_0000;
#[cfg(not(target_arch = "x86_64"))]
const FOREIGN_NR: u32 = u32::MAX;

const fn statement(code: u16, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

const fn jump(code: u16, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// The filter: another ABI's calls, and the calls that make a socket (io_uring can make one
/// without `socket`), fail with `EACCES`; everything else is allowed.
static SOCKET_FILTER: [libc::sock_filter; 9] = [
    statement(BPF_LD_W_ABS, DATA_ARCH),
    jump(BPF_JEQ_K, AUDIT_ARCH, 0, 6),
    statement(BPF_LD_W_ABS, DATA_NR),
    jump(BPF_JGE_K, FOREIGN_NR, 4, 0),
    jump(BPF_JEQ_K, libc::SYS_socket as u32, 3, 0),
    jump(BPF_JEQ_K, libc::SYS_socketpair as u32, 2, 0),
    jump(BPF_JEQ_K, libc::SYS_io_uring_setup as u32, 1, 0),
    statement(BPF_RET_K, SECCOMP_RET_ALLOW),
    statement(BPF_RET_K, SECCOMP_RET_ERRNO | libc::EACCES as u32),
];

/// Installs [`SOCKET_FILTER`] on the calling thread (which must have no-new-privs set).
///
/// # Safety
/// Async-signal-safe; callable in a child before `exec`.
pub(super) unsafe fn deny_sockets() -> io::Result<()> {
    let program = libc::sock_fprog {
        len: SOCKET_FILTER.len() as libc::c_ushort,
        filter: SOCKET_FILTER.as_ptr().cast_mut(),
    };
    // SAFETY: a valid filter program that outlives the call (the kernel copies it).
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            SECCOMP_SET_MODE_FILTER,
            0 as libc::c_uint,
            &program as *const libc::sock_fprog,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// In the child, in its new mount namespace: bind the view's directories, then make the view's
/// root the child's root, and return to the working directory.
///
/// # Safety
/// Call only from [`enter`], with pointers from a live [`View`].
unsafe fn enter_view(view: &RawView) -> io::Result<()> {
    // SAFETY: as the caller promises.
    unsafe {
        bind_view(view)?;
        check(libc::chroot(view.root))?;
        check(libc::chdir(view.workdir))?;
    }
    Ok(())
}

/// In a new mount namespace: make its mounts private and bind the view's directories under
/// the view's root.
///
/// # Safety
/// Only in a child process (raw syscalls), with pointers from a live [`View`].
pub(super) unsafe fn bind_view(view: &RawView) -> io::Result<()> {
    let none = std::ptr::null::<libc::c_char>();
    // SAFETY: NUL-terminated strings from the parent's `View`; null where mount(2) allows it.
    unsafe {
        // Keep our mounts out of the host's namespace (and the host's out of ours).
        check(libc::mount(
            none,
            c"/".as_ptr(),
            none,
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ))?;
        for &(source, target) in &view.binds[..view.count] {
            check(libc::mount(
                source,
                target,
                none,
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            ))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rights_asked_for_are_known_to_every_abi_that_has_them() {
        assert_eq!(handled_fs(1) & FS_REFER, 0);
        assert_eq!(
            READ_WRITE & handled_fs(1),
            READ_WRITE & !(FS_REFER | FS_TRUNCATE)
        );
        assert_eq!(READ_WRITE & handled_fs(3), READ_WRITE);
        assert_eq!(std::mem::size_of::<PathBeneathAttr>(), 12);
        assert_eq!(std::mem::size_of::<RulesetAttr>(), 24);
    }
}
