//! The embedded Python runtime: the engine configuration, and compiling the component once,
//! with an on-disk cache of the compiled artefact.
//!
//! The component (CPython 3.14 for WASI, snapshotted by componentize-py after importing
//! `runtime/app.py`) ships inside this crate, zstd-compressed, so the `grpo` binary needs no
//! extra files. Compiling its ~22 MB of wasm takes several seconds; the compiled form is cached
//! under `$XDG_CACHE_HOME/grpo-rs` (or `~/.cache/grpo-rs`), keyed by the wasmtime version, the
//! engine's compatibility hash (its configuration) and the SHA-256 of the embedded compressed
//! blob, so a start that finds its entry neither decompresses nor hashes the 22 MB (that was
//! about half the CPU of starting `grpo score`). A cache that cannot be read or written is only
//! a slower start: compilation is the fallback.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::engine::digest::sha256_hex;
use wasmtime::component::Component;
use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, Module, PoolingAllocationConfig,
};

use crate::error::{Result, SandboxError};

/// The Python runtime component, zstd-compressed (built by `runtime/build.sh`).
pub static PYTHON_WASM_ZST: &[u8] = include_bytes!("../../runtime/python.wasm.zst");

/// The SHA-256 of [`PYTHON_WASM_ZST`] (hex), computed by the build script.
pub const PYTHON_WASM_ZST_SHA256: &str =
    include!(concat!(env!("OUT_DIR"), "/python_wasm_zst_sha256.rs"));

/// The wasmtime version the cache key includes (kept in step with Cargo.toml).
pub const WASMTIME_VERSION: &str = "48.0.8";

/// The native stack a guest may use: 8 MiB, as a native program's default on Linux.
pub const MAX_WASM_STACK: usize = 8 << 20;

/// The guest's linear-memory page size.
const WASM_PAGE: usize = 64 * 1024;

/// How instances get their memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Allocator {
    /// A fresh `mmap` per instance (wasmtime's default).
    OnDemand,
    /// Slots reserved up front and reused; memory images are mapped copy-on-write and reset
    /// between runs (`total_instances` slots of `max_memory_mb` each).
    Pooling {
        /// How many instances may be alive at once.
        total_instances: u32,
        /// The largest linear memory a slot holds, in MiB (per-run caps may be lower).
        max_memory_mb: u64,
        /// How much of each memory stays resident between runs, in MiB: reset by copying
        /// back only the pages a run dirtied (found with Linux's `PAGEMAP_SCAN`, else all),
        /// so the next run takes no page faults there. CPython dirties hundreds of scattered
        /// runs of pages; the workspace patches wasmtime so one scan reports up to 1024 of
        /// them (upstream stops at 32 and decommits the rest: see `vendor/README.md`).
        keep_resident_mb: u64,
    },
}

impl Default for Allocator {
    fn default() -> Self {
        Allocator::Pooling {
            total_instances: 32,
            max_memory_mb: 1024,
            keep_resident_mb: 64,
        }
    }
}

/// How the engine is built.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EngineOptions {
    /// The instance allocator.
    pub allocator: Allocator,
    /// Where compiled components are cached; `None` disables the cache.
    pub cache_dir: Option<PathBuf>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            allocator: Allocator::default(),
            cache_dir: default_cache_dir(),
        }
    }
}

/// `$XDG_CACHE_HOME/grpo-rs`, else `$HOME/.cache/grpo-rs`, else none.
pub fn default_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("grpo-rs"));
    }
    std::env::var_os("HOME")
        .filter(|d| !d.is_empty())
        .map(|h| PathBuf::from(h).join(".cache/grpo-rs"))
}

/// Builds the engine: async support, epoch interruption, the chosen allocator.
///
/// With `GRPO_PERF_MAP` set in the environment, compiled guest code is named in
/// `/tmp/perf-<pid>.map`, so `perf report` shows which interpreter functions a run spends its
/// time in (how the profile in the book's benchmarks chapter was taken).
pub fn build_engine(options: &EngineOptions) -> Result<Engine> {
    let mut config = Config::new();
    if std::env::var_os("GRPO_PERF_MAP").is_some() {
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    config.epoch_interruption(true);
    config.wasm_component_model(true);
    // Backtraces through CPython's deep wasm stacks are costly to symbolise and unused.
    config.wasm_backtrace_max_frames(None);
    // Deep recursion in guest programs (a DFS over 10^5 nodes; QuickJS's interpreter frames)
    // needs more than wasmtime's default 512 KiB of native stack; the fiber it runs on must be
    // larger still. Stacks are reserved, and touched only as deep as a run goes.
    config.max_wasm_stack(MAX_WASM_STACK);
    config.async_stack_size(MAX_WASM_STACK + (1 << 20));
    if let Allocator::Pooling {
        total_instances,
        max_memory_mb,
        keep_resident_mb,
    } = options.allocator
    {
        let max_memory =
            usize::try_from(max_memory_mb.saturating_mul(1024 * 1024)).map_err(|_| {
                SandboxError::Engine {
                    reason: "max_memory_mb too large".into(),
                }
            })?;
        let mut pool = PoolingAllocationConfig::new();
        // The snapshot has one large memory, a few tables and several core instances.
        pool.total_component_instances(total_instances)
            .total_core_instances(total_instances.saturating_mul(16))
            .total_memories(total_instances.saturating_mul(4))
            .total_tables(total_instances.saturating_mul(8))
            .total_stacks(total_instances)
            .max_memory_size(max_memory.div_ceil(WASM_PAGE) * WASM_PAGE)
            .max_core_instance_size(1 << 20)
            .max_component_instance_size(1 << 20)
            .table_elements(1 << 16)
            .linear_memory_keep_resident(
                usize::try_from(keep_resident_mb << 20).unwrap_or(usize::MAX),
            )
            .table_keep_resident(1 << 16)
            .pagemap_scan(Enabled::Auto);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    }
    Engine::new(&config).map_err(SandboxError::wasm("building the engine"))
}

/// The component, decompressed.
pub fn python_wasm() -> Result<Vec<u8>> {
    zstd::stream::decode_all(PYTHON_WASM_ZST).map_err(|source| SandboxError::Io {
        path: PathBuf::from("<embedded python.wasm.zst>"),
        source,
    })
}

/// Compiles the embedded runtime for `engine`, through the disk cache when one is given.
pub fn load_component(engine: &Engine, cache_dir: Option<&Path>) -> Result<Component> {
    // The compressed blob names the component as well as its contents would, and its hash
    // was taken at build time.
    let key = cache_key(engine, PYTHON_WASM_ZST_SHA256);
    if let Some(dir) = cache_dir {
        let path = dir.join(format!("python-{key}.cwasm"));
        if path.is_file() {
            // SAFETY: the file was written by `Component::serialize` for an engine with the same
            // compatibility hash (it is in the name); wasmtime also checks the version and
            // configuration in the header and refuses a mismatch. The cache directory belongs
            // to the user running us; a file planted there could run native code, which is the
            // same trust we give the user's own binaries.
            match unsafe { Component::deserialize_file(engine, &path) } {
                Ok(component) => {
                    tracing::debug!(path = %path.display(), "loaded compiled runtime from cache");
                    return Ok(component);
                }
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "unusable cache entry; recompiling")
                }
            }
        }
        let started = std::time::Instant::now();
        let component = compile(engine, &python_wasm()?)?;
        tracing::info!(
            ms = started.elapsed().as_millis() as u64,
            "compiled the Python runtime"
        );
        if let Err(e) = store_in_cache(&component, dir, &path) {
            tracing::warn!(dir = %dir.display(), error = %e, "could not cache the compiled runtime");
        }
        return Ok(component);
    }
    compile(engine, &python_wasm()?)
}

/// Compiles a WASIp1 core module for `engine`, through the disk cache when one is given
/// (entries are named `{name}-{key}.cwasm`, the key made as [`load_component`] makes its own,
/// from `wasm`).
pub fn load_module(
    engine: &Engine,
    name: &str,
    wasm: &[u8],
    cache_dir: Option<&Path>,
) -> Result<Module> {
    let compile = || {
        let started = std::time::Instant::now();
        let module = Module::new(engine, wasm).map_err(SandboxError::wasm("compiling a module"))?;
        tracing::debug!(name, "compiled");
        tracing::info!(
            ms = started.elapsed().as_millis() as u64,
            name,
            "compiled a runtime module"
        );
        Ok::<_, SandboxError>(module)
    };
    let Some(dir) = cache_dir else {
        return compile();
    };
    let path = dir.join(format!(
        "{name}-{}.cwasm",
        cache_key(engine, &sha256_hex(wasm))
    ));
    if path.is_file() {
        // SAFETY: as for `load_component`: written by `Module::serialize` for an engine with
        // this compatibility hash (in the name), checked again by wasmtime's header.
        match unsafe { Module::deserialize_file(engine, &path) } {
            Ok(module) => return Ok(module),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "unusable cache entry; recompiling")
            }
        }
    }
    let module = compile()?;
    match module.serialize() {
        Ok(bytes) => {
            if let Err(e) = write_atomically(dir, &path, &bytes) {
                tracing::warn!(dir = %dir.display(), error = %e, "could not cache a compiled module");
            }
        }
        Err(e) => tracing::warn!(error = %e, "could not serialise a compiled module"),
    }
    Ok(module)
}

fn compile(engine: &Engine, wasm: &[u8]) -> Result<Component> {
    Component::new(engine, wasm).map_err(SandboxError::wasm("compiling the Python runtime"))
}

/// Writes atomically: a temporary file in the same directory, then a rename.
fn store_in_cache(component: &Component, dir: &Path, path: &Path) -> Result<()> {
    let io = |source| SandboxError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let bytes = component
        .serialize()
        .map_err(SandboxError::wasm("serialising the compiled runtime"))?;
    write_atomically(dir, path, &bytes).map_err(io)
}

/// Writes atomically: a temporary file in the same directory, then a rename.
fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// `wasmtime version - engine compatibility hash - sha256` (the first 24 hex digits of
/// `sha256`): the SHA-256 of the compressed blob for the Python runtime, of the module's wasm
/// for [`load_module`].
fn cache_key(engine: &Engine, sha256: &str) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    let engine_hash = hasher.finish();
    let blob = sha256.get(..24).unwrap_or(sha256);
    format!("{WASMTIME_VERSION}-{engine_hash:016x}-{blob}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_runtime_decompresses_to_a_component() {
        let wasm = python_wasm().unwrap();
        // A component starts with the wasm magic and the component-model layer/version.
        assert_eq!(&wasm[..4], b"\0asm");
        assert_eq!(&wasm[4..8], &[0x0d, 0x00, 0x01, 0x00]);
    }

    #[test]
    fn cache_key_changes_with_the_blob() {
        let engine = Engine::default();
        let a = cache_key(&engine, &sha256_hex(b"one"));
        let b = cache_key(&engine, &sha256_hex(b"two"));
        assert_ne!(a, b);
        assert!(a.starts_with("48.0.8-"));
        // The same name as when the key hashed the bytes itself: entries stay usable.
        assert!(a.ends_with("-7692c3ad3540bb803c020b3a"), "{a}");
    }

    #[test]
    fn the_build_time_hash_is_the_embedded_blobs() {
        assert_eq!(PYTHON_WASM_ZST_SHA256, sha256_hex(PYTHON_WASM_ZST));
    }
}
