//! The one run path every guest takes: Python (a WASIp2 component), QuickJS and compiled C and
//! C++ programs (WASIp1 core modules).
//!
//! A run gets a fresh empty directory (the files asked for placed in it first), capped stdout
//! and stderr, stdin from memory, an empty environment, no sockets, a random seed of its own,
//! a [`Budget`] of CPU time, memory and files armed on a fresh store, and a wall clock. What
//! differs between guests is small and lives in their [`Guest`] impls: the argument vector,
//! where the run directory is mounted, the host state the store holds (WASIp2's context and
//! resource table, or WASIp1's context), how a trap is read, and the call that runs them.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::Path;
use std::time::{Duration, Instant};

use grpo_rewards::code::limits::Limits;
use grpo_rewards::result::{RunResult, RunStatus};
use wasmtime::{Engine, Store};
use wasmtime_wasi::cli::StdinStream;
use wasmtime_wasi::p2::pipe::MemoryInputPipe;
use wasmtime_wasi::{FsPerms, I32Exit, WasiCtxBuilder};

use crate::engine::budget::{self, Budget, HasBudget, Traps};
use crate::engine::cpu_clock;
use crate::engine::ended::Ended;
use crate::engine::files::{self, JobFiles};
use crate::engine::pipe::CappedPipe;
use crate::engine::rundir::RunDirs;
use crate::error::{Result, SandboxError};

/// How a guest's call returned (a trap or `exit(n)` is an `Err` of the call instead).
pub(crate) enum Exit {
    /// The program finished: exit code 0.
    Success,
    /// The program reported failure without a code (CPython's uncaught exception): exit 1.
    Failure,
}

/// One kind of guest: what the run path needs to know of it.
pub(crate) trait Guest {
    /// The store's host state.
    type State: HasBudget;
    /// A live instance, between instantiation and the call.
    type Instance: Send;
    /// `argv[0]`.
    fn name(&self) -> &str;
    /// The arguments after `argv[0]`.
    fn args(&self) -> &[String] {
        &[]
    }
    /// Where the run directory is mounted in the guest.
    fn mounts(&self) -> &'static [&'static str];
    /// How a trap is read: the interpreter's crash, or the compiled program's fault.
    fn traps(&self) -> Traps;
    /// Whether the guest's file operations run on the thread that runs the guest instead of
    /// tokio's blocking pool. They touch only the run's own directory on a local file system
    /// (microseconds, bounded by the file quota), and the hand-off (a task, a thread woken, a
    /// context switch each way) costs more than the operation; CPython's start of each run
    /// alone does a few (`chdir`, `stat`). Only for WASIp2 guests, where the setting covers
    /// file operations alone (a sleep stays a timer that gives the worker back): WASIp1's
    /// `poll_oneoff` also turns a relative sleep into `std::thread::sleep` under it, which
    /// holds the worker past the wall clock.
    fn file_ops_inline(&self) -> bool {
        false
    }
    /// The store's state from the configured context and the run's budget.
    fn state(&self, builder: WasiCtxBuilder, budget: Budget) -> Self::State;
    /// A fresh instance of the guest in `store`.
    fn instantiate<'a>(
        &'a self,
        store: &'a mut Store<Self::State>,
    ) -> impl Future<Output = wasmtime::Result<Self::Instance>> + Send + 'a;
    /// Runs `instance` to the end.
    fn call<'a>(
        &'a self,
        store: &'a mut Store<Self::State>,
        instance: Self::Instance,
    ) -> impl Future<Output = wasmtime::Result<Exit>> + Send + 'a;
}

/// Runs `guest` once under `limits`, in an empty directory from `dirs`, with `files` placed
/// in it before the run and `files.fetch` read back after it.
pub(crate) async fn run<G: Guest + Sync>(
    engine: &Engine,
    guest: &G,
    stdin: Vec<u8>,
    limits: &Limits,
    files: &JobFiles,
    dirs: &RunDirs,
) -> Result<(RawRun, BTreeMap<String, Vec<u8>>)> {
    let started = Instant::now();
    let workdir = dirs.take().map_err(|source| SandboxError::Io {
        path: dirs.root(),
        source,
    })?;
    files::place(workdir.path(), files).map_err(|source| SandboxError::Io {
        path: workdir.path().to_path_buf(),
        source,
    })?;
    let stdout = CappedPipe::new(limits.output_bytes);
    let stderr = CappedPipe::new(limits.output_bytes);
    let builder = context(
        guest,
        workdir.path(),
        MemoryInputPipe::new(stdin),
        &stdout,
        &stderr,
    )?;
    let budget = Budget::new(limits, workdir.path());
    let cpu = budget.cpu.clone();
    let state = guest.state(builder, budget);
    let mut store = Store::new(engine, state);
    budget::arm(&mut store);

    let wall = Duration::from_millis(limits.wall_limit_ms());
    // An instance that cannot start is read without the budget (it never ran); a call that
    // fails is read with it (a limit may be why).
    // The run's own waits (a sleep) are charged to its time limit with its CPU time.
    let outcome = tokio::time::timeout(
        wall,
        cpu_clock::metered_with_waits(
            cpu.clone(),
            Duration::from_millis(limits.time_limit_ms),
            instantiate_and_call(guest, &mut store),
        ),
    )
    .await;
    let ended = match outcome {
        Err(_elapsed) => Ended::stopped(
            RunStatus::Timeout,
            format!("wall-clock limit of {} ms", wall.as_millis()),
        ),
        Ok(Err(cpu_clock::OverTime)) => Ended::stopped(RunStatus::Timeout, "time limit reached"),
        Ok(Ok(called)) => ended(called, store.data_mut().budget(), guest.traps()),
    };
    Ok(conclude(
        ended,
        &stdout,
        &stderr,
        (started, cpu.spent()),
        workdir.path(),
        files,
        limits,
    ))
}

/// The WASI context every run starts from: `stdin`, the capped streams, `argv`, no network,
/// a random seed of its own, an empty environment, and the run directory at the guest's
/// mounts.
pub(crate) fn context<G: Guest>(
    guest: &G,
    workdir: &Path,
    stdin: impl StdinStream + 'static,
    stdout: &CappedPipe,
    stderr: &CappedPipe,
) -> Result<WasiCtxBuilder> {
    let mut argv = Vec::with_capacity(1 + guest.args().len());
    argv.push(guest.name());
    argv.extend(guest.args().iter().map(String::as_str));
    let mut builder = WasiCtxBuilder::new();
    builder
        .stdin(stdin)
        .stdout(stdout.clone())
        .stderr(stderr.clone())
        .args(&argv)
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
        .insecure_random_seed(rand::random::<u128>())
        // Before the mounts: each preopened directory keeps the setting it was made with.
        .allow_blocking_current_thread(guest.file_ops_inline());
    for mount in guest.mounts() {
        builder
            .preopened_dir(workdir, mount, FsPerms::ReadWrite)
            .map_err(|e| SandboxError::Io {
                path: workdir.to_path_buf(),
                source: std::io::Error::other(e),
            })?;
    }
    Ok(builder)
}

/// Instantiates `guest` in `store` and runs it to the end: the outer error is an instance
/// that could not start, the inner one a call that failed (an exit, a trap, a limit).
pub(crate) async fn instantiate_and_call<G: Guest + Sync>(
    guest: &G,
    store: &mut Store<G::State>,
) -> wasmtime::Result<wasmtime::Result<Exit>> {
    let instance = guest.instantiate(store).await?;
    Ok(guest.call(store, instance).await)
}

/// How a run that was not cut by its wall clock ended.
pub(crate) fn ended(
    outcome: wasmtime::Result<wasmtime::Result<Exit>>,
    budget: &Budget,
    traps: Traps,
) -> Ended {
    let over_quota = budget.over_quota();
    match outcome {
        Err(e) => budget::classify_error(&e, None, traps),
        Ok(called) => match called {
            Ok(Exit::Success) if over_quota => budget::quota_outcome(budget.file_quota, Some(0)),
            Ok(Exit::Success) => Ended::exited(0),
            Ok(Exit::Failure) => Ended::exited(1),
            // `exit(0)` (Python's harness ends so) after writing past the quota between ticks.
            Err(e) if over_quota && e.downcast_ref::<I32Exit>().is_some_and(|x| x.0 == 0) => {
                budget::quota_outcome(budget.file_quota, Some(0))
            }
            Err(e) if over_quota && e.downcast_ref::<I32Exit>().is_none() => {
                budget::quota_outcome(budget.file_quota, None)
            }
            Err(e) => budget::classify_error(&e, Some(budget), traps),
        },
    }
}

/// Turns how a run ended into its raw result: a cut stream is never `ok`, a stopped run gets a
/// `[sandbox] …` line on stderr, and the files asked for are fetched.
fn conclude(
    Ended {
        status,
        exit_code,
        detail,
    }: Ended,
    stdout: &CappedPipe,
    stderr: &CappedPipe,
    (started, cpu): (Instant, Duration),
    workdir: &Path,
    files: &JobFiles,
    limits: &Limits,
) -> (RawRun, BTreeMap<String, Vec<u8>>) {
    let truncated = stdout.truncated() || stderr.truncated();
    let status = if truncated {
        status.with_output_cut()
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
            cpu_ms: cpu.as_secs_f64() * 1e3,
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
    pub cpu_ms: f64,
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
            cpu_ms: self.cpu_ms,
            truncated: self.truncated,
        }
    }
}
