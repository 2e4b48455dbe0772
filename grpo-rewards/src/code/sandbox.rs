//! The sandbox: one wasmtime engine and the compiled Python runtime, shared by every run.
//!
//! Each run gets a fresh instance of the snapshotted interpreter (a copy-on-write view of the
//! snapshot's memory), a fresh empty temporary directory mounted at `/tmp` as its only file
//! system, an empty environment, no sockets, stdin from memory, and capped stdout/stderr.
//! Limits are enforced by the host:
//!
//! - time in wasm: epoch interruption, one tick every [`TICK`]; the deadline callback counts
//!   ticks and stops the guest when `time_limit_ms` is spent;
//! - wall clock: the call runs under a tokio timeout; the async WASI bindings mean a guest
//!   blocked in `time.sleep` or a poll is a pending future that the timeout drops;
//! - memory: a resource limiter refuses `memory.grow` past `memory_mb` (Python raises
//!   `MemoryError`);
//! - output: stdout and stderr keep at most `output_bytes` each; the write that crosses the
//!   cap ends the run with `output_limit`;
//! - files: the deadline callback measures the temporary directory and stops the run when it
//!   holds more than `file_quota_bytes` (checked every tick and once at the end).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;
use wasmtime::component::{Linker, ResourceTable};
use wasmtime::{Engine, ResourceLimiter, Store, Trap, UpdateDeadline};
use wasmtime_wasi::p2::bindings::CommandPre;
use wasmtime_wasi::p2::pipe::MemoryInputPipe;
use wasmtime_wasi::{FsPerms, I32Exit, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use super::error::{Result, SandboxError};
use super::files::{self, JobFiles};
use super::harness::{self, Job};
use super::limits::Limits;
use super::pipe::{CappedPipe, OUTPUT_LIMIT_MESSAGE};
use super::runtime::{self, EngineOptions};
use crate::result::{RunResult, RunStatus};

/// The epoch tick: the granularity of the time limit and of the file-quota check.
pub const TICK: Duration = Duration::from_millis(10);

/// The compiled Python runtime, ready to run programs. Cheap to clone; share one per process.
///
/// ```no_run
/// # async fn demo() -> Result<(), grpo_rewards::code::SandboxError> {
/// use grpo_rewards::code::{Limits, Sandbox};
/// let sandbox = Sandbox::shared()?;
/// let run = sandbox.run("print(6 * 7)", b"", &Limits::default()).await?;
/// assert_eq!(run.stdout, "42\n");
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Sandbox {
    inner: Arc<Inner>,
}

struct Inner {
    engine: Engine,
    pre: CommandPre<HostState>,
    permits: Arc<Semaphore>,
    concurrency: usize,
    /// The harness, compiled by the guest on first use (hex of its `marshal` bytes).
    compiled_harness: tokio::sync::OnceCell<Option<String>>,
    /// Where run directories go (`None`: the system's temporary directory).
    temp_root: Option<PathBuf>,
    /// Programs started so far.
    runs: std::sync::atomic::AtomicU64,
    /// The interpreter's version, asked of the guest on first use.
    python_version: tokio::sync::OnceCell<String>,
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox")
            .field("concurrency", &self.inner.concurrency)
            .finish_non_exhaustive()
    }
}

/// How a [`Sandbox`] is built.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SandboxOptions {
    /// Engine and cache settings.
    pub engine: EngineOptions,
    /// How many programs run at once (default: the number of cores).
    pub concurrency: usize,
    /// Where each run's empty `/tmp` directory is created (default: the system's temporary
    /// directory). A directory that cannot be written makes every run a sandbox fault.
    pub temp_root: Option<PathBuf>,
}

impl Default for SandboxOptions {
    fn default() -> Self {
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        SandboxOptions {
            engine: EngineOptions::default(),
            concurrency: cores,
            temp_root: None,
        }
    }
}

impl Sandbox {
    /// Builds a sandbox: the engine, the compiled runtime (from the disk cache when possible)
    /// and the epoch ticker.
    pub fn new(options: &SandboxOptions) -> Result<Sandbox> {
        let engine = runtime::build_engine(&options.engine)?;
        let component = runtime::load_component(&engine, options.engine.cache_dir.as_deref())?;
        let mut linker = Linker::<HostState>::new(&engine);
        let engine_err = |e: wasmtime::Error| SandboxError::Engine {
            reason: format!("{e:#}"),
        };
        wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(engine_err)?;
        let pre = CommandPre::new(linker.instantiate_pre(&component).map_err(engine_err)?)
            .map_err(engine_err)?;
        start_ticker(&engine);
        let concurrency = options.concurrency.max(1);
        Ok(Sandbox {
            inner: Arc::new(Inner {
                engine,
                pre,
                permits: Arc::new(Semaphore::new(concurrency)),
                concurrency,
                compiled_harness: tokio::sync::OnceCell::new(),
                temp_root: options.temp_root.clone(),
                runs: std::sync::atomic::AtomicU64::new(0),
                python_version: tokio::sync::OnceCell::new(),
            }),
        })
    }

    /// The process-wide sandbox with default options, built on first use.
    pub fn shared() -> Result<Sandbox> {
        static SHARED: OnceLock<Sandbox> = OnceLock::new();
        if let Some(sandbox) = SHARED.get() {
            return Ok(sandbox.clone());
        }
        let sandbox = Sandbox::new(&SandboxOptions::default())?;
        Ok(SHARED.get_or_init(|| sandbox).clone())
    }

    /// How many programs this sandbox has started (its harness compile included), for
    /// throughput figures.
    pub fn runs_started(&self) -> u64 {
        self.inner.runs.load(Ordering::Relaxed)
    }

    /// The version of the interpreter inside the sandbox (`3.14.0`), asked of the guest once.
    pub async fn python_version(&self) -> Result<String> {
        self.inner
            .python_version
            .get_or_try_init(|| async {
                let program = "import sys\nprint('%d.%d.%d' % sys.version_info[:3])";
                let run = self.run(program, b"", &Limits::default()).await?;
                let version = run.stdout.trim().to_owned();
                if run.status != RunStatus::Ok || version.is_empty() {
                    return Err(SandboxError::Engine {
                        reason: format!(
                            "could not ask the interpreter its version: {}",
                            run.stderr
                        ),
                    });
                }
                Ok(version)
            })
            .await
            .cloned()
    }

    /// How many programs this sandbox runs at once.
    pub fn concurrency(&self) -> usize {
        self.inner.concurrency
    }

    /// Runs `program` as a script (`__name__ == "__main__"`) with `stdin`, like `python3 -I`:
    /// an uncaught exception prints its traceback and exits 1, `sys.exit(n)` exits `n`.
    pub async fn run(&self, program: &str, stdin: &[u8], limits: &Limits) -> Result<RunResult> {
        let job = Job::script(program);
        Ok(self.execute(&job, stdin, limits).await?.0)
    }

    /// [`Sandbox::run`] with `files` placed in the program's working directory first (its
    /// `/tmp` and current directory); returns the files of `files.fetch` as they are after the
    /// run (missing ones, links and non-regular files left out, at most the output cap in all).
    /// Placed files count toward the run's file quota.
    pub async fn run_with_files(
        &self,
        program: &str,
        stdin: &[u8],
        limits: &Limits,
        files: &JobFiles,
    ) -> Result<(RunResult, BTreeMap<String, Vec<u8>>)> {
        if files.put_bytes() > limits.file_quota_bytes {
            return Err(SandboxError::InvalidLimit {
                field: "file_quota_bytes",
                reason: format!(
                    "{} bytes of files exceed the file quota of {} bytes",
                    files.put_bytes(),
                    limits.file_quota_bytes
                ),
            });
        }
        let job = Job::script(program);
        let (run, _, fetched) = self.execute_with(&job, stdin, limits, files).await?;
        Ok((run, fetched))
    }

    /// [`Sandbox::run`] for callers without an async runtime. Must not be called from inside
    /// one (it blocks on a process-wide runtime).
    pub fn run_blocking(&self, program: &str, stdin: &[u8], limits: &Limits) -> Result<RunResult> {
        blocking_runtime()?.block_on(self.run(program, stdin, limits))
    }

    /// Runs many programs concurrently (at most [`Sandbox::concurrency`] at a time, spread over
    /// the runtime's worker threads); results come back in input order.
    pub async fn run_batch(
        &self,
        programs: Vec<(String, Vec<u8>)>,
        limits: &Limits,
    ) -> Vec<Result<RunResult>> {
        let handles: Vec<_> = programs
            .into_iter()
            .map(|(program, stdin)| {
                let sandbox = self.clone();
                let limits = limits.clone();
                tokio::spawn(async move { sandbox.run(&program, &stdin, &limits).await })
            })
            .collect();
        let mut results = Vec::with_capacity(handles.len());
        for handle in handles {
            results.push(handle.await.unwrap_or_else(|e| {
                Err(SandboxError::Engine {
                    reason: format!("run task: {e}"),
                })
            }));
        }
        results
    }

    /// Runs one harness job; returns the run result (harness report line removed from stderr)
    /// and the harness report when the harness finished.
    pub(crate) async fn execute(
        &self,
        job: &Job,
        stdin: &[u8],
        limits: &Limits,
    ) -> Result<(RunResult, Option<harness::Report>)> {
        let (run, report, _) = self
            .execute_with(job, stdin, limits, &JobFiles::default())
            .await?;
        Ok((run, report))
    }

    /// [`Sandbox::execute`] with files placed before the run and fetched after it.
    async fn execute_with(
        &self,
        job: &Job,
        stdin: &[u8],
        limits: &Limits,
        files: &JobFiles,
    ) -> Result<(
        RunResult,
        Option<harness::Report>,
        BTreeMap<String, Vec<u8>>,
    )> {
        limits.validate()?;
        let _permit = self
            .inner
            .permits
            .acquire()
            .await
            .map_err(|e| SandboxError::Engine {
                reason: format!("sandbox closed: {e}"),
            })?;
        let compiled = self
            .inner
            .compiled_harness
            .get_or_try_init(|| self.compile_harness())
            .await?;
        let nonce = harness::nonce();
        let input = job.encode(&nonce, stdin, compiled.as_deref());
        let (raw, fetched) = self.execute_raw(input, limits, files).await?;
        let (run, report) = harness::finish(raw, &nonce);
        Ok((run, report, fetched))
    }

    /// Has the guest compile the harness; `None` (send the source each time) if that fails.
    async fn compile_harness(&self) -> Result<Option<String>> {
        let nonce = harness::nonce();
        let input = Job::script(harness::COMPILE_HARNESS).encode(
            &nonce,
            harness::HARNESS_PY.as_bytes(),
            None,
        );
        let limits = Limits {
            output_bytes: 16 << 20,
            ..Limits::default()
        };
        let (raw, _) = self
            .execute_raw(input, &limits, &JobFiles::default())
            .await?;
        let (run, _) = harness::finish(raw, &nonce);
        let hex = run.stdout.trim();
        if run.status == RunStatus::Ok
            && !hex.is_empty()
            && hex.bytes().all(|b| b.is_ascii_hexdigit())
        {
            tracing::debug!(bytes = hex.len() / 2, "compiled the harness");
            Ok(Some(hex.to_owned()))
        } else {
            tracing::warn!(status = ?run.status, stderr = %run.stderr, "could not compile the harness; sending source");
            Ok(None)
        }
    }

    async fn execute_raw(
        &self,
        input: Vec<u8>,
        limits: &Limits,
        files: &JobFiles,
    ) -> Result<(RawRun, BTreeMap<String, Vec<u8>>)> {
        let started = Instant::now();
        self.inner.runs.fetch_add(1, Ordering::Relaxed);
        let root = self
            .inner
            .temp_root
            .clone()
            .unwrap_or_else(std::env::temp_dir);
        let workdir = tempfile::Builder::new()
            .prefix("grpo-sandbox-")
            .tempdir_in(&root)
            .map_err(|source| SandboxError::Io { path: root, source })?;
        files::place(workdir.path(), files).map_err(|source| SandboxError::Io {
            path: workdir.path().to_path_buf(),
            source,
        })?;
        let stdout = CappedPipe::new(limits.output_bytes);
        let stderr = CappedPipe::new(limits.output_bytes);
        let mut builder = WasiCtxBuilder::new();
        builder
            .stdin(MemoryInputPipe::new(input))
            .stdout(stdout.clone())
            .stderr(stderr.clone())
            .args(&["python"])
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .insecure_random_seed(rand::random::<u128>())
            .preopened_dir(workdir.path(), "/tmp", FsPerms::ReadWrite)
            .map_err(|e| SandboxError::Io {
                path: workdir.path().to_path_buf(),
                source: std::io::Error::other(e),
            })?;
        let memory_bytes =
            usize::try_from(limits.memory_mb.saturating_mul(1 << 20)).unwrap_or(usize::MAX);
        let state = HostState {
            ctx: builder.build(),
            table: ResourceTable::new(),
            memory: MemoryCap {
                max_bytes: memory_bytes,
                hit: false,
            },
            budget_ticks: limits
                .time_limit_ms
                .div_ceil(TICK.as_millis() as u64)
                .max(1),
            ticks: 0,
            cpu_exceeded: false,
            workdir: workdir.path().to_path_buf(),
            file_quota: limits.file_quota_bytes,
            quota_exceeded: false,
        };
        let mut store = Store::new(&self.inner.engine, state);
        store.limiter(|s| &mut s.memory);
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|mut ctx| {
            let state = ctx.data_mut();
            state.ticks += 1;
            if state.ticks > state.budget_ticks {
                state.cpu_exceeded = true;
                return Err(Trap::Interrupt.into());
            }
            if dir_size(&state.workdir) > state.file_quota {
                state.quota_exceeded = true;
                return Err(Trap::Interrupt.into());
            }
            Ok(UpdateDeadline::Yield(1))
        });

        let wall = Duration::from_millis(limits.wall_limit_ms());
        let pre = self.inner.pre.clone();
        let outcome = tokio::time::timeout(wall, async {
            let command = pre.instantiate_async(&mut store).await?;
            let result = command.wasi_cli_run().call_run(&mut store).await;
            Ok::<_, wasmtime::Error>((result, store))
        })
        .await;

        let (status, exit_code, detail) = match outcome {
            Err(_elapsed) => (
                RunStatus::Timeout,
                None,
                format!("wall-clock limit of {} ms", wall.as_millis()),
            ),
            Ok(Err(e)) => classify_error(&e, None),
            Ok(Ok((result, store))) => {
                let state = store.data();
                let over_quota =
                    state.quota_exceeded || dir_size(&state.workdir) > state.file_quota;
                match result {
                    Ok(Ok(())) if over_quota => quota_outcome(state.file_quota, Some(0)),
                    Ok(Ok(())) => (RunStatus::Ok, Some(0), String::new()),
                    Ok(Err(())) => (RunStatus::Error, Some(1), String::new()),
                    Err(e) if over_quota && e.downcast_ref::<I32Exit>().is_none() => {
                        quota_outcome(state.file_quota, None)
                    }
                    Err(e) => classify_error(&e, Some(state)),
                }
            }
        };
        let truncated = stdout.truncated() || stderr.truncated();
        // A cut stream is never `ok`; the cap is the cause when the guest stopped on its write.
        let status = if truncated && !matches!(status, RunStatus::Timeout | RunStatus::MemoryLimit)
        {
            RunStatus::OutputLimit
        } else {
            status
        };
        let mut stderr_bytes = stderr.contents();
        if !detail.is_empty() {
            tracing::debug!(%detail, ?status, "sandboxed run stopped");
        }
        if status != RunStatus::Ok && !detail.is_empty() {
            stderr_bytes.extend_from_slice(format!("\n[sandbox] {detail}\n").as_bytes());
        }
        let fetched = if files.fetch.is_empty() {
            BTreeMap::new()
        } else {
            files::fetch(workdir.path(), &files.fetch, limits.output_bytes as u64)
        };
        Ok((
            RawRun {
                status,
                exit_code,
                stdout: stdout.contents(),
                stderr: stderr_bytes,
                duration_ms: started.elapsed().as_secs_f64() * 1e3,
                truncated,
            },
            fetched,
        ))
    }
}

fn quota_outcome(quota: u64, exit_code: Option<i32>) -> (RunStatus, Option<i32>, String) {
    (
        RunStatus::OutputLimit,
        exit_code,
        format!("file quota of {quota} bytes exceeded"),
    )
}

/// Maps a failed call to a status: an exit, a limit, or a crash.
fn classify_error(
    e: &wasmtime::Error,
    state: Option<&HostState>,
) -> (RunStatus, Option<i32>, String) {
    if let Some(exit) = e.downcast_ref::<I32Exit>() {
        let status = if exit.0 == 0 {
            RunStatus::Ok
        } else {
            RunStatus::Error
        };
        // A MemoryError that killed the program is a memory-limit verdict.
        if exit.0 != 0 && state.is_some_and(|s| s.memory.hit) {
            return (
                RunStatus::MemoryLimit,
                Some(exit.0),
                "memory limit reached".into(),
            );
        }
        return (status, Some(exit.0), String::new());
    }
    if let Some(state) = state {
        if state.cpu_exceeded {
            return (RunStatus::Timeout, None, "time limit reached".into());
        }
        if state.quota_exceeded {
            return quota_outcome(state.file_quota, None);
        }
        if state.memory.hit {
            return (RunStatus::MemoryLimit, None, "memory limit reached".into());
        }
    }
    let text = format!("{e:#}");
    if text.contains(OUTPUT_LIMIT_MESSAGE) {
        return (RunStatus::OutputLimit, None, "output limit reached".into());
    }
    (
        RunStatus::Crash,
        None,
        format!("the interpreter trapped: {}", first_line(&text)),
    )
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// One run's raw outcome, before the harness report is taken out of stderr.
#[derive(Debug)]
pub(crate) struct RawRun {
    pub status: RunStatus,
    pub exit_code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub duration_ms: f64,
    pub truncated: bool,
}

/// Everything a store owns on the host side.
struct HostState {
    ctx: WasiCtx,
    table: ResourceTable,
    memory: MemoryCap,
    budget_ticks: u64,
    ticks: u64,
    cpu_exceeded: bool,
    workdir: PathBuf,
    file_quota: u64,
    quota_exceeded: bool,
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.ctx,
            table: &mut self.table,
        }
    }
}

/// Refuses linear-memory growth past the cap and remembers that it did.
struct MemoryCap {
    max_bytes: usize,
    hit: bool,
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.max_bytes {
            self.hit = true;
            return Ok(false);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 1 << 20)
    }
}

/// Total size of the files under `dir` (errors count as zero: the guest may be mid-write).
fn dir_size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.metadata() {
            Ok(meta) if meta.is_dir() => dir_size(&entry.path()),
            Ok(meta) => meta.len(),
            Err(_) => 0,
        })
        .sum()
}

/// Advances the engine's epoch every [`TICK`] until the engine is dropped.
fn start_ticker(engine: &Engine) {
    let weak = engine.weak();
    let spawned = std::thread::Builder::new()
        .name("grpo-sandbox-epoch".into())
        .spawn(move || {
            loop {
                std::thread::sleep(TICK);
                match weak.upgrade() {
                    Some(engine) => engine.increment_epoch(),
                    None => break,
                }
            }
        });
    if let Err(e) = spawned {
        tracing::error!(error = %e, "could not start the epoch ticker; time limits fall back to wall clock");
    }
}

/// A tokio runtime for the blocking conveniences, one per process.
pub(crate) fn blocking_runtime() -> Result<&'static tokio::runtime::Runtime> {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("grpo-sandbox")
        .build()
        .map_err(|source| SandboxError::Io {
            path: PathBuf::from("<tokio runtime>"),
            source,
        })?;
    Ok(RUNTIME.get_or_init(|| rt))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dir_size_counts_nested_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), [0u8; 10]).unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/b"), [0u8; 7]).unwrap();
        assert_eq!(dir_size(dir.path()), 17);
        assert_eq!(dir_size(&dir.path().join("missing")), 0);
    }
}
