//! The math checks: `check_math`, `check_math_batch`, `verify_answers`, `verify_parsed` and
//! `extract_answer`, with the GIL released. The default checkers are built once per process
//! and the last prepared reference is reused per thread; the batch spreads over Rust threads
//! and polls for Ctrl-C, so a `KeyboardInterrupt` stops it within a fraction of a second with
//! every worker joined.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};

use grpo_rewards::math::{
    EquivConfig, ExtractRule, MathCheck, MathChecker, MathConfig, PreparedGold,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::{RewardFault, SIGNAL_POLL, threads};

/// The outcome of one math check.
#[pyclass(frozen, eq, get_all, module = "grpo_rewards")]
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MathResult {
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
pub(crate) fn check_math(
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
pub(crate) fn check_math_batch(
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
pub(crate) fn verify_answers(
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
pub(crate) fn verify_parsed(
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
pub(crate) fn extract_answer(
    py: Python<'_>,
    completion: String,
    rules: Option<Vec<String>>,
) -> PyResult<Option<String>> {
    let checker = checker(rules, None, None, false)?;
    Ok(py.detach(|| {
        grpo_rewards::math::extract(&completion, &checker.config().rules).map(|e| e.text)
    }))
}
