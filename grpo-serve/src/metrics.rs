//! Prometheus metrics of the service, kept in a `prometheus-client` registry and rendered in
//! the OpenMetrics text format (which Prometheus scrapes) by [`Metrics::render`].
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `grpo_http_requests_total` | counter | `route`, `status` |
//! | `grpo_http_request_duration_seconds` | histogram | `route` |
//! | `grpo_http_inflight_requests` | gauge | |
//! | `grpo_http_open_connections` | gauge | (at most `max_connections`) |
//! | `grpo_queue_depth` | gauge | |
//! | `grpo_queue_rejections_total` | counter | `reason` (`queue_full`, `queue_timeout`) |
//! | `grpo_verdicts_total` | counter | `kind` (the verdict kinds of `/v1/score`) |
//! | `grpo_run_code_total` | counter | `status` (`Success`, `Failed`, `SandboxError`) |
//! | `grpo_sandbox_runs_total` | counter | (take `rate()` for runs per second) |
//! | `grpo_sandbox_run_duration_seconds` | histogram | (one `/run_code` program) |
//! | `grpo_completions_scored_total` | counter | |
//! | `grpo_sessions_opened_total` | counter | (interpreter sessions opened by `POST /v1/sessions`) |
//! | `grpo_sessions_open` | gauge | (at most `sessions.max_sessions`) |
//! | `grpo_sessions_closed_total` | counter | `reason` (`deleted`, `idle`, `lifetime`, `spent`, `shutdown`) |
//! | `grpo_sessions_refused_total` | counter | (`POST /v1/sessions` answered 429: the cap was reached) |
//! | `grpo_session_calls_total` | counter | `status` (the run statuses of `/v1/sessions/{id}/run`) |

use std::sync::atomic::AtomicU64;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use grpo_rewards::result::VerdictKind;

/// The content type of [`Metrics::render`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Upper bounds of the latency histogram buckets, in seconds.
pub const LATENCY_BUCKETS: [f64; 14] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    route: String,
    status: u16,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabels {
    status: &'static str,
}

fn latency_histogram() -> Histogram {
    Histogram::new(LATENCY_BUCKETS)
}

/// Every metric the service exports, and the registry that renders them.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RouteLabels, Histogram, fn() -> Histogram>,
    inflight: Gauge,
    connections: Gauge,
    queue_depth: Gauge,
    rejections: Family<ReasonLabels, Counter>,
    verdicts: Family<KindLabels, Counter>,
    run_code: Family<StatusLabels, Counter>,
    sandbox_runs: Counter,
    run_duration: Histogram,
    completions: Counter<u64, AtomicU64>,
    sessions_opened: Counter,
    sessions_open: Gauge,
    sessions_closed: Family<ReasonLabels, Counter>,
    sessions_refused: Counter,
    session_calls: Family<StatusLabels, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::default();
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "grpo_http_requests",
            "HTTP requests answered, by route and status",
            requests.clone(),
        );
        let latency = Family::<RouteLabels, Histogram, fn() -> Histogram>::new_with_constructor(
            latency_histogram,
        );
        registry.register(
            "grpo_http_request_duration_seconds",
            "Time to answer a request, by route",
            latency.clone(),
        );
        let inflight = Gauge::default();
        registry.register(
            "grpo_http_inflight_requests",
            "Requests being served now",
            inflight.clone(),
        );
        let connections = Gauge::default();
        registry.register(
            "grpo_http_open_connections",
            "Client connections open now",
            connections.clone(),
        );
        let queue_depth = Gauge::default();
        registry.register(
            "grpo_queue_depth",
            "Requests waiting for admission",
            queue_depth.clone(),
        );
        let rejections = Family::<ReasonLabels, Counter>::default();
        registry.register(
            "grpo_queue_rejections",
            "Requests answered 504 by the admission queue",
            rejections.clone(),
        );
        // Both reasons are exported from the start, at 0.
        for reason in ["queue_full", "queue_timeout"] {
            let _ = rejections.get_or_create(&ReasonLabels { reason });
        }
        let verdicts = Family::<KindLabels, Counter>::default();
        registry.register(
            "grpo_verdicts",
            "Verdicts of scored completions, by kind",
            verdicts.clone(),
        );
        let completions = Counter::default();
        registry.register(
            "grpo_completions_scored",
            "Completions scored by /v1/score",
            completions.clone(),
        );
        let run_code = Family::<StatusLabels, Counter>::default();
        registry.register(
            "grpo_run_code",
            "/run_code outcomes, by SandboxFusion status",
            run_code.clone(),
        );
        let sandbox_runs = Counter::default();
        registry.register(
            "grpo_sandbox_runs",
            "Programs run in the sandbox",
            sandbox_runs.clone(),
        );
        let run_duration = latency_histogram();
        registry.register(
            "grpo_sandbox_run_duration_seconds",
            "Time of one /run_code program",
            run_duration.clone(),
        );
        let sessions_opened = Counter::default();
        registry.register(
            "grpo_sessions_opened",
            "Interpreter sessions opened",
            sessions_opened.clone(),
        );
        let sessions_open = Gauge::default();
        registry.register(
            "grpo_sessions_open",
            "Interpreter sessions open now",
            sessions_open.clone(),
        );
        let sessions_closed = Family::<ReasonLabels, Counter>::default();
        registry.register(
            "grpo_sessions_closed",
            "Interpreter sessions closed, by reason",
            sessions_closed.clone(),
        );
        let sessions_refused = Counter::default();
        registry.register(
            "grpo_sessions_refused",
            "Session openings refused because the cap on open sessions was reached",
            sessions_refused.clone(),
        );
        let session_calls = Family::<StatusLabels, Counter>::default();
        registry.register(
            "grpo_session_calls",
            "Calls run in interpreter sessions, by run status",
            session_calls.clone(),
        );
        Metrics {
            registry,
            requests,
            latency,
            inflight,
            connections,
            queue_depth,
            rejections,
            verdicts,
            run_code,
            sandbox_runs,
            run_duration,
            completions,
            sessions_opened,
            sessions_open,
            sessions_closed,
            sessions_refused,
            session_calls,
        }
    }
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
        let route = route.to_owned();
        self.requests
            .get_or_create(&RequestLabels {
                route: route.clone(),
                status,
            })
            .inc();
        self.latency
            .get_or_create(&RouteLabels { route })
            .observe(elapsed.as_secs_f64());
    }

    /// Adds `delta` to the in-flight gauge.
    pub fn add_inflight(&self, delta: i64) {
        self.inflight.inc_by(delta);
    }

    /// Adds `delta` to the open-connections gauge.
    pub fn add_connections(&self, delta: i64) {
        self.connections.inc_by(delta);
    }

    /// The number of open client connections.
    pub fn open_connections(&self) -> i64 {
        self.connections.get()
    }

    /// Adds `delta` to the queue-depth gauge.
    pub fn add_queued(&self, delta: i64) {
        self.queue_depth.inc_by(delta);
    }

    /// The current queue depth.
    pub fn queue_depth(&self) -> i64 {
        self.queue_depth.get()
    }

    /// Records a request turned away by the admission queue.
    pub fn record_rejection(&self, rejection: Rejection) {
        let reason = match rejection {
            Rejection::QueueFull => "queue_full",
            Rejection::QueueTimeout => "queue_timeout",
        };
        self.rejections
            .get_or_create(&ReasonLabels { reason })
            .inc();
    }

    /// Records the verdict of one scored completion.
    pub fn record_verdict(&self, kind: VerdictKind) {
        self.completions.inc();
        self.verdicts
            .get_or_create(&KindLabels {
                kind: kind.as_str(),
            })
            .inc();
    }

    /// Records one `/run_code` outcome (`Success`, `Failed`, `SandboxError`).
    pub fn record_run_code(&self, status: &'static str, elapsed: Duration) {
        self.run_code.get_or_create(&StatusLabels { status }).inc();
        self.run_duration.observe(elapsed.as_secs_f64());
    }

    /// Counts `n` programs run in the sandbox.
    pub fn add_sandbox_runs(&self, n: u64) {
        self.sandbox_runs.inc_by(n);
    }

    /// Records an interpreter session opened.
    pub fn record_session_opened(&self) {
        self.sessions_opened.inc();
        self.sessions_open.inc();
    }

    /// Records an interpreter session closed, and why (`deleted`, `idle`, `lifetime`,
    /// `spent`, `shutdown`).
    pub fn record_session_closed(&self, reason: &'static str) {
        self.sessions_open.dec();
        self.sessions_closed
            .get_or_create(&ReasonLabels { reason })
            .inc();
    }

    /// Records a session opening refused at the cap.
    pub fn record_session_refused(&self) {
        self.sessions_refused.inc();
    }

    /// Records one call in a session, by its run status.
    pub fn record_session_call(&self, status: &'static str) {
        self.session_calls
            .get_or_create(&StatusLabels { status })
            .inc();
    }

    /// The number of interpreter sessions open now.
    pub fn open_sessions(&self) -> i64 {
        self.sessions_open.get()
    }

    /// The OpenMetrics text of every metric ([`CONTENT_TYPE`]).
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(4096);
        if let Err(e) = encode(&mut out, &self.registry) {
            // Writing into a String cannot fail; say so loudly if it ever does.
            tracing::error!(error = %e, "could not render the metrics");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative() {
        let m = Metrics::default();
        // 0.5 ms lands in le=0.001, 7 ms in le=0.01, 100 s in +Inf only.
        for ms in [0.5, 7.0, 100_000.0] {
            m.record_run_code("Success", Duration::from_secs_f64(ms / 1e3));
        }
        let out = m.render();
        let name = "grpo_sandbox_run_duration_seconds";
        for (le, n) in [
            ("0.001", 1),
            ("0.005", 1),
            ("0.01", 2),
            ("30.0", 2),
            ("+Inf", 3),
        ] {
            let line = format!("{name}_bucket{{le=\"{le}\"}} {n}\n");
            assert!(out.contains(&line), "{line} in {out}");
        }
        assert!(out.contains(&format!("{name}_count 3\n")), "{out}");
        // 0.0005 + 0.007 + 100 = 100.0075
        let sum: f64 = out
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}_sum ")))
            .unwrap()
            .parse()
            .unwrap();
        assert!((sum - 100.0075).abs() < 1e-9, "{sum}");
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
        for line in [
            "grpo_http_requests_total{route=\"/v1/score\",status=\"200\"} 2\n",
            "grpo_http_requests_total{route=\"/run_code\",status=\"422\"} 1\n",
            "grpo_verdicts_total{kind=\"wrong_answer\"} 1\n",
            "grpo_queue_rejections_total{reason=\"queue_timeout\"} 1\n",
            "grpo_queue_rejections_total{reason=\"queue_full\"} 0\n",
            "grpo_http_inflight_requests 1\n",
            "grpo_http_request_duration_seconds_count{route=\"/v1/score\"} 2\n",
            "grpo_completions_scored_total 1\n",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
        assert!(text.ends_with("# EOF\n"), "{text}");
        // Every sample line is `name{labels} value` or `name value`, with a numeric value.
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let value = line.rsplit(' ').next().unwrap();
            assert!(value.parse::<f64>().is_ok(), "{line}");
        }
    }

    #[test]
    fn label_values_are_escaped() {
        let m = Metrics::default();
        m.record_request("a\"b\\c\nd", 404, Duration::from_millis(1));
        let text = m.render();
        assert!(text.contains("route=\"a\\\"b\\\\c\\nd\""), "{text}");
    }
}
