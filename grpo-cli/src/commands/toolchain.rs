//! `grpo toolchain install|status`: the pinned C/C++ toolchain (zig 0.17.0 from PyPI
//! `ziglang`) that compiles C and C++ code tasks to wasm.
//!
//! `install` downloads the wheel pinned for this host (or takes a local copy with
//! `--from-file`, for hosts without network), checks its SHA-256, unpacks it under the grpo
//! cache directory and warms it (builds wasi-libc and libc++, precompiles `<bits/stdc++.h>`).
//! Both print one JSON object on stdout; progress goes to stderr. `status` exits 1 when the
//! toolchain is not installed.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use grpo_sandbox::guest::cc::{Compiler, Progress, Toolchain, pinned_wheel};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Install or inspect the C/C++ toolchain.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Download (or take from a file), check, unpack and warm the pinned zig toolchain.
    Install {
        /// A local copy of the pinned wheel (its SHA-256 is still checked).
        #[arg(long, value_name = "WHEEL")]
        from_file: Option<PathBuf>,
        /// Skip building zig's libraries and the precompiled header now (the first compile
        /// then takes a minute or more).
        #[arg(long)]
        no_warm_up: bool,
    },
    /// Whether the toolchain is installed, where, and how compiles are confined.
    Status,
}

impl Args {
    /// Runs the command.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        let cache_root = Toolchain::default_cache_root().context("finding the cache directory")?;
        match self.action {
            Action::Install {
                from_file,
                no_warm_up,
            } => install(&cache_root, from_file, no_warm_up),
            Action::Status => status(&cache_root),
        }
    }
}

fn install(
    cache_root: &std::path::Path,
    from_file: Option<PathBuf>,
    no_warm_up: bool,
) -> anyhow::Result<ExitCode> {
    let wheel = pinned_wheel().context("choosing the wheel for this host")?;
    let bar = ProgressBar::with_draw_target(Some(wheel.size), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix:>8} [{bar:30}] {bytes}/{total_bytes} {elapsed_precise} {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    let mut on_progress = |progress: Progress| match progress {
        Progress::Fetch { done, total } => {
            bar.set_prefix(if from_file.is_some() {
                "check"
            } else {
                "download"
            });
            if let Some(total) = total {
                bar.set_length(total);
            }
            bar.set_position(done);
        }
        Progress::Unpack { done, total } => {
            bar.set_prefix("unpack");
            bar.set_length(total);
            bar.set_position(done);
            bar.set_message("files");
        }
    };
    let report = match &from_file {
        Some(path) => Toolchain::install_from_file(cache_root, path, &mut on_progress)
            .with_context(|| format!("installing the toolchain from {}", path.display()))?,
        None => Toolchain::install(cache_root, &mut on_progress)
            .with_context(|| format!("installing the toolchain from {}", wheel.url))?,
    };
    bar.finish_and_clear();
    let compiler = Compiler::new(report.toolchain.clone());
    let warm_up = if no_warm_up {
        None
    } else {
        let spinner = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        spinner.set_message("warming up: building wasi-libc and libc++ for wasm32-wasi");
        spinner.enable_steady_tick(std::time::Duration::from_millis(200));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the async runtime")?;
        let warm = runtime
            .block_on(compiler.warm_up())
            .context("warming up the toolchain")?;
        spinner.finish_and_clear();
        Some(warm)
    };
    let summary = serde_json::json!({
        "dir": report.toolchain.root(),
        "already_installed": report.already_installed,
        "downloaded_bytes": report.downloaded_bytes,
        "install_ms": report.elapsed_ms,
        "warm_up": warm_up,
        "version": compiler.version(),
        "confinement": compiler.confinement(),
    });
    eprintln!(
        "zig {} installed in {}",
        grpo_sandbox::guest::cc::ZIG_VERSION,
        report.toolchain.root().display()
    );
    println!("{summary}");
    Ok(ExitCode::SUCCESS)
}

fn status(cache_root: &std::path::Path) -> anyhow::Result<ExitCode> {
    let wheel = pinned_wheel().ok();
    match Toolchain::locate(cache_root) {
        Ok(toolchain) => {
            let compiler = Compiler::new(toolchain.clone());
            let confinement = compiler.confinement();
            println!(
                "{}",
                serde_json::json!({
                    "installed": true,
                    "dir": toolchain.root(),
                    "version": compiler.version(),
                    "confinement": confinement,
                    "compiles": confinement.filesystem(),
                })
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("{e}");
            println!(
                "{}",
                serde_json::json!({
                    "installed": false,
                    "dir": Toolchain::dir_in(cache_root),
                    "url": wheel.map(|w| w.url),
                    "sha256": wheel.map(|w| w.sha256),
                })
            );
            Ok(ExitCode::from(1))
        }
    }
}
