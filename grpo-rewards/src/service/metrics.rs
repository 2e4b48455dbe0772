//! Prometheus metrics of the service, kept in atomics and rendered in the text exposition
//! format (version 0.0.4) by [`Metrics::render`].
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `grpo_http_requests_total` | counter | `route`, `status` |
//! | `grpo_http_request_duration_seconds` | histogram | `route` |
//! | `grpo_http_inflight_requests` | gauge | |
//! | `grpo_queue_depth` | gauge | |
//! | `grpo_queue_rejections_total` | counter | `reason` (`queue_full`, `queue_timeout`) |
//! | `grpo_verdicts_total` | counter | `kind` (the verdict kinds of `/v1/score`) |
//! | `grpo_run_code_total` | counter | `status` (`Success`, `Failed`, `SandboxError`) |
//! | `grpo_sandbox_runs_total` | counter | (take `rate()` for runs per second) |
//! | `grpo_sandbox_run_duration_seconds` | histogram | (one `/run_code` program) |
//! | `grpo_completions_scored_total` | counter | |

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use crate::result::VerdictKind;

/// Upper bounds of the latency histogram buckets, in seconds.
pub const LATENCY_BUCKETS: [f64; 14] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// A fixed-bucket histogram (cumulative counts are computed when rendering).
#[derive(Debug, Default)]
pub struct Histogram {
    /// Observations per bucket; the last slot is `+Inf`.
    buckets: [AtomicU64; LATENCY_BUCKETS.len() + 1],
    /// Sum of observations in microseconds.
    sum_micros: AtomicU64,
    count: AtomicU64,
}

impl Histogram {
    /// Records one observation.
    pub fn observe(&self, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        let slot = LATENCY_BUCKETS
            .iter()
            .position(|&b| seconds <= b)
            .unwrap_or(LATENCY_BUCKETS.len());
        self.buckets[slot].fetch_add(1, Ordering::Relaxed);
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        self.sum_micros.fetch_add(micros, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    /// How many observations were recorded.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    fn render(&self, out: &mut String, name: &str, labels: &str) {
        let sep = if labels.is_empty() { "" } else { "," };
        let mut cumulative = 0;
        for (i, bound) in LATENCY_BUCKETS.iter().enumerate() {
            cumulative += self.buckets[i].load(Ordering::Relaxed);
            let _ = writeln!(
                out,
                "{name}_bucket{{{labels}{sep}le=\"{bound}\"}} {cumulative}"
            );
        }
        cumulative += self.buckets[LATENCY_BUCKETS.len()].load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {cumulative}"
        );
        let sum = self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
        let braces = if labels.is_empty() {
            String::new()
        } else {
            format!("{{{labels}}}")
        };
        let _ = writeln!(out, "{name}_sum{braces} {sum}");
        let _ = writeln!(out, "{name}_count{braces} {}", self.count());
    }
}

/// Every metric the service exports.
#[derive(Debug, Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, u16), u64>>,
    latency: Mutex<BTreeMap<String, std::sync::Arc<Histogram>>>,
    inflight: AtomicI64,
    queue_depth: AtomicI64,
    queue_full: AtomicU64,
    queue_timeout: AtomicU64,
    verdicts: Mutex<BTreeMap<VerdictKind, u64>>,
    run_code: Mutex<BTreeMap<&'static str, u64>>,
    sandbox_runs: AtomicU64,
    run_duration: Histogram,
    completions: AtomicU64,
}

/// Which way a request left the admission queue without being served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    /// The queue was already at its maximum length.
    QueueFull,
    /// The request waited its maximum time without being admitted.
    QueueTimeout,
}

impl Metrics {
    /// Records one finished HTTP request.
    pub fn record_request(&self, route: &str, status: u16, elapsed: Duration) {
        if let Ok(mut requests) = self.requests.lock() {
            *requests.entry((route.to_owned(), status)).or_default() += 1;
        }
        let histogram = self
            .latency
            .lock()
            .map(|mut l| l.entry(route.to_owned()).or_default().clone());
        if let Ok(histogram) = histogram {
            histogram.observe(elapsed);
        }
    }

    /// Adds `delta` to the in-flight gauge.
    pub fn add_inflight(&self, delta: i64) {
        self.inflight.fetch_add(delta, Ordering::Relaxed);
    }

    /// Adds `delta` to the queue-depth gauge.
    pub fn add_queued(&self, delta: i64) {
        self.queue_depth.fetch_add(delta, Ordering::Relaxed);
    }

    /// The current queue depth.
    pub fn queue_depth(&self) -> i64 {
        self.queue_depth.load(Ordering::Relaxed)
    }

    /// Records a request turned away by the admission queue.
    pub fn record_rejection(&self, rejection: Rejection) {
        match rejection {
            Rejection::QueueFull => self.queue_full.fetch_add(1, Ordering::Relaxed),
            Rejection::QueueTimeout => self.queue_timeout.fetch_add(1, Ordering::Relaxed),
        };
    }

    /// Records the verdict of one scored completion.
    pub fn record_verdict(&self, kind: VerdictKind) {
        self.completions.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut verdicts) = self.verdicts.lock() {
            *verdicts.entry(kind).or_default() += 1;
        }
    }

    /// Records one `/run_code` outcome (`Success`, `Failed`, `SandboxError`).
    pub fn record_run_code(&self, status: &'static str, elapsed: Duration) {
        if let Ok(mut run_code) = self.run_code.lock() {
            *run_code.entry(status).or_default() += 1;
        }
        self.run_duration.observe(elapsed);
    }

    /// Counts `n` programs run in the sandbox.
    pub fn add_sandbox_runs(&self, n: u64) {
        self.sandbox_runs.fetch_add(n, Ordering::Relaxed);
    }

    /// The text exposition of every metric.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(4096);
        out.push_str(
            "# HELP grpo_http_requests_total HTTP requests answered, by route and status.\n",
        );
        out.push_str("# TYPE grpo_http_requests_total counter\n");
        if let Ok(requests) = self.requests.lock() {
            for ((route, status), n) in requests.iter() {
                let _ = writeln!(
                    out,
                    "grpo_http_requests_total{{route=\"{}\",status=\"{status}\"}} {n}",
                    escape(route)
                );
            }
        }
        out.push_str(
            "# HELP grpo_http_request_duration_seconds Time to answer a request, by route.\n",
        );
        out.push_str("# TYPE grpo_http_request_duration_seconds histogram\n");
        if let Ok(latency) = self.latency.lock() {
            for (route, histogram) in latency.iter() {
                let labels = format!("route=\"{}\"", escape(route));
                histogram.render(&mut out, "grpo_http_request_duration_seconds", &labels);
            }
        }
        gauge(
            &mut out,
            "grpo_http_inflight_requests",
            "Requests being served now.",
            self.inflight.load(Ordering::Relaxed),
        );
        gauge(
            &mut out,
            "grpo_queue_depth",
            "Requests waiting for admission.",
            self.queue_depth(),
        );
        out.push_str(
            "# HELP grpo_queue_rejections_total Requests answered 504 by the admission queue.\n",
        );
        out.push_str("# TYPE grpo_queue_rejections_total counter\n");
        let _ = writeln!(
            out,
            "grpo_queue_rejections_total{{reason=\"queue_full\"}} {}",
            self.queue_full.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "grpo_queue_rejections_total{{reason=\"queue_timeout\"}} {}",
            self.queue_timeout.load(Ordering::Relaxed)
        );
        out.push_str("# HELP grpo_verdicts_total Verdicts of scored completions, by kind.\n");
        out.push_str("# TYPE grpo_verdicts_total counter\n");
        if let Ok(verdicts) = self.verdicts.lock() {
            for (kind, n) in verdicts.iter() {
                let _ = writeln!(out, "grpo_verdicts_total{{kind=\"{}\"}} {n}", kind.as_str());
            }
        }
        counter(
            &mut out,
            "grpo_completions_scored_total",
            "Completions scored by /v1/score.",
            self.completions.load(Ordering::Relaxed),
        );
        out.push_str("# HELP grpo_run_code_total /run_code outcomes, by SandboxFusion status.\n");
        out.push_str("# TYPE grpo_run_code_total counter\n");
        if let Ok(run_code) = self.run_code.lock() {
            for (status, n) in run_code.iter() {
                let _ = writeln!(out, "grpo_run_code_total{{status=\"{status}\"}} {n}");
            }
        }
        counter(
            &mut out,
            "grpo_sandbox_runs_total",
            "Programs run in the sandbox.",
            self.sandbox_runs.load(Ordering::Relaxed),
        );
        out.push_str("# HELP grpo_sandbox_run_duration_seconds Time of one /run_code program.\n");
        out.push_str("# TYPE grpo_sandbox_run_duration_seconds histogram\n");
        self.run_duration
            .render(&mut out, "grpo_sandbox_run_duration_seconds", "");
        out
    }
}

fn gauge(out: &mut String, name: &str, help: &str, value: i64) {
    let _ = writeln!(
        out,
        "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}"
    );
}

fn counter(out: &mut String, name: &str, help: &str, value: u64) {
    let _ = writeln!(
        out,
        "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}"
    );
}

/// Escapes a label value (backslash, quote, newline).
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative() {
        let h = Histogram::default();
        // 0.5 ms lands in le=0.001, 7 ms in le=0.01, 100 s in +Inf only.
        for ms in [0.5, 7.0, 100_000.0] {
            h.observe(Duration::from_secs_f64(ms / 1e3));
        }
        let mut out = String::new();
        h.render(&mut out, "x", "");
        assert!(out.contains("x_bucket{le=\"0.001\"} 1\n"), "{out}");
        assert!(out.contains("x_bucket{le=\"0.005\"} 1\n"), "{out}");
        assert!(out.contains("x_bucket{le=\"0.01\"} 2\n"), "{out}");
        assert!(out.contains("x_bucket{le=\"30\"} 2\n"), "{out}");
        assert!(out.contains("x_bucket{le=\"+Inf\"} 3\n"), "{out}");
        assert!(out.contains("x_count 3\n"), "{out}");
        // 0.0005 + 0.007 + 100 = 100.0075
        assert!(out.contains("x_sum 100.0075\n"), "{out}");
    }

    #[test]
    fn rendering_names_routes_statuses_and_verdicts() {
        let m = Metrics::default();
        m.record_request("/v1/score", 200, Duration::from_millis(3));
        m.record_request("/v1/score", 200, Duration::from_millis(4));
        m.record_request("/run_code", 422, Duration::from_millis(1));
        m.record_verdict(VerdictKind::WrongAnswer);
        m.record_rejection(Rejection::QueueTimeout);
        m.add_inflight(2);
        m.add_inflight(-1);
        let text = m.render();
        assert!(text.contains("grpo_http_requests_total{route=\"/v1/score\",status=\"200\"} 2\n"));
        assert!(text.contains("grpo_http_requests_total{route=\"/run_code\",status=\"422\"} 1\n"));
        assert!(text.contains("grpo_verdicts_total{kind=\"wrong_answer\"} 1\n"));
        assert!(text.contains("grpo_queue_rejections_total{reason=\"queue_timeout\"} 1\n"));
        assert!(text.contains("grpo_http_inflight_requests 1\n"));
        assert!(text.contains("grpo_http_request_duration_seconds_count{route=\"/v1/score\"} 2\n"));
        // Every sample line is `name{labels} value` or `name value`, with a numeric value.
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let value = line.rsplit(' ').next().unwrap();
            assert!(value.parse::<f64>().is_ok(), "{line}");
        }
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
