//! How many threads the package runs on: one number per process, chosen the first time a
//! pool needs it, and used by every pool the package owns.
//!
//! The rule, first match wins:
//!
//! 1. `grpo_rewards.set_threads(n)`, called before the first check or score;
//! 2. the environment variable [`ENV`] (`GRPO_REWARDS_THREADS=n`);
//! 3. inside a Ray task or actor, the CPUs Ray assigned to it (rounded up; an actor that
//!    reserved none gets `OMP_NUM_THREADS`, which Ray sets to 1 then), at most the count in
//!    rule 4;
//! 4. [`std::thread::available_parallelism`]: the CPUs this process may run on (its affinity
//!    mask and its cgroup's CPU quota), never the host's core count when either is smaller.
//!
//! Ray does not pin its workers to CPUs: a one-CPU actor on a 64-core host sees 64 cores in
//! rule 4, so rule 3 reads Ray's own assignment (the package's `_ray.assigned_cpus`).
//!
//! The pools: `check_math_batch`'s workers (unless the call passes `threads=`), the tokio
//! runtime's workers and its blocking pool, the sandbox's concurrent programs and C/C++
//! compiles (zig processes), and the pool wasmtime compiles modules on (rayon's global
//! pool). Only the sandbox's epoch ticker, one sleeping thread, is outside the count.

use std::sync::Mutex;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// The environment variable of rule 2.
pub(crate) const ENV: &str = "GRPO_REWARDS_THREADS";

/// Which rule chose the count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// `set_threads(n)`.
    Explicit,
    /// [`ENV`].
    Env,
    /// The CPUs of the Ray task or actor.
    Ray,
    /// The process's CPU affinity and cgroup quota.
    Available,
}

impl Source {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Source::Explicit => "explicit",
            Source::Env => "env",
            Source::Ray => "ray",
            Source::Available => "available_parallelism",
        }
    }
}

/// The count and the rule that chose it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    pub(crate) threads: usize,
    pub(crate) source: Source,
}

#[derive(Default)]
struct State {
    /// What `set_threads` asked for.
    explicit: Option<usize>,
    /// The budget the pools were sized with, once one was.
    fixed: Option<Budget>,
}

static STATE: Mutex<State> = Mutex::new(State {
    explicit: None,
    fixed: None,
});

fn state() -> std::sync::MutexGuard<'static, State> {
    // The state is two plain values: a panic elsewhere cannot leave them half-written.
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The budget for the pools, fixed by the first call: later calls return the same.
pub(crate) fn fixed(py: Python<'_>) -> PyResult<Budget> {
    let explicit = {
        let state = state();
        if let Some(budget) = state.fixed {
            return Ok(budget);
        }
        state.explicit
    };
    // Resolving may call into Python (rule 3), so it runs without the lock held.
    let budget = resolve(py, explicit)?;
    let mut state = state();
    if let Some(first) = state.fixed {
        // Another thread fixed it meanwhile: the first one wins.
        return Ok(first);
    }
    state.fixed = Some(budget);
    Ok(budget)
}

/// The budget as it stands, without fixing it; and whether the pools were sized with it.
pub(crate) fn current(py: Python<'_>) -> PyResult<(Budget, bool)> {
    let (explicit, fixed) = {
        let state = state();
        (state.explicit, state.fixed)
    };
    match fixed {
        Some(budget) => Ok((budget, true)),
        None => Ok((resolve(py, explicit)?, false)),
    }
}

/// Rule 1: asks for `threads`. An error once the pools were sized with another count.
pub(crate) fn set(threads: usize) -> PyResult<()> {
    if threads == 0 {
        return Err(PyValueError::new_err("threads: must be at least 1"));
    }
    let mut state = state();
    if let Some(budget) = state.fixed
        && budget.threads != threads
    {
        return Err(PyRuntimeError::new_err(format!(
            "set_threads({threads}): the pools already run on {} threads (chosen by {}); call \
             set_threads before the first check or score",
            budget.threads,
            budget.source.as_str()
        )));
    }
    state.explicit = Some(threads);
    Ok(())
}

/// The rule, applied to what the process sees now.
fn resolve(py: Python<'_>, explicit: Option<usize>) -> PyResult<Budget> {
    if let Some(threads) = explicit {
        return Ok(Budget {
            threads,
            source: Source::Explicit,
        });
    }
    if let Some(value) = std::env::var_os(ENV) {
        let threads = value
            .to_str()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n > 0)
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "{ENV}={value:?}: must be a whole number of threads, at least 1"
                ))
            })?;
        return Ok(Budget {
            threads,
            source: Source::Env,
        });
    }
    let available = std::thread::available_parallelism().map_or(1, |n| n.get());
    if let Some(cpus) = ray_cpus(py)? {
        return Ok(Budget {
            threads: cpus.clamp(1, available),
            source: Source::Ray,
        });
    }
    Ok(Budget {
        threads: available,
        source: Source::Available,
    })
}

/// The CPUs Ray gave this task or actor; `None` outside a Ray worker.
fn ray_cpus(py: Python<'_>) -> PyResult<Option<usize>> {
    py.import("grpo_rewards._ray")?
        .call_method0("assigned_cpus")?
        .extract()
}

/// Sizes rayon's global pool, on which wasmtime compiles a module the first time one is
/// used (the Python runtime when the disk cache is cold; QuickJS; C and C++ programs). Called
/// once, before the sandbox is built.
pub(crate) fn size_compile_pool(threads: usize) -> PyResult<()> {
    // Only wasmtime uses rayon in this library, and only once a sandbox exists: the global
    // pool does not exist yet.
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("grpo-compile-{i}"))
        .build_global()
        .map_err(|e| crate::RewardFault::new_err(format!("sizing the compile pool: {e}")))
}
