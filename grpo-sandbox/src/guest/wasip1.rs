//! Running WASIp1 core modules: QuickJS-NG (JavaScript, and TypeScript once its types are
//! stripped) and C and C++ programs compiled to `wasm32-wasi`.
//!
//! A run takes the one run path ([`run`](crate::engine::run)) a Python run takes: a fresh instance
//! (the pooling allocator maps the module's memory image copy-on-write), its own empty
//! directory as the only file system (preopened as `/` and as `/tmp`, and the current
//! directory), an empty environment, no sockets, stdin from memory, capped stdout and stderr,
//! and the same [`Budget`] of CPU time, memory and files.

use std::collections::BTreeMap;
use std::future::Future;

use grpo_rewards::code::limits::Limits;
use wasmtime::{Instance, InstancePre, Linker, Module, Store};
use wasmtime_wasi::WasiCtxBuilder;
use wasmtime_wasi::p1::WasiP1Ctx;

use crate::engine::budget::{Budget, HasBudget, Traps};
use crate::engine::files::JobFiles;
use crate::engine::run::RawRun;
use crate::engine::run::{self, Exit, Guest};
use crate::error::{Result, SandboxError};
use crate::guest::quickjs;

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
    wasmtime_wasi::p1::add_to_linker_async(&mut linker, |s: &mut P1State| &mut s.wasi)
        .map_err(SandboxError::wasm("linking WASIp1"))?;
    Ok(linker)
}

/// Compiles a module and resolves its imports.
pub(crate) fn prepare(linker: &Linker<P1State>, module: &Module) -> Result<InstancePre<P1State>> {
    linker
        .instantiate_pre(module)
        .map_err(SandboxError::wasm("linking the module"))
}

/// What to do with a fresh instance.
pub(crate) enum Entry<'a> {
    /// A command module: call `_start` (C, C++).
    Command,
    /// The QuickJS reactor: evaluate the Node.js prelude, then `program` as `filename`.
    QuickJs { program: &'a str, filename: &'a str },
}

/// A core module and what to do with its instance: its run directory is the whole file
/// system (`/`, `/tmp` and the current directory all name it; wasi-libc resolves a path
/// against the longest matching preopen).
pub(crate) struct ModuleGuest<'a> {
    pub pre: &'a InstancePre<P1State>,
    pub entry: Entry<'a>,
    /// The arguments after `argv[0]`.
    pub args: &'a [String],
}

impl Guest for ModuleGuest<'_> {
    type State = P1State;
    type Instance = Instance;

    fn name(&self) -> &str {
        match self.entry {
            Entry::Command => "main",
            Entry::QuickJs { .. } => "qjs",
        }
    }

    fn args(&self) -> &[String] {
        self.args
    }

    fn mounts(&self) -> &'static [&'static str] {
        &["/", "/tmp", "."]
    }

    fn traps(&self) -> Traps {
        match self.entry {
            Entry::Command => Traps::Native,
            Entry::QuickJs { .. } => Traps::Interpreter,
        }
    }

    fn state(&self, mut builder: WasiCtxBuilder, budget: Budget) -> P1State {
        P1State {
            wasi: builder.build_p1(),
            budget,
        }
    }

    fn instantiate<'a>(
        &'a self,
        store: &'a mut Store<P1State>,
    ) -> impl Future<Output = wasmtime::Result<Instance>> + Send + 'a {
        self.pre.instantiate_async(store)
    }

    async fn call(&self, store: &mut Store<P1State>, instance: Instance) -> wasmtime::Result<Exit> {
        run_entry(store, &instance, &self.entry).await?;
        Ok(Exit::Success)
    }
}

/// Runs one instance of `guest` to the end under `limits`.
pub(crate) async fn execute(
    engine: &wasmtime::Engine,
    guest: ModuleGuest<'_>,
    stdin: &[u8],
    limits: &Limits,
    files: &JobFiles,
    dirs: &crate::engine::rundir::RunDirs,
) -> Result<(RawRun, BTreeMap<String, Vec<u8>>)> {
    run::run(engine, &guest, stdin.to_vec(), limits, files, dirs).await
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
        Entry::QuickJs { program, filename } => {
            quickjs::drive(store, instance, program, filename).await
        }
    }
}

/// Linked modules of compiled programs, by the module's SHA-256 (a group of completions often
/// repeats a program; Cranelift compiles each distinct module once per process), the least
/// recently used dropped first.
pub(crate) struct ModuleCache {
    entries: std::sync::Mutex<lru::LruCache<[u8; 32], InstancePre<P1State>>>,
}

/// How many linked modules are kept.
const MODULE_CACHE_ENTRIES: std::num::NonZeroUsize = match std::num::NonZeroUsize::new(256) {
    Some(n) => n,
    None => panic!("the module cache holds at least one module"),
};

impl Default for ModuleCache {
    fn default() -> Self {
        ModuleCache {
            entries: std::sync::Mutex::new(lru::LruCache::new(MODULE_CACHE_ENTRIES)),
        }
    }
}

impl ModuleCache {
    /// The linked module for `key`, now the most recently used. A cache poisoned by a panic
    /// elsewhere is still a cache: its entries are whole modules or absent.
    pub(crate) fn get(&self, key: &[u8; 32]) -> Option<InstancePre<P1State>> {
        self.lock().get(key).cloned()
    }

    /// Keeps `pre` under `key`, dropping the least recently used module when full.
    pub(crate) fn put(&self, key: [u8; 32], pre: InstancePre<P1State>) {
        self.lock().put(key, pre);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, lru::LruCache<[u8; 32], InstancePre<P1State>>> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
