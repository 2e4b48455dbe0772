//! The limits every sandboxed run is held to, whatever runs inside: CPU time (the guest's own,
//! from [`CpuClock`], with a plain run's own waits, checked at every epoch tick), linear memory by a resource limiter, the
//! file quota of the run's directory, and how a stopped run becomes a status. Shared by the
//! Python component and the WASIp1 core modules (JavaScript, C, C++).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use wasmtime::{ResourceLimiter, Store, Trap, UpdateDeadline};
use wasmtime_wasi::I32Exit;

use crate::engine::cpu_clock::CpuClock;
use crate::engine::ended::Ended;
use crate::engine::pipe::OUTPUT_LIMIT_MESSAGE;
use grpo_rewards::code::limits::Limits;
use grpo_rewards::result::RunStatus;

/// The epoch tick: how often a running guest's CPU time and file quota are checked (so a
/// limit is overrun by at most one tick's worth of CPU).
pub const TICK: Duration = Duration::from_millis(10);

/// One run's limits and what it ran into.
pub(crate) struct Budget {
    pub memory: MemoryCap,
    /// The CPU time the guest may spend.
    cpu_limit: Duration,
    /// The clock the guest's CPU time is read from, and its reading when this budget began
    /// (an interpreter session's clock runs across the interpreters it starts).
    pub cpu: Arc<CpuClock>,
    cpu_base: Duration,
    pub cpu_exceeded: bool,
    pub workdir: PathBuf,
    pub file_quota: u64,
    pub quota_exceeded: bool,
    /// An interpreter session's count of the current call (the budget itself is then the
    /// whole session's).
    pub meter: Option<Arc<CallMeter>>,
}

impl Budget {
    /// A budget with a clock of its own.
    pub fn new(limits: &Limits, workdir: &Path) -> Budget {
        Budget::on_clock(limits, workdir, Arc::new(CpuClock::default()))
    }

    /// A budget charged on `cpu`, from its reading now.
    pub fn on_clock(limits: &Limits, workdir: &Path, cpu: Arc<CpuClock>) -> Budget {
        let memory_bytes =
            usize::try_from(limits.memory_mb.saturating_mul(1 << 20)).unwrap_or(usize::MAX);
        Budget {
            memory: MemoryCap {
                max_bytes: memory_bytes,
                hit: false,
                start_charge: None,
                credit: 0,
            },
            cpu_limit: Duration::from_millis(limits.time_limit_ms),
            cpu_base: cpu.spent(),
            cpu,
            cpu_exceeded: false,
            workdir: workdir.to_path_buf(),
            file_quota: limits.file_quota_bytes,
            quota_exceeded: false,
            meter: None,
        }
    }

    /// Whether the run's directory holds more than the quota, now or at some tick.
    pub fn over_quota(&self) -> bool {
        self.quota_exceeded || dir_size(&self.workdir) > self.file_quota
    }
}

/// A store's state that carries a [`Budget`].
pub(crate) trait HasBudget: Send + 'static {
    fn budget(&mut self) -> &mut Budget;
}

/// Arms the memory limiter and the CPU and file-quota checks on `store`.
pub(crate) fn arm<T: HasBudget>(store: &mut Store<T>) {
    store.limiter(|s| &mut s.budget().memory);
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(|mut ctx| {
        let state = ctx.data_mut().budget();
        // Called inside the poll that runs the guest, on its thread: the clock includes the
        // CPU time of this poll so far (and the run's own waits, where they are charged).
        let spent = state.cpu.charged();
        let call_spent = state.meter.as_ref().is_some_and(|m| m.over(spent));
        if call_spent || spent.saturating_sub(state.cpu_base) > state.cpu_limit {
            state.cpu_exceeded = true;
            return Err(Trap::Interrupt.into());
        }
        if dir_size(&state.workdir) > state.file_quota {
            state.quota_exceeded = true;
            return Err(Trap::Interrupt.into());
        }
        Ok(UpdateDeadline::Yield(1))
    });
}

/// The CPU time of an interpreter session: one clock across the interpreters it starts, and
/// the current call's start and limit on it. Shared between the host (which starts each call)
/// and the store's deadline callback (which checks).
#[derive(Debug, Default)]
pub(crate) struct CallMeter {
    clock: Arc<CpuClock>,
    call_started_ns: AtomicU64,
    limit_ns: AtomicU64,
}

impl CallMeter {
    /// The session's clock, for the budget of each interpreter it starts.
    pub fn clock(&self) -> Arc<CpuClock> {
        self.clock.clone()
    }

    /// Starts a call that may spend `limit` of CPU time.
    pub fn start_call(&self, limit: Duration) {
        self.call_started_ns
            .store(nanos(self.clock.spent()), Ordering::SeqCst);
        self.limit_ns.store(nanos(limit), Ordering::SeqCst);
    }

    /// CPU time of the current call (the last one, between calls).
    pub fn call_spent(&self) -> Duration {
        self.clock.spent().saturating_sub(Duration::from_nanos(
            self.call_started_ns.load(Ordering::SeqCst),
        ))
    }

    /// Whether the current call, at a clock reading of `spent`, has overrun its limit.
    fn over(&self, spent: Duration) -> bool {
        nanos(spent).saturating_sub(self.call_started_ns.load(Ordering::SeqCst))
            > self.limit_ns.load(Ordering::SeqCst)
    }

    /// CPU time of every call of the session (and its interpreters' starts).
    pub fn total(&self) -> Duration {
        self.clock.spent()
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The end of a run that wrote more than its file quota (with the exit code it gave, if any).
pub(crate) fn quota_outcome(quota: u64, exit_code: Option<i32>) -> Ended {
    Ended::stopped(
        RunStatus::OutputLimit,
        format!("file quota of {quota} bytes exceeded"),
    )
    .with_exit_code(exit_code)
}

/// How a trap that is not a limit reads: the interpreter's own crash (Python, JavaScript), or
/// a native program's fault with the signal it would have died of (C, C++).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Traps {
    /// A trap is the interpreter's crash: `crash`, no exit code.
    Interpreter,
    /// A trap is the program's fault: `error` with a negative, signal-style exit code
    /// (`abort()` and failed `assert`s -6, memory faults and stack overflow -11, integer
    /// division by zero -8), as a native program's return code reads.
    Native,
}

/// Maps a failed call to a status: an exit, a limit, or a crash.
pub(crate) fn classify_error(e: &wasmtime::Error, state: Option<&Budget>, traps: Traps) -> Ended {
    if let Some(exit) = e.downcast_ref::<I32Exit>() {
        // A MemoryError that killed the program is a memory-limit verdict.
        if exit.0 != 0 && state.is_some_and(|s| s.memory.hit) {
            return Ended::stopped(RunStatus::MemoryLimit, "memory limit reached")
                .with_exit_code(Some(exit.0));
        }
        return Ended::exited(exit.0);
    }
    if let Some(state) = state {
        if state.cpu_exceeded {
            return Ended::stopped(RunStatus::Timeout, "time limit reached");
        }
        if state.quota_exceeded {
            return quota_outcome(state.file_quota, None);
        }
        if state.memory.hit {
            return Ended::stopped(RunStatus::MemoryLimit, "memory limit reached");
        }
    }
    let text = format!("{e:#}");
    if text.contains(OUTPUT_LIMIT_MESSAGE) {
        return Ended::stopped(RunStatus::OutputLimit, "output limit reached");
    }
    match (traps, e.downcast_ref::<Trap>()) {
        (Traps::Native, Some(trap)) => {
            let (code, what) = match trap {
                Trap::UnreachableCodeReached => (-6, "aborted (SIGABRT)"),
                Trap::IntegerDivisionByZero | Trap::IntegerOverflow => {
                    (-8, "arithmetic fault (SIGFPE)")
                }
                Trap::StackOverflow => (-11, "stack overflow (SIGSEGV)"),
                _ => (-11, "memory fault (SIGSEGV)"),
            };
            Ended::stopped(RunStatus::Error, format!("{what}: {}", first_line(&text)))
                .with_exit_code(Some(code))
        }
        // Unbounded recursion in the program: Python's and JavaScript's own error for it.
        (Traps::Interpreter, Some(Trap::StackOverflow)) => Ended::stopped(
            RunStatus::Error,
            "maximum call stack size exceeded (the native stack is 8 MiB)",
        )
        .with_exit_code(Some(1)),
        _ => Ended::stopped(
            RunStatus::Crash,
            format!("the interpreter trapped: {}", first_line(&text)),
        ),
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// Refuses linear-memory growth past the cap and remembers that it did.
pub(crate) struct MemoryCap {
    max_bytes: usize,
    pub hit: bool,
    /// For a guest whose start image holds more than the program asked for (the Python
    /// snapshot's preloaded packages): how much of a memory's initial size is charged.
    start_charge: Option<usize>,
    /// What is not charged: the initial size past `start_charge`.
    credit: usize,
}

impl MemoryCap {
    /// Charges at most `bytes` of a memory's initial size to the run: the rest of the start
    /// image (pages the guest was built with, not pages the program grew) is free, so the
    /// cap means the same whatever the image preloads.
    pub(crate) fn charge_start_at_most(&mut self, bytes: usize) {
        self.start_charge = Some(bytes);
    }

    /// What `size` bytes of memory count against the cap.
    fn charged(&self, size: usize) -> usize {
        size.saturating_sub(self.credit)
    }
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // A memory being created (wasmtime asks with `current` 0): its initial size is the
        // guest's start image.
        if current == 0
            && let Some(start) = self.start_charge
        {
            self.credit = self.credit.max(desired.saturating_sub(start));
        }
        if self.charged(desired) > self.max_bytes {
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
pub(crate) fn dir_size(dir: &Path) -> u64 {
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
