//! `grpo bench`: a bounded load generator for verifier services.
//!
//! It sends programs (or answers) taken from a task pack to a SandboxFusion-compatible
//! `/run_code` URL or to our `/v1/score`, at each concurrency of a sweep, a fixed number of
//! requests per level (a level's length is its requests, not a time), and reports
//! throughput, latency percentiles, and error and timeout counts. The mix is references
//! (which must pass), wrong programs (another task's reference) and hostile ones (an endless
//! loop, a memory hog, an output flood, a host-file read), so the figures include what a
//! sandbox must refuse. It prints the sweep, writes `bench.json` and `bench.png` into
//! `--out`, and targets loopback unless told otherwise, so SandboxFusion and `grpo serve` can
//! be put side by side on one machine with one command each.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use grpo_tasks::{CodeTests, Language, Pack, Task};
use serde_json::{Value, json};

/// Load-test a verifier service: a concurrency sweep of programs from a task pack against a
/// SandboxFusion-compatible `/run_code` or our `/v1/score`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The service's base URL (SandboxFusion's or `grpo serve`'s).
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub url: String,
    /// Which endpoint to load: `run-code` (SandboxFusion's `/run_code`) or `score`
    /// (`/v1/score`, one completion per request).
    #[arg(long, value_enum, default_value_t = Api::RunCode)]
    pub api: Api,
    /// The task pack the programs come from (`/run_code` takes its Python, C, C++,
    /// JavaScript and TypeScript tasks with stdio or assert tests).
    #[arg(long, default_value = "builtin:python")]
    pub pack: String,
    /// Concurrencies of the sweep, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16")]
    pub concurrency: Vec<usize>,
    /// Requests per concurrency level.
    #[arg(long, default_value_t = 64)]
    pub requests: usize,
    /// The mix of references, wrong programs and hostile programs, as `R:W:H`.
    #[arg(long, default_value = "2:1:1")]
    pub mix: String,
    /// The run timeout each program asks for, in seconds (what a hostile loop costs).
    #[arg(long, default_value_t = 2.0)]
    pub run_timeout_s: f64,
    /// Seconds a request may take, end to end, before it counts as a timeout.
    #[arg(long, default_value_t = 60.0)]
    pub timeout_s: f64,
    /// Where `bench.json` and `bench.png` go (default `runs/bench-<unix time>`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Allow a URL that is not on this machine (the default refuses one: a load generator
    /// aimed at a shared service by mistake is an outage).
    #[arg(long)]
    pub allow_remote: bool,
    /// The bearer token to send (`grpo serve --auth-token-file`).
    #[arg(long, env = "GRPO_AUTH_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

/// The endpoint under load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Api {
    /// SandboxFusion's `POST /run_code`.
    RunCode,
    /// `POST /v1/score`.
    Score,
}

/// What a request holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Reference,
    Wrong,
    Hostile,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Reference => "reference",
            Kind::Wrong => "wrong",
            Kind::Hostile => "hostile",
        }
    }
}

/// One planned request.
#[derive(Debug, Clone)]
struct Planned {
    kind: Kind,
    path: &'static str,
    body: Vec<u8>,
}

/// Programs a sandbox must contain, in Python.
const HOSTILE: [&str; 5] = [
    "while True:\n    pass\n",
    "x = bytearray(1 << 34)\nprint(len(x))\n",
    "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n",
    "print(open('/etc/passwd').read())\n",
    "import os\nprint(os.listdir('/'))\nos.system('echo escaped')\n",
];

/// What one level measured.
#[derive(Debug, Default)]
struct Tally {
    latencies_ms: Vec<f64>,
    /// Answers by HTTP status.
    statuses: BTreeMap<u16, usize>,
    /// Answers by outcome (SandboxFusion's `status` / our verdict kind), per request kind.
    outcomes: BTreeMap<String, usize>,
    transport_errors: usize,
    timeouts: usize,
    /// References that did not pass.
    references_failed: usize,
}

impl Args {
    /// Runs the command.
    pub fn execute(self) -> anyhow::Result<std::process::ExitCode> {
        anyhow::ensure!(
            !self.concurrency.is_empty() && self.concurrency.iter().all(|&c| c > 0),
            "--concurrency needs positive numbers"
        );
        anyhow::ensure!(self.requests > 0, "--requests must be at least 1");
        anyhow::ensure!(
            self.run_timeout_s.is_finite() && self.run_timeout_s > 0.0,
            "--run-timeout-s must be a positive number"
        );
        anyhow::ensure!(
            self.timeout_s.is_finite() && self.timeout_s > 0.0,
            "--timeout-s must be a positive number"
        );
        let base = self.url.trim_end_matches('/').to_owned();
        let host = host_of(&base).with_context(|| format!("--url {base}"))?;
        anyhow::ensure!(
            self.allow_remote || is_loopback(&host),
            "--url {base} is not on this machine; pass --allow-remote to load it anyway"
        );
        let mix = parse_mix(&self.mix)?;
        let pack = Pack::load(&self.pack).with_context(|| format!("loading pack {}", self.pack))?;
        let tasks: Vec<&Task> = pack.tasks().collect();
        let plan = plan(&tasks, self.api, mix, self.run_timeout_s)
            .with_context(|| format!("planning requests from {}", self.pack))?;
        anyhow::ensure!(
            !plan.is_empty(),
            "{} has no task {} can send (`/run_code` takes code tasks with stdio or assert tests)",
            self.pack,
            match self.api {
                Api::RunCode => "`/run_code`",
                Api::Score => "`/v1/score`",
            }
        );
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs_f64(self.timeout_s)))
            .http_status_as_error(false)
            .max_idle_connections(1024)
            .max_idle_connections_per_host(1024)
            .build()
            .into();
        let auth = self.token.as_ref().map(|t| format!("Bearer {t}"));
        let mut levels = Vec::new();
        for &concurrency in &self.concurrency {
            let started = Instant::now();
            let tally = run_level(
                &agent,
                &base,
                auth.as_deref(),
                &plan,
                concurrency,
                self.requests,
            );
            let seconds = started.elapsed().as_secs_f64();
            let level = summarise(concurrency, self.requests, seconds, tally);
            eprintln!(
                "concurrency {concurrency:>4}: {:>8.1} req/s  p50 {:>8.1} ms  p99 {:>8.1} ms  errors {}  timeouts {}",
                level["throughput_rps"].as_f64().unwrap_or(0.0),
                level["latency_ms"]["p50"].as_f64().unwrap_or(0.0),
                level["latency_ms"]["p99"].as_f64().unwrap_or(0.0),
                level["errors"],
                level["timeouts"],
            );
            levels.push(level);
        }
        let report = json!({
            "url": base,
            "api": match self.api { Api::RunCode => "run_code", Api::Score => "score" },
            "pack": self.pack,
            "requests_per_level": self.requests,
            "mix": {"reference": mix.0, "wrong": mix.1, "hostile": mix.2},
            "run_timeout_s": self.run_timeout_s,
            "levels": levels,
        });
        let out = self.out.clone().unwrap_or_else(|| {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            PathBuf::from(format!("runs/bench-{now}"))
        });
        std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
        let json_path = out.join("bench.json");
        let text = serde_json::to_string_pretty(&report)?;
        grpo_runner::report::write_atomic(&json_path, format!("{text}\n").as_bytes())
            .with_context(|| format!("writing {}", json_path.display()))?;
        let plot_path = out.join("bench.png");
        draw(&plot_path, &report).with_context(|| format!("drawing {}", plot_path.display()))?;
        println!("{text}");
        eprintln!("wrote {} and {}", json_path.display(), plot_path.display());
        Ok(std::process::ExitCode::SUCCESS)
    }
}

/// The host part of an `http://` or `https://` URL.
fn host_of(url: &str) -> anyhow::Result<String> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .context("the URL must start with http:// or https://")?;
    let authority = rest.split('/').next().unwrap_or("");
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        authority.split(':').next().unwrap_or("")
    };
    anyhow::ensure!(!host.is_empty(), "the URL has no host");
    Ok(host.to_ascii_lowercase())
}

fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn parse_mix(text: &str) -> anyhow::Result<(usize, usize, usize)> {
    let parts: Vec<usize> = text
        .split(':')
        .map(|p| p.trim().parse::<usize>())
        .collect::<Result<_, _>>()
        .with_context(|| format!("--mix {text:?}: expected R:W:H, three whole numbers"))?;
    let [r, w, h] = parts[..] else {
        anyhow::bail!("--mix {text:?}: expected R:W:H, three whole numbers");
    };
    anyhow::ensure!(
        r + w + h > 0,
        "--mix {text:?}: at least one must be positive"
    );
    Ok((r, w, h))
}

/// A `/run_code` program for `source` against `task`'s tests: the source followed by the
/// assert tests, or the source with the first stdio case's input.
fn run_code_body(task: &Task, source: &str, language: Language, timeout_s: f64) -> Option<Value> {
    let Task::Code(code) = task else { return None };
    let (program, stdin) = match &code.tests {
        CodeTests::Assert(t) if language == code.language => {
            (format!("{source}\n\n{}\n", t.code), String::new())
        }
        CodeTests::Stdio(t) => (
            source.to_owned(),
            t.cases.first().map(|c| c.stdin.clone()).unwrap_or_default(),
        ),
        // Call tests need the scorer's harness; hostile programs run as they are.
        _ if language != code.language => (source.to_owned(), String::new()),
        _ => return None,
    };
    Some(json!({
        "code": program, "stdin": stdin, "language": Language::sandbox_fusion_name(language),
        "run_timeout": timeout_s, "compile_timeout": timeout_s.max(10.0), "memory_limit_MB": 256,
        "files": {}, "fetch_files": [],
    }))
}

/// The reference answer of a task, as a completion.
fn reference_completion(task: &Task) -> Option<String> {
    match task {
        Task::Math(m) => Some(format!("The answer is \\boxed{{{}}}.", m.answer)),
        Task::Code(c) => c.reference.as_ref().map(|r| format!("```\n{r}\n```")),
        Task::Countdown(c) => c
            .reference
            .as_ref()
            .map(|r| format!("<answer>{r}</answer>")),
    }
}

/// Every request of one cycle through the pack: for each task, its reference, a wrong
/// program (the next task's reference) and a hostile one, weighted by the mix.
fn plan(
    tasks: &[&Task],
    api: Api,
    (refs, wrongs, hostiles): (usize, usize, usize),
    timeout_s: f64,
) -> anyhow::Result<Vec<Planned>> {
    let mut plan = Vec::new();
    for (i, task) in tasks.iter().enumerate() {
        let other = tasks[(i + 1) % tasks.len()];
        let hostile = HOSTILE[i % HOSTILE.len()];
        let mut push =
            |kind: Kind, body: Option<Value>, path: &'static str| -> anyhow::Result<()> {
                if let Some(body) = body {
                    plan.push(Planned {
                        kind,
                        path,
                        body: serde_json::to_vec(&body)?,
                    });
                }
                Ok(())
            };
        match api {
            Api::RunCode => {
                let Task::Code(code) = task else { continue };
                let Some(reference) = &code.reference else {
                    continue;
                };
                let wrong = match other {
                    Task::Code(o) if o.language == code.language && o.id != code.id => {
                        o.reference.clone()
                    }
                    _ => None,
                }
                .unwrap_or_else(|| String::from("\n"));
                let bodies = [
                    (
                        Kind::Reference,
                        refs,
                        run_code_body(task, reference, code.language, timeout_s),
                    ),
                    (
                        Kind::Wrong,
                        wrongs,
                        run_code_body(task, &wrong, code.language, timeout_s),
                    ),
                    (
                        Kind::Hostile,
                        hostiles,
                        run_code_body(task, hostile, Language::Python, timeout_s),
                    ),
                ];
                if bodies[0].2.is_none() {
                    continue;
                }
                for (kind, weight, body) in bodies {
                    for _ in 0..weight {
                        push(kind, body.clone(), "/run_code")?;
                    }
                }
            }
            Api::Score => {
                let Some(reference) = reference_completion(task) else {
                    continue;
                };
                let mut value = serde_json::to_value(task)?;
                if let (Task::Code(_), Some(obj)) = (task, value.as_object_mut()) {
                    obj.insert(
                        "time_limit_ms".to_owned(),
                        json!((timeout_s * 1000.0).ceil() as u64),
                    );
                }
                let wrong = reference_completion(other)
                    .filter(|w| w != &reference)
                    .unwrap_or_else(|| "no answer".to_owned());
                let hostile = match task {
                    Task::Code(_) => format!("```python\n{hostile}```"),
                    // A parser's worst case: deep nesting and a long tail.
                    _ => format!("\\boxed{{{}}}", "{\\frac{1}{".repeat(2000)),
                };
                for (kind, weight, completion) in [
                    (Kind::Reference, refs, reference),
                    (Kind::Wrong, wrongs, wrong),
                    (Kind::Hostile, hostiles, hostile),
                ] {
                    let body = json!({"task": value, "completions": [completion]});
                    for _ in 0..weight {
                        push(kind, Some(body.clone()), "/v1/score")?;
                    }
                }
            }
        }
    }
    Ok(plan)
}

/// Sends `requests` requests of `plan` (in order, cycling) from `concurrency` threads.
fn run_level(
    agent: &ureq::Agent,
    base: &str,
    auth: Option<&str>,
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
                    let mut request = agent
                        .post(format!("{base}{}", planned.path))
                        .header("Content-Type", "application/json");
                    if let Some(auth) = auth {
                        request = request.header("Authorization", auth);
                    }
                    let answer = request.send(&planned.body[..]).and_then(|mut r| {
                        let status = r.status().as_u16();
                        let body = r
                            .body_mut()
                            .with_config()
                            .limit(64 << 20)
                            .read_to_string()?;
                        Ok((status, body))
                    });
                    let ms = started.elapsed().as_secs_f64() * 1000.0;
                    let mut t = tally
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    t.latencies_ms.push(ms);
                    match answer {
                        Ok((status, body)) => {
                            *t.statuses.entry(status).or_default() += 1;
                            let (outcome, passed) = outcome(planned.path, status, &body);
                            *t.outcomes
                                .entry(format!("{}/{outcome}", planned.kind.name()))
                                .or_default() += 1;
                            if planned.kind == Kind::Reference && !passed {
                                t.references_failed += 1;
                            }
                        }
                        Err(ureq::Error::Timeout(_)) => t.timeouts += 1,
                        Err(_) => t.transport_errors += 1,
                    }
                }
            });
        }
    });
    tally
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The outcome's name and whether it is a pass: SandboxFusion's `status` (and the run's),
/// or the verdict kind of `/v1/score`; `http_<status>` for an error answer.
fn outcome(path: &str, status: u16, body: &str) -> (String, bool) {
    if status != 200 {
        return (format!("http_{status}"), false);
    }
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return ("not_json".to_owned(), false);
    };
    if path == "/run_code" {
        let run = value["run_result"]["status"].as_str().unwrap_or("none");
        let top = value["status"].as_str().unwrap_or("none");
        (format!("{top}:{run}"), top == "Success")
    } else {
        let result = &value["results"][0];
        let kind = result["verdict"]["kind"].as_str().unwrap_or("none");
        (
            kind.to_owned(),
            result["correct"].as_bool().unwrap_or(false),
        )
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn summarise(concurrency: usize, requests: usize, seconds: f64, mut tally: Tally) -> Value {
    tally.latencies_ms.sort_by(f64::total_cmp);
    let l = &tally.latencies_ms;
    let errors: usize = tally
        .statuses
        .iter()
        .filter(|(s, _)| **s != 200)
        .map(|(_, n)| n)
        .sum::<usize>()
        + tally.transport_errors;
    json!({
        "concurrency": concurrency,
        "requests": requests,
        "seconds": seconds,
        "throughput_rps": requests as f64 / seconds.max(1e-9),
        "latency_ms": {
            "p50": percentile(l, 50.0), "p90": percentile(l, 90.0),
            "p99": percentile(l, 99.0), "max": l.last().copied().unwrap_or(0.0),
        },
        "statuses": tally.statuses.iter().map(|(s, n)| (s.to_string(), json!(n))).collect::<serde_json::Map<_, _>>(),
        "errors": errors,
        "transport_errors": tally.transport_errors,
        "timeouts": tally.timeouts,
        "references_failed": tally.references_failed,
        "outcomes": tally.outcomes,
    })
}

/// `bench.png`: throughput (left) and p50/p99 latency (right) against concurrency.
fn draw(path: &Path, report: &Value) -> anyhow::Result<()> {
    use plotters::prelude::*;
    let levels = report["levels"].as_array().cloned().unwrap_or_default();
    let series = |f: &dyn Fn(&Value) -> f64| -> Vec<(f64, f64)> {
        levels
            .iter()
            .map(|l| (l["concurrency"].as_f64().unwrap_or(0.0), f(l)))
            .collect()
    };
    let throughput = series(&|l| l["throughput_rps"].as_f64().unwrap_or(0.0));
    let p50 = series(&|l| l["latency_ms"]["p50"].as_f64().unwrap_or(0.0));
    let p99 = series(&|l| l["latency_ms"]["p99"].as_f64().unwrap_or(0.0));
    let max_x = throughput.iter().map(|p| p.0).fold(1.0, f64::max) * 1.05;
    let labels = grpo_runner::plot::font_available();
    let root = BitMapBackend::new(path, (1000, 450)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))?;
    let (left, right) = root.split_horizontally(500);
    let panels = [
        (
            &left,
            "throughput (requests/s)",
            vec![("req/s", BLUE, &throughput)],
        ),
        (
            &right,
            "latency (ms)",
            vec![("p50", GREEN, &p50), ("p99", RED, &p99)],
        ),
    ];
    for (area, title, lines) in panels {
        let top = lines
            .iter()
            .flat_map(|(_, _, s)| s.iter().map(|p| p.1))
            .fold(1.0, f64::max)
            * 1.1;
        let mut builder = ChartBuilder::on(area);
        builder.margin(15);
        if labels {
            builder
                .caption(title, ("sans-serif", 18))
                .x_label_area_size(35)
                .y_label_area_size(55);
        }
        let mut chart = builder
            .build_cartesian_2d(0.0..max_x, 0.0..top)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let mut mesh = chart.configure_mesh();
        if labels {
            mesh.x_desc("concurrency");
        } else {
            mesh.disable_x_mesh()
                .disable_y_mesh()
                .x_labels(0)
                .y_labels(0);
        }
        mesh.draw().map_err(|e| anyhow::anyhow!("{e}"))?;
        for (_, color, points) in lines {
            chart
                .draw_series(LineSeries::new(
                    points.iter().copied(),
                    color.stroke_width(2),
                ))
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 4, color.filled())))
                .map_err(|e| anyhow::anyhow!("{e}"))?;
        }
    }
    root.present().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_hosts_by_default() {
        for (url, loopback) in [
            ("http://127.0.0.1:8080", true),
            ("http://localhost:8080/", true),
            ("http://[::1]:8080", true),
            ("http://127.3.4.5", true),
            ("https://user@LOCALHOST:1/x", true),
            ("http://10.0.0.2:8080", false),
            ("http://sandbox.internal:8080", false),
            ("http://[2001:db8::1]:80", false),
        ] {
            assert_eq!(is_loopback(&host_of(url).unwrap()), loopback, "{url}");
        }
        assert!(host_of("ftp://x").is_err());
        assert!(host_of("http://").is_err());
    }

    #[test]
    fn mixes_and_percentiles() {
        assert_eq!(parse_mix("2:1:1").unwrap(), (2, 1, 1));
        assert_eq!(parse_mix("1:0:0").unwrap(), (1, 0, 0));
        for bad in ["0:0:0", "1:2", "a:b:c", "1:2:3:4"] {
            assert!(parse_mix(bad).is_err(), "{bad}");
        }
        let sorted: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&sorted, 50.0), 50.0);
        assert_eq!(percentile(&sorted, 99.0), 99.0);
        assert_eq!(percentile(&sorted, 100.0), 100.0);
        assert_eq!(percentile(&[7.0], 99.0), 7.0);
        assert_eq!(percentile(&[], 50.0), 0.0);
    }

    #[test]
    fn plans_cover_every_kind_in_the_mix() {
        let pack = Pack::load("builtin:python").unwrap();
        let tasks: Vec<&Task> = pack.tasks().collect();
        let plan = plan(&tasks, Api::RunCode, (2, 1, 1), 1.0).unwrap();
        let count = |k: Kind| plan.iter().filter(|p| p.kind == k).count();
        assert_eq!(count(Kind::Reference), 2 * count(Kind::Wrong));
        assert_eq!(count(Kind::Wrong), count(Kind::Hostile));
        assert!(count(Kind::Hostile) > 0);
        let math = Pack::load("builtin:arith").unwrap();
        let tasks: Vec<&Task> = math.tasks().collect();
        assert!(plan_is_empty(&tasks, Api::RunCode));
        assert!(!plan_is_empty(&tasks, Api::Score));
    }

    fn plan_is_empty(tasks: &[&Task], api: Api) -> bool {
        plan(tasks, api, (1, 1, 1), 1.0).unwrap().is_empty()
    }
}
