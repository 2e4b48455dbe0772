//! Running zig for one job: the confined child process, its limits and captured messages,
//! and the probe that finds which confinement this host allows.

use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};

use super::compile::{CompileLimits, Compiler};
use super::confine::{self, ChildPlan, Confinement, Ruleset, View};
use super::error::CcError;
use super::shared_view::SharedView;
use super::spawn::{self, Spec};
use super::toolchain::{Toolchain, ZIG_VERSION};

/// The largest file a compile may write (`RLIMIT_FSIZE`): the module, objects, caches.
pub(super) const FILE_SIZE_LIMIT: u64 = 64 << 20;
/// `RLIMIT_NOFILE` for the compiler.
pub(super) const OPEN_FILES: u64 = 1024;

impl Compiler {
    /// The compiler's messages: lossy UTF-8, host paths replaced, truncation marked.
    pub(super) fn clean_messages(&self, outcome: &Outcome, job: &Path) -> String {
        let mut text = String::from_utf8_lossy(&outcome.stderr).into_owned();
        if !outcome.stdout.is_empty() {
            text.push_str(&String::from_utf8_lossy(&outcome.stdout));
        }
        let job = job.to_string_lossy();
        let root = self.inner.toolchain.root().to_string_lossy();
        text = text
            .replace(&format!("{job}/"), "")
            .replace(job.as_ref(), ".");
        text = text.replace(root.as_ref(), "<toolchain>");
        if outcome.truncated {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str("[compiler] messages truncated\n");
        }
        text
    }

    /// Runs zig with `args` in `job`, confined, under `limits`, as `step`.
    pub(super) async fn run_zig(
        &self,
        args: &[String],
        job: &Path,
        limits: &CompileLimits,
        step: Step,
    ) -> Result<Outcome, CcError> {
        let inner = &self.inner;
        let zig = inner.toolchain.zig();
        let spawn_error = |source| CcError::Spawn {
            path: zig.clone(),
            source,
        };
        let cache = match step {
            Step::Direct => ZigCache::None,
            Step::Driver | Step::Verbose if inner.warm.load(Ordering::Acquire) => {
                ZigCache::Manifests
            }
            Step::Driver | Step::Verbose => ZigCache::All,
        };
        // Lives until the compiler is gone: removing a view's directories on the host would
        // detach the child's mounts (Linux unmounts a mount point unlinked in another namespace).
        let guards = JobGuards::new(&inner.toolchain, &inner.confinement, job, cache)
            .map_err(spawn_error)?;
        let plan = guards.plan(
            &inner.confinement,
            inner.shared.as_ref(),
            limits.cpu_s,
            limits.memory_mb.saturating_mul(1 << 20),
        );
        let mut env = guards.env();
        if step == Step::Verbose {
            env.push(("ZIG_VERBOSE_CC", OsStr::new("1")));
            env.push(("ZIG_VERBOSE_LINK", OsStr::new("1")));
        }
        let spec = Spec {
            program: &zig,
            args,
            env: &env,
            cwd: job,
            stdout: true,
            stderr: true,
        };
        let mut child = spawn::spawn(&spec, &plan).map_err(spawn_error)?;
        let receiver = |fd: Option<std::os::fd::OwnedFd>| {
            fd.map(tokio::net::unix::pipe::Receiver::from_owned_fd)
                .transpose()
        };
        let stdout = receiver(child.stdout.take()).map_err(spawn_error)?;
        let stderr = receiver(child.stderr.take()).map_err(spawn_error)?;
        let cap = limits.output_bytes;
        let run = async {
            let (status, out, err) = tokio::join!(
                child.wait(),
                read_capped(stdout, cap),
                read_capped(stderr, cap)
            );
            (status, out, err)
        };
        match tokio::time::timeout(Duration::from_millis(limits.wall_ms), run).await {
            Ok((status, (stdout, out_cut), (stderr, err_cut))) => {
                let status = status.map_err(spawn_error)?;
                let exit = match (status.code(), status.signal()) {
                    (Some(code), _) => Exit::Code(code),
                    (None, Some(signal)) => Exit::Signal(signal),
                    (None, None) => Exit::Code(-1),
                };
                Ok(Outcome {
                    exit,
                    stdout,
                    stderr,
                    truncated: out_cut || err_cut,
                })
            }
            Err(_) => Ok(Outcome {
                exit: Exit::WallTimeout,
                stdout: Vec::new(),
                stderr: Vec::new(),
                truncated: false,
            }),
        }
    }
}

/// What one zig process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// `zig cc` / `zig c++`: the driver, which checks and may build its libraries.
    Driver,
    /// The driver, printing the commands it runs (see [`direct`](super::direct)).
    Verbose,
    /// `zig clang` or `zig wasm-ld` with the driver's captured arguments.
    Direct,
}

/// How much of zig's global cache a job may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ZigCache {
    /// All of it: the driver still has libraries to build (before the warm-up ends).
    All,
    /// Only the manifests (`h/`, which the driver opens for writing to lock them): once
    /// warm, a job can read the built libraries (`o/`) but not replace them, so no compile
    /// can poison the next.
    Manifests,
    /// None: clang and the linker run directly and write only the job directory.
    None,
}

/// The rules for one job: the toolchain read-only, the job read-write, and of zig's global
/// cache what `cache` says.
pub(super) fn job_ruleset(
    toolchain: &Toolchain,
    abi: u32,
    job: &Path,
    deny_tcp: bool,
    cache: ZigCache,
) -> std::io::Result<Ruleset> {
    let root = toolchain.global_cache_dir();
    match cache {
        ZigCache::All => Ruleset::new(abi, &[toolchain.root()], &[&root, job], deny_tcp),
        ZigCache::Manifests => {
            Ruleset::new(abi, &[toolchain.root()], &[&root.join("h"), job], deny_tcp)
        }
        ZigCache::None => Ruleset::new(abi, &[toolchain.root()], &[job], deny_tcp),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Exit {
    Code(i32),
    Signal(i32),
    WallTimeout,
}

#[derive(Debug)]
pub(super) struct Outcome {
    pub(super) exit: Exit,
    pub(super) stdout: Vec<u8>,
    pub(super) stderr: Vec<u8>,
    pub(super) truncated: bool,
}

pub(super) fn signal_note(signal: i32, limits: &CompileLimits) -> String {
    match signal {
        libc::SIGXCPU => format!(
            "[compiler] killed: CPU time limit of {} s exceeded",
            limits.cpu_s
        ),
        libc::SIGKILL => format!(
            "[compiler] killed (CPU time limit of {} s, or memory)",
            limits.cpu_s
        ),
        libc::SIGXFSZ => format!(
            "[compiler] killed: file size limit of {} MiB exceeded",
            FILE_SIZE_LIMIT >> 20
        ),
        // zig aborts when its clang child is killed by a limit; clang aborts when out of memory.
        _ => format!(
            "[compiler] stopped by signal {signal} (limits: {} s CPU, {} MiB memory)",
            limits.cpu_s, limits.memory_mb
        ),
    }
}

/// Reads everything, keeping the first `cap` bytes; true when more came.
async fn read_capped(stream: Option<impl AsyncRead + Unpin>, cap: usize) -> (Vec<u8>, bool) {
    let Some(mut stream) = stream else {
        return (Vec::new(), false);
    };
    let mut kept = Vec::new();
    let mut truncated = false;
    let mut buf = [0u8; 8192];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = cap.saturating_sub(kept.len());
                if n > room {
                    truncated = true;
                }
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    (kept, truncated)
}

/// What probing found: the version and the confinement that works here.
pub(super) struct Probe {
    pub(super) version: String,
    pub(super) confinement: Confinement,
    /// The namespaces every compile joins, when `confinement.shared_ns`.
    pub(super) shared: Option<SharedView>,
    pub(super) unconfined_reason: Option<String>,
}

/// What one confined zig process needs from the parent besides its arguments: its Landlock
/// ruleset, its own filesystem view (when compiles do not share namespaces), its job
/// directory as a C string (to join shared namespaces) and zig's environment.
struct JobGuards {
    ruleset: Option<Ruleset>,
    view: Option<View>,
    workdir: CString,
    env: [(&'static str, OsString); 3],
}

impl JobGuards {
    fn new(
        toolchain: &Toolchain,
        confinement: &Confinement,
        job: &Path,
        cache: ZigCache,
    ) -> std::io::Result<JobGuards> {
        let ruleset = match confinement.landlock_abi {
            Some(abi) => Some(job_ruleset(
                toolchain,
                abi,
                job,
                !confinement.net_ns,
                cache,
            )?),
            None => None,
        };
        let view = match confinement.mount_ns && !confinement.shared_ns {
            true => Some(job_view(toolchain, job)?),
            false => None,
        };
        let workdir = CString::new(job.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
        let env = [
            ("ZIG_GLOBAL_CACHE_DIR", toolchain.global_cache_dir().into()),
            ("ZIG_LOCAL_CACHE_DIR", job.join("zig-cache").into()),
            ("TMPDIR", job.into()),
        ];
        Ok(JobGuards {
            ruleset,
            view,
            workdir,
            env,
        })
    }

    /// The child's plan, as plain values pointing into `self` and `shared`.
    fn plan(
        &self,
        confinement: &Confinement,
        shared: Option<&SharedView>,
        cpu_s: u64,
        address_space: u64,
    ) -> ChildPlan {
        let join = shared.map(|s| s.raw_join(&self.workdir));
        ChildPlan {
            parent: std::process::id() as libc::pid_t,
            cpu_s,
            address_space,
            file_size: FILE_SIZE_LIMIT,
            open_files: OPEN_FILES,
            // Joining existing namespaces makes none.
            user_ns: confinement.user_ns && join.is_none(),
            net_ns: confinement.net_ns,
            view: self.view.as_ref().map(View::raw),
            ruleset: self.ruleset.as_ref().map(Ruleset::raw_fd),
            seccomp: confinement.seccomp_net,
            join,
        }
    }

    /// zig's environment: its caches and temporary directory.
    fn env(&self) -> Vec<(&str, &OsStr)> {
        self.env.iter().map(|(k, v)| (*k, v.as_os_str())).collect()
    }
}

/// A fresh job directory: in the shared view's jobs directory when there is one, else in the
/// system's temporary directory.
pub(super) fn job_dir(
    shared: Option<&SharedView>,
    prefix: &str,
) -> std::io::Result<tempfile::TempDir> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(prefix);
    match shared {
        Some(shared) => builder.tempdir_in(shared.jobs_dir()),
        None => builder.tempdir(),
    }
}

/// The compiler's filesystem view: the toolchain, the job directory and `/proc` (zig finds
/// its library directory through `/proc/self/exe`; Landlock still denies opening anything in
/// `/proc`).
pub(super) fn job_view(toolchain: &Toolchain, job: &Path) -> std::io::Result<View> {
    View::new(&[toolchain.root(), job, Path::new("/proc")], job)
}

/// Runs `zig env` and `zig cc --version` under the strongest confinement the kernel allows,
/// stepping down (no seccomp filter: a network namespace instead; no mount namespace; no
/// namespaces; no Landlock) with a warning at each refusal.
pub(super) fn probe(toolchain: &Toolchain, namespaces: bool) -> Probe {
    let abi = confine::landlock_abi();
    let mut unconfined_reason = abi.is_none().then(|| "Landlock is not enabled".to_owned());
    let tier = |user_ns, net_ns, mount_ns, seccomp_net, landlock_abi: Option<u32>| Confinement {
        user_ns,
        net_ns,
        mount_ns,
        shared_ns: false,
        landlock_abi,
        landlock_net: !net_ns && landlock_abi.is_some_and(|a| a >= 4),
        seccomp_net,
        rlimits: true,
    };
    let shared = Confinement {
        shared_ns: true,
        ..tier(true, false, true, true, abi)
    };
    let attempts = [
        shared,
        tier(true, false, true, true, abi),
        tier(true, true, true, false, abi),
        tier(true, true, false, false, abi),
        tier(false, false, false, true, abi),
        tier(false, false, false, false, abi),
        tier(false, false, false, false, None),
    ];
    for confinement in attempts {
        if confinement.user_ns && !namespaces {
            continue;
        }
        let view = match confinement.shared_ns {
            true => match SharedView::new(toolchain.root()) {
                Ok(view) => Some(view),
                Err(e) => {
                    tracing::warn!(error = %e, "no shared namespaces for the C/C++ compiler; each compile makes its own");
                    continue;
                }
            },
            false => None,
        };
        match probe_once(toolchain, &confinement, view.as_ref()) {
            Ok(clang) => {
                if confinement.user_ns && !confinement.mount_ns {
                    tracing::warn!(
                        "no mount namespace for the C/C++ compiler: host paths' existence is \
                         visible to it (Landlock still hides their contents)"
                    );
                }
                if confinement.landlock_abi.is_none() {
                    tracing::warn!(
                        "the C/C++ compiler has no filesystem confinement (no Landlock)"
                    );
                }
                if !confinement.seccomp_net && !confinement.net_ns {
                    tracing::warn!(
                        landlock_net = confinement.landlock_net,
                        "no seccomp filter and no network namespace for the C/C++ compiler; \
                         Landlock's TCP rules stand in (UDP is not covered)"
                    );
                }
                let version = match clang {
                    Some(clang) => format!("zig {ZIG_VERSION} (clang {clang})"),
                    None => format!("zig {ZIG_VERSION}"),
                };
                return Probe {
                    version,
                    confinement,
                    shared: view,
                    unconfined_reason,
                };
            }
            Err(e) => {
                tracing::warn!(?confinement, error = %e, "confining the compiler failed; trying less");
                if confinement.landlock_abi.is_some() {
                    unconfined_reason = Some(e.to_string());
                }
            }
        }
    }
    Probe {
        version: format!("zig {ZIG_VERSION}"),
        confinement: tier(false, false, false, false, None),
        shared: None,
        unconfined_reason,
    }
}

/// One probe: `zig env` must work (it finds zig's library and cache directories) and `zig cc
/// --version` gives the clang version, under this confinement.
fn probe_once(
    toolchain: &Toolchain,
    confinement: &Confinement,
    shared: Option<&SharedView>,
) -> std::io::Result<Option<String>> {
    use std::io::Read;
    let job = job_dir(shared, "grpo-cc-probe-")?;
    let mut stdout = Vec::new();
    for args in [&["env"][..], &["cc", "--version"][..]] {
        let guards = JobGuards::new(toolchain, confinement, job.path(), ZigCache::All)?;
        let plan = guards.plan(confinement, shared, 10, 2048 << 20);
        let env = guards.env();
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let spec = Spec {
            program: &toolchain.zig(),
            args: &args,
            env: &env,
            cwd: job.path(),
            stdout: true,
            stderr: false,
        };
        let mut child = spawn::spawn(&spec, &plan)?;
        let mut output = Vec::new();
        if let Some(fd) = child.stdout.take() {
            std::fs::File::from(fd).read_to_end(&mut output)?;
        }
        let status = child.wait_blocking()?;
        if !status.success() {
            return Err(std::io::Error::other(format!(
                "`zig {}` exited with {status}",
                args.join(" "),
            )));
        }
        stdout = output;
    }
    let text = String::from_utf8_lossy(&stdout);
    Ok(text
        .split_whitespace()
        .skip_while(|w| *w != "version")
        .nth(1)
        .map(str::to_owned))
}
