//! What every run needs from the sandbox, whichever guest it is: the engine and its epoch
//! ticker, the CPU slots and the live-instance slots, the run directories, the run counter;
//! and [`Host::run`], the one way a guest's run starts on them.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use grpo_rewards::code::limits::Limits;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use wasmtime::Engine;

use crate::engine::budget::TICK;
use crate::engine::files::JobFiles;
use crate::engine::run::{self, Guest, RawRun};
use crate::engine::rundir::RunDirs;
use crate::error::{Result, SandboxError};

/// The engine and the slots every run of a sandbox shares.
pub(crate) struct Host {
    engine: Engine,
    /// Runs computing at once.
    permits: Arc<Semaphore>,
    /// Runs alive at once, computing or waiting (each holds an instance and its memory).
    live: Arc<Semaphore>,
    /// Where run directories go (`None`: the system's temporary directory).
    temp_root: Option<PathBuf>,
    /// Empty run directories under `temp_root`, reused from run to run.
    run_dirs: RunDirs,
    /// Programs started so far.
    runs: AtomicU64,
}

impl Host {
    /// `concurrency` runs computing and `live` alive at once on `engine`, whose epoch ticker
    /// this starts.
    pub(crate) fn new(
        engine: Engine,
        concurrency: usize,
        live: usize,
        temp_root: Option<PathBuf>,
    ) -> Host {
        start_ticker(&engine);
        Host {
            engine,
            permits: Arc::new(Semaphore::new(concurrency)),
            live: Arc::new(Semaphore::new(live)),
            run_dirs: RunDirs::new(temp_root.clone()),
            temp_root,
            runs: AtomicU64::new(0),
        }
    }

    /// The engine every guest runs on.
    pub(crate) fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The CPU slots (see [`crate::engine::slot`]).
    pub(crate) fn cpu_slots(&self) -> Arc<Semaphore> {
        self.permits.clone()
    }

    /// Where run and session directories are created.
    pub(crate) fn temp_dir(&self) -> PathBuf {
        self.temp_root.clone().unwrap_or_else(std::env::temp_dir)
    }

    /// Programs started so far.
    pub(crate) fn runs_started(&self) -> u64 {
        self.runs.load(Ordering::Relaxed)
    }

    /// Counts one run started, for a run that does not go through [`Host::run`] (a session's
    /// interpreter).
    pub(crate) fn count_run(&self) {
        self.runs.fetch_add(1, Ordering::Relaxed);
    }

    /// Takes one of the live-instance slots, held until the returned permit drops (a
    /// session's interpreter holds one for its whole life).
    pub(crate) async fn live_slot(&self) -> Result<OwnedSemaphorePermit> {
        self.live
            .clone()
            .acquire_owned()
            .await
            .map_err(SandboxError::Closed)
    }

    /// Runs one instance of `guest` to the end: `limits` checked, `files` (within the file
    /// quota) placed in its directory first and `files.fetch` read back after, on one of the
    /// CPU slots (given back whenever the guest waits) while holding a live slot.
    pub(crate) async fn run<G: Guest + Sync>(
        &self,
        guest: &G,
        stdin: Vec<u8>,
        limits: &Limits,
        files: &JobFiles,
    ) -> Result<(RawRun, BTreeMap<String, Vec<u8>>)> {
        limits.validate()?;
        check_quota(files, limits)?;
        let _live = self.live.acquire().await.map_err(SandboxError::Closed)?;
        self.count_run();
        let work = run::run(&self.engine, guest, stdin, limits, files, &self.run_dirs);
        crate::engine::slot::on_cpu(self.permits.clone(), work)
            .await
            .map_err(SandboxError::Closed)?
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
