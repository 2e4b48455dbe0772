//! The Python sandbox end to end: plain runs, limits, harnesses, and the hostile-program suite.
//!
//! Every test shares one compiled [`Sandbox`] (a static), so the runtime compiles once per
//! test binary (and is loaded from the disk cache afterwards).

use std::time::Instant;

use crate::common::{quick, rt, sandbox};
use grpo_rewards::{RunResult, RunStatus, VerdictKind};
use grpo_sandbox::{Credit, Limits, Sandbox};
use grpo_tasks::{CodeTask, Task};

fn run_with(program: &str, stdin: &str, limits: &Limits) -> RunResult {
    rt().block_on(sandbox().run(program, stdin.as_bytes(), limits))
        .unwrap()
}

fn run(program: &str) -> RunResult {
    run_with(program, "", &quick())
}

fn code_task(json: &str) -> Task {
    serde_json::from_str(json).unwrap()
}

/// Each completion's accuracy score, through the Scorer as every caller scores (the code
/// judge on the shared sandbox, quick limits).
fn score_credit(task: &Task, completions: &[String], credit: Credit) -> Vec<grpo_rewards::Score> {
    let config = grpo_rewards::ScoringConfig {
        limits: quick(),
        credit,
        ..Default::default()
    };
    let scorer = grpo_sandbox::scorer(&config, Some(sandbox())).unwrap();
    rt().block_on(scorer.score_group(task, completions, scorer.options()))
        .unwrap()
        .into_iter()
        .map(|r| grpo_rewards::Score {
            value: r.components.accuracy,
            verdict: r.verdict,
        })
        .collect()
}

fn score(task: &Task, completions: &[&str]) -> Vec<grpo_rewards::Score> {
    let completions: Vec<String> = completions.iter().map(|s| s.to_string()).collect();
    score_credit(task, &completions, Credit::Binary)
}

mod basics {
    use super::*;

    #[test]
    fn prints_and_exits_zero() {
        let r = run("print(6 * 7)");
        assert_eq!(
            (r.status, r.exit_code, r.stdout.as_str()),
            (RunStatus::Ok, Some(0), "42\n"),
            "{r:?}"
        );
        assert_eq!(r.stderr, "");
        assert!(!r.truncated);
    }

    #[test]
    fn python_version_is_314() {
        let r = run("import sys; print(sys.version_info[:2])");
        assert_eq!(r.stdout, "(3, 14)\n", "{r:?}");
    }

    #[test]
    fn stdin_is_the_programs_own() {
        let r = run_with(
            "import sys\ndata = sys.stdin.read().split()\nprint(sum(map(int, data)))",
            "1 2\n3\n",
            &quick(),
        );
        assert_eq!(r.stdout, "6\n", "{r:?}");
        let r = run_with("print(input()[::-1])", "abc\n", &quick());
        assert_eq!(r.stdout, "cba\n", "{r:?}");
    }

    #[test]
    fn uncaught_exception_is_error_with_traceback() {
        let r = run("def f():\n    raise ValueError('boom')\nf()");
        assert_eq!(
            (r.status, r.exit_code),
            (RunStatus::Error, Some(1)),
            "{r:?}"
        );
        assert!(r.stderr.contains("ValueError: boom"), "{}", r.stderr);
    }

    #[test]
    fn exit_codes_follow_python() {
        for (program, status, code) in [
            ("import sys; sys.exit(3)", RunStatus::Error, 3),
            ("import sys; sys.exit(0)", RunStatus::Ok, 0),
            ("import sys; sys.exit()", RunStatus::Ok, 0),
            ("import sys; sys.exit('bye')", RunStatus::Error, 1),
            ("raise SystemExit(4)", RunStatus::Error, 4),
            // WASI's `exit` carries only success or failure: `os._exit(n)` bypasses the
            // harness, so any non-zero code reads as 1.
            ("import os; os._exit(5)", RunStatus::Error, 1),
            ("import os; os._exit(0)", RunStatus::Ok, 0),
        ] {
            let r = run(program);
            assert_eq!(
                (r.status, r.exit_code),
                (status, Some(code)),
                "{program}: {r:?}"
            );
        }
    }

    #[test]
    fn syntax_error_is_error() {
        let r = run("def f(:\n  pass");
        assert_eq!(r.status, RunStatus::Error, "{r:?}");
        assert!(r.stderr.contains("SyntaxError"), "{}", r.stderr);
    }

    #[test]
    fn prng_is_reseeded_per_run() {
        let a = run("import random; print(random.random())").stdout;
        let b = run("import random; print(random.random())").stdout;
        assert_ne!(a, b);
        // The snapshot's stand-in for componentize-py's reseed never reaches a program: it
        // sees the module's own `seed`, and a seed it sets takes.
        let r = run(
            "import random\nprint(random.seed.__self__ is random._inst, random.seed.__name__)\n\
             random.seed(7); a = random.random(); random.seed(7); print(a == random.random())\n\
             random.seed(); print(a != random.random())",
        );
        assert_eq!(r.stdout, "True seed\nTrue\nTrue\n", "{r:?}");
    }

    #[test]
    fn common_stdlib_imports_work() {
        let r = run(
            "import math, itertools, collections, functools, heapq, bisect, re, json, string, fractions, \
             decimal, statistics, typing, dataclasses, copy, operator, datetime, hashlib, textwrap, enum\n\
             print(math.comb(5, 2), json.dumps([1]), fractions.Fraction(1, 3) * 3)",
        );
        assert_eq!(r.stdout, "10 [1] 1\n", "{r:?}");
    }

    #[test]
    fn files_in_the_temp_dir_work() {
        let r = run("open('x.txt', 'w').write('hi')\nprint(open('/tmp/x.txt').read())");
        assert_eq!(r.stdout, "hi\n", "{r:?}");
    }

    #[test]
    fn a_fresh_temp_dir_per_run() {
        run("open('/tmp/left.txt', 'w').write('x')");
        let r = run("import os; print(os.listdir('/tmp'))");
        assert_eq!(r.stdout, "[]\n", "{r:?}");
    }

    /// The build makes the snapshot's objects immortal (`runtime/immortalize.py`), so runs
    /// do not write their reference counts. They still behave as objects: a program can
    /// drop every name for one, collect, and use it; what it creates is mortal as usual.
    #[test]
    fn the_snapshots_objects_are_immortal_and_still_behave() {
        let r = run("import sys, json, math, collections, gc\n\
             old = (json, json.dumps, math.sqrt, collections.OrderedDict, sys.modules, \
             json.JSONDecoder.decode.__code__)\n\
             print(all(sys._is_immortal(o) for o in old))\n\
             print(any(sys._is_immortal(o) for o in ([], {}, object(), 'x' * 1000)))\n\
             decoder = json.JSONDecoder\n\
             del json.JSONDecoder, sys.modules['json']\n\
             gc.collect()\n\
             print(decoder().decode('[1, {\"a\": 2.5}]'))\n");
        assert_eq!(
            (r.status, r.stdout.as_str()),
            (RunStatus::Ok, "True\nFalse\n[1, {'a': 2.5}]\n"),
            "{r:?}"
        );
        let again = run("import json; print(json.JSONDecoder().decode('[3]'))");
        assert_eq!(again.stdout, "[3]\n", "{again:?}");
    }

    /// Runs reuse instance slots (and their memory, reset from the snapshot): what one run
    /// writes into the interpreter's globals is gone in the next.
    #[test]
    fn no_state_survives_into_the_next_run() {
        // Run directories are reused, emptied: files and folders a run leaves are gone.
        let write = "import builtins, math, sys, random, os\n\
                     builtins.leaked = 1\nmath.pi = 3\nsys.modules['leak'] = sys\n\
                     sys.setrecursionlimit(50)\nrandom.seed(0)\n\
                     open('/tmp/left.txt', 'w').write('x')\nos.makedirs('/tmp/d/e')\n\
                     open('/tmp/d/e/f', 'w').write('y')\n\
                     print(random.random())";
        let check = "import builtins, math, sys, random, os\n\
                     print(hasattr(builtins, 'leaked'), math.pi > 3.14, 'leak' in sys.modules, \
                     sys.getrecursionlimit() > 50, os.listdir('/tmp'))";
        let mut draws = Vec::new();
        for _ in 0..6 {
            let w = run(write);
            assert_eq!(w.status, RunStatus::Ok, "{w:?}");
            draws.push(w.stdout);
            let r = run(check);
            assert_eq!(r.stdout, "False True False True []\n", "{r:?}");
        }
        // Each run also gets its own random seed unless it sets one.
        let fresh: Vec<String> = (0..4)
            .map(|_| run("import random; print(random.random())").stdout)
            .collect();
        assert!(fresh.windows(2).any(|w| w[0] != w[1]), "{fresh:?}");
        assert!(
            draws.windows(2).all(|w| w[0] == w[1]),
            "a seeded run is reproducible"
        );
    }
}

/// Hostile programs: each must be contained with the right status, quickly.
pub(crate) mod hostile {
    use super::*;

    fn timed(program: &str, limits: &Limits) -> (RunResult, f64) {
        let started = Instant::now();
        let r = run_with(program, "", limits);
        (r, started.elapsed().as_secs_f64())
    }

    #[test]
    fn infinite_loop_times_out() {
        let limits = Limits {
            time_limit_ms: 300,
            ..quick()
        };
        let (r, secs) = timed("while True:\n    pass", &limits);
        assert_eq!(r.status, RunStatus::Timeout, "{r:?}");
        assert!(secs < 2.0, "took {secs}s");
    }

    #[test]
    fn sleep_is_stopped_by_the_wall_clock() {
        let limits = Limits {
            time_limit_ms: 300,
            wall_limit_ms: Some(500),
            ..quick()
        };
        let (r, secs) = timed("import time\ntime.sleep(30)\nprint('woke')", &limits);
        assert_eq!(r.status, RunStatus::Timeout, "{r:?}");
        assert!(!r.stdout.contains("woke"));
        assert!(secs < 2.0, "took {secs}s");
    }

    /// The pages the snapshot preloads (sympy, mpmath, sortedcontainers) are not charged to
    /// `memory_mb`: under a 64 MiB cap a program gets what it got when the snapshot held only
    /// the standard library (about 47 MiB of its own), whatever it imports.
    #[test]
    fn preloaded_packages_are_not_charged_to_the_memory_cap() {
        let limits = Limits {
            memory_mb: 64,
            ..quick()
        };
        let (r, _) = timed("x = bytearray(40 << 20)\nprint(len(x))", &limits);
        assert_eq!(r.status, RunStatus::Ok, "{r:?}");
        assert_eq!(r.stdout, format!("{}\n", 40 << 20));
        let (r, _) = timed("x = bytearray(56 << 20)\nprint(len(x))", &limits);
        assert_eq!(r.status, RunStatus::MemoryLimit, "{r:?}");
    }

    #[test]
    fn memory_bomb_hits_the_cap() {
        let (r, _) = timed("x = bytearray(1 << 30)\nprint(len(x))", &quick());
        assert_eq!(r.status, RunStatus::MemoryLimit, "{r:?}");
        let (r, _) = timed("x = []\nwhile True:\n    x.append('a' * 100000)", &quick());
        assert_eq!(r.status, RunStatus::MemoryLimit, "{r:?}");
    }

    #[test]
    fn memory_error_caught_by_the_program_is_not_fatal() {
        let (r, _) = timed(
            "try:\n    x = bytearray(1 << 30)\nexcept MemoryError:\n    print('caught')",
            &quick(),
        );
        assert_eq!(
            (r.status, r.stdout.as_str()),
            (RunStatus::Ok, "caught\n"),
            "{r:?}"
        );
    }

    #[test]
    fn deep_recursion_is_an_error_not_a_host_crash() {
        let (r, _) = timed("def f(n):\n    return f(n + 1)\nf(0)", &quick());
        assert_eq!(r.status, RunStatus::Error, "{r:?}");
        assert!(r.stderr.contains("RecursionError"), "{}", r.stderr);
        let (r, _) = timed(
            "import sys\nsys.setrecursionlimit(10**6)\ndef f(n):\n    return f(n + 1)\nf(0)",
            &quick(),
        );
        // Python 3.14 keeps frames on the heap: unbounded recursion runs into the memory cap.
        assert!(
            matches!(r.status, RunStatus::Error | RunStatus::MemoryLimit),
            "{r:?}"
        );
        // The host is fine afterwards.
        assert_eq!(run("print(1)").stdout, "1\n");
    }

    #[test]
    fn output_flood_is_truncated() {
        let (r, secs) = timed("while True:\n    print('x' * 1000)", &quick());
        assert_eq!(r.status, RunStatus::OutputLimit, "{r:?}");
        assert!(r.truncated);
        assert_eq!(r.stdout.len(), 64 * 1024);
        assert!(secs < 2.0, "took {secs}s");
        let (r, _) = timed(
            "import sys\nwhile True:\n    sys.stderr.write('e' * 1000)",
            &quick(),
        );
        assert_eq!(r.status, RunStatus::OutputLimit, "{r:?}");
    }

    #[test]
    fn file_quota_stops_big_writes() {
        let limits = Limits {
            file_quota_bytes: 1 << 20,
            ..quick()
        };
        let (r, _) = timed(
            "with open('/tmp/big', 'wb') as f:\n    while True:\n        f.write(b'x' * 65536)",
            &limits,
        );
        assert_eq!(r.status, RunStatus::OutputLimit, "{r:?}");
        assert!(r.stderr.contains("file quota"), "{}", r.stderr);
    }

    #[test]
    fn host_files_are_unreachable() {
        for path in [
            "/etc/passwd",
            "/proc/self/environ",
            "../../etc/passwd",
            "/tmp/../etc/passwd",
        ] {
            let r = run(&format!("print(open({path:?}).read()[:20])"));
            assert_eq!(r.status, RunStatus::Error, "{path}: {r:?}");
            assert!(!r.stdout.contains("root"), "{path}: {r:?}");
        }
    }

    #[test]
    fn listing_the_root_shows_nothing_of_the_host() {
        let r = run(
            "import os\ntry:\n    print(sorted(os.listdir('/')))\nexcept OSError as e:\n    print('denied', e)",
        );
        assert!(
            !r.stdout.contains("etc") && !r.stdout.contains("home") && !r.stdout.contains("usr"),
            "{r:?}"
        );
    }

    #[test]
    fn sockets_are_refused() {
        let r = run(
            "import socket\ns = socket.socket()\ns.settimeout(1)\ns.connect(('127.0.0.1', 22))\nprint('connected')",
        );
        assert_ne!(r.status, RunStatus::Ok, "{r:?}");
        assert!(!r.stdout.contains("connected"));
        let r = run("import socket\nprint(socket.getaddrinfo('example.com', 80))");
        assert_ne!(r.status, RunStatus::Ok, "{r:?}");
    }

    #[test]
    fn subprocess_and_threads_are_unavailable() {
        let r = run("import subprocess\nprint(subprocess.run(['ls'], capture_output=True))");
        assert_eq!(r.status, RunStatus::Error, "{r:?}");
        let r = run("import os\nprint(os.system('ls'))");
        assert_ne!(r.stdout.trim(), "0", "{r:?}");
        let r = run("import os\nos.fork()");
        assert_eq!(r.status, RunStatus::Error, "{r:?}");
    }

    #[test]
    fn environment_is_empty() {
        let r = run("import os\nprint(dict(os.environ))");
        assert_eq!(r.stdout, "{}\n", "{r:?}");
    }

    #[test]
    fn sympy_and_mpmath_eval_paths_are_confined_like_any_code() {
        // sympify, parse_expr and lambdify evaluate strings as Python; mpmath parses numbers
        // from strings. What they run is the program's own code, with the same confinement.
        let host_files = [
            "import sympy\nprint(sympy.sympify(\"__import__('builtins').open('/etc/passwd').read()\"))",
            "from sympy.parsing.sympy_parser import parse_expr\nprint(parse_expr(\"__import__('os').listdir('/')\"))",
            "import sympy\nf = sympy.lambdify([], \"__import__('builtins').open('/proc/self/environ').read()\")\nprint(f())",
        ];
        for program in host_files {
            let r = run(program);
            assert_ne!(r.status, RunStatus::Ok, "{program}: {r:?}");
            for host in ["root:", "etc", "home", "usr", "PATH="] {
                assert!(!r.stdout.contains(host), "{program}: {r:?}");
            }
        }
        let escapes = [
            "import sympy\nprint(sympy.sympify(\"__import__('ctypes')\"))",
            "import sympy\nprint(sympy.lambdify([], \"__import__('_ctypes')\")())",
            "from sympy.parsing.sympy_parser import parse_expr\nparse_expr(\"__import__('subprocess').run(['ls'])\")",
            "import sympy\nsympy.sympify(\"__import__('threading').Thread(target=print).start()\")",
            "import mpmath\nprint(mpmath.mpmathify(\"__import__('os').system('ls')\"))",
        ];
        for program in escapes {
            let r = run(program);
            assert_eq!(r.status, RunStatus::Error, "{program}: {r:?}");
        }
    }

    #[test]
    fn runaway_sympy_and_mpmath_work_is_stopped_by_the_limits() {
        let limits = Limits {
            time_limit_ms: 500,
            ..quick()
        };
        // The ninth Fermat number's factors took hours of 1980s computing; sympy does not
        // find them in half a second, nor a million digits of pi.
        for program in [
            "import sympy\nprint(sympy.factorint(2**512 + 1))",
            "import sympy\nx = sympy.Symbol('x')\nprint(sympy.simplify(sum(sympy.sin(k * x)**k / (1 + sympy.cos(x)**k) for k in range(1, 60))))",
            "import mpmath\nmpmath.mp.dps = 10**6\nprint(mpmath.zeta(3))",
        ] {
            let (r, secs) = timed(program, &limits);
            assert!(
                matches!(r.status, RunStatus::Timeout | RunStatus::MemoryLimit),
                "{program}: {r:?}"
            );
            assert!(secs < 3.0, "{program}: took {secs}s");
        }
    }

    /// A program that rewrites the packages' module state (functions, class methods, mpmath's
    /// precision and its memoized constants) in one run.
    pub(crate) const PACKAGE_POISON: &str = "import sympy, mpmath, sortedcontainers\nfrom mpmath.libmp import libelefun\nsympy.solve = lambda *a, **k: [42]\nsympy.Integer.__add__ = lambda a, b: sympy.Integer(0)\nsympy.core.cache.clear_cache()\nmpmath.mp.dps = 5\npi_memo = libelefun.pi_fixed.__closure__[0].cell_contents\npi_memo.memo_prec, pi_memo.memo_val = 10**5, 0\nsortedcontainers.SortedList.add = None\nprint(sympy.solve(1), sympy.Integer(2) + 3, mpmath.mp.pi)";

    /// What the same names give in a run that starts from the snapshot.
    pub(crate) const PACKAGE_CHECK: &str = "import sympy, mpmath, sortedcontainers\nx = sympy.Symbol('x')\ns = sortedcontainers.SortedList([3, 1])\ns.add(2)\nprint(sympy.solve(x - 1, x), sympy.Integer(2) + 3, mpmath.mp.dps, mpmath.mp.pi, list(s))";

    pub(crate) const PACKAGE_CLEAN: &str = "[1] 5 15 3.14159265358979 [1, 2, 3]\n";

    #[test]
    fn package_state_a_run_mutates_does_not_reach_the_next_run() {
        let r = run(PACKAGE_POISON);
        assert_eq!(
            (r.status, r.stdout.as_str()),
            (RunStatus::Ok, "[42] 0 0.0\n"),
            "the poison took: {r:?}"
        );
        for _ in 0..3 {
            let r = run(PACKAGE_CHECK);
            assert_eq!(r.stdout, PACKAGE_CLEAN, "{r:?}");
        }
    }
}

/// Reward hacking: early exits, fake markers, tampering. None may be scored as passing.
mod hacking {
    use super::*;

    const HUMANEVAL_LIKE: &str = r#"{"id":"add","kind":"code","prompt":"def add(a, b):\n    \"\"\"Return a + b.\"\"\"\n","language":"python","mode":"prefix","tests":{"type":"assert","code":"def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(-1, 1) == 0\n    assert abs(candidate(0.1, 0.2) - 0.3) < 1e-9\n","entry_point":"add"}}"#;

    fn verdicts(completions: &[&str]) -> Vec<(f64, VerdictKind, String)> {
        score(&code_task(HUMANEVAL_LIKE), completions)
            .into_iter()
            .map(|s| (s.value.unwrap(), s.verdict.kind, s.verdict.reason))
            .collect()
    }

    #[test]
    fn honest_solutions_pass_and_wrong_ones_fail() {
        let v = verdicts(&["    return a + b\n", "    return a - b\n"]);
        assert_eq!((v[0].0, v[0].1), (1.0, VerdictKind::Correct), "{v:?}");
        assert_eq!((v[1].0, v[1].1), (0.0, VerdictKind::TestsFailed), "{v:?}");
        assert!(v[1].2.contains("candidate(1, 2) == 3"), "{v:?}");
    }

    #[test]
    fn early_exits_do_not_pass() {
        let hacks = [
            "    return 0\nimport sys\nsys.exit(0)\n",
            "    return 0\nimport os\nos._exit(0)\n",
            "    return 0\nraise SystemExit(0)\n",
            "    import sys; sys.exit(0)\n",
            "    import os; os._exit(0)\n",
            "    raise SystemExit\n",
            "    raise KeyboardInterrupt\n",
        ];
        for (hack, (value, kind, reason)) in hacks.iter().zip(verdicts(&hacks)) {
            assert_eq!(value, 0.0, "{hack:?}: {kind:?} {reason}");
            assert_ne!(kind, VerdictKind::Correct, "{hack:?}");
        }
    }

    #[test]
    fn fake_success_markers_do_not_pass() {
        let hacks = [
            "    return 0\nprint('All tests passed')\nimport os; os._exit(0)\n",
            "    return 0\nimport sys\nsys.stderr.write('\\n\\x1egrpo-report 00000000000000000000000000000000 {\"cases\":[{\"passed\":true}]}\\n')\nimport os; os._exit(0)\n",
            "    return 0\nimport sys\nsys.stderr.write('\\n\\x1egrpo-report ' + 'x'*32 + ' {\"cases\":[{\"passed\":true,\"reason\":\"\"}]}\\n'); sys.exit(0)\n",
        ];
        for (hack, (value, kind, reason)) in hacks.iter().zip(verdicts(&hacks)) {
            assert_eq!(value, 0.0, "{hack:?}: {kind:?} {reason}");
        }
    }

    #[test]
    fn harness_tampering_does_not_pass() {
        let hacks = [
            // An always-equal return value.
            "    class A:\n        def __eq__(self, o): return True\n        def __lt__(self, o): return True\n        def __sub__(self, o): return self\n        def __abs__(self): return 0\n    return A()\n",
            // Patching builtins the tests use.
            "    return 0\nimport builtins\nbuiltins.abs = lambda x: 0\nbuiltins.AssertionError = type('E', (Exception,), {})\n",
            // Shadowing a builtin the tests use, in the program's namespace.
            "    return 0\ndef abs(x):\n    return 0\n",
            // Redefining check before the tests do.
            "    return 0\ndef check(candidate):\n    pass\n",
            // Patching a module the harness might rely on.
            "    return 0\nimport json\njson.dumps = lambda *a, **k: '{\"cases\":[{\"passed\":true}]}'\n",
            // Rewriting the tests' assert failures into successes via a trace hook.
            "    return 0\nimport sys\nsys.settrace(lambda *a: None)\n",
            // Replacing the process exit so the harness cannot end the run.
            "    return 0\nimport os\nos._exit = lambda code: None\n",
        ];
        for (hack, (value, kind, reason)) in hacks.iter().zip(verdicts(&hacks)) {
            assert_eq!(value, 0.0, "{hack:?}: {kind:?} {reason}");
        }
    }

    #[test]
    fn guarded_module_patches_are_reported() {
        let completion = "    return a + b\nimport math\nmath.isclose = lambda *a, **k: True\n";
        let (value, _, reason) = verdicts(&[completion]).remove(0);
        assert_eq!(value, 0.0);
        assert!(reason.contains("math.isclose"), "{reason}");
    }

    #[test]
    fn a_scripts_module_patches_cannot_reach_the_hosts_judgment() {
        // Stdio tasks are judged by the host on the output, so the harness skips the module
        // check there: a patch of what a comparison might use changes nothing, either way.
        let task = code_task(
            r#"{"id":"s","kind":"code","prompt":"","language":"python","mode":"full","tests":{"type":"stdio","cases":[{"stdin":"2 3\n","stdout":"5\n"}]}}"#,
        );
        let patch = "import json, math, builtins, operator\n\
                     json.dumps = lambda *a, **k: '{\"exit_code\": 0}'\n\
                     math.isclose = operator.eq = lambda *a, **k: True\n\
                     builtins.print = lambda *a, **k: None\n";
        let right = format!("a, b = map(int, input().split())\nprint(a + b)\n{patch}");
        let wrong = format!("{patch}a, b = map(int, input().split())\nprint(a - b)\n");
        let fake = format!("{patch}import os\nos._exit(0)\n");
        let scores = score(&task, &[right.as_str(), wrong.as_str(), fake.as_str()]);
        let got: Vec<(f64, VerdictKind)> = scores
            .iter()
            .map(|s| (s.value.unwrap(), s.verdict.kind))
            .collect();
        assert_eq!(got[0], (1.0, VerdictKind::Correct), "{scores:#?}");
        assert_eq!(got[1].0, 0.0, "{scores:#?}");
        assert_eq!(got[2].0, 0.0, "{scores:#?}");
    }

    #[test]
    fn moved_bindings_pass_and_swapped_ones_are_reported() {
        // The same names bound to the same objects, in another order, plus a new name: not
        // a patch (the harness's quick in-order check fails, the full one passes).
        let moved = "    return a + b\nimport math\nf = math.floor\ndel math.floor\nmath.floor = f\nmath.extra = 1\n";
        // The same objects under each other's names: a patch.
        let swapped = "    return a + b\nimport math\nf, c = math.floor, math.ceil\ndel math.floor, math.ceil\nmath.ceil = f\nmath.floor = c\n";
        let v = verdicts(&[moved, swapped]);
        assert_eq!((v[0].0, v[0].1), (1.0, VerdictKind::Correct), "{v:?}");
        assert_eq!(v[1].0, 0.0, "{v:?}");
        assert!(
            v[1].2.contains("math.floor") || v[1].2.contains("math.ceil"),
            "{v:?}"
        );
    }

    #[test]
    fn time_limit_in_the_function_is_a_timeout_verdict() {
        let (value, kind, _) = verdicts(&["    while True:\n        pass\n"]).remove(0);
        assert_eq!((value, kind), (0.0, VerdictKind::Timeout));
    }
}

mod harnesses {
    use super::*;

    #[test]
    fn call_cases_with_partial_credit_and_the_comparison_rule() {
        let task = code_task(
            r#"{"id":"c","kind":"code","prompt":"","language":"python","mode":"full","tests":{"type":"call","entry_point":"f","cases":[
                {"args":[[3,1,2]],"expected":[1,2,3]},
                {"args":[[]],"expected":[]},
                {"args":[[2.0]],"expected":[2]},
                {"args":[[1]],"expected":[1.0000001]}
            ],"float_tolerance":1e-6}}"#,
        );
        let solutions = [
            "def f(xs):\n    return sorted(xs)\n", // all: list == list; 2.0 == 2; 1 ~ 1.0000001
            "def f(xs):\n    return tuple(sorted(xs))\n", // tuples compare as lists
            "def f(xs):\n    return xs\n",         // case 0 fails
            "def f(xs):\n    return [str(x) for x in sorted(xs)]\n", // '1' is not 1
            "def f(xs):\n    return [True for x in xs]\n", // True is not 1 (bools only equal bools)
        ];
        let completions: Vec<String> = solutions.iter().map(|s| s.to_string()).collect();
        let scores = score_credit(&task, &completions, Credit::Partial);
        let values: Vec<f64> = scores.iter().map(|s| s.value.unwrap()).collect();
        // [0]: 4/4; [1]: 4/4; [2]: cases 1,2,3 pass = 3/4; [3]: only [] passes = 1/4;
        // [4]: only [] passes = 1/4.
        assert_eq!(values, vec![1.0, 1.0, 0.75, 0.25, 0.25], "{scores:#?}");
        let tests = scores[2].verdict.tests.as_ref().unwrap();
        assert_eq!(tests.len(), 4);
        assert!(!tests[0].passed && tests[1].passed);
        assert!(
            tests[0].reason.contains("expected [1, 2, 3]"),
            "{:?}",
            tests[0]
        );
    }

    #[test]
    fn stdio_cases_each_run_separately() {
        let task = code_task(
            r#"{"id":"s","kind":"code","prompt":"","language":"python","mode":"full","tests":{"type":"stdio","cases":[
                {"stdin":"1 2\n","stdout":"3\n"},
                {"stdin":"10 -4\n","stdout":"6"},
                {"stdin":"0 0\n","stdout":"0\n"}
            ]}}"#,
        );
        let scores = score(
            &task,
            &[
                "a, b = map(int, input().split())\nprint(a + b)",
                "```python\nimport sys\na, b = map(int, sys.stdin.read().split())\nprint(a + b)\nsys.exit(0)\n```",
                "a, b = map(int, input().split())\nprint(a + b if a else 1)",
                "print(3)",
                "import os\nprint(3, flush=True)\nos._exit(0)",
            ],
        );
        let kinds: Vec<VerdictKind> = scores.iter().map(|s| s.verdict.kind).collect();
        assert_eq!(kinds[0], VerdictKind::Correct, "{:?}", scores[0]);
        assert_eq!(kinds[1], VerdictKind::Correct, "{:?}", scores[1]);
        assert_eq!(kinds[2], VerdictKind::TestsFailed);
        assert_eq!(kinds[3], VerdictKind::TestsFailed);
        // Ending with os._exit skips the harness's end-of-run proof: not accepted.
        assert_eq!(kinds[4], VerdictKind::TestsFailed);
        let tests = scores[2].verdict.tests.as_ref().unwrap();
        assert_eq!(
            tests.iter().map(|t| t.passed).collect::<Vec<_>>(),
            vec![true, true, false]
        );
    }

    #[test]
    fn stdio_output_flood_fails_with_output_limit() {
        let task = code_task(
            r#"{"id":"s","kind":"code","prompt":"","language":"python","mode":"full","tests":{"type":"stdio","cases":[{"stdin":"","stdout":"1\n"}]}}"#,
        );
        let s = score(&task, &["print(1)\nwhile True:\n    print('1' * 1000)"]).remove(0);
        assert_eq!(s.verdict.kind, VerdictKind::OutputLimit, "{s:?}");
    }

    #[test]
    fn non_code_tasks_are_checked_by_their_own_verifier() {
        // The judge takes code tasks only (its signature); a math task through the same
        // scorer is math-checked, with no program run.
        let task = code_task(r#"{"id":"m","kind":"math","prompt":"1+1","answer":"2"}"#);
        let scores = score(&task, &["2", "3"]);
        assert_eq!(scores[0].value, Some(1.0));
        assert_eq!(scores[1].value, Some(0.0));
        assert_eq!(
            scores[1].verdict.kind,
            VerdictKind::WrongAnswer,
            "{:?}",
            scores[1]
        );
    }

    #[test]
    fn task_limits_override_the_defaults() {
        let task = code_task(
            r#"{"id":"t","kind":"code","prompt":"","language":"python","mode":"full","time_limit_ms":200,"tests":{"type":"stdio","cases":[{"stdin":"","stdout":"1\n"}]}}"#,
        );
        let started = Instant::now();
        let s = score(&task, &["while True: pass"]).remove(0);
        assert_eq!(s.verdict.kind, VerdictKind::Timeout);
        assert!(started.elapsed().as_secs_f64() < 1.5);
        let Task::Code(code): Task = task else {
            unreachable!()
        };
        let _: &CodeTask = &code;
    }

    #[test]
    fn batch_runs_keep_their_order() {
        let programs: Vec<(String, Vec<u8>)> = (0..8)
            .map(|i| (format!("print({i} * {i})"), Vec::new()))
            .collect();
        let results = rt().block_on(run_all(sandbox(), programs, &quick()));
        let outs: Vec<String> = results.into_iter().map(|r| r.unwrap().stdout).collect();
        let want: Vec<String> = (0..8).map(|i| format!("{}\n", i * i)).collect();
        assert_eq!(outs, want);
    }
}

/// Runs `programs` concurrently (the sandbox admits [`Sandbox::concurrency`] at a time);
/// results in input order.
pub async fn run_all(
    sandbox: Sandbox,
    programs: Vec<(String, Vec<u8>)>,
    limits: &Limits,
) -> Vec<grpo_sandbox::error::Result<RunResult>> {
    let handles: Vec<_> = programs
        .into_iter()
        .map(|(program, stdin)| {
            let (sandbox, limits) = (sandbox.clone(), limits.clone());
            tokio::spawn(async move { sandbox.run(&program, &stdin, &limits).await })
        })
        .collect();
    let mut results = Vec::with_capacity(handles.len());
    for handle in handles {
        results.push(handle.await.expect("a run task panicked"));
    }
    results
}

mod waiting {
    use super::*;
    use grpo_sandbox::SandboxOptions;

    /// A program that sleeps holds no worker: on a one-worker sandbox, other programs run to
    /// the end while it sleeps (its sleep, within its time limit, is charged to that limit,
    /// not to a worker).
    #[test]
    fn a_sleeping_program_holds_no_worker() {
        let sandbox = Sandbox::new(&SandboxOptions {
            concurrency: 1,
            ..SandboxOptions::default()
        })
        .unwrap();
        let sleeper_limits = Limits {
            time_limit_ms: 20_000,
            wall_limit_ms: Some(60_000),
            ..quick()
        };
        rt().block_on(async {
            let s = sandbox.clone();
            let sleeper = tokio::spawn(async move {
                s.run(
                    "import time\ntime.sleep(12)\nprint('woke')",
                    b"",
                    &sleeper_limits,
                )
                .await
            });
            // Long enough for the sleeper to be asleep on the only worker.
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            for k in 0..3 {
                let r = sandbox
                    .run(&format!("print({k} * 7)"), b"", &quick())
                    .await
                    .unwrap();
                assert_eq!(r.stdout, format!("{}\n", k * 7), "{r:?}");
            }
            assert!(
                !sleeper.is_finished(),
                "the quick programs waited for the sleeper's worker"
            );
            let slept = sleeper.await.unwrap().unwrap();
            assert_eq!(
                (slept.status, slept.stdout.as_str()),
                (RunStatus::Ok, "woke\n"),
                "{slept:?}"
            );
        });
    }

    /// A sleeper still ends at its wall-clock limit, as a timeout.
    #[test]
    fn a_sleeper_is_cut_at_its_wall_clock_limit() {
        let limits = Limits {
            time_limit_ms: 1_000,
            wall_limit_ms: Some(1_500),
            ..quick()
        };
        let started = Instant::now();
        let r = run_with("import time\ntime.sleep(600)", "", &limits);
        assert_eq!(r.status, RunStatus::Timeout, "{r:?}");
        assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
    }

    /// A program's own wait is charged to its time limit, as SandboxFusion's run timeout and
    /// judges' idleness limits treat a sleeper: sleeping past the limit is a timeout at the
    /// limit, long before the wall clock; a sleep within it is not.
    #[test]
    fn a_sleep_is_charged_to_the_time_limit() {
        let limits = Limits {
            time_limit_ms: 1_000,
            wall_limit_ms: Some(60_000),
            ..quick()
        };
        let started = Instant::now();
        let r = run_with("import time\ntime.sleep(12)\nprint('woke')", "", &limits);
        assert_eq!(r.status, RunStatus::Timeout, "{r:?}");
        assert!(r.stderr.contains("time limit"), "{r:?}");
        assert!(started.elapsed().as_secs() < 15, "{:?}", started.elapsed());
        // The sleep is not CPU time: what the run reports as its CPU is small.
        assert!(r.cpu_ms < 900.0, "{r:?}");

        let r = run_with("import time\ntime.sleep(0.3)\nprint('woke')", "", &limits);
        assert_eq!(
            (r.status, r.stdout.as_str()),
            (RunStatus::Ok, "woke\n"),
            "{r:?}"
        );
        assert!(r.cpu_ms < 300.0, "{r:?}");
    }
}
