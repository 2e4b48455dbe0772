//! The grpo-rs verifiers as a Python extension module, imported as `grpo_rewards._native`.
//!
//! The Python package (`python/grpo_rewards`) wraps this module: it re-exports the checks,
//! adds the asyncio variant, the Math-Verify-shaped `grpo_rewards.math_verify` and the TRL and
//! verl adapters. Everything here is the same Rust as the `grpo` binary:
//!
//! - `check_math` / `check_math_batch` run [`MathChecker`] with the GIL released; the batch
//!   spreads over Rust threads and polls for Ctrl-C, so a `KeyboardInterrupt` stops it within
//!   a fraction of a second with every worker joined;
//! - `verify_answers` compares answers already extracted (`math_verify.verify`);
//! - `score` and `Pack.score` score through a [`Scorer`], as every `grpo` command does, built
//!   once per distinct weights (and once per pack) and kept: a call builds nothing but its
//!   own inputs. Code runs in the process-wide wasmtime [`Sandbox`].
//!
//! Every pool here (the batch's threads, the tokio runtime, the sandbox's programs, the
//! compile pool) is sized by one per-process thread count: see [`threads`] for the rule.
//! The result types pickle (Ray ships them between processes), and nothing installs a
//! signal handler or needs the main thread: limits are enforced by the host's own timers.
//!
//! Errors map onto Python's: a malformed task or option is a `ValueError` naming the field; a
//! failure on the verifier's side is `RewardFault`, never a score of 0.
#![deny(clippy::unwrap_used)]

mod threads;

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use grpo_rewards::math::{
    EquivConfig, ExtractRule, MathCheck, MathChecker, MathConfig, PreparedGold,
};
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

/// The outcome of one math check.
#[pyclass(frozen, eq, get_all, module = "grpo_rewards")]
#[derive(Debug, Clone, PartialEq)]
struct MathResult {
    /// Whether the answer is equivalent to the reference.
    correct: bool,
    /// The answer found in the completion, cleaned; `None` when there was none.
    extracted: Option<String>,
    /// The verdict's kind: `correct`, `wrong_answer`, `no_answer`, `unparsable`.
    kind: String,
    /// The verdict in words.
    reason: String,
}

/// `MathResult`'s constructor arguments, in order.
type MathResultArgs = (bool, Option<String>, String, String);

#[pymethods]
impl MathResult {
    #[new]
    fn new(correct: bool, extracted: Option<String>, kind: String, reason: String) -> Self {
        MathResult {
            correct,
            extracted,
            kind,
            reason,
        }
    }

    /// Pickles as the constructor's arguments.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> (Bound<'py, PyType>, MathResultArgs) {
        let r = slf.get().clone();
        (slf.get_type(), (r.correct, r.extracted, r.kind, r.reason))
    }

    fn __repr__(&self) -> String {
        format!(
            "MathResult(correct={}, extracted={}, kind={:?}, reason={:?})",
            if self.correct { "True" } else { "False" },
            self.extracted
                .as_deref()
                .map_or("None".to_owned(), |e| format!("{e:?}")),
            self.kind,
            self.reason
        )
    }
}

impl From<MathCheck> for MathResult {
    fn from(check: MathCheck) -> Self {
        MathResult {
            correct: check.correct,
            extracted: check.extracted,
            kind: check.verdict.kind.as_str().to_owned(),
            reason: check.verdict.reason,
        }
    }
}

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
}

#[pymethods]
impl TestResult {
    #[new]
    fn new(index: usize, passed: bool, status: String, reason: String) -> Self {
        TestResult {
            index,
            passed,
            status,
            reason,
        }
    }

    /// Pickles as the constructor's arguments.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> (Bound<'py, PyType>, (usize, bool, String, String)) {
        let t = slf.get();
        (
            slf.get_type(),
            (t.index, t.passed, t.status.clone(), t.reason.clone()),
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
                    })
                    .collect()
            }),
        }
    }
}

/// The checker for the keyword options of `check_math` and friends: one per process for the
/// default options (with and without `rename_variables`), built once; a new one only for
/// other rules or tolerances.
fn checker(
    rules: Option<Vec<String>>,
    rel_tol: Option<f64>,
    abs_tol: Option<f64>,
    rename_variables: bool,
) -> PyResult<Cow<'static, MathChecker>> {
    static DEFAULT: OnceLock<MathChecker> = OnceLock::new();
    static RENAMING: OnceLock<MathChecker> = OnceLock::new();
    if rules.is_none() && rel_tol.is_none() && abs_tol.is_none() {
        let (slot, rename) = if rename_variables {
            (&RENAMING, true)
        } else {
            (&DEFAULT, false)
        };
        return Ok(Cow::Borrowed(slot.get_or_init(|| {
            let mut config = MathConfig::default();
            config.equiv.rename_variables = rename;
            // The default configuration is valid; `new` only rejects empty rules or
            // negative tolerances.
            MathChecker::new(config).unwrap_or_default()
        })));
    }
    build_checker(rules, rel_tol, abs_tol, rename_variables).map(Cow::Owned)
}

fn build_checker(
    rules: Option<Vec<String>>,
    rel_tol: Option<f64>,
    abs_tol: Option<f64>,
    rename_variables: bool,
) -> PyResult<MathChecker> {
    let mut config = MathConfig::default();
    if let Some(names) = rules {
        config.rules = names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                serde_json::from_value::<ExtractRule>(serde_json::Value::String(name.clone()))
                    .map_err(|_| {
                        PyValueError::new_err(format!(
                            "rules[{i}]: unknown extraction rule {name:?}; the rules are \
                             answer_tag, boxed, gsm8k, answer_is, whole, last_math, last_number"
                        ))
                    })
            })
            .collect::<PyResult<_>>()?;
    }
    let defaults = EquivConfig::default();
    config.equiv = EquivConfig {
        rel_tol: rel_tol.unwrap_or(defaults.rel_tol),
        abs_tol: abs_tol.unwrap_or(defaults.abs_tol),
        rename_variables,
        ..defaults
    };
    MathChecker::new(config).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Runs `f` on the prepared reference `gold` (with `alternatives`), reusing the last one this
/// thread prepared with the same process-wide checker: a reward function checks a group of
/// completions against one reference in a row, and the reference is read once per group, as
/// the Scorer reads it.
#[expect(
    clippy::ptr_arg,
    reason = "which Cow it is matters: only the borrowed, process-wide checker is cached"
)]
fn with_prepared<R>(
    checker: &Cow<'static, MathChecker>,
    gold: &str,
    alternatives: &[String],
    f: impl FnOnce(&PreparedGold) -> R,
) -> R {
    type Last = Option<(usize, String, Vec<String>, PreparedGold)>;
    thread_local! {
        static LAST: std::cell::RefCell<Last> = const { std::cell::RefCell::new(None) };
    }
    let Cow::Borrowed(shared) = checker else {
        return f(&checker.prepare(gold, alternatives));
    };
    let key = std::ptr::from_ref::<MathChecker>(shared) as usize;
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        let hit = last
            .as_ref()
            .is_some_and(|(k, g, a, _)| *k == key && g == gold && a == alternatives);
        if !hit {
            *last = Some((
                key,
                gold.to_string(),
                alternatives.to_vec(),
                shared.prepare(gold, alternatives),
            ));
        }
        match last.as_ref() {
            Some((_, _, _, prepared)) => f(prepared),
            None => f(&shared.prepare(gold, alternatives)),
        }
    })
}

/// Checks one completion against a reference answer (and its alternatives), GIL released.
#[pyfunction]
#[pyo3(signature = (gold, prediction, *, alternatives = None, rules = None, rel_tol = None,
                    abs_tol = None, rename_variables = false))]
#[allow(
    clippy::too_many_arguments,
    reason = "one keyword argument of the Python signature each"
)]
fn check_math(
    py: Python<'_>,
    gold: String,
    prediction: String,
    alternatives: Option<Vec<String>>,
    rules: Option<Vec<String>>,
    rel_tol: Option<f64>,
    abs_tol: Option<f64>,
    rename_variables: bool,
) -> PyResult<MathResult> {
    let checker = checker(rules, rel_tol, abs_tol, rename_variables)?;
    let alternatives = alternatives.unwrap_or_default();
    Ok(py.detach(|| {
        with_prepared(&checker, &gold, &alternatives, |gold| {
            MathResult::from(checker.check_prepared(gold, &prediction))
        })
    }))
}

/// Checks many `(gold, prediction)` pairs on Rust threads (`threads`, default the process's
/// thread count) with the GIL released; results in input order. Ctrl-C raises
/// `KeyboardInterrupt` within [`SIGNAL_POLL`] plus one check, after every worker has stopped.
#[pyfunction]
#[pyo3(signature = (pairs, *, threads = None, rules = None, rel_tol = None, abs_tol = None,
                    rename_variables = false))]
#[allow(
    clippy::too_many_arguments,
    reason = "one keyword argument of the Python signature each"
)]
fn check_math_batch(
    py: Python<'_>,
    pairs: Vec<(String, String)>,
    threads: Option<usize>,
    rules: Option<Vec<String>>,
    rel_tol: Option<f64>,
    abs_tol: Option<f64>,
    rename_variables: bool,
) -> PyResult<Vec<MathResult>> {
    let checker = checker(rules, rel_tol, abs_tol, rename_variables)?;
    if threads == Some(0) {
        return Err(PyValueError::new_err("threads: must be at least 1"));
    }
    let workers = match threads {
        Some(n) => n,
        None => threads::fixed(py)?.threads,
    }
    .min(pairs.len())
    .max(1);
    let slots: Vec<OnceLock<MathResult>> = (0..pairs.len()).map(|_| OnceLock::new()).collect();
    let next = AtomicUsize::new(0);
    let cancel = AtomicBool::new(false);
    let finished = (Mutex::new(0usize), Condvar::new());
    std::thread::scope(|scope| -> PyResult<()> {
        for k in 0..workers {
            let spawned = std::thread::Builder::new()
                .name(format!("grpo-math-{k}"))
                .spawn_scoped(scope, || {
                    while !cancel.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some((gold, prediction)) = pairs.get(i) else {
                            break;
                        };
                        let check = checker.check(gold, prediction);
                        // Each index is claimed once, so the slot is empty.
                        let _ = slots[i].set(MathResult::from(check));
                    }
                    let (count, done) = &finished;
                    let mut count = count.lock().unwrap_or_else(|e| e.into_inner());
                    *count += 1;
                    done.notify_all();
                });
            if let Err(e) = spawned {
                cancel.store(true, Ordering::Relaxed);
                return Err(RewardFault::new_err(format!(
                    "starting a worker thread: {e}"
                )));
            }
        }
        loop {
            let all_done = py.detach(|| {
                let (count, done) = &finished;
                let count = count.lock().unwrap_or_else(|e| e.into_inner());
                let (count, _) = done
                    .wait_timeout_while(count, SIGNAL_POLL, |c| *c < workers)
                    .unwrap_or_else(|e| e.into_inner());
                *count == workers
            });
            if all_done {
                return Ok(());
            }
            if let Err(interrupt) = py.check_signals() {
                cancel.store(true, Ordering::Relaxed);
                // The scope joins the workers before the error reaches Python; release the
                // GIL while they finish their current check.
                return Err(interrupt);
            }
        }
    })?;
    slots
        .into_iter()
        .enumerate()
        .map(|(i, slot)| {
            slot.into_inner()
                .ok_or_else(|| RewardFault::new_err(format!("pairs[{i}]: no result")))
        })
        .collect()
}

/// Compares answers already extracted (`math_verify.parse`'s output): true when any of
/// `answers` is equivalent to the first of `gold`, the rest of `gold` being alternatives.
/// With `gold_source`, the reference is read from the text `parse` was given (its boxes, its
/// final answer), as `check_math` reads it; with `answer_source` (the text the answers were
/// found in), several boxes there may answer the parts of a listed reference, as in
/// `check_math`.
#[pyfunction]
#[pyo3(signature = (gold, answers, *, gold_source = None, answer_source = None,
                    rel_tol = None, abs_tol = None, rename_variables = false))]
#[allow(
    clippy::too_many_arguments,
    reason = "one keyword argument of the Python signature each"
)]
fn verify_answers(
    py: Python<'_>,
    gold: Vec<String>,
    answers: Vec<String>,
    gold_source: Option<String>,
    answer_source: Option<String>,
    rel_tol: Option<f64>,
    abs_tol: Option<f64>,
    rename_variables: bool,
) -> PyResult<bool> {
    let checker = checker(None, rel_tol, abs_tol, rename_variables)?;
    let prepared = match (&gold_source, gold.split_first()) {
        (Some(source), _) => Some((source.as_str(), &[][..])),
        (None, Some((first, rest))) => Some((first.as_str(), rest)),
        (None, None) => None,
    };
    let Some((first, rest)) = prepared else {
        return Ok(false);
    };
    Ok(py.detach(|| {
        with_prepared(&checker, first, rest, |gold| {
            answers.into_iter().any(|a| match &answer_source {
                Some(source) => checker.check_found(gold, a, source).correct,
                None => checker.check_answer(gold, a).correct,
            })
        })
    }))
}

/// `verify(parse(gold), parse(prediction))` in one call: the reference read from its text,
/// the answer `parse` found in the prediction (`None`: no answer) with the text it was found
/// in. Positional arguments only, for the common path of `grpo_rewards.math_verify.verify`.
#[pyfunction]
fn verify_parsed(
    py: Python<'_>,
    gold_source: String,
    answer: Option<String>,
    answer_source: String,
    rename_variables: bool,
) -> PyResult<bool> {
    let checker = checker(None, None, None, rename_variables)?;
    let Some(answer) = answer else {
        return Ok(false);
    };
    Ok(py.detach(|| {
        with_prepared(&checker, &gold_source, &[], |gold| {
            checker.check_found(gold, answer, &answer_source).correct
        })
    }))
}

/// Extracts the final answer from a completion with the given rules (default: all, in the
/// default order); `None` when no rule finds one.
#[pyfunction]
#[pyo3(signature = (completion, *, rules = None))]
fn extract_answer(
    py: Python<'_>,
    completion: String,
    rules: Option<Vec<String>>,
) -> PyResult<Option<String>> {
    let checker = checker(rules, None, None, false)?;
    Ok(py.detach(|| {
        grpo_rewards::math::extract(&completion, &checker.config().rules).map(|e| e.text)
    }))
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
            ..SandboxOptions::default()
        };
        let sandbox = Sandbox::new(&options)
            .map_err(|e| RewardFault::new_err(format!("starting the sandbox: {e}")))?;
        Ok(SANDBOX.get_or_init(|| sandbox).clone())
    })
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
    let value: serde_json::Value = serde_json::from_str(ground_truth_json)
        .map_err(|e| PyValueError::new_err(format!("ground_truth: not JSON: {e}")))?;
    let task = grpo_tasks::import::foreign::from_ground_truth(&value, task_id)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mut task = serde_json::to_value(&task).map_err(|e| PyValueError::new_err(e.to_string()))?;
    // verl's rows keep the prompt elsewhere; our schema wants one (it is never scored).
    if let Some(prompt) = task.get_mut("prompt")
        && prompt.as_str().is_some_and(str::is_empty)
    {
        *prompt = serde_json::Value::String(format!("verl ground truth ({task_id})"));
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
    m.add_class::<MathResult>()?;
    m.add_class::<TestResult>()?;
    m.add_class::<Score>()?;
    m.add_class::<Pack>()?;
    m.add_function(wrap_pyfunction!(check_math, m)?)?;
    m.add_function(wrap_pyfunction!(check_math_batch, m)?)?;
    m.add_function(wrap_pyfunction!(verify_answers, m)?)?;
    m.add_function(wrap_pyfunction!(verify_parsed, m)?)?;
    m.add_function(wrap_pyfunction!(extract_answer, m)?)?;
    m.add_function(wrap_pyfunction!(score, m)?)?;
    m.add_function(wrap_pyfunction!(scorers_built, m)?)?;
    m.add_function(wrap_pyfunction!(task_from_ground_truth, m)?)?;
    m.add_function(wrap_pyfunction!(set_threads, m)?)?;
    m.add_function(wrap_pyfunction!(thread_budget, m)?)?;
    Ok(())
}
