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
//!
//! A run's limit is also charged with the time the guest chose to wait: a poll that leaves it
//! parked on something outside it (a `time.sleep`, a C++ `sleep_for`; told apart from
//! wasmtime's cooperative yield, which wakes the task before answering `Pending`, as in
//! [`crate::engine::slot`]) starts a wait that ends when its waker fires, and a timer stops the run if
//! the wait would outlast what is left of the limit ([`metered_with_waits`]). A sleeping
//! program is then timed out at its limit, as SandboxFusion and judges' idleness limits do,
//! while the time it spends runnable but not running (other processes, a queue for a worker)
//! is still nobody's. Interpreter sessions charge only CPU time: between calls their
//! interpreter waits for the next call, which is not the program's wait.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

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

/// The process's reference instant for the waits' start times (stored as nanoseconds since).
static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);

fn now_ns() -> u64 {
    u64::try_from(EPOCH.elapsed().as_nanos())
        .unwrap_or(u64::MAX)
        .max(1)
}

/// CPU time spent inside the polls of one guest's future, and the time it spent parked on a
/// wait of its own when its waits are charged.
#[derive(Debug, Default)]
pub(crate) struct CpuClock {
    /// CPU time of the polls that ended.
    ended_ns: AtomicU64,
    /// The polling thread's CPU clock when the current poll started; 0 between polls.
    poll_started_ns: AtomicU64,
    /// Wall time of the guest's waits that ended.
    waited_ns: AtomicU64,
    /// When the current wait began ([`now_ns`]); 0 when the guest is not waiting.
    parked_at_ns: AtomicU64,
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

    /// What the guest's limit is charged with: its CPU time and its waits, the current one
    /// included (a clock that never charges waits reads its CPU time).
    pub fn charged(&self) -> Duration {
        let parked_at = self.parked_at_ns.load(Ordering::Acquire);
        let current = if parked_at == 0 {
            0
        } else {
            now_ns().saturating_sub(parked_at)
        };
        self.spent()
            + Duration::from_nanos(
                self.waited_ns
                    .load(Ordering::Acquire)
                    .saturating_add(current),
            )
    }

    /// The guest starts a wait of its own.
    fn park(&self) {
        self.parked_at_ns.store(now_ns(), Ordering::Release);
    }

    /// The guest's wait, if any, is over.
    fn unpark(&self) {
        let parked_at = self.parked_at_ns.swap(0, Ordering::AcqRel);
        if parked_at != 0 {
            self.waited_ns
                .fetch_add(now_ns().saturating_sub(parked_at), Ordering::AcqRel);
        }
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
        limit: None,
        timer: None,
    }
}

/// [`metered`], with the guest's own waits charged to `clock` too, and the run stopped
/// ([`OverTime`]) when a wait would take it past `limit` of charged time.
pub(crate) fn metered_with_waits<F: Future>(
    clock: Arc<CpuClock>,
    limit: Duration,
    work: F,
) -> Metered<F> {
    Metered {
        limit: Some(limit),
        ..metered(clock, work)
    }
}

/// A run stopped while it waited, because the wait took it past its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OverTime;

/// The future [`metered`] returns.
pub(crate) struct Metered<F> {
    work: Pin<Box<F>>,
    clock: Arc<CpuClock>,
    /// Waits are charged up to this much charged time; `None`: only CPU time is counted.
    limit: Option<Duration>,
    /// Wakes the task when a wait reaches the limit.
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
}

/// The waker a charged guest is polled with: its firing ends the guest's wait (so time spent
/// runnable, queued for a core or a worker, is not charged), and a wake during the poll marks
/// a cooperative yield rather than a wait.
struct WaitWaker {
    clock: Arc<CpuClock>,
    task: Waker,
    woken: AtomicBool,
}

impl Wake for WaitWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.clock.unpark();
        self.task.wake_by_ref();
    }
}

impl<F: Future> Future for Metered<F> {
    type Output = Result<F::Output, OverTime>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // Every field is Unpin (the work and the timer are boxed).
        let this = Pin::into_inner(self);
        let Some(limit) = this.limit else {
            let started = this.clock.begin();
            let polled = this.work.as_mut().poll(cx);
            this.clock.end(started);
            return polled.map(Ok);
        };
        // Polled without the guest's waker firing: the timer (or a spurious poll) ends the wait.
        this.clock.unpark();
        if this.clock.charged() > limit {
            return Poll::Ready(Err(OverTime));
        }
        let waker = Arc::new(WaitWaker {
            clock: this.clock.clone(),
            task: cx.waker().clone(),
            woken: AtomicBool::new(false),
        });
        let started = this.clock.begin();
        let polled = this
            .work
            .as_mut()
            .poll(&mut Context::from_waker(&Waker::from(waker.clone())));
        this.clock.end(started);
        match polled {
            Poll::Ready(out) => Poll::Ready(Ok(out)),
            Poll::Pending if waker.woken.load(Ordering::Acquire) => Poll::Pending,
            Poll::Pending => {
                this.clock.park();
                let left = limit.saturating_sub(this.clock.charged());
                let deadline = tokio::time::Instant::now() + left;
                let timer = this
                    .timer
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
                timer.as_mut().reset(deadline);
                if timer.as_mut().poll(cx).is_ready() {
                    this.clock.unpark();
                    return Poll::Ready(Err(OverTime));
                }
                Poll::Pending
            }
        }
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
        .await
        .expect("no limit, no overtime");
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
        }))
        .expect("no limit, no overtime");
        assert!(seen >= Duration::from_millis(20), "{seen:?}");
        assert!(clock.spent() >= seen);
    }

    #[tokio::test]
    async fn charged_waits_count_and_a_wait_past_the_limit_stops_the_work() {
        // Within the limit: 30 ms of computing and a 100 ms sleep are both charged.
        let clock = Arc::new(CpuClock::default());
        let done = metered_with_waits(clock.clone(), Duration::from_secs(5), async {
            spin(Duration::from_millis(30));
            tokio::time::sleep(Duration::from_millis(100)).await;
            7
        })
        .await;
        assert_eq!(done, Ok(7));
        let (cpu, charged) = (clock.spent(), clock.charged());
        assert!(
            cpu >= Duration::from_millis(30) && cpu < Duration::from_millis(100),
            "{cpu:?}"
        );
        assert!(charged >= Duration::from_millis(130), "{charged:?}");

        // A sleep past the limit is stopped at the limit, not at its own end.
        let clock = Arc::new(CpuClock::default());
        let started = Instant::now();
        let stopped = metered_with_waits(clock.clone(), Duration::from_millis(200), async {
            tokio::time::sleep(Duration::from_secs(30)).await;
        })
        .await;
        assert_eq!(stopped, Err(OverTime));
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        assert!(clock.charged() >= Duration::from_millis(200));
    }

    #[tokio::test]
    async fn a_cooperative_yield_is_not_a_wait() {
        // Work that yields (wakes itself, then answers Pending) as wasmtime does each tick.
        let clock = Arc::new(CpuClock::default());
        let out = metered_with_waits(clock.clone(), Duration::from_secs(5), async {
            for _ in 0..50 {
                spin(Duration::from_millis(1));
                tokio::task::yield_now().await;
            }
        })
        .await;
        assert_eq!(out, Ok(()));
        let waited = clock.charged().saturating_sub(clock.spent());
        assert!(waited < Duration::from_millis(5), "{waited:?}");
    }

    /// Polls `work` to the end on this thread.
    fn block_on<F: Future>(work: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
            .block_on(work)
    }
}
