//! The CPU time a guest actually receives: what its time limit is charged with.
//!
//! A guest runs as a future (a wasmtime fiber) on whichever tokio worker polls it, and it runs
//! only inside a poll. [`Metered`] reads the polling thread's own CPU clock
//! (`CLOCK_THREAD_CPUTIME_ID`) when a poll starts and when it ends and adds the difference to
//! a [`CpuClock`]; the store's epoch callback, which runs inside a poll on the same thread, adds
//! the part of the current poll so far. Time the OS gives to other processes, or to other tasks
//! of the same worker between polls, is never the guest's: a run's verdict does not depend on
//! how busy the machine is. (Epoch ticks, which count wall-clock time while the guest runs, did.)
//!
//! The cost is two `clock_gettime` calls per poll (a guest is polled once per epoch tick while it
//! computes) and one per tick.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

/// The calling thread's CPU time, in nanoseconds.
pub(crate) fn thread_cpu_ns() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID exists on every
    // Linux and macOS this crate builds for, and the call only writes `now`.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    if rc != 0 {
        return 0;
    }
    u64::try_from(now.tv_sec)
        .unwrap_or(0)
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::try_from(now.tv_nsec).unwrap_or(0))
}

/// CPU time spent inside the polls of one guest's future.
#[derive(Debug, Default)]
pub(crate) struct CpuClock {
    /// CPU time of the polls that ended.
    ended_ns: AtomicU64,
    /// The polling thread's CPU clock when the current poll started; 0 between polls.
    poll_started_ns: AtomicU64,
}

impl CpuClock {
    /// The guest's CPU time so far. Exact when called between polls or from inside the current
    /// poll (the epoch callback); from another thread during a poll it leaves that poll out.
    pub fn spent(&self) -> Duration {
        let ended = self.ended_ns.load(Ordering::Acquire);
        let started = self.poll_started_ns.load(Ordering::Acquire);
        let current = if started == 0 {
            0
        } else {
            thread_cpu_ns().saturating_sub(started)
        };
        Duration::from_nanos(ended.saturating_add(current))
    }

    fn begin(&self) -> u64 {
        // A clock that reads 0 (an error) would look like "between polls": start at 1 ns.
        let now = thread_cpu_ns().max(1);
        self.poll_started_ns.store(now, Ordering::Release);
        now
    }

    fn end(&self, started: u64) {
        let spent = thread_cpu_ns().saturating_sub(started);
        self.ended_ns.fetch_add(spent, Ordering::AcqRel);
        self.poll_started_ns.store(0, Ordering::Release);
    }
}

/// `work`, with the CPU time of each of its polls added to `clock`.
pub(crate) fn metered<F: Future>(clock: Arc<CpuClock>, work: F) -> Metered<F> {
    Metered {
        work: Box::pin(work),
        clock,
    }
}

/// The future [`metered`] returns.
pub(crate) struct Metered<F> {
    work: Pin<Box<F>>,
    clock: Arc<CpuClock>,
}

impl<F: Future> Future for Metered<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // Both fields are Unpin (the work is boxed).
        let this = Pin::into_inner(self);
        let started = this.clock.begin();
        let polled = this.work.as_mut().poll(cx);
        this.clock.end(started);
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spin(for_cpu: Duration) {
        let start = thread_cpu_ns();
        let mut x = 0u64;
        while thread_cpu_ns() - start < u64::try_from(for_cpu.as_nanos()).unwrap_or(u64::MAX) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
    }

    #[tokio::test]
    async fn polls_are_charged_and_waits_are_not() {
        let clock = Arc::new(CpuClock::default());
        metered(clock.clone(), async {
            spin(Duration::from_millis(30));
            tokio::time::sleep(Duration::from_millis(200)).await;
            spin(Duration::from_millis(30));
        })
        .await;
        let spent = clock.spent();
        // 60 ms of computing; the 200 ms sleep is not CPU time.
        assert!(
            spent >= Duration::from_millis(60) && spent < Duration::from_millis(150),
            "{spent:?}"
        );
    }

    #[test]
    fn the_current_poll_counts_from_inside_it() {
        let clock = Arc::new(CpuClock::default());
        let inner = clock.clone();
        let seen = block_on(metered(clock.clone(), async move {
            spin(Duration::from_millis(20));
            inner.spent()
        }));
        assert!(seen >= Duration::from_millis(20), "{seen:?}");
        assert!(clock.spent() >= seen);
    }

    /// Polls `work` to the end on this thread.
    fn block_on<F: Future>(work: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
            .block_on(work)
    }
}
