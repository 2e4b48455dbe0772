//! Running WASIp1 core modules: QuickJS-NG (JavaScript, and TypeScript once its types are
//! stripped) and C and C++ programs compiled to `wasm32-wasi`.
//!
//! A run gets what a Python run gets: a fresh instance (the pooling allocator maps the module's
//! memory image copy-on-write), its own empty directory as the only file system (preopened as
//! `/` and as `/tmp`, and the current directory), an empty environment, no sockets, stdin from
//! memory, capped stdout and stderr, and the same [`Budget`] of CPU ticks, memory and files.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use wasmtime::{Instance, InstancePre, Linker, Module, Store};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::p2::pipe::MemoryInputPipe;
use wasmtime_wasi::{FsPerms, I32Exit, WasiCtxBuilder};

use super::budget::{self, Budget, HasBudget, Traps};
use super::error::{Result, SandboxError};
use super::files::{self, JobFiles};
use super::js;
use super::limits::Limits;
use super::pipe::CappedPipe;
use super::sandbox::{RawRun, conclude};
use crate::result::RunStatus;

/// A store's state for a core module.
pub(crate) struct P1State {
    pub wasi: WasiP1Ctx,
    pub budget: Budget,
}

impl HasBudget for P1State {
    fn budget(&mut self) -> &mut Budget {
        &mut self.budget
    }
}

/// The linker every core module is instantiated with: WASIp1 and nothing else.
pub(crate) fn linker(engine: &wasmtime::Engine) -> Result<Linker<P1State>> {
    let mut linker = Linker::<P1State>::new(engine);
    wasmtime_wasi::p1::add_to_linker_async(&mut linker, |s: &mut P1State| &mut s.wasi).map_err(
        |e| SandboxError::Engine {
            reason: format!("{e:#}"),
        },
    )?;
    Ok(linker)
}

/// Compiles a module and resolves its imports.
pub(crate) fn prepare(linker: &Linker<P1State>, module: &Module) -> Result<InstancePre<P1State>> {
    linker
        .instantiate_pre(module)
        .map_err(|e| SandboxError::Engine {
            reason: format!("linking the module: {e:#}"),
        })
}

/// What to do with a fresh instance.
pub(crate) enum Entry<'a> {
    /// A command module: call `_start` (C, C++).
    Command,
    /// The QuickJS reactor: evaluate the Node.js prelude, then `program` as `filename`.
    QuickJs { program: &'a str, filename: &'a str },
}

/// Runs one instance of `pre` to the end under `limits`.
pub(crate) async fn execute(
    engine: &wasmtime::Engine,
    pre: &InstancePre<P1State>,
    entry: Entry<'_>,
    stdin: &[u8],
    limits: &Limits,
    files: &JobFiles,
    temp_root: &std::path::Path,
) -> Result<(RawRun, BTreeMap<String, Vec<u8>>)> {
    let started = Instant::now();
    let workdir = tempfile::Builder::new()
        .prefix("grpo-sandbox-")
        .tempdir_in(temp_root)
        .map_err(|source| SandboxError::Io {
            path: temp_root.to_path_buf(),
            source,
        })?;
    files::place(workdir.path(), files).map_err(|source| SandboxError::Io {
        path: workdir.path().to_path_buf(),
        source,
    })?;
    let stdout = CappedPipe::new(limits.output_bytes);
    let stderr = CappedPipe::new(limits.output_bytes);
    let program_name = match entry {
        Entry::Command => "main",
        Entry::QuickJs { .. } => "qjs",
    };
    let mut builder = WasiCtxBuilder::new();
    builder
        .stdin(MemoryInputPipe::new(stdin.to_vec()))
        .stdout(stdout.clone())
        .stderr(stderr.clone())
        .args(&[program_name])
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
        .insecure_random_seed(rand::random::<u128>());
    // The run's directory is the whole file system: `/`, `/tmp` and the current directory all
    // name it (wasi-libc resolves a path against the longest matching preopen).
    for guest in ["/", "/tmp", "."] {
        builder
            .preopened_dir(workdir.path(), guest, FsPerms::ReadWrite)
            .map_err(|e| SandboxError::Io {
                path: workdir.path().to_path_buf(),
                source: std::io::Error::other(e),
            })?;
    }
    let state = P1State {
        wasi: builder.build_p1(),
        budget: Budget::new(limits, workdir.path()),
    };
    let mut store = Store::new(engine, state);
    budget::arm(&mut store);

    let wall = Duration::from_millis(limits.wall_limit_ms());
    let traps = match entry {
        Entry::Command => Traps::Native,
        Entry::QuickJs { .. } => Traps::Interpreter,
    };
    let outcome = tokio::time::timeout(wall, async {
        let instance = pre.instantiate_async(&mut store).await?;
        let result = run_entry(&mut store, &instance, &entry).await;
        Ok::<_, wasmtime::Error>((result, store))
    })
    .await;

    let (status, exit_code, detail) = match outcome {
        Err(_elapsed) => (
            RunStatus::Timeout,
            None,
            format!("wall-clock limit of {} ms", wall.as_millis()),
        ),
        Ok(Err(e)) => budget::classify_error(&e, None, traps),
        Ok(Ok((result, store))) => {
            let state = &store.data().budget;
            let over_quota = state.over_quota();
            match result {
                Ok(()) if over_quota => budget::quota_outcome(state.file_quota, Some(0)),
                Ok(()) => (RunStatus::Ok, Some(0), String::new()),
                Err(e) if over_quota && e.downcast_ref::<I32Exit>().is_none() => {
                    budget::quota_outcome(state.file_quota, None)
                }
                Err(e) => budget::classify_error(&e, Some(state), traps),
            }
        }
    };
    Ok(conclude(
        (status, exit_code, detail),
        &stdout,
        &stderr,
        started,
        workdir.path(),
        files,
        limits,
    ))
}

async fn run_entry(
    store: &mut Store<P1State>,
    instance: &Instance,
    entry: &Entry<'_>,
) -> wasmtime::Result<()> {
    match entry {
        Entry::Command => {
            let start = instance.get_typed_func::<(), ()>(&mut *store, "_start")?;
            start.call_async(&mut *store, ()).await
        }
        Entry::QuickJs { program, filename } => js::drive(store, instance, program, filename).await,
    }
}
