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

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

pub use crate::engine::budget::TICK;
use crate::engine::files::JobFiles;
use crate::engine::host::Host;
use crate::engine::runtime::{self, EngineOptions};
use crate::error::{Result, SandboxError};
use crate::guest::python::harness::{self, Job};
use crate::guest::python::runner::Python;
use crate::guest::quickjs::QuickJs;
use crate::guest::wasip1::CoreModules;
use grpo_rewards::code::limits::Limits;
use grpo_rewards::result::RunResult;

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
    /// The engine, the CPU and live slots, the run directories: what every run shares.
    host: Host,
    concurrency: usize,
    python: Python,
    quickjs: QuickJs,
    /// WASIp1, and the linked C and C++ modules by hash.
    modules: CoreModules,
    /// C/C++ compiles at once for this sandbox's own compiler (`None`: the process-wide one).
    compile_parallel: Option<usize>,
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
        let python = Python::load(&engine, options.engine.cache_dir.as_deref())?;
        let modules = CoreModules::new(&engine)?;
        let concurrency = options.concurrency.max(1);
        let host = Host::new(
            engine,
            concurrency,
            max_live(options, concurrency),
            options.temp_root.clone(),
        );
        Ok(Sandbox {
            inner: Arc::new(Inner {
                host,
                concurrency,
                python,
                quickjs: QuickJs::new(options.engine.cache_dir.clone()),
                modules,
                compile_parallel: options.compile_parallel,
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
        self.inner.host.runs_started()
    }

    /// The version of the interpreter inside the sandbox (`3.14.0`), asked of the guest once.
    pub async fn python_version(&self) -> Result<String> {
        self.inner.python.version(&self.inner.host).await
    }

    /// How many programs this sandbox runs at once.
    pub fn concurrency(&self) -> usize {
        self.inner.concurrency
    }

    /// Runs `program` as a script (`__name__ == "__main__"`) with `stdin`, like `python3 -I`:
    /// an uncaught exception prints its traceback and exits 1, `sys.exit(n)` exits `n`. The
    /// Python shorthand of [`Sandbox::run_program`], on the same run path.
    pub async fn run(&self, program: &str, stdin: &[u8], limits: &Limits) -> Result<RunResult> {
        Ok(self.execute(&Job::script(program), stdin, limits).await?.0)
    }

    /// The QuickJS-NG version the JavaScript and TypeScript runs use (`0.10.1`).
    pub async fn quickjs_version(&self) -> Result<String> {
        self.inner
            .quickjs
            .version(&self.inner.host, &self.inner.modules)
            .await
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

    /// What every run shares: the engine, the slots, the run directories.
    pub(crate) fn host(&self) -> &Host {
        &self.inner.host
    }

    /// The Python guest.
    pub(crate) fn python(&self) -> &Python {
        &self.inner.python
    }

    /// JavaScript (and TypeScript, once stripped).
    pub(crate) fn quickjs(&self) -> &QuickJs {
        &self.inner.quickjs
    }

    /// WASIp1 modules (C and C++ programs).
    pub(crate) fn modules(&self) -> &CoreModules {
        &self.inner.modules
    }

    /// Where run and session directories are created.
    pub(crate) fn temp_dir(&self) -> PathBuf {
        self.inner.host.temp_dir()
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
            .inner
            .python
            .execute(&self.inner.host, job, stdin, limits, &JobFiles::default())
            .await?;
        Ok((run, report))
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
