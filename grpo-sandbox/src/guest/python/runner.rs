//! The Python guest as a sandbox holds it: the snapshotted component, linked once; the harness
//! as jobs get it (the snapshot's own, else compiled once by the guest); the interpreter's
//! version; and [`Python::execute`], one harness job on the host's one run path.

use std::collections::BTreeMap;
use std::path::Path;

use grpo_rewards::code::limits::Limits;
use grpo_rewards::result::{RunResult, RunStatus};
use tokio::sync::OnceCell;
use wasmtime::component::Linker;
use wasmtime_wasi::p2::bindings::CommandPre;

use crate::engine::files::JobFiles;
use crate::engine::host::Host;
use crate::engine::runtime;
use crate::error::{Result, SandboxError};
use crate::guest::python::harness::{self, HarnessFrom, Job, Report};
use crate::guest::python::{HostState, PythonGuest};

/// The linked Python runtime of one sandbox.
pub(crate) struct Python {
    pre: CommandPre<HostState>,
    /// The harness, compiled by the guest on first use (its `marshal` bytes); `None` when
    /// that failed and jobs carry the source.
    compiled_harness: OnceCell<Option<Vec<u8>>>,
    /// The interpreter's version, asked of the guest on first use.
    version: OnceCell<String>,
}

impl Python {
    /// Loads the embedded component (through the disk cache in `cache_dir`) and links it
    /// with WASI.
    pub(crate) fn load(engine: &wasmtime::Engine, cache_dir: Option<&Path>) -> Result<Python> {
        let component = runtime::load_component(engine, cache_dir)?;
        let mut linker = Linker::<HostState>::new(engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
            .map_err(SandboxError::wasm("linking WASI for the Python runtime"))?;
        let pre = CommandPre::new(
            linker
                .instantiate_pre(&component)
                .map_err(SandboxError::wasm("linking the Python runtime"))?,
        )
        .map_err(SandboxError::wasm("typing the Python runtime as a command"))?;
        Ok(Python {
            pre,
            compiled_harness: OnceCell::new(),
            version: OnceCell::new(),
        })
    }

    /// The linked component (a session instantiates it itself).
    pub(crate) fn pre(&self) -> &CommandPre<HostState> {
        &self.pre
    }

    /// Runs one harness job on `host`, with `files` placed first and `files.fetch` read back
    /// after; returns the run (the report line taken out of stderr), the harness's report when
    /// the harness finished, and the fetched files.
    pub(crate) async fn execute(
        &self,
        host: &Host,
        job: &Job,
        stdin: &[u8],
        limits: &Limits,
        files: &JobFiles,
    ) -> Result<(RunResult, Option<Report>, BTreeMap<String, Vec<u8>>)> {
        let from = self.harness(host).await?;
        let nonce = harness::nonce();
        let input = job.encode(&nonce, stdin, from);
        let guest = PythonGuest { pre: &self.pre };
        let (raw, fetched) = host.run(&guest, input, limits, files).await?;
        let (run, report) = harness::finish(raw, &nonce);
        Ok((run, report, fetched))
    }

    /// How jobs get the harness: the snapshot's own when it is `harness.py`, else compiled
    /// once by the guest and sent with every run, else (that failing) as source.
    pub(crate) async fn harness(&self, host: &Host) -> Result<HarnessFrom<'_>> {
        if harness::snapshot_has_harness() {
            return Ok(HarnessFrom::Snapshot);
        }
        let compiled = self
            .compiled_harness
            .get_or_try_init(|| self.compile_harness(host))
            .await?;
        Ok(match compiled {
            Some(bytes) => HarnessFrom::Compiled(bytes),
            None => HarnessFrom::Source,
        })
    }

    /// Has the guest compile the harness; `None` (send the source each time) if that fails.
    async fn compile_harness(&self, host: &Host) -> Result<Option<Vec<u8>>> {
        let nonce = harness::nonce();
        let input = Job::script(harness::COMPILE_HARNESS).encode(
            &nonce,
            harness::HARNESS_PY.as_bytes(),
            HarnessFrom::Source,
        );
        let limits = Limits {
            output_bytes: 16 << 20,
            ..Limits::default()
        };
        let guest = PythonGuest { pre: &self.pre };
        let (raw, _) = host
            .run(&guest, input, &limits, &JobFiles::default())
            .await?;
        let (run, _) = harness::finish(raw, &nonce);
        let hex = run.stdout.trim();
        let compiled = (run.status == RunStatus::Ok && !hex.is_empty())
            .then(|| harness::from_hex(hex))
            .flatten();
        if let Some(compiled) = compiled {
            tracing::debug!(bytes = compiled.len(), "compiled the harness");
            Ok(Some(compiled))
        } else {
            tracing::warn!(status = ?run.status, stderr = %run.stderr, "could not compile the harness; sending source");
            Ok(None)
        }
    }

    /// The interpreter's version (`3.14.0`), asked of the guest once.
    pub(crate) async fn version(&self, host: &Host) -> Result<String> {
        self.version
            .get_or_try_init(|| async {
                let program = "import sys\nprint('%d.%d.%d' % sys.version_info[:3])";
                let (run, _, _) = self
                    .execute(
                        host,
                        &Job::script(program),
                        b"",
                        &Limits::default(),
                        &JobFiles::default(),
                    )
                    .await?;
                let version = run.stdout.trim().to_owned();
                if run.status != RunStatus::Ok || version.is_empty() {
                    return Err(SandboxError::Engine {
                        reason: format!(
                            "could not ask the interpreter its version: {}",
                            run.stderr
                        ),
                    });
                }
                Ok(version)
            })
            .await
            .cloned()
    }
}
