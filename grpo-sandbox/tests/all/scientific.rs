//! The scientific packages in the Python sandbox (sympy, mpmath, sortedcontainers, built into
//! the snapshot from the wheels pinned in `runtime/requirements.txt`): a table of programs whose
//! outputs host CPython with the same wheels wrote (`scripts/scientific_reference.py` →
//! `tests/data/scientific.json`), the packages' versions, and what stays absent.

use futures::future::join_all;
use grpo_rewards::{RunResult, RunStatus};
use grpo_sandbox::Limits;
use serde::Deserialize;

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
