//! [`Compiler`]: one untrusted C or C++ source in, a wasm32-wasi command module (or the
//! compiler's verdict) out.
//!
//! Each compile gets a fresh job directory holding only `main.c`/`main.cpp`; zig runs there
//! (so messages name `main.cpp:3:5`, not a host path) under the confinement of
//! [`confine`](super::confine), with a wall-clock limit that kills its whole process group.
//! Results are cached by the hash of (language, flags, toolchain version, whether the
//! precompiled header applies, source). A C++ source whose includes are all standard headers
//! compiles with the precompiled `<bits/stdc++.h>` (see [`pch`](super::pch)), and again
//! without it when that fails, so that it is never the header that rejects a program.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use tokio::sync::Semaphore;

use super::cache::{self, DiskCache, Entry, Key, Lru};
use super::confine::Confinement;
use super::direct::{self, Direct};
use super::error::CcError;
use super::pasted;
use super::pch;
use super::run::{Exit, probe, signal_note};
use super::shadow;
use super::toolchain::{Toolchain, ZIG_VERSION, elapsed_ms, shipped_headers_hash};

/// The source language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CLang {
    /// C (GNU C17).
    C,
    /// C++ (GNU C++20, no exceptions).
    Cpp,
}

impl CLang {
    pub(super) fn source_name(self) -> &'static str {
        match self {
            CLang::C => "main.c",
            CLang::Cpp => "main.cpp",
        }
    }

    pub(super) fn driver(self) -> &'static str {
        match self {
            CLang::C => "cc",
            CLang::Cpp => "c++",
        }
    }

    /// The flags every compile of this language gets (the cache key includes them).
    ///
    /// `-fno-exceptions`: zig 0.17.0's libc++abi for wasm32-wasi has no exception runtime
    /// (`throw` fails to link with `__cxa_throw` undefined; `-fwasm-exceptions` crashes the
    /// backend, and with `+exception_handling` the link lacks `__cxa_begin_catch`,
    /// `_Unwind_CallPersonality` and the rest; wasmtime runs the proposal only with its `gc`
    /// feature), so C++ exceptions are not supported and `throw`/`try` are compile errors.
    /// The shipped `testlib.h` is testlib without them (`vendor/testlib/README.md`).
    /// An 8 MiB stack (the wasm default is 64 KiB) lets deep recursion work; `-s` drops
    /// debug sections (a hello world is 2.6 KB instead of 980 KB). `-UNDEBUG`: `zig cc`
    /// defines `NDEBUG` at `-O2`, which would compile every `assert` away; `g++ -O2` keeps
    /// them, and tests written as asserts rely on it.
    pub fn flags(self) -> &'static [&'static str] {
        match self {
            CLang::C => &[
                "-target",
                "wasm32-wasi",
                "-O2",
                "-UNDEBUG",
                "-std=gnu17",
                "-fno-color-diagnostics",
            ],
            CLang::Cpp => &[
                "-target",
                "wasm32-wasi",
                "-O2",
                "-UNDEBUG",
                "-std=gnu++20",
                "-fno-exceptions",
                "-fno-color-diagnostics",
            ],
        }
    }
}

/// Link flags, after the source.
pub(super) const LINK_FLAGS: [&str; 3] = ["-Wl,-z,stack-size=8388608", "-s", "-lm"];

/// Limits on one compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileLimits {
    /// CPU seconds per compiler process (`RLIMIT_CPU`).
    pub cpu_s: u64,
    /// Wall-clock milliseconds for the whole compile; then the process group is killed. A net
    /// for a compiler that waits: `cpu_s`, which the kernel charges with the process's own CPU
    /// time, is what bounds the work, so the default is wide enough that a loaded machine
    /// alone never reaches it.
    pub wall_ms: u64,
    /// Address space per compiler process, in MiB (`RLIMIT_AS`).
    pub memory_mb: u64,
    /// Bytes kept of the compiler's messages (the rest is dropped, and marked).
    pub output_bytes: usize,
    /// Keep the module in the on-disk cache ([`Toolchain::module_cache_dir`], by the hash of
    /// what was compiled) even when the compiler does not keep every module there
    /// ([`CompilerOptions::disk_cache`]): for a source compiled again by every process, such
    /// as a task's checker, which is then compiled once per machine.
    pub keep_on_disk: bool,
}

impl Default for CompileLimits {
    fn default() -> Self {
        CompileLimits {
            cpu_s: 10,
            wall_ms: 60_000,
            memory_mb: 2048,
            output_bytes: 64 * 1024,
            keep_on_disk: false,
        }
    }
}

impl CompileLimits {
    /// Checks the ranges: a compile needs at least a second, 512 MiB (clang's address space
    /// is mostly reservations) and 1 KiB of messages.
    pub fn validate(&self) -> Result<(), CcError> {
        let bad = |field, reason: &str| {
            Err(CcError::InvalidLimit {
                field,
                reason: reason.to_owned(),
            })
        };
        if self.cpu_s == 0 || self.cpu_s > 3600 {
            return bad("cpu_s", "must be 1..=3600");
        }
        if !(1000..=3_600_000).contains(&self.wall_ms) {
            return bad("wall_ms", "must be 1000..=3600000");
        }
        if !(512..=65_536).contains(&self.memory_mb) {
            return bad("memory_mb", "must be 512..=65536");
        }
        if self.output_bytes < 1024 {
            return bad("output_bytes", "must be at least 1024");
        }
        Ok(())
    }
}

/// The return code of a compile stopped by the wall-clock limit (as `timeout(1)`).
pub const TIMEOUT_CODE: i32 = 124;

/// What a compile produced.
#[derive(Debug, Clone)]
pub enum Compiled {
    /// A wasm32-wasi command module.
    Module {
        /// The module's bytes (`\0asm…`).
        wasm: Arc<[u8]>,
        /// It came from the cache.
        cached: bool,
        /// Milliseconds spent (0 on a cache hit).
        compile_ms: u64,
    },
    /// The source did not compile: an error in it, the wall-clock limit (return code 124,
    /// said in `stderr`) or a compiler killed by a limit (128 + the signal).
    Failed {
        /// The compiler's exit code.
        return_code: i32,
        /// Its messages, host paths replaced, capped.
        stderr: String,
        /// Milliseconds spent.
        compile_ms: u64,
    },
}

/// How a [`Compiler`] behaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompilerOptions {
    /// Refuse to compile when Landlock is unavailable (the default): without it the compiler
    /// can read any file this process can, and `#include` shows it.
    pub require_filesystem_confinement: bool,
    /// In-memory cache entries.
    pub cache_entries: usize,
    /// Also keep modules on disk ([`Toolchain::module_cache_dir`]).
    pub disk_cache: bool,
    /// Compiles at once (each is one or two processes of up to `memory_mb`).
    pub max_parallel: usize,
    /// Use the precompiled `<bits/stdc++.h>` when the warm-up built one, for the C++ sources
    /// whose includes it covers.
    pub use_pch: bool,
    /// Try a user and network namespace first (the default); false goes straight to the
    /// fallback, Landlock's TCP rules, as on kernels that refuse namespaces.
    pub namespaces: bool,
    /// Run clang and the linker directly, with the commands zig's driver runs (captured and
    /// checked once per toolchain), instead of `zig cc` per compile: the same modules, without
    /// the driver's check of its library cache (see the `direct` module). The default.
    pub direct: bool,
}

impl Default for CompilerOptions {
    fn default() -> Self {
        CompilerOptions {
            require_filesystem_confinement: true,
            cache_entries: 256,
            disk_cache: false,
            max_parallel: std::thread::available_parallelism().map_or(2, |n| n.get()),
            use_pch: true,
            namespaces: true,
            direct: true,
        }
    }
}

/// Compiles C and C++ to wasm32-wasi with the pinned zig, confined. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Compiler {
    pub(super) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(super) struct Inner {
    pub(super) toolchain: Toolchain,
    pub(super) options: CompilerOptions,
    pub(super) version: String,
    pub(super) confinement: Confinement,
    /// The namespaces every compile joins (see `shared_view`), when the host allows them.
    pub(super) shared: Option<super::shared_view::SharedView>,
    /// Why Landlock is unavailable, when it is.
    pub(super) unconfined_reason: Option<String>,
    pub(super) memory: Mutex<Lru>,
    /// The on-disk module cache: for every module with [`CompilerOptions::disk_cache`], else
    /// for the compiles that ask ([`CompileLimits::keep_on_disk`]).
    pub(super) disk: DiskCache,
    pub(super) permits: Semaphore,
    /// The warm-up has built zig's libraries (see `run::job_ruleset`).
    pub(super) warm: AtomicBool,
    /// Held while warming up, so concurrent first compiles warm once.
    pub(super) warming: tokio::sync::Mutex<()>,
    /// One lock per key being compiled, so a group of identical sources compiles once.
    pub(super) in_flight: Mutex<HashMap<Key, Arc<tokio::sync::Mutex<()>>>>,
    pub(super) counters: Counters,
    /// The captured clang and linker commands, once looked for (`None`: compile through the
    /// driver).
    pub(super) direct: tokio::sync::OnceCell<Option<Arc<Direct>>>,
}

static SHARED: OnceLock<Compiler> = OnceLock::new();

impl Compiler {
    /// A compiler for `toolchain` with default options; probes the confinement once.
    pub fn new(toolchain: Toolchain) -> Compiler {
        Compiler::with_options(toolchain, CompilerOptions::default())
    }

    /// A compiler with `options`.
    pub fn with_options(toolchain: Toolchain, options: CompilerOptions) -> Compiler {
        let probe = probe(&toolchain, options.namespaces);
        let disk = DiskCache::new(toolchain.module_cache_dir());
        Compiler {
            inner: Arc::new(Inner {
                memory: Mutex::new(Lru::new(options.cache_entries)),
                disk,
                permits: Semaphore::new(options.max_parallel.max(1)),
                warm: AtomicBool::new(warm_marker(&toolchain).is_file()),
                warming: tokio::sync::Mutex::new(()),
                in_flight: Mutex::new(HashMap::new()),
                counters: Counters::default(),
                direct: tokio::sync::OnceCell::new(),
                version: probe.version,
                confinement: probe.confinement,
                shared: probe.shared,
                unconfined_reason: probe.unconfined_reason,
                toolchain,
                options,
            }),
        }
    }

    /// The process-wide compiler for the toolchain under the default cache directory
    /// (located once; a missing toolchain is an error each time until it is installed).
    pub fn shared() -> Result<Compiler, CcError> {
        if let Some(compiler) = SHARED.get() {
            return Ok(compiler.clone());
        }
        let compiler = Compiler::new(Toolchain::locate_default()?);
        Ok(SHARED.get_or_init(|| compiler).clone())
    }

    /// How many compiles run at once.
    pub fn max_parallel(&self) -> usize {
        self.inner.options.max_parallel.max(1)
    }

    /// `zig 0.17.0 (clang X.Y.Z)`.
    pub fn version(&self) -> &str {
        &self.inner.version
    }

    /// The confinement compiles run under.
    pub fn confinement(&self) -> Confinement {
        self.inner.confinement
    }

    /// Where this compiler makes its job directories when its compiles share one set of
    /// namespaces (`Confinement::shared_ns`); `None` otherwise (each job goes in the system's
    /// temporary directory).
    pub fn jobs_dir(&self) -> Option<&std::path::Path> {
        self.inner.shared.as_ref().map(|s| s.jobs_dir())
    }

    /// Compiles run clang and the linker directly (see [`CompilerOptions::direct`]); known
    /// after the first compile or the warm-up.
    pub fn compiles_directly(&self) -> bool {
        matches!(self.inner.direct.get(), Some(Some(_)))
    }

    /// The toolchain.
    pub fn toolchain(&self) -> &Toolchain {
        &self.inner.toolchain
    }

    /// Compiles `source`. A source that does not compile is `Ok(Compiled::Failed)`; `Err` is
    /// only for faults on our side. The first compile on a toolchain that was never warmed
    /// runs the warm-up first (a minute or more).
    pub async fn compile(
        &self,
        lang: CLang,
        source: &str,
        limits: &CompileLimits,
    ) -> Result<Compiled, CcError> {
        limits.validate()?;
        if !self.inner.warm.load(Ordering::Acquire) {
            self.ensure_warm().await?;
        }
        if self.inner.options.direct && !self.inner.direct.initialized() {
            self.direct().await;
        }
        self.compile_job(lang, source, limits).await
    }

    /// [`Compiler::compile`] without the warm-up check (the warm-up's own compiles).
    pub(super) async fn compile_job(
        &self,
        lang: CLang,
        source: &str,
        limits: &CompileLimits,
    ) -> Result<Compiled, CcError> {
        let inner = &self.inner;
        if inner.options.require_filesystem_confinement && !inner.confinement.filesystem() {
            return Err(CcError::Unconfined {
                reason: inner
                    .unconfined_reason
                    .clone()
                    .unwrap_or_else(|| "unknown".to_owned()),
            });
        }
        let start = Instant::now();
        // A pasted-in testlib is the shipped one (see `pasted`).
        let unpasted = match lang {
            CLang::Cpp => pasted::unpaste(source),
            CLang::C => None,
        };
        let source = unpasted.as_deref().unwrap_or(source);
        // The program's own functions under C library names are renamed (see `shadow`).
        let shadowed = shadow::rewrite(lang, source);
        if let Some(shadowed) = &shadowed {
            tracing::debug!(names = ?shadowed.names, "renamed the program's own C library names");
        }
        let renamed = shadowed.is_some();
        let source = shadowed.as_ref().map_or(source, |s| s.source.as_str());
        let pch = self.pch_for(lang, source);
        let pch_arg = pch.as_ref().map(|p| p.to_string_lossy().into_owned());
        let key = cache::key(&[
            format!("{lang:?}").as_bytes(),
            lang.flags().join(" ").as_bytes(),
            LINK_FLAGS.join(" ").as_bytes(),
            pch_arg.as_deref().unwrap_or("").as_bytes(),
            ZIG_VERSION.as_bytes(),
            shipped_headers_hash().as_bytes(),
            source.as_bytes(),
        ]);
        let on_disk = inner.options.disk_cache || limits.keep_on_disk;
        if let Some(hit) = self.lookup(&key, on_disk) {
            return Ok(hit);
        }
        let gate = InFlight::enter(&inner.in_flight, key);
        let result = {
            let _same_source = gate.gate.lock().await;
            match self.lookup(&key, on_disk) {
                Some(hit) => Ok(hit),
                None => {
                    let _permit = inner.permits.acquire().await.map_err(|_| CcError::Spawn {
                        path: inner.toolchain.zig(),
                        source: std::io::Error::other("compiler shut down"),
                    })?;
                    let job = Job {
                        lang,
                        source,
                        pch: pch.as_deref(),
                        renamed,
                    };
                    self.compile_retrying(job, limits, start, &key, on_disk)
                        .await
                }
            }
        };
        drop(gate);
        result
    }

    /// Compiles `job`; when it had the precompiled header and the source did not compile
    /// (an ordinary error, not a limit), compiles it again without, within what is left of
    /// the wall-clock limit, and that compile's result is the answer: a name the header
    /// brings in must not reject a program (see [`pch`]). The result is cached under `key`.
    async fn compile_retrying(
        &self,
        job: Job<'_>,
        limits: &CompileLimits,
        start: Instant,
        key: &Key,
        on_disk: bool,
    ) -> Result<Compiled, CcError> {
        let mut outcome = self.compile_uncached(&job, limits, start).await?;
        if job.pch.is_some()
            && outcome.cacheable
            && matches!(outcome.compiled, Compiled::Failed { .. })
        {
            tracing::debug!("failed with the precompiled header; compiling without it");
            self.inner
                .counters
                .retried_without_pch
                .fetch_add(1, Ordering::Relaxed);
            let left = CompileLimits {
                wall_ms: limits.wall_ms.saturating_sub(elapsed_ms(start)).max(1),
                ..limits.clone()
            };
            let plain = Job { pch: None, ..job };
            outcome = self.compile_uncached(&plain, &left, start).await?;
        }
        if outcome.cacheable {
            let entry = match &outcome.compiled {
                Compiled::Module { wasm, .. } => {
                    if on_disk {
                        self.inner.disk.put(key, wasm);
                    }
                    Entry::Module(wasm.clone())
                }
                Compiled::Failed {
                    return_code,
                    stderr,
                    ..
                } => Entry::Failed {
                    return_code: *return_code,
                    stderr: stderr.clone(),
                },
            };
            lock(&self.inner.memory).put(*key, entry);
        }
        Ok(outcome.compiled)
    }

    /// The precompiled `<bits/stdc++.h>` to use for this source, if any (see [`pch`]).
    fn pch_for(&self, lang: CLang, source: &str) -> Option<PathBuf> {
        if lang != CLang::Cpp || !self.inner.options.use_pch {
            return None;
        }
        if let Err(refusal) = pch::check(source) {
            tracing::debug!(?refusal, "compiling without the precompiled header");
            return None;
        }
        let pch = pch_path(&self.inner.toolchain);
        pch.is_file().then_some(pch)
    }

    /// What this compiler has done since it was made.
    pub fn stats(&self) -> CompileStats {
        let counters = &self.inner.counters;
        CompileStats {
            compiles: counters.compiles.load(Ordering::Relaxed),
            with_pch: counters.with_pch.load(Ordering::Relaxed),
            retried_without_pch: counters.retried_without_pch.load(Ordering::Relaxed),
        }
    }

    /// The cached result for `key`: in memory, else (when `on_disk`) on disk.
    fn lookup(&self, key: &Key, on_disk: bool) -> Option<Compiled> {
        let hit = lock(&self.inner.memory).get(key);
        let hit = hit.or_else(|| {
            if !on_disk {
                return None;
            }
            let wasm = self.inner.disk.get(key)?;
            let entry = Entry::Module(wasm);
            lock(&self.inner.memory).put(*key, entry.clone());
            Some(entry)
        })?;
        Some(match hit {
            Entry::Module(wasm) => Compiled::Module {
                wasm,
                cached: true,
                compile_ms: 0,
            },
            Entry::Failed {
                return_code,
                stderr,
            } => Compiled::Failed {
                return_code,
                stderr,
                compile_ms: 0,
            },
        })
    }

    /// Runs one compile (not cached here).
    async fn compile_uncached(
        &self,
        job: &Job<'_>,
        limits: &CompileLimits,
        start: Instant,
    ) -> Result<Outcome, CcError> {
        let Job {
            lang,
            source,
            pch,
            renamed,
        } = *job;
        let counters = &self.inner.counters;
        counters.compiles.fetch_add(1, Ordering::Relaxed);
        if pch.is_some() {
            counters.with_pch.fetch_add(1, Ordering::Relaxed);
        }
        let job = self.job_with(lang, source)?;
        let steps = self
            .inner
            .direct
            .get()
            .and_then(Option::as_deref)
            .map(|direct| direct.steps(lang));
        let outcome = self.run_job(steps, lang, pch, job.path(), limits).await?;
        let compile_ms = elapsed_ms(start);
        let mut stderr = self.clean_messages(&outcome, job.path());
        if renamed {
            // Messages name the program's functions as it wrote them.
            stderr = stderr.replace(shadow::PREFIX, "");
        }
        let wasm_path = job.path().join(direct::OUTPUT);
        if outcome.exit == Exit::Code(0) {
            let wasm = std::fs::read(&wasm_path).map_err(|e| CcError::io(&wasm_path, e))?;
            if !wasm.starts_with(b"\0asm") {
                return Ok(Outcome {
                    compiled: Compiled::Failed {
                        return_code: 1,
                        stderr: format!("{stderr}[compiler] the output is not a wasm module\n"),
                        compile_ms,
                    },
                    cacheable: false,
                });
            }
            tracing::debug!(
                ?lang,
                compile_ms,
                bytes = wasm.len(),
                pch = pch.is_some(),
                "compiled"
            );
            return Ok(Outcome {
                compiled: Compiled::Module {
                    wasm: wasm.into(),
                    cached: false,
                    compile_ms,
                },
                cacheable: true,
            });
        }
        let (return_code, note) = match outcome.exit {
            // clang reports running out of address space itself, and zig exits 1 after it.
            Exit::Code(code) if stderr.contains("LLVM ERROR: out of memory") => (
                code,
                Some(format!(
                    "[compiler] out of memory (limit {} MiB)",
                    limits.memory_mb
                )),
            ),
            // zig outlives a clang killed by a limit and exits 1.
            Exit::Code(code) if stderr.contains("failed due to signal") => (
                code,
                Some(format!(
                    "[compiler] clang was stopped by a signal (limits: {} s CPU, {} MiB memory)",
                    limits.cpu_s, limits.memory_mb
                )),
            ),
            Exit::Code(code) => (code, None),
            Exit::Signal(signal) => (128 + signal, Some(signal_note(signal, limits))),
            Exit::WallTimeout => (
                TIMEOUT_CODE,
                Some(format!(
                    "[compiler] stopped: wall-clock limit of {} ms exceeded",
                    limits.wall_ms
                )),
            ),
        };
        // An ordinary error exit is the source's own verdict and repeats; a limit may not.
        let cacheable = note.is_none() && !outcome.truncated;
        let stderr = match note {
            Some(note) => format!("{stderr}{note}\n"),
            None => stderr,
        };
        tracing::debug!(
            ?lang,
            compile_ms,
            return_code,
            pch = pch.is_some(),
            "compile failed"
        );
        Ok(Outcome {
            compiled: Compiled::Failed {
                return_code,
                stderr,
                compile_ms,
            },
            cacheable,
        })
    }
}

/// What a [`Compiler`] has done since it was made ([`Compiler::stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompileStats {
    /// Compiler runs (a cache hit runs none; a retry is a second run).
    pub compiles: u64,
    /// Of those, runs with the precompiled `<bits/stdc++.h>`.
    pub with_pch: u64,
    /// Sources that failed with the precompiled header and were compiled again without it.
    pub retried_without_pch: u64,
}

/// The counters behind [`CompileStats`].
#[derive(Debug, Default)]
pub(super) struct Counters {
    compiles: AtomicU64,
    with_pch: AtomicU64,
    retried_without_pch: AtomicU64,
}

/// One compiler run's result, and whether it is the source's own verdict (worth caching).
struct Outcome {
    compiled: Compiled,
    cacheable: bool,
}

/// One compile's input.
#[derive(Clone, Copy)]
struct Job<'a> {
    lang: CLang,
    /// The source as compiled (after `shadow::rewrite`).
    source: &'a str,
    pch: Option<&'a Path>,
    /// `shadow::rewrite` renamed some of its functions.
    renamed: bool,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The flags the precompiled header is built with, beyond the C++ job flags:
/// `-fpch-instantiate-templates` instantiates the headers' own template uses once, in the
/// header, instead of in every compile (a fifth to a third off the compile of a small
/// program; the objects are the same bytes).
pub(crate) const PCH_FLAGS: [&str; 1] = ["-fpch-instantiate-templates"];

/// Where the warm-up puts the precompiled `<bits/stdc++.h>` (named by the flags it needs).
pub(crate) fn pch_path(toolchain: &Toolchain) -> PathBuf {
    let key = cache::key(&[
        toolchain.include_dir().to_string_lossy().as_bytes(),
        CLang::Cpp.flags().join(" ").as_bytes(),
        PCH_FLAGS.join(" ").as_bytes(),
        shipped_headers_hash().as_bytes(),
    ]);
    toolchain.pch_dir().join(format!(
        "stdc++-{}.pch",
        &crate::engine::digest::hex(&key)[..16]
    ))
}

/// The marker the warm-up leaves once zig's libraries for the job flags are built.
pub(crate) fn warm_marker(toolchain: &Toolchain) -> PathBuf {
    let key = cache::key(&[
        CLang::C.flags().join(" ").as_bytes(),
        CLang::Cpp.flags().join(" ").as_bytes(),
        LINK_FLAGS.join(" ").as_bytes(),
        PCH_FLAGS.join(" ").as_bytes(),
        shipped_headers_hash().as_bytes(),
    ]);
    toolchain
        .root()
        .join(format!("warm-{}", &crate::engine::digest::hex(&key)[..16]))
}

/// A compile's place in the in-flight map; the last one out (even a cancelled one) removes it.
struct InFlight<'a> {
    map: &'a Mutex<HashMap<Key, Arc<tokio::sync::Mutex<()>>>>,
    key: Key,
    gate: Arc<tokio::sync::Mutex<()>>,
}

impl<'a> InFlight<'a> {
    fn enter(map: &'a Mutex<HashMap<Key, Arc<tokio::sync::Mutex<()>>>>, key: Key) -> Self {
        let gate = lock(map).entry(key).or_default().clone();
        InFlight { map, key, gate }
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let mut map = lock(self.map);
        // The map's reference and ours: nobody else is waiting on this source.
        if Arc::strong_count(&self.gate) <= 2 {
            map.remove(&self.key);
        }
    }
}
