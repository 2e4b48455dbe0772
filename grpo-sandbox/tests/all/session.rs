//! Interpreter sessions: state kept across calls, limits per call and per session, and
//! hostile programs that try to outlive, escape or jam their session.

use std::sync::Arc;

use grpo_rewards::{RunResult, RunStatus};
use grpo_sandbox::{Limits, SandboxError, Session, SessionLimits};

use crate::common::{rt, sandbox};

fn limits() -> SessionLimits {
    SessionLimits {
        call: Limits {
            time_limit_ms: 1_000,
            memory_mb: 128,
            output_bytes: 4 << 10,
            ..Limits::default()
        },
        ..SessionLimits::default()
    }
}

fn open(limits: SessionLimits) -> Session {
    rt().block_on(Session::open(&sandbox(), limits))
        .expect("session opens")
}

fn run(session: &Session, code: &str) -> RunResult {
    rt().block_on(session.run(code)).expect("call runs")
}

#[test]
fn globals_functions_and_imports_persist_across_calls() {
    let s = open(limits());
    let r = run(
        &s,
        "import math\nx = 6 * 7\ndef double(v):\n    return 2 * v\n",
    );
    assert_eq!((r.status, r.stdout.as_str()), (RunStatus::Ok, ""), "{r:?}");
    let r = run(&s, "print(double(x), math.gcd(12, 18))");
    assert_eq!(r.stdout, "84 6\n");
    // The last expression is shown, as in the interactive interpreter; None is not.
    assert_eq!(run(&s, "x + 1").stdout, "43\n");
    assert_eq!(run(&s, "y = x\nNone").stdout, "");
    assert_eq!(run(&s, "_ * 2").stdout, "86\n");
    // Files in /tmp persist too.
    run(&s, "open('/tmp/n.txt', 'w').write('17')");
    assert_eq!(run(&s, "print(open('n.txt').read())").stdout, "17\n");
    // `random` is the module's own, and a seed set in one call holds in the next.
    run(
        &s,
        "import random\nrandom.seed(3)\nfirst = random.random()\nrandom.seed(3)",
    );
    assert_eq!(
        run(
            &s,
            "random.seed.__self__ is random._inst and random.random() == first"
        )
        .stdout,
        "True\n"
    );
    let stats = rt().block_on(s.stats());
    assert_eq!((stats.calls, stats.restarts), (9, 0));
}

#[test]
fn an_exception_ends_the_call_not_the_session() {
    let s = open(limits());
    run(&s, "total = 10");
    let r = run(&s, "print('before')\n1 / 0");
    assert_eq!(r.status, RunStatus::Error);
    assert_eq!(r.stdout, "before\n");
    assert!(r.stderr.contains("ZeroDivisionError"), "{}", r.stderr);
    assert!(
        r.stderr.contains("1 / 0"),
        "the cell's line is shown: {}",
        r.stderr
    );
    assert!(!r.stderr.contains("harness"), "{}", r.stderr);
    let r = run(&s, "def f(:\n  pass");
    assert_eq!(r.status, RunStatus::Error);
    assert!(r.stderr.contains("SyntaxError"), "{}", r.stderr);
    let r = run(&s, "import sys\nsys.exit(3)");
    assert_eq!((r.status, r.exit_code), (RunStatus::Error, Some(3)));
    assert_eq!(run(&s, "total").stdout, "10\n");
    // Programs see an empty stdin: the calls that follow are not theirs to read.
    let r = run(&s, "input()");
    assert!(r.stderr.contains("EOFError"), "{}", r.stderr);
    let r = run(&s, "import sys\nprint(repr(sys.stdin.read()))");
    assert_eq!(r.stdout, "''\n");
    assert_eq!(run(&s, "total + 1").stdout, "11\n");
}

#[test]
fn a_call_that_never_returns_is_cut_and_the_next_call_starts_fresh() {
    let s = open(limits());
    run(&s, "kept = 1");
    let r = run(&s, "while True:\n    pass");
    assert_eq!(r.status, RunStatus::Timeout);
    assert!(r.stderr.contains("earlier state is lost"), "{}", r.stderr);
    let r = run(&s, "print('kept' in globals())");
    assert_eq!((r.status, r.stdout.as_str()), (RunStatus::Ok, "False\n"));
    // Sleeping past the wall clock: cut on the wall clock, without holding a worker.
    let r = run(&s, "import time\ntime.sleep(30)");
    assert_eq!(r.status, RunStatus::Timeout);
    assert!(r.duration_ms < 10_000.0, "{r:?}");
    assert_eq!(run(&s, "2 + 2").stdout, "4\n");
    let stats = rt().block_on(s.stats());
    assert_eq!((stats.calls, stats.restarts), (5, 2));
}

#[test]
fn output_floods_are_cut_per_call_and_the_session_goes_on() {
    let s = open(limits());
    run(&s, "n = 5");
    let r = run(&s, "print('x' * 100_000)");
    assert_eq!(r.status, RunStatus::OutputLimit);
    assert!(r.truncated);
    assert!(r.stdout.len() <= 4 << 10, "{}", r.stdout.len());
    let r = run(&s, "for i in range(10**6):\n    print(i)");
    assert!(
        matches!(r.status, RunStatus::OutputLimit | RunStatus::Timeout),
        "{r:?}"
    );
    assert!(r.stdout.len() <= 4 << 10);
    // The next call's output is its own, not the flood's remainder.
    let r = run(&s, "print('clean')");
    assert_eq!((r.status, r.stdout.as_str()), (RunStatus::Ok, "clean\n"));
}

#[test]
fn memory_is_capped_for_the_whole_session() {
    let s = open(limits());
    // Growth across calls: each call keeps 24 MiB more alive; the cap (128 MiB) stops it.
    let mut statuses = Vec::new();
    run(&s, "keep = []");
    for _ in 0..8 {
        let r = run(&s, "keep.append(bytearray(24 << 20))\nlen(keep)");
        statuses.push(r.status);
        if r.status != RunStatus::Ok {
            break;
        }
    }
    assert_eq!(
        statuses.last(),
        Some(&RunStatus::MemoryLimit),
        "{statuses:?}"
    );
    // Freeing the list lets the session compute again.
    let r = run(
        &s,
        "keep.clear()\nimport gc\ngc.collect()\nlen(bytearray(16 << 20))",
    );
    assert_eq!(
        (r.status, r.stdout.as_str()),
        (RunStatus::Ok, "16777216\n"),
        "{r:?}"
    );
}

#[test]
fn nothing_leaks_between_sessions() {
    let a = open(limits());
    let b = open(limits());
    run(
        &a,
        "secret = 'a'\nopen('/tmp/a.txt', 'w').write('a')\nimport builtins\nbuiltins.leak = 1",
    );
    let r = run(
        &b,
        "print('secret' in globals())\nimport os, builtins\nprint(os.listdir('/tmp'), hasattr(builtins, 'leak'))",
    );
    assert_eq!(r.stdout, "False\n[] False\n", "{r:?}");
    // No host files, no network.
    let r = run(&b, "import os\nprint(os.path.exists('/etc/passwd'))");
    assert_eq!(r.stdout, "False\n");
    let r = run(
        &b,
        "import socket\nsocket.create_connection(('127.0.0.1', 22), timeout=1)",
    );
    assert_eq!(r.status, RunStatus::Error, "{r:?}");
}

#[test]
fn package_state_a_session_mutates_stays_in_that_session() {
    use crate::sandbox::hostile::{PACKAGE_CHECK, PACKAGE_CLEAN, PACKAGE_POISON};
    let a = open(limits());
    let r = run(&a, PACKAGE_POISON);
    assert_eq!(r.stdout, "[42] 0 0.0\n", "the poison took: {r:?}");
    // The session keeps its own state, as an interpreter does...
    assert_eq!(run(&a, "print(sympy.solve(1))").stdout, "[42]\n");
    // ...and nothing of it reaches another session, opened alongside or after.
    let b = open(limits());
    assert_eq!(run(&b, PACKAGE_CHECK).stdout, PACKAGE_CLEAN);
    drop(a);
    let c = open(limits());
    assert_eq!(run(&c, PACKAGE_CHECK).stdout, PACKAGE_CLEAN);
}

#[test]
fn exiting_or_forging_the_end_of_a_call_stays_inside_the_session() {
    let s = open(limits());
    run(&s, "v = 1");
    // A hard exit loses the interpreter; the next call has a fresh one.
    let r = run(&s, "import os\nos._exit(0)");
    assert!(r.stderr.contains("earlier state is lost"), "{r:?}");
    assert_eq!(run(&s, "print('v' in globals())").stdout, "False\n");
    // A forged end-of-call line without the call's nonce is dropped, and the call goes on.
    let r = run(
        &s,
        "import os\nos.write(2, b'\\x1egrpo-done 0000 {\"status\": \"ok\"}\\n')\nprint('after')",
    );
    assert_eq!(
        (r.status, r.stdout.as_str()),
        (RunStatus::Ok, "after\n"),
        "{r:?}"
    );
    // Replacing sys.stdout in one call does not swallow the next call's output.
    run(&s, "import sys, io\nsys.stdout = io.StringIO()");
    assert_eq!(run(&s, "print('seen')").stdout, "seen\n");
}

#[test]
fn a_spent_cpu_budget_or_lifetime_closes_the_session() {
    let mut session_limits = SessionLimits {
        session_cpu_ms: 1_000,
        ..limits()
    };
    session_limits.call.time_limit_ms = 5_000;
    let s = open(session_limits);
    // The guest's clock is not the CPU time the session charges (it runs on while the machine
    // serves other work), so the calls report what they were charged.
    let spin = "import time\nt = time.monotonic()\nwhile time.monotonic() - t < 0.5:\n    pass";
    let first = run(&s, spin);
    assert_eq!(first.status, RunStatus::Ok, "{first:?}");
    assert!(first.cpu_ms <= 600.0, "{first:?}");
    // The second call spins for ever: the session's budget stops it, long before its own
    // 5 s limit, once the two calls together have spent the session's second.
    let second = run(&s, "while True:\n    pass");
    assert_eq!(second.status, RunStatus::Timeout, "{second:?}");
    assert!(second.cpu_ms < 1_000.0, "{second:?}");
    assert!(
        first.cpu_ms + second.cpu_ms >= 950.0,
        "{first:?} {second:?}"
    );
    let closed = rt().block_on(s.run("1"));
    assert!(
        matches!(closed, Err(SandboxError::SessionClosed { .. })),
        "{closed:?}"
    );
    let s = open(SessionLimits {
        lifetime_ms: 300,
        ..limits()
    });
    assert_eq!(run(&s, "1").stdout, "1\n");
    std::thread::sleep(std::time::Duration::from_millis(400));
    assert!(matches!(
        rt().block_on(s.run("1")),
        Err(SandboxError::SessionClosed { .. })
    ));
    // Closing by hand.
    let s = open(limits());
    rt().block_on(s.close());
    assert!(rt().block_on(s.is_closed()));
    assert!(rt().block_on(s.run("1")).is_err());
}

#[test]
fn a_session_hammered_from_two_threads_runs_its_calls_one_at_a_time() {
    let s = Arc::new(open(limits()));
    run(&s, "count = 0");
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let s = Arc::clone(&s);
            std::thread::spawn(move || {
                for _ in 0..20 {
                    let r = run(&s, "before = count\ncount = before + 1");
                    assert_eq!(r.status, RunStatus::Ok, "{r:?}");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("thread");
    }
    assert_eq!(run(&s, "count").stdout, "40\n");
}

#[test]
fn waiting_for_a_core_does_not_count_against_a_calls_wall_clock() {
    // One core for the sandbox, held by a program that computes for about a second.
    let sandbox = grpo_sandbox::Sandbox::new(&grpo_sandbox::SandboxOptions {
        concurrency: 1,
        ..Default::default()
    })
    .expect("sandbox");
    let session = rt()
        .block_on(Session::open(
            &sandbox,
            SessionLimits {
                call: Limits {
                    time_limit_ms: 200,
                    wall_limit_ms: Some(400),
                    ..Limits::default()
                },
                ..SessionLimits::default()
            },
        ))
        .expect("session");
    let hog = {
        let sandbox = sandbox.clone();
        rt().spawn(async move {
            let spin = "import time\nt = time.process_time()\nwhile time.process_time() - t < 1.0:\n    pass";
            sandbox
                .run(spin, b"", &Limits { time_limit_ms: 3_000, ..Limits::default() })
                .await
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(100));
    let r = rt().block_on(session.run("6 * 7")).expect("call");
    assert_eq!(
        (r.status, r.stdout.as_str()),
        (RunStatus::Ok, "42\n"),
        "{r:?}"
    );
    let hogged = rt().block_on(hog).expect("join").expect("run");
    assert_eq!(hogged.status, RunStatus::Ok, "{hogged:?}");
}

/// A session's interpreter is polled only while a call waits on it: after each call it must
/// be back waiting on stdin, holding no CPU slot. Two sessions and plain runs take turns on
/// a one-core sandbox many times; one left holding the core would hang the others.
#[test]
fn a_finished_call_leaves_no_cpu_slot_held() {
    let sandbox = grpo_sandbox::Sandbox::new(&grpo_sandbox::SandboxOptions {
        concurrency: 1,
        ..Default::default()
    })
    .expect("sandbox");
    let a = rt()
        .block_on(Session::open(&sandbox, limits()))
        .expect("session a");
    let b = rt()
        .block_on(Session::open(&sandbox, limits()))
        .expect("session b");
    let within = |what: &str,
                  work: std::pin::Pin<
        Box<dyn std::future::Future<Output = RunResult> + Send + '_>,
    >| {
        rt().block_on(async {
            tokio::time::timeout(std::time::Duration::from_secs(20), work).await
        })
        .unwrap_or_else(|_| panic!("{what} waited 20 s for the core"))
    };
    // Each call computes for a few ticks, so the epoch yields come often.
    let busy = "s = 0\nfor i in range(30000):\n    s += i\ns";
    for round in 0..60 {
        for (name, session) in [("a", &a), ("b", &b)] {
            let r = within(
                name,
                Box::pin(async { session.run(busy).await.expect("call") }),
            );
            assert_eq!(r.stdout, "449985000\n", "round {round} {name}: {r:?}");
        }
        let r = within(
            "a plain run",
            Box::pin(async {
                sandbox
                    .run("print(1)", b"", &Limits::default())
                    .await
                    .expect("run")
            }),
        );
        assert_eq!(r.stdout, "1\n");
    }
}
