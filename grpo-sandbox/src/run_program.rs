//! One entry point for every language the sandbox runs: Python, JavaScript, TypeScript, C and
//! C++, each with its compile step (C and C++ only) and its run.
//!
//! | language | how it runs |
//! |---|---|
//! | `python` | CPython 3.14 for WASI, a snapshotted component |
//! | `javascript` | QuickJS-NG (WASIp1 core module) with a Node.js prelude |
//! | `typescript` | types stripped on the host (SWC), then as JavaScript |
//! | `c`, `cpp` | compiled on the host to `wasm32-wasi` by a confined, pinned zig, then run as a WASIp1 command |

use std::collections::BTreeMap;

use grpo_tasks::Language;

use crate::engine::files::JobFiles;
use crate::error::Result;
use crate::guest::cc::{CLang, CompileLimits, Compiled, Compiler, CompilerOptions, Toolchain};
use crate::guest::python::harness::Job;
use crate::guest::wasip1::{self, Entry, ModuleGuest};
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

/// One program to run, in any language: what [`Sandbox::run_program`] takes.
///
/// ```
/// use grpo_sandbox::{Limits, RunRequest};
/// use grpo_tasks::Language;
/// let request = RunRequest::new(Language::C, "int main(void) { return 0; }")
///     .with_stdin(b"")
///     .with_limits(Limits { time_limit_ms: 500, ..Limits::default() });
/// assert_eq!(request.limits.wall_limit_ms(), 1500);
/// ```
#[derive(Debug, Clone)]
pub struct RunRequest<'a> {
    /// The program's language.
    pub language: Language,
    /// Its source.
    pub source: &'a str,
    /// What it reads on stdin.
    pub stdin: &'a [u8],
    /// The limits of the run.
    pub limits: Limits,
    /// The limits of the compile (C and C++).
    pub compile: CompileLimits,
    /// Files placed in its directory before the run and read back after it.
    pub files: JobFiles,
    /// Its command-line arguments after the program's name (`sys.argv[1:]`, `argv[1..]`);
    /// Python, C and C++ only.
    pub args: Vec<String>,
}

impl<'a> RunRequest<'a> {
    /// `source` in `language`, with no stdin, default limits and no files.
    pub fn new(language: Language, source: &'a str) -> Self {
        RunRequest {
            language,
            source,
            stdin: b"",
            limits: Limits::default(),
            compile: CompileLimits::default(),
            files: JobFiles::default(),
            args: Vec::new(),
        }
    }

    /// The same request reading `stdin`.
    pub fn with_stdin(mut self, stdin: &'a [u8]) -> Self {
        self.stdin = stdin;
        self
    }

    /// The same request under `limits`.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The same request with other compile limits.
    pub fn with_compile(mut self, compile: CompileLimits) -> Self {
        self.compile = compile;
        self
    }

    /// The same request with `files`.
    pub fn with_files(mut self, files: JobFiles) -> Self {
        self.files = files;
        self
    }

    /// The same request with command-line arguments.
    pub fn with_args(mut self, args: Vec<String>) -> Self {
        self.args = args;
        self
    }
}

/// A program's compile step (when its language has one) and its run (unless the compile
/// failed).
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutput {
    /// `None` for interpreted languages.
    pub compile: Option<CompileStep>,
    /// `None` when the compile failed.
    pub run: Option<RunResult>,
    /// The fetched files (see [`JobFiles::fetch`]).
    pub files: BTreeMap<String, Vec<u8>>,
}

impl RunOutput {
    /// The run's status, or `Error` when the program did not compile.
    pub fn status(&self) -> RunStatus {
        self.run.as_ref().map_or(RunStatus::Error, |r| r.status)
    }
}

impl Sandbox {
    /// Runs a program like its usual command line (`python3 main.py`, `node main.js`,
    /// `gcc main.c && ./a.out`, ...), with its stdin, its files placed in its directory first
    /// and `files.fetch` read back after; the compile of C and C++ is limited by
    /// `request.compile` and the run by `request.limits`. The one entry point for every
    /// language ([`Sandbox::run`] is its Python shorthand).
    pub async fn run_program(&self, request: &RunRequest<'_>) -> Result<RunOutput> {
        let RunRequest {
            language,
            source,
            stdin,
            limits,
            files,
            args,
            ..
        } = request;
        if !args.is_empty() && !matches!(language, Language::Python | Language::C | Language::Cpp) {
            return Err(crate::error::SandboxError::Unsupported {
                reason: format!("command-line arguments are not supported for {language}"),
            });
        }
        let (language, source, stdin) = (*language, *source, *stdin);
        let (compile, run, files) = match language {
            Language::Python => {
                let mut job = Job::script(source);
                job.argv = args.to_vec();
                let (run, _, fetched) = self
                    .python()
                    .execute(self.host(), &job, stdin, limits, files)
                    .await?;
                (None, Some(run), fetched)
            }
            Language::Javascript => {
                let (run, fetched) = self.javascript(source, stdin, limits, files).await?;
                (None, Some(run), fetched)
            }
            Language::Typescript => {
                match crate::guest::typescript::strip_types(source, "main.ts") {
                    Ok(js) => {
                        let (run, fetched) = self.javascript(&js, stdin, limits, files).await?;
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
                            cpu_ms: 0.0,
                            truncated: false,
                        }),
                        BTreeMap::new(),
                    ),
                }
            }
            Language::C | Language::Cpp => {
                let lang = if language == Language::C {
                    CLang::C
                } else {
                    CLang::Cpp
                };
                return self.compile_and_run(lang, request).await;
            }
        };
        Ok(RunOutput {
            compile,
            run,
            files,
        })
    }

    /// Runs a JavaScript program like `node main.js`.
    async fn javascript(
        &self,
        program: &str,
        stdin: &[u8],
        limits: &Limits,
        files: &JobFiles,
    ) -> Result<(RunResult, BTreeMap<String, Vec<u8>>)> {
        self.quickjs()
            .run(self.host(), self.modules(), program, stdin, limits, files)
            .await
    }

    /// Compiles `request`'s C or C++ source (`lang`) and runs the module.
    async fn compile_and_run(&self, lang: CLang, request: &RunRequest<'_>) -> Result<RunOutput> {
        let RunRequest {
            source,
            stdin,
            limits,
            compile: compile_limits,
            files,
            args,
            ..
        } = request;
        let compiler = self.compiler_installing().await?;
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
                    timed_out: return_code == crate::guest::cc::TIMEOUT_CODE,
                };
                return Ok(RunOutput {
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
        let pre = self.modules().linked(self.host().engine(), wasm).await?;
        let guest = ModuleGuest {
            pre: &pre,
            entry: Entry::Command,
            args,
        };
        let (run, fetched) = wasip1::run(self.host(), guest, stdin, limits, files).await?;
        Ok(RunOutput {
            compile: Some(step),
            run: Some(run),
            files: fetched,
        })
    }

    /// The C/C++ compiler: the one set with [`Sandbox::with_compiler`]; else, with
    /// [`SandboxOptions::compile_parallel`](crate::SandboxOptions::compile_parallel), one of
    /// this sandbox's own with that cap (built and kept on first use); else the process-wide
    /// one. An error says how to install the toolchain when it is missing.
    pub fn compiler(&self) -> Result<Compiler> {
        if let Some(compiler) = self.configured_compiler() {
            return Ok(compiler);
        }
        let Some(max_parallel) = self.compile_parallel() else {
            return Ok(Compiler::shared()?);
        };
        let options = CompilerOptions {
            max_parallel,
            ..CompilerOptions::default()
        };
        let own = Compiler::with_options(Toolchain::locate_default()?, options);
        // Two first uses at once each built one: the first set is kept by both.
        self.with_compiler(own.clone());
        Ok(self.configured_compiler().unwrap_or(own))
    }

    /// [`Sandbox::compiler`], installing the toolchain first when it is missing (once per
    /// host, on a blocking thread: see [`Toolchain::obtain_default`]).
    pub async fn compiler_installing(&self) -> Result<Compiler> {
        match self.compiler() {
            Err(crate::error::SandboxError::Toolchain(crate::guest::cc::CcError::Missing {
                ..
            })) => {
                tokio::task::spawn_blocking(Toolchain::obtain_default)
                    .await
                    .map_err(crate::error::SandboxError::blocking(
                        "installing the C/C++ toolchain",
                    ))??;
                self.compiler()
            }
            other => other,
        }
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
