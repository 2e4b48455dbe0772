//! One `exec`: the command line parsed, each simple command turned into a
//! [`RunRequest`] (or a compile) over the workspace's files, run through
//! [`Sandbox::run_program`], and the files it wrote carried back.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use grpo_rewards::code::limits::Limits;
use grpo_rewards::result::{RunResult, RunStatus};
use grpo_tasks::Language;

use super::command::{self, Simple};
use super::tree::{self, WorkPath};
use super::{ExecResult, Executable, Open, WorkspaceError, WorkspaceLimits};
use crate::engine::files::{JobFiles, JobPath};
use crate::guest::cc::{CLang, CompileLimits, Compiled, TIMEOUT_CODE};
use crate::run_program::RunRequest;
use crate::sandbox::Sandbox;

/// Exit code of a command stopped by its time limit (as `timeout(1)`).
const EXIT_TIMEOUT: i32 = 124;
/// Exit code of a command stopped at its memory cap (as a SIGKILL).
const EXIT_MEMORY: i32 = 137;
/// Exit code of a command outside the subset (as a shell's "not found").
const EXIT_UNSUPPORTED: i32 = 127;
/// Exit code of syntax outside the subset, or of a usage error.
const EXIT_USAGE: i32 = 2;

/// What one simple command gave.
struct Outcome {
    exit_code: i32,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    timed_out: bool,
    cpu_ms: f64,
}

impl Outcome {
    fn failed(exit_code: i32, stderr: String) -> Outcome {
        Outcome {
            exit_code,
            stdout: Vec::new(),
            stderr: stderr.into_bytes(),
            timed_out: false,
            cpu_ms: 0.0,
        }
    }
}

/// Runs the command line `line` in `open` within `timeout`.
pub(super) async fn run_line(
    sandbox: &Sandbox,
    limits: &WorkspaceLimits,
    open: &mut Open,
    line: &str,
    timeout: Duration,
) -> Result<ExecResult, WorkspaceError> {
    let deadline = Instant::now() + timeout;
    let commands = match command::parse(line) {
        Ok(commands) => commands,
        Err(e) => {
            return Ok(finish(
                limits,
                vec![Outcome::failed(EXIT_USAGE, format!("sh: {e}\n"))],
            ));
        }
    };
    let mut outcomes = Vec::new();
    for simple in &commands {
        let left = deadline.saturating_duration_since(Instant::now());
        let outcome = if left.is_zero() {
            Outcome {
                timed_out: true,
                ..Outcome::failed(
                    EXIT_TIMEOUT,
                    format!("sh: timed out after {} ms\n", timeout.as_millis()),
                )
            }
        } else {
            // Boxed: the run's future is large, and a caller's stack may be small.
            Box::pin(run_simple(sandbox, limits, open, simple, left)).await?
        };
        let stop = outcome.exit_code != 0;
        outcomes.push(outcome);
        if stop {
            break;
        }
    }
    Ok(finish(limits, outcomes))
}

/// The commands' outcomes as one result: outputs concatenated and cut at the cap, the last
/// exit code.
fn finish(limits: &WorkspaceLimits, outcomes: Vec<Outcome>) -> ExecResult {
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let (mut exit_code, mut timed_out, mut cpu_ms) = (0, false, 0.0);
    for o in outcomes {
        stdout.extend_from_slice(&o.stdout);
        stderr.extend_from_slice(&o.stderr);
        exit_code = o.exit_code;
        timed_out |= o.timed_out;
        cpu_ms += o.cpu_ms;
    }
    let truncated = stdout.len() > limits.output_bytes || stderr.len() > limits.output_bytes;
    stdout.truncate(limits.output_bytes);
    stderr.truncate(limits.output_bytes);
    ExecResult {
        exit_code,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        timed_out,
        truncated,
        cpu_ms: cpu_ms.round() as u64,
    }
}

const COMPILERS: [&str; 6] = ["gcc", "cc", "clang", "g++", "c++", "clang++"];

async fn run_simple(
    sandbox: &Sandbox,
    limits: &WorkspaceLimits,
    open: &mut Open,
    simple: &Simple,
    left: Duration,
) -> Result<Outcome, WorkspaceError> {
    let root = open.dir.path().to_path_buf();
    let name = simple.argv[0].as_str();
    // The redirections first, as a shell opens them before the program starts.
    let stdin = match &simple.stdin {
        None => Vec::new(),
        Some(file) => match WorkPath::parse(file) {
            Err(e) => return Ok(Outcome::failed(1, format!("sh: {e}\n"))),
            Ok(at) => match tree::read(&root, &at)? {
                Some(bytes) => bytes,
                None => {
                    return Ok(Outcome::failed(
                        1,
                        format!("sh: {file}: No such file or directory\n"),
                    ));
                }
            },
        },
    };
    let stdout_to = match &simple.stdout {
        None => None,
        Some(file) => match WorkPath::parse(file) {
            Err(e) => return Ok(Outcome::failed(1, format!("sh: {e}\n"))),
            Ok(at) => Some(at),
        },
    };
    let args = &simple.argv[1..];
    let mut outcome = if name == "python3" || name == "python" {
        match python_program(&root, name, args)? {
            Ok((source, argv)) => {
                let request = Program {
                    language: Language::Python,
                    source: &source,
                    args: argv,
                };
                run(sandbox, limits, open, request, &stdin, left).await?
            }
            Err(failed) => failed,
        }
    } else if name == "node" {
        match node_program(&root, args)? {
            Ok((language, source)) => {
                let request = Program {
                    language,
                    source: &source,
                    args: Vec::new(),
                };
                run(sandbox, limits, open, request, &stdin, left).await?
            }
            Err(failed) => failed,
        }
    } else if name == "true" || name == "false" {
        // The two builtins a liveness probe uses (`true`), run on the host.
        Outcome::failed(i32::from(name == "false"), String::new())
    } else if COMPILERS.contains(&name) {
        compile(sandbox, limits, open, name, args, left).await?
    } else if name.contains('/') {
        match executable(open, name) {
            Ok(Executable { language, source }) => {
                let request = Program {
                    language,
                    source: &source,
                    args: args.to_vec(),
                };
                run(sandbox, limits, open, request, &stdin, left).await?
            }
            Err(failed) => failed,
        }
    } else {
        Outcome::failed(EXIT_UNSUPPORTED, format!("unsupported command: {name}\n"))
    };
    if let Some(at) = stdout_to {
        let bytes = std::mem::take(&mut outcome.stdout);
        if let Err(e) = write_within_quota(limits, open, &at, &bytes) {
            outcome
                .stderr
                .extend_from_slice(format!("sh: {e}\n").as_bytes());
            outcome.exit_code = if outcome.exit_code == 0 {
                1
            } else {
                outcome.exit_code
            };
        }
    }
    Ok(outcome)
}

/// `python3 [-u -B -I -E -s -S -O] (-c CODE | FILE) [ARGS]`: the source and `sys.argv[1:]`,
/// or the outcome of a usage error.
fn python_program(
    root: &std::path::Path,
    name: &str,
    args: &[String],
) -> Result<Result<(String, Vec<String>), Outcome>, WorkspaceError> {
    let mut rest = args.iter();
    loop {
        let Some(arg) = rest.next() else {
            return Ok(Err(Outcome::failed(
                EXIT_USAGE,
                format!(
                    "{name}: an interactive interpreter is not supported here (give FILE or -c CODE)\n"
                ),
            )));
        };
        match arg.as_str() {
            "-u" | "-B" | "-I" | "-E" | "-s" | "-S" | "-O" => continue,
            "-c" => {
                let Some(code) = rest.next() else {
                    return Ok(Err(Outcome::failed(
                        EXIT_USAGE,
                        format!("{name}: Argument expected for the -c option\n"),
                    )));
                };
                return Ok(Ok((code.clone(), rest.cloned().collect())));
            }
            flag if flag.starts_with('-') => {
                return Ok(Err(Outcome::failed(
                    EXIT_USAGE,
                    format!("{name}: option {flag} is not supported here\n"),
                )));
            }
            file => {
                let source = read_source(root, file)?;
                return Ok(match source {
                    Some(source) => Ok((source, rest.cloned().collect())),
                    None => Err(Outcome::failed(
                        EXIT_USAGE,
                        format!(
                            "{name}: can't open file '{file}': [Errno 2] No such file or directory\n"
                        ),
                    )),
                });
            }
        }
    }
}

/// `node FILE`: its language (`.ts` is TypeScript) and source.
fn node_program(
    root: &std::path::Path,
    args: &[String],
) -> Result<Result<(Language, String), Outcome>, WorkspaceError> {
    let [file] = args else {
        return Ok(Err(Outcome::failed(
            EXIT_USAGE,
            "node: give exactly one FILE (options and arguments are not supported here)\n".into(),
        )));
    };
    let language = if file.ends_with(".ts") {
        Language::Typescript
    } else {
        Language::Javascript
    };
    Ok(match read_source(root, file)? {
        Some(source) => Ok((language, source)),
        None => Err(Outcome::failed(
            1,
            format!("node: Cannot find module '{file}'\n"),
        )),
    })
}

/// The text of a workspace file a command names (`None`: missing or outside; a usage
/// message then says so).
fn read_source(root: &std::path::Path, file: &str) -> Result<Option<String>, WorkspaceError> {
    let Ok(at) = WorkPath::parse(file) else {
        return Ok(None);
    };
    Ok(tree::read(root, &at)?.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
}

/// `./OUT`: the program built there.
fn executable(open: &Open, name: &str) -> Result<Executable, Outcome> {
    let at = WorkPath::parse(name)
        .map_err(|e| Outcome::failed(EXIT_UNSUPPORTED, format!("sh: {e}\n")))?;
    if let Some(exe) = open.executables.get(&at) {
        return Ok(exe.clone());
    }
    let exists = tree::read(open.dir.path(), &at).ok().flatten().is_some();
    Err(if exists {
        Outcome::failed(
            126,
            format!("sh: {name}: Permission denied (only programs built here by gcc or g++ run)\n"),
        )
    } else {
        Outcome::failed(EXIT_UNSUPPORTED, format!("sh: {name}: not found\n"))
    })
}

/// Compiler flags taken and ignored: the pinned compiler has its own.
fn ignored_flag(flag: &str) -> bool {
    ["-O", "-std=", "-W", "-g", "-l", "-march=", "-f"]
        .iter()
        .any(|p| flag.starts_with(p))
        || matches!(flag, "-s" | "-static" | "-pipe" | "-pthread")
}

/// `g++ [FLAGS] [-o OUT] FILE`: compiles FILE and records OUT as its program.
async fn compile(
    sandbox: &Sandbox,
    limits: &WorkspaceLimits,
    open: &mut Open,
    name: &str,
    args: &[String],
    left: Duration,
) -> Result<Outcome, WorkspaceError> {
    let mut out = None;
    let mut sources = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if arg == "-o" {
            match rest.next() {
                Some(o) => out = Some(o.clone()),
                None => {
                    return Ok(Outcome::failed(
                        1,
                        format!("{name}: error: missing filename after '-o'\n"),
                    ));
                }
            }
        } else if let Some(o) = arg.strip_prefix("-o") {
            out = Some(o.to_owned());
        } else if arg.starts_with('-') {
            if !ignored_flag(arg) {
                return Ok(Outcome::failed(
                    1,
                    format!("{name}: option {arg} is not supported here\n"),
                ));
            }
        } else {
            sources.push(arg.clone());
        }
    }
    let [file] = sources.as_slice() else {
        return Ok(Outcome::failed(
            1,
            format!(
                "{name}: give exactly one source file (got {})\n",
                sources.len()
            ),
        ));
    };
    let cpp_file = [".cc", ".cpp", ".cxx", ".C", ".c++"]
        .iter()
        .any(|e| file.ends_with(e));
    let lang = if cpp_file || name.ends_with("++") {
        CLang::Cpp
    } else {
        CLang::C
    };
    let out = out.unwrap_or_else(|| "a.out".into());
    let out_at = match WorkPath::parse(&out) {
        Ok(at) => at,
        Err(e) => return Ok(Outcome::failed(1, format!("{name}: {e}\n"))),
    };
    let Some(source) = read_source(open.dir.path(), file)? else {
        return Ok(Outcome::failed(
            1,
            format!("{name}: error: {file}: No such file or directory\n"),
        ));
    };
    let compiler = sandbox.compiler_installing().await?;
    let compile_limits = CompileLimits {
        wall_ms: CompileLimits::default()
            .wall_ms
            .min(left.as_millis().try_into().unwrap_or(u64::MAX))
            .max(1),
        ..CompileLimits::default()
    };
    let compiled = compiler
        .compile(lang, &source, &compile_limits)
        .await
        .map_err(crate::error::SandboxError::from)?;
    match compiled {
        Compiled::Failed {
            return_code,
            stderr,
            ..
        } => {
            let timed_out = return_code == TIMEOUT_CODE;
            Ok(Outcome {
                timed_out,
                ..Outcome::failed(
                    if timed_out {
                        EXIT_TIMEOUT
                    } else {
                        return_code.max(1)
                    },
                    stderr,
                )
            })
        }
        Compiled::Module { wasm, .. } => {
            if let Err(e) = write_within_quota(limits, open, &out_at, &wasm) {
                return Ok(Outcome::failed(1, format!("{name}: {e}\n")));
            }
            let language = match lang {
                CLang::C => Language::C,
                CLang::Cpp => Language::Cpp,
            };
            open.executables.insert(
                out_at,
                Executable {
                    language,
                    source: source.into(),
                },
            );
            Ok(Outcome::failed(0, String::new()))
        }
    }
}

/// Writes a file the command made (its `> FILE`, its compiled module), within the quota.
fn write_within_quota(
    limits: &WorkspaceLimits,
    open: &mut Open,
    at: &WorkPath,
    bytes: &[u8],
) -> Result<(), WorkspaceError> {
    let root = open.dir.path();
    let others: u64 = tree::list(root)?
        .iter()
        .filter(|(p, _)| p != at)
        .map(|(_, n)| n)
        .sum();
    let total = others.saturating_add(bytes.len() as u64);
    if total > limits.quota_bytes {
        return Err(WorkspaceError::Quota {
            path: at.as_str().to_owned(),
            total,
            quota: limits.quota_bytes,
        });
    }
    tree::write(root, at, bytes)?;
    open.executables.remove(at);
    Ok(())
}

/// A program to run over the workspace.
struct Program<'a> {
    language: Language,
    source: &'a str,
    args: Vec<String>,
}

/// Runs `program` through [`Sandbox::run_program`] with the workspace's files placed, and
/// writes back the files it left (those of the workspace and those its arguments name).
async fn run(
    sandbox: &Sandbox,
    limits: &WorkspaceLimits,
    open: &mut Open,
    program: Program<'_>,
    stdin: &[u8],
    left: Duration,
) -> Result<Outcome, WorkspaceError> {
    let root = open.dir.path().to_path_buf();
    let mut put = Vec::new();
    let mut fetch = BTreeSet::new();
    for (at, _) in tree::list(&root)? {
        // Built programs stay on the host: `./OUT` runs them.
        if open.executables.contains_key(&at) {
            continue;
        }
        if let (Some(bytes), Ok(job)) = (tree::read(&root, &at)?, JobPath::parse(at.as_str())) {
            put.push((job, bytes));
            fetch.insert(at);
        }
    }
    for arg in &program.args {
        if let Ok(at) = WorkPath::parse(arg)
            && !open.executables.contains_key(&at)
        {
            fetch.insert(at);
        }
    }
    let fetch_paths: Vec<JobPath> = fetch
        .iter()
        .filter_map(|at| JobPath::parse(at.as_str()).ok())
        .collect();
    let left_ms: u64 = left.as_millis().try_into().unwrap_or(u64::MAX).max(1);
    let run_limits = Limits {
        time_limit_ms: limits.cpu_ms.min(left_ms),
        wall_limit_ms: Some(left_ms),
        memory_mb: limits.memory_mb,
        // The fetched files share the output cap: room for twice the quota, so that a run
        // past it is seen below (the exec's own cap is applied to its result).
        output_bytes: limits
            .output_bytes
            .max(usize::try_from(limits.quota_bytes.saturating_mul(2)).unwrap_or(usize::MAX))
            .max(1024),
        file_quota_bytes: limits.quota_bytes,
    };
    let request = RunRequest::new(program.language, program.source)
        .with_stdin(stdin)
        .with_limits(run_limits)
        .with_args(program.args.clone())
        .with_files(JobFiles {
            put,
            fetch: fetch_paths,
        });
    let output = sandbox.run_program(&request).await?;
    let mut outcome = match output.run {
        Some(run) => outcome_of(run),
        None => {
            let compile = output.compile.map(|c| c.stderr).unwrap_or_default();
            Outcome::failed(1, compile)
        }
    };
    // The workspace as the run left it, unless that is over the quota.
    let mut back = Vec::new();
    for (name, bytes) in output.files {
        back.push((WorkPath::parse(&name)?, bytes));
    }
    let kept: u64 = tree::list(&root)?
        .iter()
        .filter(|(p, _)| !back.iter().any(|(q, _)| q == p))
        .map(|(_, n)| n)
        .sum();
    let total = kept + back.iter().map(|(_, b)| b.len() as u64).sum::<u64>();
    if total > limits.quota_bytes {
        outcome.stderr.extend_from_slice(
            format!(
                "\n[sandbox] the workspace's quota of {} bytes exceeded ({total} bytes): the command's files were not kept\n",
                limits.quota_bytes
            )
            .as_bytes(),
        );
        if outcome.exit_code == 0 {
            outcome.exit_code = 1;
        }
        return Ok(outcome);
    }
    for (at, bytes) in &back {
        tree::write(&root, at, bytes)?;
        open.executables.remove(at);
    }
    Ok(outcome)
}

/// A run's exit code as a shell reports it.
fn outcome_of(run: RunResult) -> Outcome {
    let (exit_code, timed_out) = match run.status {
        RunStatus::Ok => (0, false),
        RunStatus::Timeout => (EXIT_TIMEOUT, true),
        RunStatus::MemoryLimit => (EXIT_MEMORY, false),
        RunStatus::Error | RunStatus::OutputLimit | RunStatus::Crash => {
            (run.exit_code.filter(|&c| c != 0).unwrap_or(1), false)
        }
    };
    Outcome {
        exit_code,
        stdout: run.stdout.into_bytes(),
        stderr: run.stderr.into_bytes(),
        timed_out,
        cpu_ms: run.cpu_ms,
    }
}
