//! The sandbox: one wasmtime engine and the compiled Python runtime, shared by every run.
//!
//! Each run gets a fresh instance of the snapshotted interpreter (a copy-on-write view of the
//! snapshot's memory), a fresh empty temporary directory mounted at `/tmp` as its only file
//! system, an empty environment, no sockets, stdin from memory, and capped stdout/stderr.
//! Limits are enforced by the host:
//!
//! - CPU time: the CPU time the guest's own thread received in the polls that ran it
//!   ([`crate::engine::cpu_clock`]), checked by epoch interruption every [`TICK`]; the deadline
//!   callback stops the guest when `time_limit_ms` is spent (time the machine gives to other
//!   work does not count, so load does not change a verdict);
//! - wall clock: the call runs under a tokio timeout, a net for waiting (a guest blocked in
//!   `time.sleep` or a poll is a pending future that the timeout drops), by default three
//!   times the CPU limit so load alone does not reach it;
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

use tokio::sync::Semaphore;
use wasmtime::Engine;
use wasmtime::component::Linker;
use wasmtime_wasi::p2::bindings::CommandPre;

use crate::engine::budget::Budget;
pub use crate::engine::budget::TICK;
use crate::engine::files::JobFiles;
use crate::engine::run;
use crate::engine::run::RawRun;
use crate::engine::runtime::{self, EngineOptions};
use crate::error::{Result, SandboxError};
use crate::guest::python::harness::{self, Job};
use crate::guest::python::{HostState, PythonGuest};
use crate::guest::wasip1::{self, Entry, ModuleGuest, P1State};
use grpo_rewards::code::limits::Limits;
use grpo_rewards::result::{RunResult, RunStatus};

/// The compiled Python runtime, ready to run programs. Cheap to clone; share one per process.
///
/// ```no_run
/// # async fn demo() -> Result<(), grpo_sandbox::SandboxError> {
/// use grpo_sandbox::{Limits, Sandbox};
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
    /// Runs alive at once, computing or waiting (each holds an instance and its memory).
    live: Arc<Semaphore>,
    concurrency: usize,
    /// The harness, compiled by the guest on first use (its `marshal` bytes).
    compiled_harness: tokio::sync::OnceCell<Option<Vec<u8>>>,
    /// Where run directories go (`None`: the system's temporary directory).
    temp_root: Option<PathBuf>,
    /// Empty run directories under `temp_root`, reused from run to run.
    run_dirs: crate::engine::rundir::RunDirs,
    /// C/C++ compiles at once for this sandbox's own compiler (`None`: the process-wide one).
    compile_parallel: Option<usize>,
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
    modules: crate::guest::wasip1::ModuleCache,
    /// The C/C++ compiler, when one was set; else the process-wide one.
    compiler: OnceLock<crate::guest::cc::Compiler>,
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
    /// How many programs compute at once (default: the number of cores). A program that
    /// sleeps or waits gives its worker back while it waits; programs alive at once, waiting
    /// or not, are bounded by the instance allocator's slots (see [`max_live`]).
    pub concurrency: usize,
    /// Where each run's empty `/tmp` directory is created (default: the system's temporary
    /// directory). A directory that cannot be written makes every run a sandbox fault.
    pub temp_root: Option<PathBuf>,
    /// How many C/C++ compiles (zig processes) run at once. `None` (the default): the
    /// process-wide compiler's cap, the number of cores; `Some(n)`: a compiler of this
    /// sandbox's own with cap `n`, built on first use.
    pub compile_parallel: Option<usize>,
    /// Interpreter sessions held open at once beside the programs (default 0). Each open
    /// session keeps an instance, so a pooled allocator gets this many slots on top of its
    /// own ([`SandboxOptions::engine_options`]): open sessions never starve programs.
    pub sessions: usize,
}

impl SandboxOptions {
    /// The engine this sandbox builds: [`SandboxOptions::engine`] with a pooled allocator
    /// grown by one slot per session. The one place the pool is sized for sessions.
    pub fn engine_options(&self) -> EngineOptions {
        let allocator = match self.engine.allocator {
            crate::engine::runtime::Allocator::Pooling {
                total_instances,
                max_memory_mb,
                keep_resident_mb,
            } => crate::engine::runtime::Allocator::Pooling {
                total_instances: total_instances
                    .saturating_add(u32::try_from(self.sessions).unwrap_or(u32::MAX)),
                max_memory_mb,
                keep_resident_mb,
            },
            other => other,
        };
        EngineOptions {
            allocator,
            ..self.engine.clone()
        }
    }
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
            compile_parallel: None,
            sessions: 0,
        }
    }
}

/// Programs alive at once (computing, or waiting without a worker): the pooling allocator's
/// instance slots, less two for the version probes and the harness compile; with on-demand
/// memory, 16 per worker. At least the worker count.
pub fn max_live(options: &SandboxOptions, concurrency: usize) -> usize {
    let cap = match options.engine_options().allocator {
        crate::engine::runtime::Allocator::Pooling {
            total_instances, ..
        } => usize::try_from(total_instances)
            .unwrap_or(usize::MAX)
            .saturating_sub(2),
        crate::engine::runtime::Allocator::OnDemand => concurrency.saturating_mul(16),
    };
    cap.max(concurrency).max(1)
}

impl Sandbox {
    /// Builds a sandbox: the engine, the compiled runtime (from the disk cache when possible)
    /// and the epoch ticker.
    pub fn new(options: &SandboxOptions) -> Result<Sandbox> {
        let engine = runtime::build_engine(&options.engine_options())?;
        let component = runtime::load_component(&engine, options.engine.cache_dir.as_deref())?;
        let mut linker = Linker::<HostState>::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
            .map_err(SandboxError::wasm("linking WASI for the Python runtime"))?;
        let pre = CommandPre::new(
            linker
                .instantiate_pre(&component)
                .map_err(SandboxError::wasm("linking the Python runtime"))?,
        )
        .map_err(SandboxError::wasm("typing the Python runtime as a command"))?;
        let p1_linker = wasip1::linker(&engine)?;
        start_ticker(&engine);
        let concurrency = options.concurrency.max(1);
        Ok(Sandbox {
            inner: Arc::new(Inner {
                engine,
                pre,
                permits: Arc::new(Semaphore::new(concurrency)),
                live: Arc::new(Semaphore::new(max_live(options, concurrency))),
                concurrency,
                compiled_harness: tokio::sync::OnceCell::new(),
                temp_root: options.temp_root.clone(),
                run_dirs: crate::engine::rundir::RunDirs::new(options.temp_root.clone()),
                compile_parallel: options.compile_parallel,
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
    /// an uncaught exception prints its traceback and exits 1, `sys.exit(n)` exits `n`. The
    /// Python shorthand of [`Sandbox::run_program`], on the same run path.
    pub async fn run(&self, program: &str, stdin: &[u8], limits: &Limits) -> Result<RunResult> {
        let job = Job::script(program);
        Ok(self.execute(&job, stdin, limits).await?.0)
    }

    /// [`Sandbox::run`] with `files` placed in the program's working directory first (its
    /// `/tmp` and current directory); returns the files of `files.fetch` as they are after the
    /// run (missing ones, links and non-regular files left out, at most the output cap in all).
    /// Placed files count toward the run's file quota.
    pub(crate) async fn run_with_files(
        &self,
        program: &str,
        args: &[String],
        stdin: &[u8],
        limits: &Limits,
        files: &JobFiles,
    ) -> Result<(RunResult, BTreeMap<String, Vec<u8>>)> {
        check_quota(files, limits)?;
        let mut job = Job::script(program);
        job.argv = args.to_vec();
        let (run, _, fetched) = self.execute_with(&job, stdin, limits, files).await?;
        Ok((run, fetched))
    }

    /// QuickJS-NG, compiled (through the disk cache) and linked on first use, and its version.
    async fn quickjs(&self) -> Result<&(wasmtime::InstancePre<P1State>, String)> {
        self.inner
            .quickjs
            .get_or_try_init(|| async {
                let engine = self.inner.engine.clone();
                let cache_dir = self.inner.cache_dir.clone();
                let compiled = tokio::task::spawn_blocking(move || {
                    let wasm = crate::guest::quickjs::quickjs_wasm()?;
                    let wasm = crate::guest::quickjs::widen_stack(
                        &wasm,
                        crate::guest::quickjs::STACK_PAGES,
                    )
                    .map_err(|reason| SandboxError::Engine { reason })?;
                    runtime::load_module(&engine, "quickjs", &wasm, cache_dir.as_deref())
                })
                .await
                .map_err(SandboxError::blocking("compiling QuickJS"))??;
                let pre = wasip1::prepare(&self.inner.p1_linker, &compiled)?;
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
                    crate::guest::quickjs::version(&mut store, &instance).await
                }
                .await
                .map_err(SandboxError::wasm("starting QuickJS"))?;
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
    pub(crate) async fn run_javascript(
        &self,
        program: &str,
        stdin: &[u8],
        limits: &Limits,
        files: &JobFiles,
    ) -> Result<(RunResult, BTreeMap<String, Vec<u8>>)> {
        limits.validate()?;
        check_quota(files, limits)?;
        let (pre, _) = self.quickjs().await?;
        self.inner.runs.fetch_add(1, Ordering::Relaxed);
        let entry = Entry::QuickJs {
            program,
            filename: "main.js",
        };
        let run = wasip1::execute(
            &self.inner.engine,
            ModuleGuest {
                pre,
                entry,
                args: &[],
            },
            stdin,
            limits,
            files,
            &self.inner.run_dirs,
        );
        let (raw, fetched) = self.on_cpu(run).await??;
        Ok((raw.into_result(), fetched))
    }

    /// Runs a compiled `wasm32-wasi` command module (a C or C++ program).
    pub(crate) async fn run_command_module(
        &self,
        pre: &wasmtime::InstancePre<P1State>,
        args: &[String],
        stdin: &[u8],
        limits: &Limits,
        files: &JobFiles,
    ) -> Result<(RunResult, BTreeMap<String, Vec<u8>>)> {
        limits.validate()?;
        check_quota(files, limits)?;
        self.inner.runs.fetch_add(1, Ordering::Relaxed);
        let run = wasip1::execute(
            &self.inner.engine,
            ModuleGuest {
                pre,
                entry: Entry::Command,
                args,
            },
            stdin,
            limits,
            files,
            &self.inner.run_dirs,
        );
        let (raw, fetched) = self.on_cpu(run).await??;
        Ok((raw.into_result(), fetched))
    }

    /// Compiles a core module (not cached) and links it.
    pub(crate) fn prepare_module(&self, wasm: &[u8]) -> Result<wasmtime::InstancePre<P1State>> {
        let compiled = wasmtime::Module::new(&self.inner.engine, wasm)
            .map_err(SandboxError::wasm("compiling the module"))?;
        wasip1::prepare(&self.inner.p1_linker, &compiled)
    }

    pub(crate) fn modules(&self) -> &crate::guest::wasip1::ModuleCache {
        &self.inner.modules
    }

    /// Uses `compiler` for C and C++ (instead of the process-wide one). Only the first call
    /// on a sandbox (or its clones) takes effect; returns whether this one did.
    pub fn with_compiler(&self, compiler: crate::guest::cc::Compiler) -> bool {
        self.inner.compiler.set(compiler).is_ok()
    }

    pub(crate) fn configured_compiler(&self) -> Option<crate::guest::cc::Compiler> {
        self.inner.compiler.get().cloned()
    }

    /// [`SandboxOptions::compile_parallel`].
    pub(crate) fn compile_parallel(&self) -> Option<usize> {
        self.inner.compile_parallel
    }

    /// Runs `work` on one of the sandbox's CPU slots, given back whenever the guest waits
    /// (a sleep, a blocking read): see [`crate::engine::slot`]. The run holds one of the live slots
    /// from start to end, waiting or not.
    async fn on_cpu<F: std::future::Future + Send>(&self, work: F) -> Result<F::Output> {
        let _live = self
            .inner
            .live
            .acquire()
            .await
            .map_err(SandboxError::Closed)?;
        crate::engine::slot::on_cpu(self.inner.permits.clone(), work)
            .await
            .map_err(SandboxError::Closed)
    }

    /// Takes one of the live-instance slots, held until the returned permit drops (a
    /// session's interpreter holds one for its whole life).
    pub(crate) async fn live_slot(&self) -> Result<tokio::sync::OwnedSemaphorePermit> {
        self.inner
            .live
            .clone()
            .acquire_owned()
            .await
            .map_err(SandboxError::Closed)
    }

    /// Counts one run started (for [`Sandbox::runs_started`]).
    pub(crate) fn count_run(&self) {
        self.inner.runs.fetch_add(1, Ordering::Relaxed);
    }

    /// The engine every guest runs on.
    pub(crate) fn engine(&self) -> &Engine {
        &self.inner.engine
    }

    /// The snapshotted Python component, linked.
    pub(crate) fn python(&self) -> &CommandPre<HostState> {
        &self.inner.pre
    }

    /// The CPU slots (see [`crate::engine::slot`]).
    pub(crate) fn cpu_slots(&self) -> Arc<Semaphore> {
        self.inner.permits.clone()
    }

    /// Where run and session directories are created.
    pub(crate) fn temp_dir(&self) -> PathBuf {
        self.temp_root()
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
        let work = async {
            let from = self.harness().await?;
            let nonce = harness::nonce();
            let input = job.encode(&nonce, stdin, from);
            let (raw, fetched) = self.execute_raw(input, limits, files).await?;
            let (run, report) = harness::finish(raw, &nonce);
            Ok((run, report, fetched))
        };
        self.on_cpu(work).await?
    }

    /// How jobs get the harness: the snapshot's own when it is `harness.py`, else compiled
    /// once by the guest and sent with every run, else (that failing) as source.
    pub(crate) async fn harness(&self) -> Result<harness::HarnessFrom<'_>> {
        if harness::snapshot_has_harness() {
            return Ok(harness::HarnessFrom::Snapshot);
        }
        let compiled = self
            .inner
            .compiled_harness
            .get_or_try_init(|| self.compile_harness())
            .await?;
        Ok(match compiled {
            Some(bytes) => harness::HarnessFrom::Compiled(bytes),
            None => harness::HarnessFrom::Source,
        })
    }

    /// Has the guest compile the harness; `None` (send the source each time) if that fails.
    async fn compile_harness(&self) -> Result<Option<Vec<u8>>> {
        let nonce = harness::nonce();
        let input = Job::script(harness::COMPILE_HARNESS).encode(
            &nonce,
            harness::HARNESS_PY.as_bytes(),
            harness::HarnessFrom::Source,
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
        let compiled = (run.status == RunStatus::Ok && !hex.is_empty())
            .then(|| harness::from_hex(hex))
            .flatten();
        if let Some(compiled) = compiled {
            tracing::debug!(bytes = compiled.len(), "compiled the harness");
            Ok(Some(compiled))
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
        self.inner.runs.fetch_add(1, Ordering::Relaxed);
        let guest = PythonGuest {
            pre: &self.inner.pre,
        };
        run::run(
            &self.inner.engine,
            &guest,
            input,
            limits,
            files,
            &self.inner.run_dirs,
        )
        .await
    }
}

/// Refuses files that alone exceed the run's file quota.
fn check_quota(files: &JobFiles, limits: &Limits) -> Result<()> {
    if files.put_bytes() > limits.file_quota_bytes {
        return Err(SandboxError::InvalidLimit(grpo_rewards::code::LimitError {
            field: "file_quota_bytes",
            reason: format!(
                "{} bytes of files exceed the file quota of {} bytes",
                files.put_bytes(),
                limits.file_quota_bytes
            ),
        }));
    }
    Ok(())
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
    use crate::engine::runtime::Allocator;

    #[test]
    fn sessions_get_pool_slots_on_top_of_the_programs() {
        let pooled = |total_instances| Allocator::Pooling {
            total_instances,
            max_memory_mb: 256,
            keep_resident_mb: 16,
        };
        let options = SandboxOptions {
            engine: EngineOptions {
                allocator: pooled(32),
                cache_dir: None,
            },
            concurrency: 2,
            sessions: 64,
            ..SandboxOptions::default()
        };
        assert_eq!(options.engine_options().allocator, pooled(96));
        // Programs alive at once: every slot but the two kept for probes and the harness.
        assert_eq!(max_live(&options, 2), 94);
        let without = SandboxOptions {
            sessions: 0,
            ..options.clone()
        };
        assert_eq!(without.engine_options().allocator, pooled(32));
        assert_eq!(max_live(&without, 2), 30);
        // On-demand memory has no slots to size.
        let on_demand = SandboxOptions {
            engine: EngineOptions {
                allocator: Allocator::OnDemand,
                cache_dir: None,
            },
            ..options
        };
        assert_eq!(on_demand.engine_options().allocator, Allocator::OnDemand);
    }
}
