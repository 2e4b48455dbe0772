//! Native-equivalent time limits: how much more CPU time a program needs in the sandbox than
//! natively, per language, and the one rule that turns a data set's native limit into the
//! sandbox's.
//!
//! Data sets (CodeContests, TACO, Codeforces, LiveCodeBench, Library Checker) set their time
//! limits for native CPython, g++ and Node.js on a judge's machine. The sandbox runs CPython
//! 3.14 and QuickJS-NG compiled to wasm, and C/C++ compiled to wasm32-wasi, so the same program
//! needs more CPU time here; a right solution at 40% of its native limit must not time out.
//! A pack whose `[code]` table says `time_limits = "native"` (what `grpo tasks import` writes)
//! gets its tasks' limits multiplied by the factor of the task's language; a `time_scale`
//! setting overrides the factor for every task.
//!
//! The factors were measured with `benches/time_factors.py` (five programs per language: a
//! tight arithmetic loop, hash-map counting, sorting, recursion, a grid BFS; CPU time of the
//! program alone, compiles excluded; the best of 3 or 5 rounds per side; the median of the
//! per-program ratios), for the runtimes named beside each, against CPython 3.11, gcc/g++ 12
//! `-O2` and Node.js 20 on the same 2-core machine, three times. The medians were Python 2.13,
//! 2.44, 2.49; C/C++ 1.28, 1.39, 1.46; JavaScript 3.73, 3.75, 4.07. Each factor is the largest
//! median rounded up to the next half: a right program at 40% of its native limit then passes
//! unless it is more than 2.5 times as slow here as the median program. The book's sandbox
//! chapter has the per-program table. Measure again when a runtime changes.

use grpo_tasks::Language;

/// The measured slowdown of one language's runtime against native.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeFactor {
    /// The language family it was measured for.
    pub language: &'static str,
    /// Sandbox CPU time over native CPU time, the median over the programs.
    pub factor: f64,
    /// The runtime the figure belongs to.
    pub runtime: &'static str,
}

/// Python: the snapshotted CPython of `runtime/python.wasm.zst` against CPython 3.11.
pub const PYTHON: TimeFactor = TimeFactor {
    language: "python",
    factor: PYTHON_FACTOR,
    runtime: "CPython 3.14 for WASI (componentize-py 0.25.1), runtime/python.wasm.zst",
};

/// C and C++: clang's wasm32-wasi code (`-O2`, the toolchain of `cc`) against gcc/g++ 12 `-O2`.
pub const C_CPP: TimeFactor = TimeFactor {
    language: "c/cpp",
    factor: C_CPP_FACTOR,
    runtime: "clang -O2 to wasm32-wasi (the pinned zig toolchain), cranelift",
};

/// JavaScript and TypeScript: QuickJS-NG (`runtime/quickjs.wasm.zst`, an interpreter) against
/// Node.js 20 (V8's JIT).
pub const JAVASCRIPT: TimeFactor = TimeFactor {
    language: "javascript",
    factor: JAVASCRIPT_FACTOR,
    runtime: "QuickJS-NG for WASI, runtime/quickjs.wasm.zst",
};

const PYTHON_FACTOR: f64 = 2.5;
const C_CPP_FACTOR: f64 = 1.5;
const JAVASCRIPT_FACTOR: f64 = 4.5;

/// The factor for `language`.
pub fn factor(language: Language) -> TimeFactor {
    match language {
        Language::Python => PYTHON,
        Language::C | Language::Cpp => C_CPP,
        Language::Javascript | Language::Typescript => JAVASCRIPT,
    }
}

/// The sandbox's CPU limit for a task's own `limit_ms`: multiplied by `scale` when one is given,
/// else by the language's factor when the limit is native, else as written. Rounded up to
/// whole milliseconds.
pub fn sandbox_limit_ms(
    limit_ms: u64,
    language: Language,
    native: bool,
    scale: Option<f64>,
) -> u64 {
    let by = match (scale, native) {
        (Some(scale), _) => scale,
        (None, true) => factor(language).factor,
        (None, false) => return limit_ms,
    };
    let scaled = (limit_ms as f64 * by).ceil();
    if scaled.is_finite() && scaled >= 1.0 {
        // A float of at most u64::MAX's magnitude: `as` saturates.
        scaled as u64
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_limits_scale_by_language_and_sandbox_limits_do_not() {
        let python = sandbox_limit_ms(1000, Language::Python, true, None);
        assert_eq!(python, (1000.0 * PYTHON.factor).ceil() as u64);
        assert_eq!(
            sandbox_limit_ms(1000, Language::Cpp, true, None),
            sandbox_limit_ms(1000, Language::C, true, None)
        );
        assert_eq!(
            sandbox_limit_ms(1000, Language::Typescript, true, None),
            sandbox_limit_ms(1000, Language::Javascript, true, None)
        );
        assert_eq!(sandbox_limit_ms(1000, Language::Python, false, None), 1000);
        // The override applies to every task, native or not.
        assert_eq!(
            sandbox_limit_ms(1000, Language::Python, false, Some(2.0)),
            2000
        );
        assert_eq!(sandbox_limit_ms(1000, Language::Cpp, true, Some(1.0)), 1000);
        assert_eq!(sandbox_limit_ms(1, Language::Python, true, Some(0.0001)), 1);
        assert_eq!(
            sandbox_limit_ms(u64::MAX, Language::Python, true, None),
            u64::MAX
        );
    }

    #[test]
    fn every_factor_is_a_slowdown() {
        for language in Language::ALL {
            let f = factor(language);
            assert!(f.factor >= 1.0 && f.factor.is_finite(), "{f:?}");
        }
    }
}
