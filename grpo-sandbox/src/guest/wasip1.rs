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
use std::sync::Arc;

use grpo_rewards::code::limits::Limits;
use grpo_rewards::result::RunResult;
use sha2::{Digest, Sha256};
use wasmtime::{Instance, InstancePre, Linker, Module, Store};
use wasmtime_wasi::WasiCtxBuilder;
use wasmtime_wasi::p1::WasiP1Ctx;

use crate::engine::budget::{Budget, HasBudget, Traps};
use crate::engine::files::JobFiles;
use crate::engine::host::Host;
use crate::engine::run::{Exit, Guest};
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
fn linker(engine: &wasmtime::Engine) -> Result<Linker<P1State>> {
    let mut linker = Linker::<P1State>::new(engine);
    wasmtime_wasi::p1::add_to_linker_async(&mut linker, |s: &mut P1State| &mut s.wasi)
        .map_err(SandboxError::wasm("linking WASIp1"))?;
    Ok(linker)
}

/// Resolves a compiled module's imports.
fn prepare(linker: &Linker<P1State>, module: &Module) -> Result<InstancePre<P1State>> {
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

/// The core modules of one sandbox: the WASIp1 linker, and the linked modules of compiled
/// programs by hash.
pub(crate) struct CoreModules {
    linker: Linker<P1State>,
    cache: ModuleCache,
}

impl CoreModules {
    /// WASIp1 linked for `engine`, no module yet.
    pub(crate) fn new(engine: &wasmtime::Engine) -> Result<CoreModules> {
        Ok(CoreModules {
            linker: linker(engine)?,
            cache: ModuleCache::default(),
        })
    }

    /// Resolves the imports of a compiled module.
    pub(crate) fn prepare(&self, module: &Module) -> Result<InstancePre<P1State>> {
        prepare(&self.linker, module)
    }

    /// The linked module of `wasm` (a compiled program): from the cache when the same bytes
    /// ran before, else compiled (on a blocking thread) and kept.
    pub(crate) async fn linked(
        &self,
        engine: &wasmtime::Engine,
        wasm: Arc<[u8]>,
    ) -> Result<InstancePre<P1State>> {
        let key: [u8; 32] = Sha256::digest(&wasm).into();
        if let Some(pre) = self.cache.get(&key) {
            return Ok(pre);
        }
        let engine = engine.clone();
        let module = tokio::task::spawn_blocking(move || Module::new(&engine, &wasm))
            .await
            .map_err(SandboxError::blocking("compiling the module"))?
            .map_err(SandboxError::wasm("compiling the module"))?;
        let pre = self.prepare(&module)?;
        self.cache.put(key, pre.clone());
        Ok(pre)
    }
}

/// Runs one instance of `guest` on `host`, with `files` placed first and `files.fetch` read
/// back after.
pub(crate) async fn run(
    host: &Host,
    guest: ModuleGuest<'_>,
    stdin: &[u8],
    limits: &Limits,
    files: &JobFiles,
) -> Result<(RunResult, BTreeMap<String, Vec<u8>>)> {
    let (raw, fetched) = host.run(&guest, stdin.to_vec(), limits, files).await?;
    Ok((raw.into_result(), fetched))
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
struct ModuleCache {
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
    fn get(&self, key: &[u8; 32]) -> Option<InstancePre<P1State>> {
        self.lock().get(key).cloned()
    }

    /// Keeps `pre` under `key`, dropping the least recently used module when full.
    fn put(&self, key: [u8; 32], pre: InstancePre<P1State>) {
        self.lock().put(key, pre);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, lru::LruCache<[u8; 32], InstancePre<P1State>>> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
