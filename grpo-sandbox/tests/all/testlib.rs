//! testlib in the C++ sandbox, against testlib itself: the checkers of the pinned copy in
//! `vendor/testlib/` built natively with g++ from the unmodified header, and the same
//! checkers compiled unchanged in the sandbox against the shipped header (and once with the
//! header pasted in), run on one table of cases (whitespace, case, precision, sign, overflow,
//! empty output, extra tokens); the exit code and testlib's message must be the same. Each
//! testlib comparison name (`compare: "wcmp"`…) is held to the real checker of that name on
//! the same table.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use grpo_sandbox::engine::files::{JobFiles, JobPath};
use grpo_sandbox::{Limits, RunRequest, first_difference};
use grpo_tasks::Language;
use grpo_tasks::judging::Compare;

use crate::common::{rt, sandbox};

/// The checkers of the pinned testlib (the ones its release ships: `vendor/testlib/checkers`).
const CHECKERS: [&str; 4] = ["wcmp", "ncmp", "dcmp", "yesno"];

/// (output, answer): each case runs with an empty input.
const CASES: [(&str, &str); 44] = [
    // whitespace
    ("1 2 3\n", "1 2 3\n"),
    ("1  2\n3", "1 2 3\n"),
    ("1 2 3 ", "1 2 3"),
    ("\n\n1 2 3\n\n", "1 2 3\n"),
    ("1 2 3\r\n", "1 2 3\n"),
    ("\t1\t2 3\n", "1 2 3\n"),
    ("1 2 3\n", "1 2 3 \n"),
    ("5", "5\n"),
    ("5\n\n\n", "5"),
    // case
    ("yes\n", "YES\n"),
    ("Yes", "YES"),
    ("nO\n", "NO\n"),
    ("abc", "ABC"),
    ("ABC", "ABC"),
    ("YES", "NO"),
    ("maybe", "YES"),
    // precision
    ("0.1000001", "0.1"),
    ("0.100001", "0.1"),
    ("1.000001", "1"),
    ("1.0000011", "1"),
    ("1000000.5", "1000000"),
    ("1e-7", "0"),
    ("3.14159265", "3.14159265"),
    ("nan", "1"),
    // sign
    ("-0", "0"),
    ("+5", "5"),
    ("-5", "5"),
    ("-5", "-5"),
    ("-0.0", "0.0"),
    // numbers in other spellings, overflow
    ("007", "7"),
    ("1.0", "1"),
    ("9223372036854775807", "9223372036854775807"),
    ("-9223372036854775808", "-9223372036854775808"),
    ("9223372036854775808", "9223372036854775807"),
    ("99999999999999999999", "1"),
    ("1", "99999999999999999999"),
    // empty output
    ("", "1"),
    ("", ""),
    ("\n", "YES"),
    ("   \n", "5"),
    // extra and missing tokens
    ("1 2 3 4", "1 2 3"),
    ("1 2", "1 2 3"),
    ("YES NO", "YES"),
    ("2.5 7", "2.5"),
];

/// How a checker ended: its exit code and testlib's message (stderr, trimmed).
#[derive(Debug, Clone, PartialEq)]
struct Ending {
    code: i32,
    message: String,
}

fn vendor() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../vendor/testlib")
}

fn checker_source(name: &str) -> String {
    std::fs::read_to_string(vendor().join("checkers").join(format!("{name}.cpp")))
        .expect("a vendored checker")
}

/// The checkers built natively with g++ from the unmodified header (once per test binary).
fn native() -> &'static Vec<(String, PathBuf)> {
    static BUILT: OnceLock<(tempfile::TempDir, Vec<(String, PathBuf)>)> = OnceLock::new();
    &BUILT
        .get_or_init(|| {
            let dir = tempfile::tempdir().expect("a temporary directory");
            let builds: Vec<_> = CHECKERS
                .iter()
                .map(|name| {
                    let exe = dir.path().join(name);
                    let child = Command::new("g++")
                        .args(["-O1", "-std=gnu++17", "-I"])
                        .arg(vendor())
                        .arg(vendor().join("checkers").join(format!("{name}.cpp")))
                        .arg("-o")
                        .arg(&exe)
                        .spawn()
                        .expect("g++ (the differential test builds testlib's checkers natively)");
                    (name.to_string(), exe, child)
                })
                .collect();
            let built = builds
                .into_iter()
                .map(|(name, exe, mut child)| {
                    assert!(child.wait().expect("g++ ran").success(), "g++ built {name}");
                    (name, exe)
                })
                .collect();
            (dir, built)
        })
        .1
}

fn run_native(exe: &Path, output: &str, answer: &str) -> Ending {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for (file, text) in [
        ("input.txt", ""),
        ("output.txt", output),
        ("answer.txt", answer),
    ] {
        std::fs::write(dir.path().join(file), text).expect("a case file");
    }
    let ran = Command::new(exe)
        .args(["input.txt", "output.txt", "answer.txt"])
        .current_dir(dir.path())
        .output()
        .expect("the native checker ran");
    Ending {
        code: ran.status.code().expect("an exit code"),
        message: String::from_utf8_lossy(&ran.stderr).trim().to_owned(),
    }
}

fn run_sandboxed(source: &str, output: &str, answer: &str) -> Ending {
    let path = |p: &str| JobPath::parse(p).expect("a job path");
    let files = JobFiles {
        put: vec![
            (path("input.txt"), Vec::new()),
            (path("output.txt"), output.as_bytes().to_vec()),
            (path("answer.txt"), answer.as_bytes().to_vec()),
        ],
        fetch: Vec::new(),
    };
    let request = RunRequest::new(Language::Cpp, source)
        .with_files(files)
        .with_args(
            ["input.txt", "output.txt", "answer.txt"]
                .map(str::to_owned)
                .to_vec(),
        )
        .with_limits(Limits {
            time_limit_ms: 5_000,
            memory_mb: 256,
            ..Limits::default()
        });
    let ran = rt()
        .block_on(sandbox().run_program(&request))
        .expect("the sandbox ran it");
    if let Some(step) = &ran.compile {
        assert_eq!(step.return_code, 0, "the checker compiles: {}", step.stderr);
    }
    let run = ran.run.expect("a run");
    Ending {
        code: run.exit_code.expect("an exit code"),
        message: run.stderr.trim().to_owned(),
    }
}

/// Every vendored checker, compiled unchanged in the sandbox, ends as the native build does
/// on every case: the same exit code and the same message.
#[test]
fn testlibs_checkers_give_their_native_verdicts_in_the_sandbox() {
    let mut disagree = Vec::new();
    for (name, exe) in native() {
        let source = checker_source(name);
        for (output, answer) in CASES {
            let want = run_native(exe, output, answer);
            let got = run_sandboxed(&source, output, answer);
            if got != want {
                disagree.push(format!(
                    "{name} on output {output:?}, answer {answer:?}: native {want:?}, sandbox {got:?}"
                ));
            }
        }
    }
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
}

/// A checker with testlib's text pasted in (as Polygon exports often are) compiles and
/// answers as the native build does.
#[test]
fn a_checker_with_testlib_pasted_in_compiles_and_agrees() {
    let header = std::fs::read_to_string(vendor().join("testlib.h")).expect("the header");
    let checker = checker_source("wcmp").replace("#include \"testlib.h\"\n", "");
    let pasted = format!("{header}\n{checker}");
    let (_, exe) = native()
        .iter()
        .find(|(name, _)| name == "wcmp")
        .expect("wcmp");
    for (output, answer) in [("1 2\n3", "1 2 3"), ("1 2", "1 3"), ("1 2 3 4", "1 2 3")] {
        assert_eq!(
            run_sandboxed(&pasted, output, answer),
            run_native(exe, output, answer)
        );
    }
}

/// The testlib comparison names agree with the real checker of that name on every case of
/// the table whose answer that checker accepts as an answer (a case it FAILs on, exit 3, has
/// a broken answer file: there is nothing to agree on). `rcmp6` is held to `dcmp` on the
/// cases of one number: dcmp compares one double with testlib's `doubleCompare` and 1e-6, as
/// rcmp6 does for each of a sequence.
#[test]
fn testlib_comparison_names_agree_with_the_real_checkers() {
    let mut disagree = Vec::new();
    for (checker, name) in [
        ("wcmp", "wcmp"),
        ("ncmp", "ncmp"),
        ("yesno", "yesno"),
        ("dcmp", "rcmp6"),
    ] {
        let (_, exe) = native()
            .iter()
            .find(|(n, _)| n == checker)
            .expect("a native checker");
        let compare = Compare::testlib(name).expect("a testlib name");
        for (output, answer) in CASES {
            if checker == "dcmp" && answer.split_whitespace().count() != 1 {
                continue;
            }
            let real = run_native(exe, output, answer);
            if real.code == 3 {
                continue;
            }
            let ours = first_difference(output, answer, &compare);
            if ours.is_none() != (real.code == 0) {
                disagree.push(format!(
                    "{name} on output {output:?}, answer {answer:?}: {checker} says {real:?}, ours {ours:?}"
                ));
            }
        }
    }
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
}

/// `<fstream>` works in the sandbox: a program writes a file and reads it back.
#[test]
fn file_streams_read_and_write_the_programs_files() {
    let source = r#"
#include <fstream>
#include <iostream>
#include <string>
int main() {
    { std::ofstream out("numbers.txt"); out << "40 2\n"; }
    std::ifstream in("numbers.txt");
    int a = 0, b = 0;
    in >> a >> b;
    std::fstream missing("no-such-file.txt", std::ios::in);
    std::cout << a + b << ' ' << missing.is_open() << '\n';
}
"#;
    let ran = rt()
        .block_on(sandbox().run_program(&RunRequest::new(Language::Cpp, source)))
        .expect("the sandbox ran it");
    let run = ran.run.expect("it compiled");
    assert_eq!(run.stdout, "42 0\n", "stderr: {}", run.stderr);
}

/// The header shipped to C++ compiles is the vendored testlib with `testlib.patch` applied,
/// and the vendored testlib is the one its README pins.
#[test]
fn the_shipped_testlib_is_the_vendored_one_with_its_patch() {
    use sha2::{Digest, Sha256};
    let pristine = std::fs::read(vendor().join("testlib.h")).expect("the vendored header");
    let digest: String = Sha256::digest(&pristine)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        digest,
        "26facaf1259071eb14ff9e011b6b50473a14ab0e0a8e702087b73cffd1fb1b90"
    );
    let dir = tempfile::tempdir().expect("a temporary directory");
    let patched = dir.path().join("testlib.h");
    let applied = Command::new("patch")
        .arg("-o")
        .arg(&patched)
        .arg(vendor().join("testlib.h"))
        .arg(vendor().join("testlib.patch"))
        .output()
        .expect("patch(1)");
    assert!(applied.status.success(), "{applied:?}");
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/guest/cc/testlib.h");
    assert!(
        std::fs::read(patched).expect("the patched header")
            == std::fs::read(shipped).expect("the shipped header"),
        "src/guest/cc/testlib.h is not vendor/testlib/testlib.h with testlib.patch"
    );
}

/// A checker is compiled once per machine: a second compiler with nothing in memory (as in a
/// new process) finds the first one's module on disk, for a checker never seen before.
#[test]
fn a_checker_is_compiled_once_per_machine() {
    use grpo_sandbox::guest::cc::{Compiler, Toolchain};
    use grpo_sandbox::judge::checker::run_checker;
    use grpo_sandbox::{Sandbox, SandboxOptions};
    use grpo_tasks::judging::{Checker, CheckerProtocol};

    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("a clock after 1970")
        .as_nanos();
    let checker = Checker {
        language: Language::Cpp,
        source: format!("// checker {nonce}\n{}", checker_source("wcmp")),
        protocol: CheckerProtocol::Testlib,
        time_limit_ms: None,
        memory_mb: None,
    };
    for (process, compiles) in [("first", 1), ("second", 0)] {
        let compiler = Compiler::new(Toolchain::locate_default().expect("the toolchain"));
        let own = Sandbox::new(&SandboxOptions::default()).expect("a sandbox");
        assert!(own.with_compiler(compiler.clone()));
        for (output, points) in [("1 2\n3", 1.0), ("1 2 4", 0.0)] {
            let verdict = rt()
                .block_on(run_checker(&own, &checker, ("", output, "1 2 3"), None))
                .expect("the sandbox ran it")
                .expect("the checker answered");
            assert_eq!(verdict.points, points, "{process}: {verdict:?}");
        }
        assert_eq!(
            compiler.stats().compiles,
            compiles,
            "the {process} compiler"
        );
    }
}
