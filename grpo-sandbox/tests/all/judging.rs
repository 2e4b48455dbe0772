//! The code judge's comparison modes, checker programs (special judges) and test plans, end to
//! end in the sandbox: a problem with many right answers judged by its checker in Python and
//! in C++, hostile checkers and candidates, hidden versus public tests, stopping at the first
//! failure, sampling, partial points.

use grpo_rewards::code::LimitCaps;
use grpo_rewards::error::RewardError;
use grpo_rewards::reward::Score;
use grpo_rewards::{Credit, ScoreOptions};
use grpo_sandbox::{CodeReward, Limits, Sandbox, SandboxOptions};
use grpo_tasks::CodeTask;
use serde_json::json;

use crate::common::{rt, sandbox};

fn task(value: serde_json::Value) -> CodeTask {
    let mut base = json!({
        "id": "t", "prompt": "p", "language": "python", "mode": "full",
        "time_limit_ms": 2000, "memory_mb": 128,
    });
    for (k, v) in value.as_object().expect("an object") {
        base[k] = v.clone();
    }
    serde_json::from_value(base).expect("a valid task")
}

fn judge_with(
    task: &CodeTask,
    programs: &[&str],
    options: ScoreOptions,
) -> Result<Vec<Score>, RewardError> {
    let judge = CodeReward::new(sandbox());
    let programs: Vec<String> = programs.iter().map(|p| p.to_string()).collect();
    rt().block_on(judge.judge_programs(task, &programs, &options))
}

fn judge(task: &CodeTask, programs: &[&str]) -> Vec<Score> {
    judge_with(task, programs, ScoreOptions::default()).expect("no fault")
}

/// Judges on a sandbox of its own, and counts the programs it ran (the shared sandbox's count
/// moves with the other tests running at the same time).
fn judge_counting(task: &CodeTask, programs: &[&str]) -> (Vec<Score>, u64) {
    let own = Sandbox::new(&SandboxOptions::default()).expect("a sandbox");
    // The first run also has the guest compile the harness: counted before.
    rt().block_on(own.run("pass", b"", &Limits::default()))
        .expect("a run");
    let before = own.runs_started();
    let judge = CodeReward::new(own.clone());
    let programs: Vec<String> = programs.iter().map(|p| p.to_string()).collect();
    let scores = rt()
        .block_on(judge.judge_programs(task, &programs, &ScoreOptions::default()))
        .expect("no fault");
    (scores, own.runs_started() - before)
}

fn values(scores: &[Score]) -> Vec<f64> {
    scores.iter().map(|s| s.value.unwrap_or(-1.0)).collect()
}

/// "Print two positive integers whose sum is n": many right answers.
fn sum_cases() -> serde_json::Value {
    json!([
        {"stdin": "2\n", "stdout": "1 1\n"},
        {"stdin": "10\n", "stdout": "1 9\n"},
        {"stdin": "7\n", "stdout": "3 4\n"},
    ])
}

const SUM_REFERENCE: &str = "n = int(input())\nprint(1, n - 1)\n";
const SUM_OTHER_RIGHT: &str = "n = int(input())\nprint(n - n // 2, n // 2)\n";
const SUM_WRONG: &str = "n = int(input())\nprint(1, n)\n";
const SUM_NOT_POSITIVE: &str = "n = int(input())\nprint(0, n)\n";

/// open-r1's Codeforces protocol: `checker input answer output`, a score printed last.
const SUM_CHECKER_PY: &str = r#"import sys
n = int(open(sys.argv[1]).read())
got = open(sys.argv[3]).read().split()
ok = len(got) == 2 and all(t.lstrip("-").isdigit() for t in got)
if ok:
    a, b = map(int, got)
    ok = a >= 1 and b >= 1 and a + b == n
print(1 if ok else 0)
"#;

/// testlib's protocol (`checker input output answer`, the verdict in the exit code), in C++
/// without testlib.h (and with C stdio: the sandbox's libc++ has no `<fstream>`).
const SUM_CHECKER_CPP: &str = r#"#include <cstdio>
#include <iostream>
int main(int argc, char** argv) {
    if (argc != 4) { std::cerr << "usage: checker input output answer\n"; return 3; }
    FILE* in = std::fopen(argv[1], "r");
    FILE* out = std::fopen(argv[2], "r");
    if (!in || !out) { std::cerr << "cannot open the files\n"; return 3; }
    long long n, a, b, extra;
    if (std::fscanf(in, "%lld", &n) != 1) { std::cerr << "bad input\n"; return 3; }
    if (std::fscanf(out, "%lld %lld", &a, &b) != 2) { std::cout << "expected two integers\n"; return 2; }
    if (std::fscanf(out, "%lld", &extra) == 1) { std::cout << "extra output\n"; return 1; }
    if (a < 1 || b < 1 || a + b != n) { std::cout << a << " + " << b << " != " << n << "\n"; return 1; }
    std::cout << "ok\n";
    return 0;
}
"#;

#[test]
fn a_python_checker_accepts_every_right_answer_and_only_those() {
    let t = task(json!({"tests": {"type": "stdio", "cases": sum_cases(),
        "checker": {"language": "python", "source": SUM_CHECKER_PY, "protocol": "codeforces"}}}));
    let scores = judge(
        &t,
        &[SUM_REFERENCE, SUM_OTHER_RIGHT, SUM_WRONG, SUM_NOT_POSITIVE],
    );
    assert_eq!(values(&scores), [1.0, 1.0, 0.0, 0.0], "{scores:#?}");
    // Without the checker, the other right answer fails the plain comparison.
    let plain = task(json!({"tests": {"type": "stdio", "cases": sum_cases()}}));
    assert_eq!(values(&judge(&plain, &[SUM_OTHER_RIGHT])), [0.0]);
}

#[test]
fn a_cpp_checker_speaks_testlib() {
    crate::cc_toolchain::ensure();
    let t = task(json!({"tests": {"type": "stdio", "cases": sum_cases(),
        "checker": {"language": "cpp", "source": SUM_CHECKER_CPP}}}));
    let scores = judge(
        &t,
        &[SUM_REFERENCE, SUM_OTHER_RIGHT, SUM_WRONG, "print('x y')"],
    );
    assert_eq!(values(&scores), [1.0, 1.0, 0.0, 0.0], "{scores:#?}");
    let wrong = &scores[2].verdict;
    assert!(wrong.reason.contains("1 + 2 != 2"), "{}", wrong.reason);
    let garbled = &scores[3].verdict;
    assert!(
        garbled.reason.contains("presentation error"),
        "{}",
        garbled.reason
    );
    // A C++ candidate judged by the C++ checker.
    let cpp = task(
        json!({"language": "cpp", "tests": {"type": "stdio", "cases": sum_cases(),
        "checker": {"language": "cpp", "source": SUM_CHECKER_CPP}}}),
    );
    let right = "#include <cstdio>\nint main(){long long n; std::scanf(\"%lld\",&n); std::printf(\"%lld 1\\n\", n-1);}";
    assert_eq!(values(&judge(&cpp, &[right])), [1.0]);
}

fn fault_of(checker_source: &str) -> String {
    // 128 MiB: the Python snapshot's heap is 57 MiB, and the output flood below needs 16 MiB
    // more before its output is cut.
    let t = task(json!({"tests": {"type": "stdio", "cases": sum_cases(),
        "checker": {"language": "python", "source": checker_source, "protocol": "codeforces",
                    "time_limit_ms": 500, "memory_mb": 128}}}));
    match judge_with(&t, &[SUM_REFERENCE], ScoreOptions::default()) {
        Err(RewardError::Fault { reason, .. }) => reason,
        other => panic!("expected a fault for checker {checker_source:?}, got {other:?}"),
    }
}

#[test]
fn hostile_or_broken_checkers_are_faults_never_rewards() {
    let cases = [
        ("while True: pass", "out of time"),
        // MemoryError is an uncaught exception: exit 1, or the memory limit, a fault either way.
        ("x = bytearray(1 << 30)\nprint(1)", ""),
        ("print('1' * (1 << 24))", "output was cut"),
        ("print(open('/etc/passwd').read())\nprint(1)", "exited"),
        ("import sys\nsys.exit(3)", "exited"),
        ("print('maybe')", "not a score"),
        ("print(7)", "not a score"),
        ("raise ValueError('checker bug')", "exited"),
        ("def (", "exited"),
    ];
    for (source, expect) in cases {
        let reason = fault_of(source);
        assert!(reason.contains(expect), "{source:?}: {reason}");
        assert!(reason.contains("checker"), "{source:?}: {reason}");
    }
}

#[test]
fn a_services_caps_bind_a_tasks_checker() {
    // The task asks an hour for its checker; the caller's caps (a service's maxima) allow
    // 300 ms, so a checker that never answers is stopped at the cap.
    let t = task(json!({"tests": {"type": "stdio", "cases": sum_cases(),
        "checker": {"language": "python", "source": "while True: pass", "protocol": "codeforces",
                    "time_limit_ms": 3_600_000}}}));
    let options = ScoreOptions {
        caps: Some(LimitCaps {
            time_limit_ms: 300,
            memory_mb: 128,
        }),
        ..ScoreOptions::default()
    };
    match judge_with(&t, &[SUM_REFERENCE], options) {
        Err(RewardError::Fault { reason, .. }) => {
            assert!(reason.contains("out of time"), "{reason}")
        }
        other => panic!("expected a fault, got {other:?}"),
    }
}

#[test]
fn native_time_limits_get_the_languages_factor_then_the_callers_caps() {
    use grpo_sandbox::judge::native_time;
    use grpo_tasks::TimeLimits;
    let cases = json!({"type": "stdio", "cases": sum_cases()});
    let python = task(json!({"tests": cases, "time_limit_ms": 1000}));
    let cpp = task(json!({"tests": cases, "time_limit_ms": 1000, "language": "cpp"}));
    let js = task(json!({"tests": cases, "time_limit_ms": 1000, "language": "javascript"}));
    let mut untimed = task(json!({"tests": cases}));
    untimed.time_limit_ms = None;

    // Our own schema: a task's limit is the sandbox's, as written.
    let own = CodeReward::new(sandbox());
    assert_eq!(own.limits_for(&python, None).time_limit_ms, 1000);

    // An imported pack: native limits times the measured factor of the task's language.
    let imported = CodeReward::new(sandbox()).with_time_limits(TimeLimits::Native, None);
    for (t, factor) in [
        (&python, native_time::PYTHON),
        (&cpp, native_time::C_CPP),
        (&js, native_time::JAVASCRIPT),
    ] {
        let limits = imported.limits_for(t, None);
        assert_eq!(
            limits.time_limit_ms,
            (1000.0 * factor.factor).ceil() as u64,
            "{:?}",
            t.language
        );
        assert!(limits.time_limit_ms > 1000, "{factor:?} is a slowdown");
    }
    // A task without a limit of its own keeps the default, which is the sandbox's already.
    assert_eq!(
        imported.limits_for(&untimed, None).time_limit_ms,
        Limits::default().time_limit_ms
    );
    // One override for every task, native or not.
    let scaled = CodeReward::new(sandbox()).with_time_limits(TimeLimits::Native, Some(3.0));
    assert_eq!(scaled.limits_for(&cpp, None).time_limit_ms, 3000);
    // A caller's caps bind the scaled limit, and the wall clock follows the capped CPU time.
    let caps = LimitCaps {
        time_limit_ms: 1200,
        memory_mb: 64,
    };
    let capped = imported.limits_for(&python, Some(caps));
    assert_eq!((capped.time_limit_ms, capped.memory_mb), (1200, 64));
    assert!(capped.wall_limit_ms() <= 1200 * grpo_rewards::code::WALL_FACTOR);
}

#[test]
fn candidates_cannot_fool_a_checker() {
    let t = task(json!({"tests": {"type": "stdio", "cases": sum_cases(),
        "checker": {"language": "python", "source": SUM_CHECKER_PY, "protocol": "codeforces"}}}));
    let hostile = [
        // The answer file is not in the candidate's directory.
        "print(open('answer.txt').read())",
        "print(open('/tmp/answer.txt').read())",
        "import os\nprint(os.listdir('.'))",
        // Printing the checker's file names or a score does not make the checker accept.
        "print('answer.txt')",
        "print('output.txt answer.txt 1')",
        "print(1)",
        // A flood is an output-limit failure, before any checker runs.
        "print('1 ' * (1 << 22))",
    ];
    let scores = judge(&t, &hostile);
    assert_eq!(values(&scores), vec![0.0; hostile.len()], "{scores:#?}");
}

#[test]
fn a_checker_may_give_partial_points() {
    // testlib's points code (7) with `points X`: half a point when the first number is right.
    let checker = r#"import sys
n = int(open(sys.argv[1]).read())
got = open(sys.argv[2]).read().split()
if got == [str(1), str(n - 1)]:
    sys.exit(0)
if got and got[0] == "1":
    print("points 0.5 first number right")
    sys.exit(7)
sys.exit(1)
"#;
    let t = task(json!({"tests": {"type": "stdio", "cases": sum_cases(),
        "checker": {"language": "python", "source": checker}}}));
    let half = "n = int(input())\nprint(1, 0)\n";
    let partial = ScoreOptions {
        credit: Credit::Partial,
        ..ScoreOptions::default()
    };
    let scores =
        judge_with(&t, &[SUM_REFERENCE, half, SUM_NOT_POSITIVE], partial).expect("no fault");
    assert_eq!(values(&scores), [1.0, 0.5, 0.0], "{scores:#?}");
    let binary = judge(&t, &[half]);
    assert_eq!(values(&binary), [0.0]);
    let outcome = &scores[1].verdict.tests.as_ref().expect("outcomes")[0];
    assert_eq!(outcome.points, Some(0.5));
    assert!(
        outcome.reason.contains("first number right"),
        "{}",
        outcome.reason
    );
}

#[test]
fn comparison_modes_apply_in_the_judge() {
    let cases = json!([{"stdin": "", "stdout": "1\n2\n3\n"}]);
    let shuffled = "print(3); print(1); print(2)";
    let t = task(json!({"tests": {"type": "stdio", "cases": cases}}));
    assert_eq!(values(&judge(&t, &[shuffled])), [0.0]);
    let t = task(json!({"tests": {"type": "stdio", "cases": cases, "compare": "unordered_lines"}}));
    assert_eq!(
        values(&judge(&t, &[shuffled, "print(1); print(2)"])),
        [1.0, 0.0]
    );
    let t = task(json!({"tests": {"type": "stdio", "cases": cases, "compare": "tokens"}}));
    assert_eq!(values(&judge(&t, &["print('1 2 3')"])), [1.0]);
    let t = task(json!({"tests": {"type": "stdio", "cases": cases, "compare": "exact"}}));
    assert_eq!(
        values(&judge(&t, &["print('1\\n2\\n3')", "print('1\\n2\\n3 ')"])),
        [1.0, 0.0]
    );
    let yes = json!([{"stdin": "", "stdout": "YES\n"}]);
    let t = task(json!({"tests": {"type": "stdio", "cases": yes, "compare": "yesno"}}));
    assert_eq!(
        values(&judge(&t, &["print('yes')", "print('no')"])),
        [1.0, 0.0]
    );
}

#[test]
fn hidden_tests_decide_and_public_ones_are_only_shown() {
    let cases = json!([
        {"stdin": "2\n", "stdout": "4\n", "public": true},
        {"stdin": "3\n", "stdout": "9\n"},
        {"stdin": "5\n", "stdout": "25\n"},
    ]);
    let t = task(json!({"tests": {"type": "stdio", "cases": cases}}));
    let memorised = "input()\nprint(4)";
    let right = "n = int(input())\nprint(n * n)";
    let scores = judge(&t, &[memorised, right]);
    assert_eq!(values(&scores), [0.0, 1.0]);
    let ran: Vec<usize> = scores[1]
        .verdict
        .tests
        .as_ref()
        .expect("outcomes")
        .iter()
        .map(|o| o.index)
        .collect();
    assert_eq!(
        ran,
        [1, 2],
        "the public case does not run when hidden ones exist"
    );
}

#[test]
fn stopping_at_the_first_failure_runs_no_more_than_needed() {
    let cases: Vec<_> = (0..12)
        .map(|i| json!({"stdin": format!("{i}\n"), "stdout": format!("{}\n", i * 2)}))
        .collect();
    let t = task(json!({"tests": {"type": "stdio", "cases": cases,
        "plan": {"stop_at_first_failure": true}}}));
    let fails_first = "n = int(input())\nprint(n * 2 if n else 1)";
    let (scores, runs) = judge_counting(&t, &[fails_first]);
    assert_eq!(values(&scores), [0.0]);
    let outcomes = scores[0].verdict.tests.as_ref().expect("outcomes");
    assert_eq!(outcomes.len(), 12);
    assert!(
        outcomes[11].reason.contains("not run: test 0 failed first"),
        "{outcomes:#?}"
    );
    assert!(
        runs < 12,
        "{runs} runs for a program that failed its first test"
    );
    let reason = &scores[0].verdict.reason;
    assert!(
        reason.contains("of 12 tests passed; test 0: line 1"),
        "{reason}"
    );
    // A right program runs them all and passes.
    assert_eq!(values(&judge(&t, &["print(int(input()) * 2)"])), [1.0]);
}

#[test]
fn sampling_runs_at_most_max_tests_and_the_call_seed_varies_them() {
    let cases: Vec<_> = (0..40)
        .map(|i| json!({"stdin": "x".repeat(i + 1) + "\n", "stdout": format!("{}\n", i + 1)}))
        .collect();
    let plan = json!({"max_tests": 5, "sample": "longest"});
    let t = task(json!({"tests": {"type": "stdio", "cases": cases, "plan": plan}}));
    let program = "print(len(input()))";
    let scores = judge(&t, &[program]);
    let ran: Vec<usize> = scores[0]
        .verdict
        .tests
        .as_ref()
        .expect("outcomes")
        .iter()
        .map(|o| o.index)
        .collect();
    assert_eq!(ran, [35, 36, 37, 38, 39]);
    let t = task(
        json!({"tests": {"type": "stdio", "cases": cases, "plan": {"max_tests": 5, "seed": 7}}}),
    );
    let with_seed = |seed| {
        let options = ScoreOptions {
            test_seed: Some(seed),
            ..ScoreOptions::default()
        };
        let scores = judge_with(&t, &[program], options).expect("no fault");
        assert_eq!(values(&scores), [1.0]);
        scores[0]
            .verdict
            .tests
            .as_ref()
            .expect("outcomes")
            .iter()
            .map(|o| o.index)
            .collect::<Vec<_>>()
    };
    let (a, b) = (with_seed(1), with_seed(2));
    assert_eq!(a.len(), 5);
    assert_eq!(a, with_seed(1), "the same seed draws the same tests");
    assert_ne!(a, b);
}

#[test]
fn many_tests_per_problem_stay_linear() {
    // 300 tests of one problem, a group of 4 programs (2 distinct): each distinct program
    // runs each test once.
    let cases: Vec<_> = (0..300)
        .map(|i| json!({"stdin": format!("{i}\n"), "stdout": format!("{}\n", i + 1)}))
        .collect();
    let t = task(json!({"tests": {"type": "stdio", "cases": cases}}));
    let right = "print(int(input()) + 1)";
    let wrong = "print(int(input()) + 2)";
    let (scores, runs) = judge_counting(&t, &[right, wrong, right, wrong]);
    assert_eq!(values(&scores), [1.0, 0.0, 1.0, 0.0]);
    assert_eq!(runs, 600);
}

#[test]
fn a_large_output_written_at_once_is_judged_whole() {
    // 100,000 numbers on one line (about 490 KB) in one `print`: once cut to its first
    // 64 KiB with status `ok`, a right program failed.
    let want: String = (0..100_000)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(" ")
        + "\n";
    let cases = json!([{"stdin": "100000\n", "stdout": want}]);
    let t = task(json!({"tests": {"type": "stdio", "cases": cases}}));
    let right = "n = int(input())\nprint(' '.join(map(str, range(n))))";
    let short = "n = int(input())\nprint(' '.join(map(str, range(n - 1))))";
    assert_eq!(values(&judge(&t, &[right, short])), [1.0, 0.0]);
}
