//! CPython, the Python guest: a WASIp2 command component snapshotted with the test harness
//! ([`harness`]), run on the engine's one run path with its run directory as `/tmp`; `runner`
//! holds it for a sandbox (linked once, the harness as jobs get it, the version) and runs jobs.

pub mod harness;
pub(crate) mod runner;

use std::future::Future;

use wasmtime::Store;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::p2::bindings::Command;
use wasmtime_wasi::p2::bindings::CommandPre;
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::engine::budget::{Budget, HasBudget, Traps};
use crate::engine::run::{Exit, Guest};

/// How much of the snapshot's memory a run's `memory_mb` charges: what CPython with the
/// standard library held at start before the snapshot preloaded packages (17.4 MiB measured
/// on that snapshot; see `runtime/README.md`). The pages sympy, mpmath and sortedcontainers
/// hold (about 40 MiB) are not charged, so a program's memory verdict does not depend on
/// packages it may never import, and a cap means what it meant before they were added.
pub(crate) const START_CHARGE_BYTES: usize = 17 << 20;

/// CPython, a WASIp2 command component: its run directory is its `/tmp`, nothing else.
pub(crate) struct PythonGuest<'a> {
    pub(crate) pre: &'a CommandPre<HostState>,
}

impl Guest for PythonGuest<'_> {
    type State = HostState;
    type Instance = Command;

    fn name(&self) -> &str {
        "python"
    }

    fn mounts(&self) -> &'static [&'static str] {
        &["/tmp"]
    }

    fn traps(&self) -> Traps {
        Traps::Interpreter
    }

    fn file_ops_inline(&self) -> bool {
        true
    }

    fn state(&self, mut builder: WasiCtxBuilder, mut budget: Budget) -> HostState {
        budget.memory.charge_start_at_most(START_CHARGE_BYTES);
        HostState {
            ctx: builder.build(),
            table: ResourceTable::new(),
            budget,
        }
    }

    fn instantiate<'a>(
        &'a self,
        store: &'a mut Store<HostState>,
    ) -> impl Future<Output = wasmtime::Result<Command>> + Send + 'a {
        self.pre.instantiate_async(store)
    }

    async fn call(&self, store: &mut Store<HostState>, command: Command) -> wasmtime::Result<Exit> {
        Ok(match command.wasi_cli_run().call_run(store).await? {
            Ok(()) => Exit::Success,
            Err(()) => Exit::Failure,
        })
    }
}

/// Everything a store owns on the host side.
pub(crate) struct HostState {
    ctx: WasiCtx,
    table: ResourceTable,
    budget: Budget,
}

impl HasBudget for HostState {
    fn budget(&mut self) -> &mut Budget {
        &mut self.budget
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.ctx,
            table: &mut self.table,
        }
    }
}
