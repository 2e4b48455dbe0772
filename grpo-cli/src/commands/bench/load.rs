//! One level of the sweep against one target: a fixed number of requests from a number of
//! threads, each answer read as an outcome, and the hostile programs' containment check.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use grpo_tasks::Language;

use super::hostile::{Containment, Hostile, contained};
use super::sources::{Concrete, Kind, Planned, hostile_request};
use super::target::Target;

/// How requests are sent.
pub struct Sender<'a> {
    pub agent: &'a ureq::Agent,
    pub auth: Option<&'a str>,
    /// Give compiled programs a source of their own per send.
    pub unique: bool,
    /// This run's number, in every unique source.
    pub run: u64,
    /// Sends so far (the other part of a unique source).
    pub sent: &'a AtomicU64,
}

/// What one level measured on one target.
#[derive(Debug, Default)]
pub struct Tally {
    pub latencies_ms: Vec<f64>,
    /// Answers by HTTP status.
    pub statuses: BTreeMap<u16, usize>,
    /// Answers by request kind, language and outcome (SandboxFusion's `status` and the
    /// run's, or our verdict kind): `reference/cpp/Success:Finished`.
    pub outcomes: BTreeMap<String, usize>,
    /// Requests that got no usable answer, by kind: `transport`, `timeout`, `http_<status>`,
    /// `SandboxError` (a fault the target reports on its side).
    pub errors: BTreeMap<String, usize>,
    /// References that did not pass.
    pub references_failed: usize,
}

/// One answer: the HTTP status and body, or the kind of failure to get one.
fn send(sender: &Sender<'_>, target: &Target, planned: &Planned) -> Result<(u16, String), String> {
    let n = sender.sent.fetch_add(1, Ordering::Relaxed);
    let body = planned.body(Concrete {
        memory_mb: target.memory_mb,
        unique: sender.unique,
        run: sender.run,
        n,
    });
    let mut request = sender
        .agent
        .post(format!("{}{}", target.url, planned.path))
        .header("Content-Type", "application/json");
    if let Some(auth) = sender.auth {
        request = request.header("Authorization", auth);
    }
    let answer = request.send(&body[..]).and_then(|mut r| {
        let status = r.status().as_u16();
        let body = r
            .body_mut()
            .with_config()
            .limit(512 << 20)
            .read_to_string()?;
        Ok((status, body))
    });
    answer.map_err(|e| match e {
        ureq::Error::Timeout(_) => "timeout".to_owned(),
        _ => "transport".to_owned(),
    })
}

/// Sends `requests` requests of `plan` (in order, cycling) from `concurrency` threads.
pub fn run_level(
    sender: &Sender<'_>,
    target: &Target,
    plan: &[Planned],
    concurrency: usize,
    requests: usize,
) -> Tally {
    let next = AtomicUsize::new(0);
    let tally = Mutex::new(Tally::default());
    std::thread::scope(|scope| {
        for _ in 0..concurrency.min(requests) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= requests {
                        break;
                    }
                    let planned = &plan[i % plan.len()];
                    let started = Instant::now();
                    let answer = send(sender, target, planned);
                    let ms = started.elapsed().as_secs_f64() * 1000.0;
                    let mut t = tally
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    t.latencies_ms.push(ms);
                    match answer {
                        Ok((status, body)) => {
                            *t.statuses.entry(status).or_default() += 1;
                            let read = outcome(planned.path, status, &body);
                            let language = planned.language.map_or("answer", Language::as_str);
                            *t.outcomes
                                .entry(format!("{}/{language}/{}", planned.kind.name(), read.name))
                                .or_default() += 1;
                            if let Some(error) = read.error {
                                *t.errors.entry(error).or_default() += 1;
                            }
                            if planned.kind == Kind::Reference && !read.passed {
                                t.references_failed += 1;
                            }
                        }
                        Err(kind) => {
                            *t.errors.entry(kind).or_default() += 1;
                            if planned.kind == Kind::Reference {
                                t.references_failed += 1;
                            }
                        }
                    }
                }
            });
        }
    });
    tally
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How an answer reads.
#[derive(Debug, PartialEq)]
pub struct Outcome {
    /// SandboxFusion's `status` and the run's (`Success:Finished`), our verdict kind, or
    /// `http_<status>`.
    pub name: String,
    /// Whether the program passed.
    pub passed: bool,
    /// The kind of error, when the target failed to answer for the program (not the
    /// program failing).
    pub error: Option<String>,
}

/// Reads one answer.
pub fn outcome(path: &str, status: u16, body: &str) -> Outcome {
    let failed = |name: String| Outcome {
        error: Some(name.clone()),
        name,
        passed: false,
    };
    if status != 200 {
        return failed(format!("http_{status}"));
    }
    let Ok(value) = serde_json::from_str::<serde_json::Value>(body) else {
        return failed("not_json".to_owned());
    };
    if path == "/run_code" {
        let run = value["run_result"]["status"].as_str().unwrap_or("none");
        let top = value["status"].as_str().unwrap_or("none");
        Outcome {
            name: format!("{top}:{run}"),
            passed: top == "Success",
            error: (top == "SandboxError").then(|| "SandboxError".to_owned()),
        }
    } else {
        let result = &value["results"][0];
        Outcome {
            name: result["verdict"]["kind"]
                .as_str()
                .unwrap_or("none")
                .to_owned(),
            passed: result["correct"].as_bool().unwrap_or(false),
            error: None,
        }
    }
}

/// What a target did with one hostile program.
#[derive(Debug)]
pub struct Checked {
    pub program: String,
    pub limit: &'static str,
    pub containment: Containment,
    pub ms: f64,
}

/// Sends each hostile program once, one at a time, and reads whether it was contained.
pub fn check_containment(
    sender: &Sender<'_>,
    target: &Target,
    hostiles: &[Hostile],
    timeout_s: f64,
) -> Vec<Checked> {
    hostiles
        .iter()
        .filter(|h| target.languages.contains(&h.language))
        .map(|h| {
            let started = Instant::now();
            let answer = send(sender, target, &hostile_request(h, timeout_s));
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            let containment = match answer {
                Ok((status, body)) => contained(status, &body),
                Err(kind) => Containment {
                    contained: true,
                    how: format!("no answer ({kind})"),
                },
            };
            Checked {
                program: h.name(),
                limit: h.limit.name(),
                containment,
                ms,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_separate_program_failures_from_target_errors() {
        let ok = outcome(
            "/run_code",
            200,
            r#"{"status":"Success","run_result":{"status":"Finished"}}"#,
        );
        assert_eq!(
            (ok.name.as_str(), ok.passed, ok.error),
            ("Success:Finished", true, None)
        );
        let failed = outcome(
            "/run_code",
            200,
            r#"{"status":"Failed","run_result":{"status":"TimeLimitExceeded"}}"#,
        );
        assert!(!failed.passed && failed.error.is_none());
        let fault = outcome(
            "/run_code",
            200,
            r#"{"status":"SandboxError","run_result":null}"#,
        );
        assert_eq!(fault.error.as_deref(), Some("SandboxError"));
        assert_eq!(
            outcome("/run_code", 503, "").error.as_deref(),
            Some("http_503")
        );
        let scored = outcome(
            "/v1/score",
            200,
            r#"{"results":[{"correct":true,"verdict":{"kind":"correct"}}]}"#,
        );
        assert!(scored.passed && scored.error.is_none());
    }
}
