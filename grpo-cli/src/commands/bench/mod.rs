//! `grpo bench`: a bounded load generator for verifier services, one or several side by side.
//!
//! It sends programs (or answers) taken from task packs to SandboxFusion-compatible
//! `/run_code` URLs or to our `/v1/score`, at each concurrency of a sweep, a fixed number of
//! requests per level (a level's length is its requests, not a time). With several `--url`,
//! the targets take turns level by level, the order flipped every level, so neither always
//! runs on a machine the other just warmed or loaded. Each target is asked which languages it
//! runs (`/v1/languages`, SandboxFusion's list where it has none, or `--languages`) and every
//! target gets the same programs: those in languages all of them run.
//!
//! The mix is references (which must pass), wrong programs (another task's reference) and
//! hostile programs ([`hostile`]): besides the sweep, each hostile program is sent once to
//! each target and the report says which were contained and how. Compiled programs get a
//! source of their own per request unless `--repeat-sources` measures the compile cache
//! ([`sources`]). Per target and level the report holds throughput, p50/p90/p99/max latency,
//! errors by kind, references failed and, given `--pid` or `--cgroup`, the target's CPU time
//! per request ([`cpu`]); and the first target's ratios to each other one. It prints the
//! tables, writes `bench.json` and `bench.png` into `--out`, and targets loopback unless told
//! otherwise.

mod cpu;
mod hostile;
mod load;
mod plot;
mod report;
mod sources;
mod target;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use anyhow::Context;
use grpo_tasks::{Language, Pack, Task};
use serde_json::json;

use cpu::CpuSource;
pub use sources::Api;
use sources::Mix;
use target::Target;

/// Load-test verifier services, one or several side by side: a concurrency sweep of
/// programs from task packs against SandboxFusion-compatible `/run_code` or our `/v1/score`,
/// and a check of which hostile programs each one contains.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A service's base URL (SandboxFusion's or `grpo serve`'s); repeat for targets side by
    /// side (the first is the one the ratios are of).
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub url: Vec<String>,
    /// A target's name in the report (once per --url; default its host and port).
    #[arg(long)]
    pub name: Vec<String>,
    /// Which endpoint to load: `run-code` (SandboxFusion's `/run_code`) or `score`
    /// (`/v1/score`, one completion per request).
    #[arg(long, value_enum, default_value_t = Api::RunCode)]
    pub api: Api,
    /// The task packs the programs come from, comma-separated (`/run_code` takes their
    /// Python, C, C++, JavaScript and TypeScript tasks with stdio or assert tests).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "builtin:python,builtin:polyglot"
    )]
    pub pack: Vec<String>,
    /// Concurrencies of the sweep, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16")]
    pub concurrency: Vec<usize>,
    /// Requests per concurrency level and target.
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
    /// The memory limit programs ask each target for, in MiB, or `none` (the target's own
    /// default; SandboxFusion's is no limit). Once for all targets or once per --url.
    #[arg(long)]
    pub memory_mb: Vec<String>,
    /// The languages a target runs: `auto` (ask it: `/v1/languages`, or SandboxFusion's list
    /// where that route is missing) or names joined by `+` (`python+cpp+nodejs`). Once for
    /// all targets or once per --url.
    #[arg(long)]
    pub languages: Vec<String>,
    /// The process id of a target running on this machine, or `none`: its process tree's CPU
    /// time is read before and after each level. Once per --url.
    #[arg(long)]
    pub pid: Vec<String>,
    /// A target's cgroup directory (under /sys/fs/cgroup), or `none`: its CPU time is read
    /// before and after each level. Once per --url.
    #[arg(long)]
    pub cgroup: Vec<String>,
    /// Send compiled programs with the same source each time they come round, which measures
    /// a target's compile cache (by default each request's source is its own).
    #[arg(long)]
    pub repeat_sources: bool,
    /// How far the memory hogs grow, in MiB (must be above every --memory-mb).
    #[arg(long, default_value_t = 512)]
    pub hog_mb: u64,
    /// How much the output flood writes, in MiB.
    #[arg(long, default_value_t = 16)]
    pub flood_mb: u64,
    /// The run timeout of the containment check, in seconds: long enough that the other
    /// limits, not time, stop the hostile programs on a loaded machine.
    #[arg(long, default_value_t = 5.0)]
    pub containment_timeout_s: f64,
    /// Skip sending each hostile program once to each target before the sweep.
    #[arg(long)]
    pub no_containment: bool,
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

impl Args {
    fn check(&self) -> anyhow::Result<()> {
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
        anyhow::ensure!(
            self.containment_timeout_s.is_finite() && self.containment_timeout_s > 0.0,
            "--containment-timeout-s must be a positive number"
        );
        anyhow::ensure!(self.hog_mb > 0, "--hog-mb must be at least 1");
        anyhow::ensure!(self.flood_mb > 0, "--flood-mb must be at least 1");
        anyhow::ensure!(!self.url.is_empty(), "--url: at least one");
        Ok(())
    }

    /// The targets, with everything configured for them (languages still to be asked for
    /// where `auto`).
    fn targets(&self) -> anyhow::Result<Vec<(Target, Option<BTreeSet<Language>>)>> {
        let n = self.url.len();
        let names = target::per_target("--name", &self.name, n, String::new, |s| Ok(s.to_owned()))?;
        let memory = target::per_target(
            "--memory-mb",
            &self.memory_mb,
            n,
            || None,
            target::parse_memory,
        )?;
        let languages = target::per_target(
            "--languages",
            &self.languages,
            n,
            || None,
            target::parse_languages,
        )?;
        let pids = target::per_target(
            "--pid",
            &self.pid,
            n,
            || None,
            |s| CpuSource::parse("--pid", s),
        )?;
        let cgroups = target::per_target(
            "--cgroup",
            &self.cgroup,
            n,
            || None,
            |s| CpuSource::parse("--cgroup", s),
        )?;
        let mut out = Vec::new();
        for (i, raw) in self.url.iter().enumerate() {
            let url = raw.trim_end_matches('/').to_owned();
            let host = target::host_of(&url).with_context(|| format!("--url {url}"))?;
            anyhow::ensure!(
                self.allow_remote || target::is_loopback(&host),
                "--url {url} is not on this machine; pass --allow-remote to load it anyway"
            );
            if let Some(mb) = memory[i] {
                anyhow::ensure!(
                    self.hog_mb > mb,
                    "--hog-mb {} must be above --memory-mb {mb}, or the memory hog never reaches the cap",
                    self.hog_mb
                );
            }
            let cpu = match (&pids[i], &cgroups[i]) {
                (Some(_), Some(_)) => {
                    anyhow::bail!("--url {url}: give --pid or --cgroup for it, not both")
                }
                (Some(p), None) => Some(p.clone()),
                (None, c) => c.clone(),
            };
            if let Some(cpu) = &cpu {
                cpu.seconds()
                    .with_context(|| format!("reading the CPU time of --url {url}"))?;
            }
            let name = if names[i].is_empty() {
                target::default_name(&url)
            } else {
                names[i].clone()
            };
            let t = Target {
                name,
                url,
                memory_mb: memory[i],
                cpu,
                languages: BTreeSet::new(),
                languages_from: String::new(),
            };
            out.push((t, languages[i].clone()));
        }
        let mut seen = BTreeSet::new();
        for (t, _) in &out {
            anyhow::ensure!(
                seen.insert(t.name.clone()),
                "two targets are named {}: give each a --name",
                t.name
            );
        }
        Ok(out)
    }

    /// Runs the command.
    pub fn execute(self) -> anyhow::Result<std::process::ExitCode> {
        self.check()?;
        let mix = Mix::parse(&self.mix)?;
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs_f64(self.timeout_s)))
            .http_status_as_error(false)
            .max_idle_connections(1024)
            .max_idle_connections_per_host(1024)
            .build()
            .into();
        let auth = self.token.as_ref().map(|t| format!("Bearer {t}"));
        let mut targets = Vec::new();
        for (mut t, configured) in self.targets()? {
            (t.languages, t.languages_from) = match configured {
                Some(set) => (set, "--languages".to_owned()),
                None => target::discover_languages(&agent, &t.url, auth.as_deref())?,
            };
            targets.push(t);
        }
        let common: BTreeSet<Language> = targets
            .iter()
            .map(|t| t.languages.clone())
            .reduce(|a, b| a.intersection(&b).copied().collect())
            .unwrap_or_default();
        let hostiles = hostile::programs(&hostile::Sizes {
            hog_mb: self.hog_mb,
            flood_mb: self.flood_mb,
            ports: targets
                .iter()
                .filter_map(|t| target::port_of(&t.url))
                .collect(),
        });
        let mut packs = Vec::new();
        for name in &self.pack {
            packs.push(Pack::load(name).with_context(|| format!("loading pack {name}"))?);
        }
        let tasks: Vec<&Task> = packs.iter().flat_map(|p| p.tasks()).collect();
        let tasks = sources::interleave(&tasks);
        let plan = sources::plan(
            &tasks,
            self.api,
            mix,
            self.run_timeout_s,
            &common,
            &hostiles,
        )
        .with_context(|| format!("planning requests from {}", self.pack.join(",")))?;
        anyhow::ensure!(
            !plan.requests.is_empty(),
            "{} has no task {} can send to every target (`/run_code` takes code tasks with stdio or assert tests in {})",
            self.pack.join(","),
            match self.api {
                Api::RunCode => "`/run_code`",
                Api::Score => "`/v1/score`",
            },
            common
                .iter()
                .map(|l| l.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        for (language, n) in &plan.skipped {
            eprintln!("left out {n} {language} tasks: not every target runs {language}");
        }
        let run = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let sent = AtomicU64::new(0);
        let sender = load::Sender {
            agent: &agent,
            auth: auth.as_deref(),
            unique: !self.repeat_sources,
            run,
            sent: &sent,
        };
        let containment: Vec<Vec<load::Checked>> = targets
            .iter()
            .map(|t| {
                if self.no_containment || self.api != Api::RunCode {
                    return Vec::new();
                }
                eprintln!("{}: sending each hostile program once", t.name);
                load::check_containment(&sender, t, &hostiles, self.containment_timeout_s)
            })
            .collect();
        let mut levels: Vec<Vec<serde_json::Value>> = vec![Vec::new(); targets.len()];
        for (round, &concurrency) in self.concurrency.iter().enumerate() {
            let mut order: Vec<usize> = (0..targets.len()).collect();
            if round % 2 == 1 {
                order.reverse();
            }
            for i in order {
                let t = &targets[i];
                let cpu_before = t.cpu.as_ref().map(CpuSource::seconds).transpose()?;
                let started = Instant::now();
                let tally = load::run_level(&sender, t, &plan.requests, concurrency, self.requests);
                let seconds = started.elapsed().as_secs_f64();
                let cpu_after = t.cpu.as_ref().map(CpuSource::seconds).transpose()?;
                let cpu_s = cpu_before.zip(cpu_after).map(|(a, b)| (b - a).max(0.0));
                let level = report::summarise(concurrency, self.requests, seconds, cpu_s, tally);
                eprintln!(
                    "{:<16} concurrency {concurrency:>4}: {:>8.1} req/s  p50 {:>8.1} ms  p99 {:>8.1} ms  CPU/req {}  errors {}  references failed {}",
                    t.name,
                    level["throughput_rps"].as_f64().unwrap_or(0.0),
                    level["latency_ms"]["p50"].as_f64().unwrap_or(0.0),
                    level["latency_ms"]["p99"].as_f64().unwrap_or(0.0),
                    level["cpu_ms_per_request"]
                        .as_f64()
                        .map_or("-".to_owned(), |c| format!("{c:.2} ms")),
                    level["errors"],
                    level["references_failed"],
                );
                levels[i].push(level);
            }
        }
        let targets_json: Vec<serde_json::Value> = targets
            .iter()
            .zip(levels)
            .zip(&containment)
            .map(|((t, levels), checked)| {
                json!({
                    "name": t.name, "url": t.url, "memory_mb": t.memory_mb,
                    "cpu_from": t.cpu.as_ref().map(CpuSource::describe),
                    "languages": t.languages.iter().map(|l| l.sandbox_fusion_name()).collect::<Vec<_>>(),
                    "languages_from": t.languages_from,
                    "levels": levels,
                    "containment": report::containment_json(checked),
                })
            })
            .collect();
        let report = json!({
            "api": self.api.name(),
            "packs": self.pack,
            "languages": common.iter().map(|l| l.sandbox_fusion_name()).collect::<Vec<_>>(),
            "left_out": plan.skipped.iter().map(|(l, n)| (l.as_str().to_owned(), json!(n))).collect::<serde_json::Map<_, _>>(),
            "sources": if self.repeat_sources {
                "repeated: a compiled program's source is the same each time it comes round (the compile cache is measured)"
            } else {
                "unique: each request's compiled program has a source of its own (the compiler is measured, not a cache)"
            },
            "requests_per_level": self.requests,
            "mix": {"reference": mix.references, "wrong": mix.wrong, "hostile": mix.hostile},
            "run_timeout_s": self.run_timeout_s,
            "containment_timeout_s": self.containment_timeout_s,
            "hog_mb": self.hog_mb,
            "flood_mb": self.flood_mb,
            "order": "targets take turns at each level; the order is flipped every level",
            "targets": targets_json,
            "ratios": report::ratios(&targets_json),
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
        grpo_runner::run::dir::write_atomic(&json_path, format!("{text}\n").as_bytes())
            .with_context(|| format!("writing {}", json_path.display()))?;
        let plot_path = out.join("bench.png");
        plot::draw(&plot_path, &report)
            .with_context(|| format!("drawing {}", plot_path.display()))?;
        print!("{}", report::text(&report));
        eprintln!("wrote {} and {}", json_path.display(), plot_path.display());
        Ok(std::process::ExitCode::SUCCESS)
    }
}
