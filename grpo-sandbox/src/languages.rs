//! One entry point for every language the sandbox runs: Python, JavaScript, TypeScript, C and
//! C++, each with its compile step (C and C++ only) and its run.
//!
//! | language | how it runs |
//! |---|---|
//! | `python` | CPython 3.14 for WASI, a snapshotted component |
//! | `javascript` | QuickJS-NG (WASIp1 core module) with a Node.js prelude |
//! | `typescript` | types stripped on the host (SWC), then as JavaScript |
//! | `c`, `cpp` | compiled on the host to `wasm32-wasi` by a confined, pinned zig, then run as a WASIp1 command |

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use grpo_tasks::Language;
use sha2::{Digest, Sha256};

use crate::cc::{CLang, CompileLimits, Compiled, Compiler};
use crate::error::Result;
use crate::files::JobFiles;
use crate::module::P1State;
use crate::sandbox::Sandbox;
use grpo_rewards::code::limits::Limits;
use grpo_rewards::result::{RunResult, RunStatus};

/// A compile step's outcome (C and C++).
#[derive(Debug, Clone, PartialEq)]
pub struct CompileStep {
    /// The compiler's exit code: 0 when a module came out.
    pub return_code: i32,
    /// The compiler's messages (host paths replaced).
    pub stderr: String,
    /// Wall-clock time, 0 for a cache hit.
    pub duration_ms: f64,
    /// The module came from the compile cache.
    pub cached: bool,
    /// The compile was stopped by its wall-clock limit.
    pub timed_out: bool,
}

/// A program's compile step (when its language has one) and its run (unless the compile
/// failed).
#[derive(Debug, Clone, PartialEq)]
pub struct SourceRun {
    /// `None` for interpreted languages.
    pub compile: Option<CompileStep>,
    /// `None` when the compile failed.
    pub run: Option<RunResult>,
    /// The fetched files (see [`JobFiles::fetch`]).
    pub files: BTreeMap<String, Vec<u8>>,
}

impl SourceRun {
    /// The run's status, or `Error` when the program did not compile.
    pub fn status(&self) -> RunStatus {
        self.run.as_ref().map_or(RunStatus::Error, |r| r.status)
    }
}

/// Linked modules of compiled programs, by the module's SHA-256 (a group of completions often
/// repeats a program; Cranelift compiles each distinct module once per process).
#[derive(Default)]
pub(crate) struct ModuleCache {
    /// Module hash → (last use, linked module).
    entries: Mutex<HashMap<[u8; 32], LinkedModule>>,
    clock: std::sync::atomic::AtomicU64,
}

type LinkedModule = (u64, wasmtime::InstancePre<P1State>);

/// How many linked modules are kept.
const MODULE_CACHE_ENTRIES: usize = 256;

impl ModuleCache {
    fn get(&self, key: &[u8; 32]) -> Option<wasmtime::InstancePre<P1State>> {
        let tick = self
            .clock
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut entries = self.entries.lock().ok()?;
        let entry = entries.get_mut(key)?;
        entry.0 = tick;
        Some(entry.1.clone())
    }

    fn put(&self, key: [u8; 32], pre: wasmtime::InstancePre<P1State>) {
        let tick = self
            .clock
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= MODULE_CACHE_ENTRIES
                && let Some(oldest) = entries.iter().min_by_key(|(_, v)| v.0).map(|(k, _)| *k)
            {
                entries.remove(&oldest);
            }
            entries.insert(key, (tick, pre));
        }
    }
}

impl Sandbox {
    /// Runs `source` in `language` like its usual command line (`python3 main.py`,
    /// `node main.js`, `gcc main.c && ./a.out`, ...), with `stdin`, `files` placed in its
    /// directory first and `files.fetch` read back after. The compile of C and C++ is limited
    /// by `compile` and the run by `limits`.
    pub async fn run_source(
        &self,
        language: Language,
        source: &str,
        stdin: &[u8],
        limits: &Limits,
        compile: &CompileLimits,
        files: &JobFiles,
    ) -> Result<SourceRun> {
        let (compile, run, files) = match language {
            Language::Python => {
                let (run, fetched) = self.run_with_files(source, stdin, limits, files).await?;
                (None, Some(run), fetched)
            }
            Language::Javascript => {
                let (run, fetched) = self.run_javascript(source, stdin, limits, files).await?;
                (None, Some(run), fetched)
            }
            Language::Typescript => match crate::ts::strip_types(source, "main.ts") {
                Ok(js) => {
                    let (run, fetched) = self.run_javascript(&js, stdin, limits, files).await?;
                    (None, Some(run), fetched)
                }
                // As `node main.ts` reports a syntax error: exit 1 with the message.
                Err(e) => (
                    None,
                    Some(RunResult {
                        status: RunStatus::Error,
                        exit_code: Some(1),
                        stdout: String::new(),
                        stderr: e.message,
                        duration_ms: 0.0,
                        truncated: false,
                    }),
                    BTreeMap::new(),
                ),
            },
            Language::C | Language::Cpp => {
                let lang = if language == Language::C {
                    CLang::C
                } else {
                    CLang::Cpp
                };
                return self
                    .compile_and_run(lang, source, stdin, limits, compile, files)
                    .await;
            }
        };
        Ok(SourceRun {
            compile,
            run,
            files,
        })
    }

    async fn compile_and_run(
        &self,
        lang: CLang,
        source: &str,
        stdin: &[u8],
        limits: &Limits,
        compile_limits: &CompileLimits,
        files: &JobFiles,
    ) -> Result<SourceRun> {
        let compiler = self.compiler()?;
        let (wasm, step) = match compiler.compile(lang, source, compile_limits).await? {
            Compiled::Failed {
                return_code,
                stderr,
                compile_ms,
            } => {
                let step = CompileStep {
                    return_code,
                    stderr,
                    duration_ms: compile_ms as f64,
                    cached: false,
                    timed_out: return_code == crate::cc::TIMEOUT_CODE,
                };
                return Ok(SourceRun {
                    compile: Some(step),
                    run: None,
                    files: BTreeMap::new(),
                });
            }
            Compiled::Module {
                wasm,
                cached,
                compile_ms,
            } => (
                wasm,
                CompileStep {
                    return_code: 0,
                    stderr: String::new(),
                    duration_ms: compile_ms as f64,
                    cached,
                    timed_out: false,
                },
            ),
        };
        let key: [u8; 32] = Sha256::digest(&wasm).into();
        let pre = match self.modules().get(&key) {
            Some(pre) => pre,
            None => {
                let sandbox = self.clone();
                let bytes = Arc::clone(&wasm);
                let pre = tokio::task::spawn_blocking(move || sandbox.prepare_module(&bytes))
                    .await
                    .map_err(|e| super::SandboxError::Engine {
                        reason: format!("compiling the module: {e}"),
                    })??;
                self.modules().put(key, pre.clone());
                pre
            }
        };
        let (run, fetched) = self.run_command_module(&pre, stdin, limits, files).await?;
        Ok(SourceRun {
            compile: Some(step),
            run: Some(run),
            files: fetched,
        })
    }

    /// The C/C++ compiler: the one set with [`Sandbox::with_compiler`], else the process-wide
    /// one (an error saying how to install the toolchain when it is missing).
    pub fn compiler(&self) -> Result<Compiler> {
        if let Some(compiler) = self.configured_compiler() {
            return Ok(compiler);
        }
        Ok(Compiler::shared()?)
    }

    /// Every language with the version this build runs: asked of the interpreters once; C and
    /// C++ only when the toolchain is installed (`None` otherwise).
    pub async fn languages(&self) -> Result<Vec<(Language, Option<String>)>> {
        let python = self.python_version().await?;
        let quickjs = self.quickjs_version().await?;
        let cc = self.compiler().ok().map(|c| c.version().to_owned());
        Ok(Language::ALL
            .iter()
            .map(|&language| {
                let version = match language {
                    Language::Python => Some(format!("CPython {python}")),
                    Language::Javascript => Some(format!("QuickJS-NG {quickjs}")),
                    Language::Typescript => {
                        Some(format!("QuickJS-NG {quickjs}, types stripped by SWC"))
                    }
                    Language::C | Language::Cpp => cc.clone(),
                };
                (language, version)
            })
            .collect())
    }
}
