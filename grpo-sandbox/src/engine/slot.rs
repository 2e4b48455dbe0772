//! CPU slots that a waiting guest gives back.
//!
//! The sandbox's worker count bounds how many guests *compute* at once: each run holds one
//! slot (a semaphore permit) while it runs. A guest that sleeps or blocks (`time.sleep`, a
//! C++ `sleep_for`, a read that waits) is an async future parked on a timer or on I/O, so it
//! holds no thread; [`on_cpu`] makes it hold no slot either. It keeps its slot only while it
//! is runnable, and takes one again before it resumes. So a program that sleeps to its
//! wall-clock limit costs memory, never a worker, and its CPU limit is charged only with the
//! CPU time of the polls that ran it ([`crate::engine::cpu_clock`]).
//!
//! A parked future is told apart from a runnable one by its waker. wasmtime's cooperative
//! yield (every epoch tick) wakes the task itself before answering `Pending`: that guest is
//! still computing and keeps its slot. A future that answers `Pending` without waking itself
//! waits for something outside it (a timer, a pipe), and its slot goes back until that wakes
//! it.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use tokio::sync::{AcquireError, OwnedSemaphorePermit, Semaphore};

type Acquire = Pin<Box<dyn Future<Output = Result<OwnedSemaphorePermit, AcquireError>> + Send>>;

/// Runs `work` holding a slot of `slots` only while it is runnable (see the module docs).
/// Errors: the semaphore was closed.
pub(crate) fn on_cpu<F: Future + Send>(
    slots: Arc<Semaphore>,
    work: F,
) -> impl Future<Output = Result<F::Output, AcquireError>> + Send {
    on_cpu_counting(slots, work, None)
}

/// How long a piece of work has waited, runnable, for a slot: the waits that ended and the
/// one under way.
#[derive(Debug, Default)]
pub(crate) struct QueueClock {
    ended: AtomicU64,
    since: Mutex<Option<Instant>>,
    /// The work's last poll parked it on something outside it, holding no slot and not
    /// queued for one.
    parked: AtomicBool,
}

impl QueueClock {
    fn start(&self) {
        let mut since = self.since.lock().unwrap_or_else(PoisonError::into_inner);
        since.get_or_insert_with(Instant::now);
    }

    fn stop(&self) {
        let mut since = self.since.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(at) = since.take() {
            let nanos = u64::try_from(at.elapsed().as_nanos()).unwrap_or(u64::MAX);
            self.ended.fetch_add(nanos, Ordering::Relaxed);
        }
    }

    /// Whether the work is parked (see [`QueueClock::parked`]): whoever polls it may stop
    /// without it holding a slot, or a place in the slots' queue, that nobody would release.
    pub(crate) fn is_parked(&self) -> bool {
        self.parked.load(Ordering::SeqCst)
    }

    /// Time spent waiting so far.
    pub(crate) fn queued(&self) -> Duration {
        let since = self.since.lock().unwrap_or_else(PoisonError::into_inner);
        Duration::from_nanos(self.ended.load(Ordering::Relaxed))
            + since.map_or(Duration::ZERO, |at| at.elapsed())
    }
}

/// [`on_cpu`], timing on `queued` the waits of the work, runnable, for a slot (so a wall
/// clock can leave out time the guest could not run).
pub(crate) fn on_cpu_counting<F: Future + Send>(
    slots: Arc<Semaphore>,
    work: F,
    queued: Option<Arc<QueueClock>>,
) -> impl Future<Output = Result<F::Output, AcquireError>> + Send {
    OnCpu {
        work: Box::pin(work),
        slots,
        permit: None,
        acquire: None,
        waker: Arc::new(Flagging::default()),
        queued,
    }
}

struct OnCpu<F> {
    work: Pin<Box<F>>,
    slots: Arc<Semaphore>,
    permit: Option<OwnedSemaphorePermit>,
    acquire: Option<Acquire>,
    waker: Arc<Flagging>,
    queued: Option<Arc<QueueClock>>,
}

/// A waker that notes being woken, then wakes the task it stands for.
#[derive(Default)]
struct Flagging {
    woken: AtomicBool,
    task: Mutex<Option<Waker>>,
}

impl Flagging {
    fn set_task(&self, waker: &Waker) {
        let mut task = self
            .task
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !task.as_ref().is_some_and(|t| t.will_wake(waker)) {
            *task = Some(waker.clone());
        }
    }
}

impl Wake for Flagging {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::SeqCst);
        let task = self
            .task
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(task) = task.as_ref() {
            task.wake_by_ref();
        }
    }
}

impl<F: Future> Future for OnCpu<F> {
    type Output = Result<F::Output, AcquireError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // Every field is Unpin (the work is boxed).
        let this = Pin::into_inner(self);
        if let Some(queued) = &this.queued {
            queued.parked.store(false, Ordering::SeqCst);
        }
        if this.permit.is_none() {
            let slots = this.slots.clone();
            let acquire = this
                .acquire
                .get_or_insert_with(|| Box::pin(slots.acquire_owned()));
            if let Some(queued) = &this.queued {
                queued.start();
            }
            match acquire.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(permit)) => {
                    this.permit = Some(permit);
                    this.acquire = None;
                    if let Some(queued) = &this.queued {
                        queued.stop();
                    }
                }
            }
        }
        this.waker.set_task(cx.waker());
        this.waker.woken.store(false, Ordering::SeqCst);
        let waker = Waker::from(this.waker.clone());
        match this.work.as_mut().poll(&mut Context::from_waker(&waker)) {
            Poll::Ready(out) => {
                this.permit = None;
                Poll::Ready(Ok(out))
            }
            Poll::Pending => {
                if !this.waker.woken.load(Ordering::SeqCst) {
                    // Parked on something outside it: the slot goes back until it wakes.
                    this.permit = None;
                    if let Some(queued) = &this.queued {
                        queued.parked.store(true, Ordering::SeqCst);
                    }
                }
                Poll::Pending
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A sleeping future gives its slot back: with one slot, a second job finishes while the
    /// first still sleeps.
    #[tokio::test(flavor = "current_thread")]
    async fn a_sleeper_gives_its_slot_back() {
        let slots = Arc::new(Semaphore::new(1));
        let sleeper = tokio::spawn(on_cpu(slots.clone(), async {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            "slept"
        }));
        tokio::task::yield_now().await;
        let quick = on_cpu(slots.clone(), async { "quick" }).await.unwrap();
        assert_eq!(quick, "quick");
        assert!(!sleeper.is_finished());
        assert_eq!(slots.available_permits(), 1, "the sleeper holds no slot");
        sleeper.abort();
    }

    /// A future that yields by waking itself (wasmtime's epoch yield) keeps its slot.
    #[tokio::test(flavor = "current_thread")]
    async fn a_yielding_computation_keeps_its_slot() {
        let slots = Arc::new(Semaphore::new(1));
        let probe = slots.clone();
        let held = on_cpu(slots.clone(), async move {
            let mut seen = Vec::new();
            for _ in 0..5 {
                // As wasmtime yields: wake first, then answer `Pending` once.
                let mut yielded = false;
                std::future::poll_fn(|cx| {
                    if yielded {
                        Poll::Ready(())
                    } else {
                        yielded = true;
                        cx.waker().wake_by_ref();
                        Poll::Pending
                    }
                })
                .await;
                seen.push(probe.available_permits());
            }
            seen
        })
        .await
        .unwrap();
        assert_eq!(held, [0; 5]);
        assert_eq!(slots.available_permits(), 1);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_closed_semaphore_is_an_error() {
        let slots = Arc::new(Semaphore::new(1));
        slots.close();
        assert!(on_cpu(slots, async {}).await.is_err());
    }
}
