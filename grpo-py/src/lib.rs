//! The grpo-rs verifiers as a Python extension module, imported as `grpo_rewards._native`.
//!
//! The Python package (`python/grpo_rewards`) wraps this module: it re-exports the checks,
//! adds the asyncio variant, the Math-Verify-shaped `grpo_rewards.math_verify` and the TRL and
//! verl adapters. Everything here is the same Rust as the `grpo` binary:
//!
//! - the math checks (`check_math`, `check_math_batch`, `verify_answers`, ...) are in
//!   [`math`];
//! - `score` and `Pack.score` score through a [`Scorer`], as every `grpo` command does, built
//!   once per distinct weights (and once per pack) and kept: a call builds nothing but its
//!   own inputs. Code runs in the process-wide wasmtime [`Sandbox`];
//! - `Interpreter` keeps a sandboxed Python interpreter's state across calls, for code tools
//!   in multi-turn rollouts ([`interpreter`]).
//!
//! Every pool here (the batch's threads, the tokio runtime, the sandbox's programs, the
//! compile pool) is sized by one per-process thread count: see [`threads`] for the rule.
//! The result types pickle (Ray ships them between processes), and nothing installs a
//! signal handler or needs the main thread: limits are enforced by the host's own timers.
//!
//! Errors map onto Python's: a malformed task or option is a `ValueError` naming the field; a
//! failure on the verifier's side is `RewardFault`, never a score of 0.
#![deny(clippy::unwrap_used)]

mod interpreter;
mod local_sandbox;
mod math;
mod threads;

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use grpo_rewards::{RewardError, ScoredResult, Scorer, ScoringConfig};
use grpo_sandbox::{Sandbox, SandboxOptions};
use grpo_tasks::{Pack as TaskPack, RewardWeights, Task};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyType;

create_exception!(
    grpo_rewards,
    RewardFault,
    PyRuntimeError,
    "The verifier could not judge a completion for a reason on its side (the sandbox failed): \
     never a score of 0."
);

/// How often a waiting call wakes to let Python deliver Ctrl-C.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// One test of a code task.
#[pyclass(frozen, eq, get_all, from_py_object, module = "grpo_rewards")]
#[derive(Debug, Clone, PartialEq)]
struct TestResult {
    /// The test's position in the task.
    index: usize,
    /// Whether it passed.
    passed: bool,
    /// How the run ended: `ok`, `error`, `timeout`, `memory_limit`, `output_limit`, `crash`.
    status: String,
    /// Why it passed or failed.
    reason: String,
    /// The partial points a checker gave a failed test (`None`: 1 when passed, else 0).
    points: Option<f64>,
}

#[pymethods]
impl TestResult {
    #[new]
    #[pyo3(signature = (index, passed, status, reason, points = None))]
    fn new(
        index: usize,
        passed: bool,
        status: String,
        reason: String,
        points: Option<f64>,
    ) -> Self {
        TestResult {
            index,
            passed,
            status,
            reason,
            points,
        }
    }

    /// Pickles as the constructor's arguments.
    #[allow(clippy::type_complexity, reason = "the constructor's argument tuple")]
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> (
        Bound<'py, PyType>,
        (usize, bool, String, String, Option<f64>),
    ) {
        let t = slf.get();
        (
            slf.get_type(),
            (
                t.index,
                t.passed,
                t.status.clone(),
                t.reason.clone(),
                t.points,
            ),
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "TestResult(index={}, passed={}, status={:?})",
            self.index,
            if self.passed { "True" } else { "False" },
            self.status
        )
    }
}

/// One scored completion: the weighted reward, each component's value, and the verdict.
#[pyclass(frozen, eq, get_all, module = "grpo_rewards")]
#[derive(Debug, Clone, PartialEq)]
struct Score {
    /// The task's id.
    task_id: String,
    /// The weighted sum of the components.
    reward: f64,
    /// Each component's value by name (`accuracy`, `format`).
    rewards: BTreeMap<String, f64>,
    /// Whether the accuracy verdict is correct.
    correct: bool,
    /// The accuracy verdict's kind (`correct`, `wrong_answer`, `timeout`, …).
    kind: String,
    /// The verdict in words.
    reason: String,
    /// Per-test outcomes of a code task; `None` for other kinds.
    tests: Option<Vec<TestResult>>,
}

/// `Score`'s constructor arguments, in order.
type ScoreArgs = (
    String,
    f64,
    BTreeMap<String, f64>,
    bool,
    String,
    String,
    Option<Vec<TestResult>>,
);

#[pymethods]
impl Score {
    #[new]
    #[pyo3(signature = (task_id, reward, rewards, correct, kind, reason, tests = None))]
    fn new(
        task_id: String,
        reward: f64,
        rewards: BTreeMap<String, f64>,
        correct: bool,
        kind: String,
        reason: String,
        tests: Option<Vec<TestResult>>,
    ) -> Self {
        Score {
            task_id,
            reward,
            rewards,
            correct,
            kind,
            reason,
            tests,
        }
    }

    /// Pickles as the constructor's arguments.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> (Bound<'py, PyType>, ScoreArgs) {
        let s = slf.get().clone();
        (
            slf.get_type(),
            (
                s.task_id, s.reward, s.rewards, s.correct, s.kind, s.reason, s.tests,
            ),
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "Score(task_id={:?}, reward={}, correct={}, kind={:?})",
            self.task_id,
            self.reward,
            if self.correct { "True" } else { "False" },
            self.kind
        )
    }
}

impl From<ScoredResult> for Score {
    fn from(s: ScoredResult) -> Self {
        Score {
            task_id: s.task_id,
            reward: s.reward,
            rewards: s.components.to_map(),
            correct: s.correct,
            kind: s.verdict.kind.as_str().to_owned(),
            reason: s.verdict.reason,
            tests: s.verdict.tests.map(|tests| {
                tests
                    .into_iter()
                    .map(|t| TestResult {
                        index: t.index,
                        passed: t.passed,
                        status: serde_json::to_value(t.status)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_owned))
                            .unwrap_or_default(),
                        reason: t.reason,
                        points: t.points,
                    })
                    .collect()
            }),
        }
    }
}

static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();

/// The process-wide tokio runtime the scoring futures run on: the thread count's workers, and
/// as many blocking threads at most (file system calls, compiling a module).
fn runtime(py: Python<'_>) -> PyResult<&'static tokio::runtime::Runtime> {
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt);
    }
    let threads = threads::fixed(py)?.threads;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .max_blocking_threads(threads)
        .thread_name("grpo-rewards")
        .enable_all()
        .build()
        .map_err(|e| RewardFault::new_err(format!("starting the async runtime: {e}")))?;
    Ok(RUNTIME.get_or_init(|| rt))
}

/// Runs `future` on the runtime with the GIL released, waking every [`SIGNAL_POLL`] to let
/// Python raise `KeyboardInterrupt` (the future is then cancelled).
fn block_on<T: Send + 'static>(
    py: Python<'_>,
    future: impl Future<Output = T> + Send + 'static,
) -> PyResult<T> {
    let rt = runtime(py)?;
    let mut handle = rt.spawn(future);
    loop {
        // The timer is made inside the runtime: a tokio timer needs its context.
        let waited = py
            .detach(|| rt.block_on(async { tokio::time::timeout(SIGNAL_POLL, &mut handle).await }));
        match waited {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(join)) => {
                return Err(RewardFault::new_err(format!("scoring task failed: {join}")));
            }
            Err(_elapsed) => {
                if let Err(interrupt) = py.check_signals() {
                    handle.abort();
                    return Err(interrupt);
                }
            }
        }
    }
}

fn fault(e: RewardError) -> PyErr {
    match e {
        RewardError::InvalidConfig { .. } => PyValueError::new_err(e.to_string()),
        _ => RewardFault::new_err(e.to_string()),
    }
}

/// Reads and validates a task given as JSON text.
fn read_task(json: &str) -> PyResult<Task> {
    let task = grpo_tasks::read::task_from_str(json).map_err(|e| {
        let field = e.field.map_or("task".to_owned(), |f| format!("task.{f}"));
        PyValueError::new_err(format!("{field}: {}", e.message))
    })?;
    if let Some(problem) = task.validate().into_iter().next() {
        return Err(PyValueError::new_err(format!(
            "task.{}: {}",
            problem.field, problem.message
        )));
    }
    Ok(task)
}

static SANDBOX: OnceLock<Sandbox> = OnceLock::new();

/// The process-wide sandbox, running as many programs (and C/C++ compiles) at once as the
/// thread count, built on first use (after sizing the compile pool to the same count).
fn sandbox(py: Python<'_>) -> PyResult<Sandbox> {
    static BUILD: Mutex<()> = Mutex::new(());
    if let Some(sandbox) = SANDBOX.get() {
        return Ok(sandbox.clone());
    }
    let threads = threads::fixed(py)?.threads;
    py.detach(|| {
        // One build at a time: the compile pool can be sized once only.
        let _building = BUILD.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(sandbox) = SANDBOX.get() {
            return Ok(sandbox.clone());
        }
        threads::size_compile_pool(threads)?;
        let options = SandboxOptions {
            concurrency: threads,
            compile_parallel: Some(threads),
            sessions: max_interpreters()?,
            ..SandboxOptions::default()
        };
        let sandbox = Sandbox::new(&options)
            .map_err(|e| RewardFault::new_err(format!("starting the sandbox: {e}")))?;
        Ok(SANDBOX.get_or_init(|| sandbox).clone())
    })
}

/// The environment variable that sets how many `Interpreter`s may be open at once.
const MAX_INTERPRETERS_ENV: &str = "GRPO_REWARDS_MAX_INTERPRETERS";

/// Interpreters open at once when the environment does not say.
const DEFAULT_MAX_INTERPRETERS: usize = 64;

/// How many `Interpreter`s may be open at once (`GRPO_REWARDS_MAX_INTERPRETERS`, default
/// 64): the sandbox keeps an instance slot for each on top of those the scoring programs use,
/// so open interpreters never starve scoring and a trainer's batch of rollouts can each hold
/// one.
fn max_interpreters() -> PyResult<usize> {
    match std::env::var(MAX_INTERPRETERS_ENV) {
        Ok(text) => text
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|&n| n <= 4096)
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "{MAX_INTERPRETERS_ENV}={text:?} is not a count from 0 to 4096"
                ))
            }),
        Err(_) => Ok(DEFAULT_MAX_INTERPRETERS),
    }
}

/// A scorer of `config`, with the process-wide sandbox as its code judge when `code`.
fn build_scorer(py: Python<'_>, config: &ScoringConfig, code: bool) -> PyResult<Arc<Scorer>> {
    let sandbox = if code { Some(sandbox(py)?) } else { None };
    Ok(Arc::new(
        grpo_sandbox::scorer(config, sandbox).map_err(fault)?,
    ))
}

/// The bits of the explicit accuracy and format weights, and whether the scorer judges code.
type WeightsKey = (Option<u64>, Option<u64>, bool);

/// The scorer for explicit weights (over the defaults), built on first use and kept: one per
/// distinct `(accuracy, format, code)`.
fn scorer_for_weights(
    py: Python<'_>,
    weights: &RewardWeights,
    code: bool,
) -> PyResult<Arc<Scorer>> {
    static SCORERS: OnceLock<Mutex<HashMap<WeightsKey, Arc<Scorer>>>> = OnceLock::new();
    let key = (
        weights.accuracy.map(f64::to_bits),
        weights.format.map(f64::to_bits),
        code,
    );
    let cache = SCORERS.get_or_init(Default::default);
    if let Some(scorer) = cache.lock().map_err(|_| poisoned())?.get(&key) {
        return Ok(scorer.clone());
    }
    let config = ScoringConfig::with_weights(weights, &Default::default()).map_err(fault)?;
    let scorer = build_scorer(py, &config, code)?;
    cache
        .lock()
        .map_err(|_| poisoned())?
        .entry(key)
        .or_insert(scorer.clone());
    Ok(scorer)
}

fn poisoned() -> PyErr {
    RewardFault::new_err("a scoring thread panicked")
}

/// Scores completions of one task with `scorer`, GIL released.
fn score_with(
    py: Python<'_>,
    scorer: Arc<Scorer>,
    task: Task,
    completions: Vec<String>,
) -> PyResult<Vec<Score>> {
    let scored = block_on(py, async move {
        scorer
            .score_group(&task, &completions, scorer.options())
            .await
    })?
    .map_err(fault)?;
    Ok(scored.into_iter().map(Score::from).collect())
}

/// Scores completions of one task (our task schema as JSON text) with the given weights
/// (default: accuracy 1, format 0), as `grpo score` would.
#[pyfunction]
#[pyo3(signature = (task_json, completions, *, accuracy = None, format = None))]
fn score(
    py: Python<'_>,
    task_json: String,
    completions: Vec<String>,
    accuracy: Option<f64>,
    format: Option<f64>,
) -> PyResult<Vec<Score>> {
    let task = read_task(&task_json)?;
    let code = Scorer::needs_code([&task]);
    let scorer = scorer_for_weights(py, &RewardWeights { accuracy, format }, code)?;
    score_with(py, scorer, task, completions)
}

/// verl's `ground_truth` (JSON text: a math answer, or `{"inputs", "outputs", "fn_name"?}`
/// test cases) as a task of our schema (JSON text), converted as `grpo serve` converts it,
/// with a placeholder prompt naming `task_id` (verl's rows keep the prompt elsewhere).
#[pyfunction]
#[pyo3(signature = (ground_truth_json, task_id = "request"))]
fn task_from_ground_truth(ground_truth_json: &str, task_id: &str) -> PyResult<String> {
    foreign_task_json(
        "ground_truth",
        ground_truth_json,
        task_id,
        grpo_tasks::import::foreign::from_ground_truth,
        &format!("verl ground truth ({task_id})"),
    )
}

/// open-r1's `verification_info` (a dict as JSON text: `language` and `test_cases`) as a task
/// of our schema (JSON text), converted as `grpo serve` converts it.
#[pyfunction]
#[pyo3(signature = (verification_info_json, task_id = "request"))]
fn task_from_verification_info(verification_info_json: &str, task_id: &str) -> PyResult<String> {
    foreign_task_json(
        "verification_info",
        verification_info_json,
        task_id,
        grpo_tasks::import::foreign::from_verification_info,
        &format!("open-r1 verification_info ({task_id})"),
    )
}

/// Another trainer's `field` (JSON text) converted to a task of our schema by `convert`, as
/// JSON text, with `placeholder` as its prompt when it has none (the other trainers' rows
/// keep the prompt elsewhere; our schema wants one, never scored).
fn foreign_task_json(
    field: &str,
    json: &str,
    task_id: &str,
    convert: fn(
        &serde_json::Value,
        &str,
    ) -> Result<grpo_tasks::Task, grpo_tasks::import::foreign::ForeignError>,
    placeholder: &str,
) -> PyResult<String> {
    let value: serde_json::Value = serde_json::from_str(json)
        .map_err(|e| PyValueError::new_err(format!("{field}: not JSON: {e}")))?;
    let task = convert(&value, task_id).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mut task = serde_json::to_value(&task).map_err(|e| PyValueError::new_err(e.to_string()))?;
    if let Some(prompt) = task.get_mut("prompt")
        && prompt.as_str().is_some_and(str::is_empty)
    {
        *prompt = serde_json::Value::String(placeholder.to_owned());
    }
    Ok(task.to_string())
}

/// How many scorers this process has built (a test's proof that calls reuse them).
#[pyfunction]
fn scorers_built() -> u64 {
    grpo_rewards::scorer::built_count()
}

/// A task pack (a `.jsonl` file, a pack directory or `builtin:NAME`), scored with its own
/// `[rewards]` weights exactly as `grpo score --tasks` scores it.
#[pyclass(frozen, module = "grpo_rewards")]
struct Pack {
    spec: String,
    pack: TaskPack,
    /// The pack's scorer, built on the first `score`.
    scorer: OnceLock<Arc<Scorer>>,
}

#[pymethods]
impl Pack {
    #[new]
    fn new(py: Python<'_>, spec: String) -> PyResult<Self> {
        let pack = py
            .detach(|| TaskPack::load(&spec))
            .map_err(|e| PyValueError::new_err(format!("{spec}: {e}")))?;
        Ok(Pack {
            spec,
            pack,
            scorer: OnceLock::new(),
        })
    }

    /// The pack's name from its manifest.
    #[getter]
    fn name(&self) -> String {
        self.pack.manifest.name.clone()
    }

    /// Every task id, in file order.
    fn ids(&self) -> Vec<String> {
        self.pack.tasks().map(|t| t.id().to_owned()).collect()
    }

    fn __len__(&self) -> usize {
        self.pack.tasks().count()
    }

    fn __repr__(&self) -> String {
        format!("Pack({:?}, {} tasks)", self.spec, self.__len__())
    }

    /// One task as JSON text (the Python wrapper turns it into a dict).
    fn task_json(&self, id: &str) -> PyResult<String> {
        let task = self.task(id)?;
        serde_json::to_string(task).map_err(|e| RewardFault::new_err(e.to_string()))
    }

    /// Scores completions of the task `task_id` with the pack's weights.
    fn score(
        &self,
        py: Python<'_>,
        task_id: &str,
        completions: Vec<String>,
    ) -> PyResult<Vec<Score>> {
        let task = self.task(task_id)?.clone();
        let scorer = match self.scorer.get() {
            Some(scorer) => scorer.clone(),
            None => {
                let config = ScoringConfig::for_pack(&self.pack.manifest).map_err(fault)?;
                let code = Scorer::needs_code(self.pack.tasks());
                let scorer = build_scorer(py, &config, code)?;
                self.scorer.get_or_init(|| scorer).clone()
            }
        };
        score_with(py, scorer, task, completions)
    }
}

impl Pack {
    fn task(&self, id: &str) -> PyResult<&Task> {
        self.pack.get(id).ok_or_else(|| {
            PyValueError::new_err(format!("task_id: no task {id:?} in {}", self.spec))
        })
    }
}

/// Sets the process's thread count (rule 1 of [`threads`]); an error once the pools run on
/// another count.
#[pyfunction]
fn set_threads(threads: usize) -> PyResult<()> {
    threads::set(threads)
}

/// `threads()`'s answer: count, rule, fixed, runtime workers, sandbox concurrency.
type ThreadsInfo = (usize, &'static str, bool, Option<usize>, Option<usize>);

/// The thread count, the rule that chose it (`explicit`, `env`, `ray`,
/// `available_parallelism`), whether the pools were sized with it yet, and the sizes of the
/// runtime's workers and the sandbox's concurrent programs once each exists.
#[pyfunction]
#[pyo3(name = "threads")]
fn thread_budget(py: Python<'_>) -> PyResult<ThreadsInfo> {
    let (budget, fixed) = threads::current(py)?;
    Ok((
        budget.threads,
        budget.source.as_str(),
        fixed,
        RUNTIME.get().map(|rt| rt.metrics().num_workers()),
        SANDBOX.get().map(Sandbox::concurrency),
    ))
}

/// The module `grpo_rewards._native`.
#[pymodule]
#[pyo3(name = "_native")]
fn grpo_py(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("RewardFault", m.py().get_type::<RewardFault>())?;
    m.add_class::<math::MathResult>()?;
    m.add_class::<TestResult>()?;
    m.add_class::<Score>()?;
    m.add_class::<Pack>()?;
    m.add(
        "InterpreterClosed",
        m.py().get_type::<interpreter::InterpreterClosed>(),
    )?;
    m.add_class::<interpreter::Interpreter>()?;
    m.add_class::<interpreter::RunResult>()?;
    m.add(
        "SandboxClosed",
        m.py().get_type::<local_sandbox::SandboxClosed>(),
    )?;
    m.add_class::<local_sandbox::LocalSandbox>()?;
    m.add_class::<local_sandbox::ExecResult>()?;
    m.add_function(wrap_pyfunction!(math::check_math, m)?)?;
    m.add_function(wrap_pyfunction!(math::check_math_batch, m)?)?;
    m.add_function(wrap_pyfunction!(math::verify_answers, m)?)?;
    m.add_function(wrap_pyfunction!(math::verify_parsed, m)?)?;
    m.add_function(wrap_pyfunction!(math::extract_answer, m)?)?;
    m.add_function(wrap_pyfunction!(score, m)?)?;
    m.add_function(wrap_pyfunction!(scorers_built, m)?)?;
    m.add_function(wrap_pyfunction!(task_from_ground_truth, m)?)?;
    m.add_function(wrap_pyfunction!(task_from_verification_info, m)?)?;
    m.add_function(wrap_pyfunction!(set_threads, m)?)?;
    m.add_function(wrap_pyfunction!(thread_budget, m)?)?;
    Ok(())
}
