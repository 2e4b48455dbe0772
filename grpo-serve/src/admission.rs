//! Admission control: at most `max_inflight` requests are served at once; the others wait in
//! a bounded queue for a bounded time and are then answered 504 (the status verl's
//! SandboxFusion client retries), so an overloaded server never hangs and never drops a
//! request silently.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::metrics::{Metrics, Rejection};

/// The admission queue.
#[derive(Debug)]
pub struct Admission {
    permits: Arc<Semaphore>,
    max_queue: usize,
    waiting: Arc<AtomicUsize>,
    metrics: Arc<Metrics>,
}

/// A request being served; dropping it lets the next one in.
#[derive(Debug)]
pub struct Admitted {
    _permit: OwnedSemaphorePermit,
    metrics: Arc<Metrics>,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.metrics.add_inflight(-1);
    }
}

/// Counts a waiting request for as long as it waits, even when the client goes away and the
/// waiting future is dropped.
struct Waiting {
    waiting: Arc<AtomicUsize>,
    metrics: Arc<Metrics>,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.waiting.fetch_sub(1, Ordering::Relaxed);
        self.metrics.add_queued(-1);
    }
}

impl Admission {
    /// A queue serving `max_inflight` requests at once with at most `max_queue` waiting.
    pub fn new(max_inflight: usize, max_queue: usize, metrics: Arc<Metrics>) -> Self {
        Admission {
            permits: Arc::new(Semaphore::new(max_inflight.max(1))),
            max_queue,
            waiting: Arc::new(AtomicUsize::new(0)),
            metrics,
        }
    }

    /// Waits at most `wait` for a slot.
    pub async fn admit(&self, wait: Duration) -> Result<Admitted, Rejection> {
        let admitted = |permit| {
            self.metrics.add_inflight(1);
            Admitted {
                _permit: permit,
                metrics: self.metrics.clone(),
            }
        };
        if let Ok(permit) = self.permits.clone().try_acquire_owned() {
            return Ok(admitted(permit));
        }
        if self.waiting.fetch_add(1, Ordering::Relaxed) >= self.max_queue {
            self.waiting.fetch_sub(1, Ordering::Relaxed);
            self.metrics.record_rejection(Rejection::QueueFull);
            return Err(Rejection::QueueFull);
        }
        self.metrics.add_queued(1);
        let _waiting = Waiting {
            waiting: self.waiting.clone(),
            metrics: self.metrics.clone(),
        };
        match tokio::time::timeout(wait, self.permits.clone().acquire_owned()).await {
            Ok(Ok(permit)) => Ok(admitted(permit)),
            // The semaphore is never closed; a closed one reads as a full queue.
            Ok(Err(_closed)) => {
                self.metrics.record_rejection(Rejection::QueueFull);
                Err(Rejection::QueueFull)
            }
            Err(_elapsed) => {
                self.metrics.record_rejection(Rejection::QueueTimeout);
                Err(Rejection::QueueTimeout)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn full_server_times_out_then_admits_when_a_slot_frees() {
        let metrics = Arc::new(Metrics::default());
        let queue = Admission::new(1, 4, metrics.clone());
        let first = queue.admit(Duration::from_secs(1)).await.unwrap();
        // With the only slot taken, a second request waits its full wait, then gets 504.
        let second = queue.admit(Duration::from_millis(20)).await;
        assert_eq!(second.unwrap_err(), Rejection::QueueTimeout);
        assert_eq!(metrics.queue_depth(), 0);
        drop(first);
        assert!(queue.admit(Duration::from_millis(1)).await.is_ok());
    }

    #[tokio::test]
    async fn queue_length_is_bounded() {
        let metrics = Arc::new(Metrics::default());
        let queue = Arc::new(Admission::new(1, 1, metrics.clone()));
        let _held = queue.admit(Duration::from_secs(1)).await.unwrap();
        let waiter = {
            let queue = queue.clone();
            tokio::spawn(async move { queue.admit(Duration::from_secs(60)).await.map(drop) })
        };
        tokio::task::yield_now().await;
        assert_eq!(metrics.queue_depth(), 1);
        // The queue holds one waiter: the next request is turned away at once.
        assert_eq!(
            queue.admit(Duration::from_secs(60)).await.unwrap_err(),
            Rejection::QueueFull
        );
        // A waiter that goes away (client disconnect) leaves the queue.
        waiter.abort();
        let _ = waiter.await;
        assert_eq!(metrics.queue_depth(), 0);
    }
}
