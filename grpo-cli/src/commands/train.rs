//! `grpo train`: Train a policy with GRPO (the built-in tiny CPU preset when given no arguments).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use grpo_runner::config::{Preset, TrainConfig};
use grpo_runner::run::dir::{RunDir, summary_text};
use grpo_runner::run::records::Event;
use grpo_runner::train::Trainer;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Train a policy with GRPO (the built-in tiny CPU preset when given no arguments).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A TOML run config, merged over the preset.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// A named run preset (default `tiny`).
    #[arg(long, value_enum)]
    pub preset: Option<Preset>,
    /// The run directory (default `runs/grpo-<unix time>`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Config overrides, `key=value` (repeatable), applied after the file.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
    /// Also write the metrics for TensorBoard: event files in the run directory, every
    /// scalar of each step and evaluation (`metrics.jsonl` stays the record). The same as
    /// `--set report.to=tensorboard`.
    #[arg(long = "report-to", value_name = "WRITER", value_parser = ["tensorboard"])]
    pub report_to: Vec<String>,
    /// Continue the run in `--out` from its latest checkpoint.
    #[arg(long)]
    pub resume: bool,
    /// Print the resolved config and exit without training.
    #[arg(long)]
    pub dry_run: bool,
    /// No progress bar and no summary on stderr.
    #[arg(long)]
    pub quiet: bool,
}

impl Args {
    /// Runs the command.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        // Keep freed activation buffers in the heap: every update allocates and frees the
        // same large tensors, and returning them to the kernel each time costs page faults
        // and, with several threads, TLB shootdowns.
        grpo_runner::cpu::configure();
        let out = self.out.clone().unwrap_or_else(|| {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            PathBuf::from(format!("runs/grpo-{now}"))
        });
        let (mut trainer, mut dir) = if self.resume {
            anyhow::ensure!(
                self.config.is_none()
                    && self.preset.is_none()
                    && self.overrides.is_empty()
                    && self.report_to.is_empty(),
                "--resume continues with the run's saved config.toml; drop --config, --preset, --set and --report-to"
            );
            let saved = out.join("config.toml");
            let text = std::fs::read_to_string(&saved)
                .with_context(|| format!("reading {}", saved.display()))?;
            let config = TrainConfig::from_toml(&text)
                .with_context(|| format!("parsing {}", saved.display()))?;
            apply_threads(config.threads);
            let checkpoints = out.join("checkpoints");
            let latest = grpo_runner::run::checkpoint::latest(&checkpoints)
                .with_context(|| format!("reading {}", checkpoints.display()))?;
            if latest.is_none() {
                // Killed before its first checkpoint (during the warm-up): nothing to resume,
                // so the run starts over from its saved config, as the same seed would.
                tracing::warn!(
                    dir = %out.display(),
                    "no checkpoint yet (the run stopped before its first one): starting it over"
                );
                let trainer = Trainer::new(config).context("setting up the run")?;
                let dir = RunDir::create(&out, trainer.config())
                    .with_context(|| format!("recreating {}", out.display()))?;
                (trainer, dir)
            } else {
                let trainer = Trainer::resume_with(&out, config)
                    .with_context(|| format!("resuming {}", out.display()))?;
                let dir = RunDir::reopen(&out, trainer.steps_taken(), trainer.config())
                    .with_context(|| format!("reopening {}", out.display()))?;
                (trainer, dir)
            }
        } else {
            let preset = self.preset.unwrap_or(Preset::Tiny);
            let mut overrides = self.overrides.clone();
            if !self.report_to.is_empty() {
                overrides.push(format!("report.to={:?}", self.report_to));
            }
            let config = TrainConfig::resolve(preset, self.config.as_deref(), &overrides)
                .context("resolving the run config")?;
            if self.dry_run {
                print!("{}", config.to_toml()?);
                return Ok(ExitCode::SUCCESS);
            }
            apply_threads(config.threads);
            let trainer = Trainer::new(config).context("setting up the run")?;
            let dir = RunDir::create(&out, trainer.config())
                .with_context(|| format!("creating {}", out.display()))?;
            (trainer, dir)
        };
        let mut progress = Progress::new(self.quiet);
        let summary = trainer
            .run(&mut dir, None, &mut |event| progress.on(event))
            .with_context(|| format!("training into {}", out.display()))?;
        progress.finish();
        if !self.quiet {
            eprint!(
                "{}",
                summary_text(
                    summary.before.as_ref(),
                    summary.after.as_ref(),
                    summary.steps,
                    summary.seconds
                )
            );
            if summary.cut_by_time_limit {
                eprintln!(
                    "the wall-clock limit (budget.max_minutes = {}) cut the run at step {} of {}",
                    trainer.config().budget.max_minutes,
                    summary.steps,
                    trainer.config().budget.steps
                );
            }
            eprintln!("run directory: {}", out.display());
        }
        Ok(ExitCode::SUCCESS)
    }
}

/// Sets the thread count of candle's CPU kernels (`threads = 0` keeps candle's default).
///
/// The count is always pinned in `RAYON_NUM_THREADS`: without it candle works its default
/// out again on every parallel kernel, and on Linux that reads `/proc/cpuinfo` (about 950
/// times per tiny-model GRPO step, a few percent of the step).
pub(crate) fn apply_threads(threads: usize) {
    let threads = if threads > 0 {
        threads
    } else if std::env::var_os("RAYON_NUM_THREADS").is_some_and(|v| !v.is_empty()) {
        return;
    } else {
        candle_core::utils::get_num_threads()
    };
    // SAFETY: called before any tensor work or thread pool exists; no other thread of
    // this process reads or writes the environment at this point.
    unsafe { std::env::set_var("RAYON_NUM_THREADS", threads.to_string()) };
}

/// The terminal display: a bar for the warm-up, then one for the GRPO steps; evaluations
/// are printed above the bar. Silent with `--quiet` (logs still go to stderr).
struct Progress {
    quiet: bool,
    bar: Option<ProgressBar>,
    last_accuracy: Option<f64>,
}

impl Progress {
    fn new(quiet: bool) -> Self {
        Progress {
            quiet,
            bar: None,
            last_accuracy: None,
        }
    }

    fn bar(&mut self, len: u64, position: u64, prefix: &'static str) {
        if let Some(old) = self.bar.take() {
            old.finish_and_clear();
        }
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix:>8} [{bar:30}] {pos}/{len} {elapsed_precise} eta {eta} {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.set_prefix(prefix);
        bar.set_position(position);
        self.bar = Some(bar);
    }

    fn on(&mut self, event: &Event) {
        if self.quiet {
            return;
        }
        match event {
            Event::WarmupStarted { steps } => self.bar(*steps, 0, "warm-up"),
            Event::WarmupStep { step, loss } => {
                if let Some(bar) = &self.bar {
                    bar.set_position(step + 1);
                    bar.set_message(format!("loss {loss:.3}"));
                }
            }
            Event::GrpoStarted { from, steps } => self.bar(*steps, *from, "grpo"),
            Event::Step(record) => {
                if let Some(bar) = &self.bar {
                    bar.set_position(record.step);
                    let acc = self
                        .last_accuracy
                        .map(|a| format!(" eval {:.1}%", 100.0 * a))
                        .unwrap_or_default();
                    bar.set_message(format!(
                        "reward {:.3} acc {:.2} {:.1}s/step{acc}",
                        record.reward_mean, record.accuracy, record.step_seconds
                    ));
                }
            }
            Event::Eval(record) => {
                self.last_accuracy = Some(record.accuracy);
                let line = format!(
                    "eval at step {}: accuracy {:.1}% ({}/{}), format {:.1}%",
                    record.step,
                    100.0 * record.accuracy,
                    record.correct,
                    record.problems,
                    100.0 * record.format_rate
                );
                match &self.bar {
                    Some(bar) => bar.println(line),
                    None => eprintln!("{line}"),
                }
            }
            Event::Checkpoint { .. } => {}
        }
    }

    fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
