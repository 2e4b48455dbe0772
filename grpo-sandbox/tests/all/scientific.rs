//! The scientific packages in the Python sandbox (sympy, mpmath, sortedcontainers, built into
//! the snapshot from the wheels pinned in `runtime/requirements.txt`): a table of programs whose
//! outputs host CPython with the same wheels wrote (`scripts/scientific_reference.py` →
//! `tests/data/scientific.json`), the packages' versions, what stays absent, and the harness's
//! tamper check over the packages when a task's tests judge with them.

use futures::future::join_all;
use grpo_rewards::reward::Score;
use grpo_rewards::{RunResult, RunStatus, ScoreOptions};
use grpo_sandbox::{CodeReward, Limits};
use grpo_tasks::CodeTask;
use serde::Deserialize;
use serde_json::json;

use crate::common::{quick, rt, sandbox};

#[derive(Deserialize)]
struct Table {
    host: Versions,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Versions {
    sympy: String,
    mpmath: String,
    sortedcontainers: String,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    program: String,
    expected: String,
}

fn table() -> Table {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/scientific.json");
    let text = std::fs::read_to_string(&path).expect("tests/data/scientific.json");
    serde_json::from_str(&text).expect("the table parses")
}

/// Room for sympy's slower calls (integrate, dsolve, groebner) in a debug build.
fn roomy() -> Limits {
    Limits {
        time_limit_ms: 30_000,
        memory_mb: 512,
        ..Limits::default()
    }
}

fn run(program: &str, limits: &Limits) -> RunResult {
    rt().block_on(sandbox().run(program, b"", limits)).unwrap()
}

#[test]
fn table_matches_host_cpython() {
    let table = table();
    assert!(table.cases.len() >= 50, "{} cases", table.cases.len());
    let limits = roomy();
    let sandbox = sandbox();
    let results = rt().block_on(join_all(
        table
            .cases
            .iter()
            .map(|case| sandbox.run(&case.program, b"", &limits)),
    ));
    let mut wrong = Vec::new();
    for (case, result) in table.cases.iter().zip(results) {
        let r = result.unwrap();
        if r.status != RunStatus::Ok || r.stdout != case.expected {
            wrong.push(format!(
                "{}: {:?}\n  expected {:?}\n  got      {:?}\n  stderr   {}",
                case.name, r.status, case.expected, r.stdout, r.stderr
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} cases differ from host CPython:\n{}",
        wrong.len(),
        table.cases.len(),
        wrong.join("\n")
    );
}

#[test]
fn the_packages_are_the_tables_versions() {
    let host = table().host;
    let r = run(
        "import sympy, mpmath, sortedcontainers\nprint(sympy.__version__, mpmath.__version__, sortedcontainers.__version__)",
        &quick(),
    );
    assert_eq!(
        r.stdout,
        format!("{} {} {}\n", host.sympy, host.mpmath, host.sortedcontainers),
        "{r:?}"
    );
}

#[test]
fn absent_modules_raise_module_not_found_error() {
    for module in [
        "numpy",
        "networkx",
        "scipy",
        "ctypes",
        "_ctypes",
        "sympy.physics.vector",
        "sympy.parsing.latex",
        "gmpy2",
    ] {
        let r = run(
            &format!(
                "try:\n    import {module}\n    print('imported')\nexcept ModuleNotFoundError as e:\n    print(type(e).__name__, e.name)"
            ),
            &quick(),
        );
        assert_eq!(
            r.stdout,
            format!("ModuleNotFoundError {module}\n"),
            "{module}: {r:?}"
        );
    }
}

#[test]
fn a_run_finds_the_packages_loaded() {
    // Everything a program needs is in the snapshot: before its first `import`, the packages
    // and the modules sympy's functions load on first call are there already.
    let r = run(
        "import sys\nloaded = [m in sys.modules for m in ('sympy', 'mpmath', 'sympy.physics.units', 'sympy.integrals.risch')]\nfrom sympy import Symbol, solve, integrate, exp\nx = Symbol('x')\nprint(loaded, solve(x**2 - 2, x), integrate(x * exp(x), x))",
        &quick(),
    );
    assert_eq!(
        (r.status, r.stdout.as_str()),
        (
            RunStatus::Ok,
            "[True, True, True, True] [-sqrt(2), sqrt(2)] (x - 1)*exp(x)\n"
        ),
        "{r:?}"
    );
}

/// A task whose assert-mode tests `test` name the packages they judge with.
fn assert_task(test: &str) -> CodeTask {
    serde_json::from_value(json!({
        "id": "scientific", "prompt": "p", "language": "python", "mode": "full",
        "time_limit_ms": 30_000, "memory_mb": 512,
        "tests": {"type": "assert", "code": test},
    }))
    .expect("a valid task")
}

fn judge(task: &CodeTask, programs: &[String]) -> Vec<Score> {
    rt().block_on(CodeReward::new(sandbox()).judge_programs(
        task,
        programs,
        &ScoreOptions::default(),
    ))
    .expect("no fault")
}

const NAMES_EVERY_PACKAGE: &str = "import sympy, mpmath, sortedcontainers\nassert f() == 1\n";

#[test]
fn the_tables_programs_are_not_read_as_tampering() {
    // Every program of the table, run before tests that name all three packages: whatever
    // state sympy, mpmath and sortedcontainers keep on their classes while they work (sympy's
    // `Dummy._count`, caches) is not taken for the program replacing them.
    let programs: Vec<String> = table()
        .cases
        .iter()
        .map(|case| format!("{}\ndef f():\n    return 1\n", case.program))
        .collect();
    let scores = judge(&assert_task(NAMES_EVERY_PACKAGE), &programs);
    let flagged: Vec<String> = table()
        .cases
        .iter()
        .zip(&scores)
        .filter(|(_, score)| score.value != Some(1.0))
        .map(|(case, score)| format!("{}: {}", case.name, score.verdict.reason))
        .collect();
    assert!(flagged.is_empty(), "{}", flagged.join("\n"));
}

/// (what the program does, program, the attribute the report names). Each program passes
/// `assert f() == 1` on its own: only the tamper check can fail it.
const PATCHES: &[(&str, &str, &str)] = &[
    (
        "a package function replaced",
        "import sympy\nsympy.simplify = lambda e, **k: 0\n",
        "sympy.simplify",
    ),
    (
        "a class's own method replaced",
        "import sympy\nsympy.Integer.__eq__ = lambda a, b: True\n",
        "sympy.Integer.__eq__",
    ),
    (
        "a method added that shadows the inherited one",
        "import sympy\nsympy.Integer.equals = lambda a, b, failing_expression=False: True\n",
        "sympy.Integer.equals",
    ),
    (
        "a base class's method replaced",
        "from sympy.core.basic import Basic\nBasic.__eq__ = lambda a, b: True\n",
        "sympy.Basic.__eq__",
    ),
    (
        "mpmath's number class",
        "import mpmath\nmpmath.mpf.__eq__ = lambda a, b: True\n",
        "mpmath.mpf.__eq__",
    ),
    (
        "a sorted container",
        "import sortedcontainers\nsortedcontainers.SortedList.__contains__ = lambda a, b: True\n",
        "sortedcontainers.SortedList.__contains__",
    ),
];

#[test]
fn programs_that_patch_the_packages_fail_tests_that_use_them() {
    let patched: Vec<String> = PATCHES
        .iter()
        .map(|(_, program, _)| format!("{program}def f():\n    return 1\n"))
        .collect();
    let scores = judge(&assert_task(NAMES_EVERY_PACKAGE), &patched);
    for ((what, _, attribute), score) in PATCHES.iter().zip(&scores) {
        assert_eq!(score.value, Some(0.0), "{what}: {:?}", score.verdict);
        assert!(
            score
                .verdict
                .reason
                .contains(&format!("the program replaced {attribute}")),
            "{what}: {}",
            score.verdict.reason
        );
    }
    // Tests that do not name the packages are not judged with them: the same programs pass,
    // and a run that does not need the check does not pay for it.
    let scores = judge(&assert_task("assert f() == 1\n"), &patched);
    for ((what, _, _), score) in PATCHES.iter().zip(&scores) {
        assert_eq!(score.value, Some(1.0), "{what}: {:?}", score.verdict);
    }
}

#[test]
fn subclassing_and_defining_functions_is_not_tampering() {
    // What solutions to sympy tasks do: their own Function and Symbol subclasses, assumptions,
    // sympify of their own names, mpmath precision, containers of their own.
    let program = "import sympy, mpmath\nfrom sortedcontainers import SortedList\n\
class g(sympy.Function):\n    @classmethod\n    def eval(cls, x):\n        if x.is_Number:\n            return x**2\n\
class Pos(sympy.Symbol):\n    pass\n\
x = sympy.Symbol('x', positive=True)\nassert g(3) == 9 and sympy.diff(g(x), x) != 0\n\
assert Pos('p') + 1 != 1 and sympy.sympify('g(2)', locals={'g': g}) == 4\n\
mpmath.mp.dps = 40\nassert str(mpmath.sqrt(2))[:12] == '1.4142135623'\nmpmath.mp.dps = 15\n\
assert list(SortedList([3, 1, 2])) == [1, 2, 3]\n\
def f():\n    return 1\n";
    let score = judge(&assert_task(NAMES_EVERY_PACKAGE), &[program.to_owned()]).remove(0);
    assert_eq!(score.value, Some(1.0), "{:?}", score.verdict);
}
