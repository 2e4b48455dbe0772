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
use wasmtime::{Engine, Store};
use wasmtime_wasi::p2::bindings::CommandPre;
use wasmtime_wasi::p2::pipe::MemoryInputPipe;
use wasmtime_wasi::{FsPerms, I32Exit, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

pub use super::budget::TICK;
use super::budget::{self, Budget, HasBudget, Traps};
use super::error::{Result, SandboxError};
use super::files::{self, JobFiles};
use super::harness::{self, Job};
use super::limits::Limits;
use super::module::{self, Entry, P1State};
use super::pipe::CappedPipe;
use super::runtime::{self, EngineOptions};
use crate::result::{RunResult, RunStatus};

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
    /// WASIp1, for the core-module languages.
    p1_linker: wasmtime::Linker<P1State>,
    /// Where compiled core modules are cached on disk (`None`: no cache).
    cache_dir: Option<PathBuf>,
    /// QuickJS-NG, compiled and linked on first use, and its version.
    quickjs: tokio::sync::OnceCell<(wasmtime::InstancePre<P1State>, String)>,
    /// Linked C and C++ modules by hash.
    modules: super::languages::ModuleCache,
    /// The C/C++ compiler, when one was set; else the process-wide one.
    compiler: OnceLock<super::cc::Compiler>,
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
        let p1_linker = module::linker(&engine)?;
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
                p1_linker,
                cache_dir: options.engine.cache_dir.clone(),
                quickjs: tokio::sync::OnceCell::new(),
                modules: Default::default(),
                compiler: OnceLock::new(),
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
        check_quota(files, limits)?;
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

    /// QuickJS-NG, compiled (through the disk cache) and linked on first use, and its version.
    async fn quickjs(&self) -> Result<&(wasmtime::InstancePre<P1State>, String)> {
        self.inner
            .quickjs
            .get_or_try_init(|| async {
                let engine = self.inner.engine.clone();
                let cache_dir = self.inner.cache_dir.clone();
                let compiled = tokio::task::spawn_blocking(move || {
                    let wasm = super::js::quickjs_wasm()?;
                    let wasm = super::js::widen_stack(&wasm, super::js::STACK_PAGES)
                        .map_err(|reason| SandboxError::Engine { reason })?;
                    runtime::load_module(&engine, "quickjs", &wasm, cache_dir.as_deref())
                })
                .await
                .map_err(|e| SandboxError::Engine {
                    reason: format!("compiling QuickJS: {e}"),
                })??;
                let pre = module::prepare(&self.inner.p1_linker, &compiled)?;
                let mut store = wasmtime::Store::new(
                    &self.inner.engine,
                    P1State {
                        wasi: wasmtime_wasi::WasiCtxBuilder::new().build_p1(),
                        budget: Budget::new(&Limits::default(), Path::new("/nonexistent")),
                    },
                );
                store.set_epoch_deadline(u64::MAX / 2);
                let version = async {
                    let instance = pre.instantiate_async(&mut store).await?;
                    super::js::version(&mut store, &instance).await
                }
                .await
                .map_err(|e| SandboxError::Engine {
                    reason: format!("starting QuickJS: {e:#}"),
                })?;
                Ok((pre, version))
            })
            .await
    }

    /// The QuickJS-NG version the JavaScript and TypeScript runs use (`0.10.1`).
    pub async fn quickjs_version(&self) -> Result<String> {
        Ok(self.quickjs().await?.1.clone())
    }

    /// Runs a JavaScript program like `node main.js` (see `js_prelude.js` for the Node.js
    /// surface there is), with `files` placed in its directory first and `files.fetch` read
    /// back after.
    pub async fn run_javascript(
        &self,
        program: &str,
        stdin: &[u8],
        limits: &Limits,
        files: &JobFiles,
    ) -> Result<(RunResult, BTreeMap<String, Vec<u8>>)> {
        limits.validate()?;
        check_quota(files, limits)?;
        let (pre, _) = self.quickjs().await?;
        let _permit = self.permit().await?;
        self.inner.runs.fetch_add(1, Ordering::Relaxed);
        let entry = Entry::QuickJs {
            program,
            filename: "main.js",
        };
        let (raw, fetched) = module::execute(
            &self.inner.engine,
            pre,
            entry,
            stdin,
            limits,
            files,
            &self.temp_root(),
        )
        .await?;
        Ok((raw.into_result(), fetched))
    }

    /// Runs a compiled `wasm32-wasi` command module (a C or C++ program).
    pub(crate) async fn run_command_module(
        &self,
        pre: &wasmtime::InstancePre<P1State>,
        stdin: &[u8],
        limits: &Limits,
        files: &JobFiles,
    ) -> Result<(RunResult, BTreeMap<String, Vec<u8>>)> {
        limits.validate()?;
        check_quota(files, limits)?;
        let _permit = self.permit().await?;
        self.inner.runs.fetch_add(1, Ordering::Relaxed);
        let (raw, fetched) = module::execute(
            &self.inner.engine,
            pre,
            Entry::Command,
            stdin,
            limits,
            files,
            &self.temp_root(),
        )
        .await?;
        Ok((raw.into_result(), fetched))
    }

    /// Compiles a core module (not cached) and links it.
    pub(crate) fn prepare_module(&self, wasm: &[u8]) -> Result<wasmtime::InstancePre<P1State>> {
        let compiled =
            wasmtime::Module::new(&self.inner.engine, wasm).map_err(|e| SandboxError::Engine {
                reason: format!("compiling the module: {e:#}"),
            })?;
        module::prepare(&self.inner.p1_linker, &compiled)
    }

    pub(crate) fn modules(&self) -> &super::languages::ModuleCache {
        &self.inner.modules
    }

    /// Uses `compiler` for C and C++ (instead of the process-wide one). Only the first call
    /// on a sandbox (or its clones) takes effect; returns whether this one did.
    pub fn with_compiler(&self, compiler: super::cc::Compiler) -> bool {
        self.inner.compiler.set(compiler).is_ok()
    }

    pub(crate) fn configured_compiler(&self) -> Option<super::cc::Compiler> {
        self.inner.compiler.get().cloned()
    }

    async fn permit(&self) -> Result<tokio::sync::SemaphorePermit<'_>> {
        self.inner
            .permits
            .acquire()
            .await
            .map_err(|e| SandboxError::Engine {
                reason: format!("sandbox closed: {e}"),
            })
    }

    fn temp_root(&self) -> PathBuf {
        self.inner
            .temp_root
            .clone()
            .unwrap_or_else(std::env::temp_dir)
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
        let state = HostState {
            ctx: builder.build(),
            table: ResourceTable::new(),
            budget: Budget::new(limits, workdir.path()),
        };
        let mut store = Store::new(&self.inner.engine, state);
        budget::arm(&mut store);

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
            Ok(Err(e)) => budget::classify_error(&e, None, Traps::Interpreter),
            Ok(Ok((result, store))) => {
                let state = &store.data().budget;
                let over_quota = state.over_quota();
                match result {
                    Ok(Ok(())) if over_quota => budget::quota_outcome(state.file_quota, Some(0)),
                    Ok(Ok(())) => (RunStatus::Ok, Some(0), String::new()),
                    Ok(Err(())) => (RunStatus::Error, Some(1), String::new()),
                    Err(e) if over_quota && e.downcast_ref::<I32Exit>().is_none() => {
                        budget::quota_outcome(state.file_quota, None)
                    }
                    Err(e) => budget::classify_error(&e, Some(state), Traps::Interpreter),
                }
            }
        };
        Ok(conclude(
            (status, exit_code, detail),
            &stdout,
            &stderr,
            started,
            workdir.path(),
            files,
            limits,
        ))
    }
}

/// Refuses files that alone exceed the run's file quota.
fn check_quota(files: &JobFiles, limits: &Limits) -> Result<()> {
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
    Ok(())
}

/// Turns how a run ended into its raw result: a cut stream is never `ok`, a stopped run gets a
/// `[sandbox] …` line on stderr, and the files asked for are fetched.
pub(crate) fn conclude(
    (status, exit_code, detail): (RunStatus, Option<i32>, String),
    stdout: &CappedPipe,
    stderr: &CappedPipe,
    started: Instant,
    workdir: &Path,
    files: &JobFiles,
    limits: &Limits,
) -> (RawRun, BTreeMap<String, Vec<u8>>) {
    let truncated = stdout.truncated() || stderr.truncated();
    // A cut stream is never `ok`; the cap is the cause when the guest stopped on its write.
    let status = if truncated && !matches!(status, RunStatus::Timeout | RunStatus::MemoryLimit) {
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
        files::fetch(workdir, &files.fetch, limits.output_bytes as u64)
    };
    (
        RawRun {
            status,
            exit_code,
            stdout: stdout.contents(),
            stderr: stderr_bytes,
            duration_ms: started.elapsed().as_secs_f64() * 1e3,
            truncated,
        },
        fetched,
    )
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

impl RawRun {
    /// The run result of a program that has no harness around it.
    pub(crate) fn into_result(self) -> RunResult {
        RunResult {
            status: self.status,
            exit_code: self.exit_code,
            stdout: String::from_utf8_lossy(&self.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&self.stderr).into_owned(),
            duration_ms: self.duration_ms,
            truncated: self.truncated,
        }
    }
}

/// Everything a store owns on the host side.
struct HostState {
    ctx: WasiCtx,
    table: ResourceTable,
    budget: Budget,
}

impl HasBudget for HostState {
    fn budget(&mut self) -> &mut Budget {
        &mut self.budget
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.ctx,
            table: &mut self.table,
        }
    }
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
