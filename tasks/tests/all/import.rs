//! Importers on small hand-written fixtures in each dataset's real format.

use std::path::PathBuf;

use grpo_tasks::import::{FieldMap, Format, import_file, import_str};
use grpo_tasks::{CodeMode, CodeTests, Pack, Task, pack::to_jsonl};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Imported tasks must form a valid pack: they go through the strict loader.
fn reload(tasks: &[Task]) -> Pack {
    Pack::from_jsonl_str("imported.jsonl", &to_jsonl(tasks)).unwrap()
}

fn meta<'a>(t: &'a Task, key: &str) -> &'a str {
    t.metadata().unwrap()[key].as_str().unwrap()
}

#[test]
fn humaneval_gz() {
    let tasks = import_file(&Format::HumanEval, &fixture("HumanEval.jsonl.gz")).unwrap();
    assert_eq!(tasks.len(), 2);
    let Task::Code(c) = &tasks[0] else { panic!() };
    assert_eq!(c.id, "HumanEval/0");
    assert_eq!(c.mode, CodeMode::Prefix);
    assert!(c.prompt.ends_with("    \"\"\"\n"));
    let CodeTests::Assert(a) = &c.tests else {
        panic!()
    };
    assert_eq!(a.entry_point.as_deref(), Some("has_close_elements"));
    assert!(a.code.contains("def check(candidate):"));
    assert!(c.reference.as_deref().unwrap().starts_with("    for idx"));
    assert_eq!(
        (meta(&tasks[0], "license"), meta(&tasks[0], "source_id")),
        ("MIT", "HumanEval/0")
    );
    reload(&tasks);
}

#[test]
fn mbpp_original_and_sanitized() {
    let orig = import_file(&Format::Mbpp, &fixture("mbpp.jsonl")).unwrap();
    let san = import_file(&Format::Mbpp, &fixture("sanitized-mbpp.json")).unwrap();
    assert_eq!((orig.len(), san.len()), (2, 2));
    let Task::Code(c) = &orig[1] else { panic!() };
    assert_eq!(c.id, "mbpp/3");
    assert_eq!(c.mode, CodeMode::Full);
    assert!(c.prompt.starts_with("Write a python function to identify non-prime numbers.\nYour code should pass these tests:\nassert is_not_prime(2) == False"));
    assert!(
        !c.reference.as_deref().unwrap().contains('\r'),
        "CRLF normalised"
    );
    assert_eq!(meta(&orig[0], "license"), "CC-BY-4.0");
    assert_eq!(meta(&orig[0], "source"), "mbpp");
    let Task::Code(s) = &san[1] else { panic!() };
    let CodeTests::Assert(a) = &s.tests else {
        panic!()
    };
    assert!(
        a.code.starts_with("import math\nassert heap_queue_largest"),
        "{}",
        a.code
    );
    assert_eq!(meta(&san[1], "source"), "mbpp_sanitized");
    // Same problem in both layouts: same id, same tests.
    assert_eq!(orig[0].id(), san[0].id());
    reload(&orig);
    reload(&san);
}

#[test]
fn gsm8k_answers_after_hashes() {
    let tasks = import_file(&Format::Gsm8k, &fixture("gsm8k_test.jsonl")).unwrap();
    let answers: Vec<&str> = tasks
        .iter()
        .map(|t| match t {
            Task::Math(m) => m.answer.as_str(),
            _ => panic!(),
        })
        .collect();
    assert_eq!(answers, ["72", "14400"]); // "14,400": thousands separator dropped
    assert_eq!(tasks[1].id(), "gsm8k/1");
    assert!(meta(&tasks[0], "solution").ends_with("72 clips altogether in April and May."));
    reload(&tasks);
    let err = import_str(
        &Format::Gsm8k,
        "g.jsonl",
        r#"{"question":"q","answer":"no final"}"#,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "g.jsonl:1: field `answer`: no `#### N` final answer"
    );
}

#[test]
fn math_boxed_or_answer_field() {
    let tasks = import_file(&Format::Math, &fixture("math.jsonl")).unwrap();
    let answers: Vec<&str> = tasks
        .iter()
        .map(|t| match t {
            Task::Math(m) => m.answer.as_str(),
            _ => panic!(),
        })
        .collect();
    assert_eq!(
        answers,
        [
            r"\sqrt{2}",
            r"\frac{1}{2}",
            r"\left( 3, \frac{\pi}{2} \right)"
        ]
    );
    assert_eq!(tasks[2].id(), "math/test/precalculus/807.json");
    assert_eq!(meta(&tasks[0], "subject"), "Intermediate Algebra");
    assert_eq!(tasks[2].metadata().unwrap()["level"], 2);
    reload(&tasks);
    let err = import_str(
        &Format::Math,
        "m.jsonl",
        r#"{"problem":"p","solution":"no box"}"#,
    )
    .unwrap_err();
    assert!(err.to_string().contains("field `solution`"), "{err}");
}

#[test]
fn generic_jsonl_with_a_mapping() {
    let mut map = FieldMap::parse(
        "math",
        "id=qid, prompt=question, answer=final, alternatives=others",
    )
    .unwrap();
    map.license = Some("CC0-1.0".into());
    map.source = Some("quiz".into());
    let tasks = import_file(&Format::Jsonl(map), &fixture("generic.jsonl")).unwrap();
    let Task::Math(m) = &tasks[0] else { panic!() };
    assert_eq!((m.id.as_str(), m.answer.as_str()), ("q-1", "42")); // numbers become text
    let Task::Math(m) = &tasks[1] else { panic!() };
    assert_eq!(m.alternatives, ["4.5"]);
    assert_eq!(
        (meta(&tasks[0], "license"), meta(&tasks[0], "source")),
        ("CC0-1.0", "quiz")
    );
    reload(&tasks);

    let countdown = FieldMap::parse("countdown", "prompt=q,numbers=nums,target=goal").unwrap();
    let line = r#"{"q":"Make 10","nums":[2,5],"goal":10}"#;
    let tasks = import_str(&Format::Jsonl(countdown.clone()), "c.jsonl", line).unwrap();
    let Task::Countdown(c) = &tasks[0] else {
        panic!()
    };
    assert_eq!(
        (c.numbers.as_slice(), c.target, c.use_all, c.id.as_str()),
        (&[2, 5][..], 10, true, "0")
    );

    for (kind, pairs, words) in [
        ("code", "", "math or countdown"),
        ("math", "question", "not task_field=input_field"),
        ("math", "numbers=n", "not a field of math tasks"),
    ] {
        let err = FieldMap::parse(kind, pairs).unwrap_err().to_string();
        assert!(err.contains(words), "{err}");
    }
    let err = import_str(
        &Format::Jsonl(countdown),
        "c.jsonl",
        r#"{"q":"x","nums":[1,"2"],"goal":3}"#,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "c.jsonl:1: field `nums[1]`: expected an integer"
    );
}

#[test]
fn broken_input_names_the_line() {
    let text = format!(
        "{}\n{{broken\n",
        "{\"question\":\"q\",\"answer\":\"#### 1\"}"
    );
    let err = import_str(&Format::Gsm8k, "g.jsonl", &text)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("g.jsonl:2:"), "{err}");
    let err = import_str(
        &Format::HumanEval,
        "h.jsonl",
        r#"{"task_id":"H/1","prompt":"p"}"#,
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("field `entry_point`: missing required field"),
        "{err}"
    );
}

// --- Code-RL data sets: hand-written samples in each upstream shape (tests/fixtures/code). ---

use grpo_tasks::import::{import_file_all, import_str_all};
use grpo_tasks::judging::{CheckerProtocol, Compare, PublicTests};
use grpo_tasks::{CallTests, CodeTask, Language, StdioTests};
use serde_json::json;

fn code_fixture(name: &str) -> PathBuf {
    fixture(&format!("code/{name}"))
}

fn code(t: &Task) -> &CodeTask {
    match t {
        Task::Code(c) => c,
        other => panic!("not a code task: {other:?}"),
    }
}

fn stdio(t: &Task) -> &StdioTests {
    match &code(t).tests {
        CodeTests::Stdio(s) => s,
        other => panic!("not stdio: {other:?}"),
    }
}

fn call(t: &Task) -> &CallTests {
    match &code(t).tests {
        CodeTests::Call(c) => c,
        other => panic!("not call: {other:?}"),
    }
}

fn assert_code(t: &Task) -> &str {
    match &code(t).tests {
        CodeTests::Assert(a) => &a.code,
        other => panic!("not assert: {other:?}"),
    }
}

fn io(s: &StdioTests) -> Vec<(&str, &str, bool)> {
    s.cases
        .iter()
        .map(|c| (c.stdin.as_str(), c.stdout.as_str(), c.public))
        .collect()
}

#[test]
fn taco_stdio_call_and_solution_class() {
    let tasks = import_file(&Format::Taco, &code_fixture("taco.jsonl")).unwrap();
    assert_eq!(tasks.len(), 3);
    let sum = code(&tasks[0]);
    assert_eq!(sum.id, "taco/0");
    assert_eq!(
        io(stdio(&tasks[0])),
        [("1 2\n", "3\n", false), ("10 -4\n", "6\n", false)]
    );
    assert_eq!((sum.time_limit_ms, sum.memory_mb), (Some(2000), Some(256)));
    assert!(sum.reference.as_deref().unwrap().starts_with("a, b = map"));
    assert_eq!(
        (meta(&tasks[0], "license"), meta(&tasks[0], "origin")),
        ("Apache-2.0", "codechef")
    );
    // Call-based: arguments as given, outputs unwrapped from their one-element lists.
    let c = call(&tasks[1]);
    assert_eq!(c.entry_point, "largest");
    assert_eq!(
        c.cases
            .iter()
            .map(|k| (json!(k.args), k.expected.clone()))
            .collect::<Vec<_>>(),
        [(json!([[3, 9, 2]]), json!(9)), (json!([[-5]]), json!(-5))]
    );
    assert!(
        code(&tasks[1])
            .prompt
            .contains("```python\ndef largest(xs):")
    );
    // A `class Solution` starter: assert tests on `Solution().pairs`; [[[1, 3]]] unwraps to
    // [[1, 3]], [[]] to [].
    let a = assert_code(&tasks[2]);
    assert!(a.contains("getattr(Solution(), \"pairs\")"), "{a}");
    assert!(
        a.contains(r#"_case(_json.loads("[[1,2,3],4]"), _json.loads("[[1,3]]"))"#),
        "{a}"
    );
    assert!(
        a.contains(r#"_case(_json.loads("[[5],1]"), _json.loads("[]"))"#),
        "{a}"
    );
    // A limit in words we do not read is kept, not guessed.
    assert_eq!(code(&tasks[2]).time_limit_ms, None);
    assert_eq!(meta(&tasks[2], "time_limit"), "about a second");
    reload(&tasks);
}

#[test]
fn apps_ids_references_and_license() {
    let tasks = import_file(&Format::Apps, &code_fixture("apps.jsonl")).unwrap();
    assert_eq!(tasks.len(), 2);
    assert_eq!(tasks[0].id(), "apps/4001");
    assert_eq!(
        code(&tasks[0]).reference.as_deref(),
        Some("print(input()[::-1])\n")
    );
    assert_eq!(io(stdio(&tasks[0]))[0], ("abc\n", "cba\n", false));
    let c = call(&tasks[1]);
    assert_eq!(c.entry_point, "count_vowels");
    assert_eq!(c.cases[0].args, [json!("hello")]);
    assert_eq!(c.cases[0].expected, json!(2));
    assert_eq!(
        (meta(&tasks[1], "license"), meta(&tasks[1], "source_id")),
        ("MIT", "4002")
    );
    reload(&tasks);
}

/// The first three rows (the ones the Parquet file holds too).
fn check_codecontests(imported: grpo_tasks::import::Imported) {
    assert_eq!(imported.skipped.len(), 1);
    assert_eq!(imported.skipped[0].line, 3);
    assert!(imported.skipped[0].reason.contains("input_file"));
    let tasks = &imported.tasks[..2];
    let double = code(&tasks[0]);
    assert_eq!(double.id, "codecontests/1000_A. Double It");
    assert_eq!(
        io(stdio(&tasks[0])),
        [
            ("3\n", "6\n", true),
            ("0\n", "0\n", false),
            ("-7\n", "-14\n", false),
            ("100\n", "200\n", false)
        ]
    );
    // Python 3 chosen over the Python 2 solution listed first.
    assert_eq!(double.language, Language::Python);
    assert_eq!(
        double.reference.as_deref(),
        Some("print(2 * int(input()))\n")
    );
    assert_eq!(
        (double.time_limit_ms, double.memory_mb),
        (Some(2500), Some(256))
    );
    assert_eq!(meta(&tasks[0], "license"), "CC-BY-4.0");
    assert_eq!(tasks[0].metadata().unwrap()["cf_rating"], 800);
    // Only a C++ solution: a C++ task.
    let max = code(&tasks[1]);
    assert_eq!(max.language, Language::Cpp);
    assert!(max.reference.as_deref().unwrap().contains("std::max"));
    assert_eq!((max.time_limit_ms, max.memory_mb), (None, None));
    // Graded as CodeContests' tester grades: tokens, no case, numbers within 1e-5, and every
    // test (public, private, generated) decides.
    let tests = stdio(&tasks[0]);
    assert_eq!(tests.compare, Compare::code_contests());
    assert_eq!(tests.plan.public_tests, PublicTests::Always);
    reload(tasks);
}

#[test]
fn codecontests_jsonl_and_parquet() {
    check_codecontests(
        import_file_all(&Format::CodeContests, &code_fixture("codecontests.jsonl")).unwrap(),
    );
    // The same rows as an HF Parquet file (written by pyarrow): the same tasks.
    let from_parquet =
        import_file_all(&Format::CodeContests, &code_fixture("codecontests.parquet")).unwrap();
    let from_jsonl =
        import_file_all(&Format::CodeContests, &code_fixture("codecontests.jsonl")).unwrap();
    assert_eq!(
        from_parquet.tasks,
        from_jsonl.tasks[..from_parquet.tasks.len()]
    );
    assert_eq!(from_parquet.skipped, from_jsonl.skipped);
    check_codecontests(from_parquet);
}

#[test]
fn codecontests_rows_whose_layout_and_case_only_its_tester_forgives() {
    let tasks = import_file(&Format::CodeContests, &code_fixture("codecontests.jsonl")).unwrap();
    assert_eq!(tasks.len(), 4);
    // The example's answers one per line in capitals, the other tests' one line per case in
    // lower case: only tokens without case let one program pass both (as upstream).
    let parity = stdio(&tasks[2]);
    assert_eq!(code(&tasks[2]).id, "codecontests/1001_A. Even Or Odd");
    assert_eq!(
        io(parity),
        [
            ("1\n3 2 3 4\n", "YES\nNO\nYES\n", true),
            ("2\n1 7\n2 10 11\n", "no\nyes no\n", false),
            ("1\n2 0 -3\n", "YES NO\n", false)
        ]
    );
    assert_eq!(parity.compare, Compare::code_contests());
    // Numbers: the reference prints 6 decimals where the jury wrote 10.
    let third = code(&tasks[3]);
    assert_eq!(
        third.reference.as_deref(),
        Some("print(f\"{int(input()) / 3:.6f}\")\n")
    );
    reload(&tasks);
}

#[test]
fn livecodebench_compressed_private_tests() {
    let tasks = import_file(&Format::LiveCodeBench, &code_fixture("livecodebench.jsonl")).unwrap();
    assert_eq!(tasks.len(), 2);
    assert_eq!(tasks[0].id(), "livecodebench/abc900_a");
    assert_eq!(
        io(stdio(&tasks[0])),
        [
            ("1\n", "2\n", true),
            ("41\n", "42\n", false),
            ("-1\n", "0\n", false)
        ]
    );
    assert_eq!(meta(&tasks[0], "platform"), "atcoder");
    // LiveCodeBench grades on public and private cases alike, numbers by value.
    assert_eq!(stdio(&tasks[0]).plan.public_tests, PublicTests::Always);
    assert_eq!(stdio(&tasks[0]).compare, Compare::live_code_bench());
    // Functional: every case, public first, each a call of Solution().doubled.
    let a = assert_code(&tasks[1]);
    assert!(a.contains("getattr(Solution(), \"doubled\")"), "{a}");
    assert!(
        a.contains(r#"_case(_json.loads("[[],3]"), _json.loads("[]"))"#),
        "{a}"
    );
    assert!(
        a.contains(r#"_case(_json.loads("[[5],0]"), _json.loads("[10]"))"#),
        "{a}"
    );
    assert!(
        a.contains(r#"_case(_json.loads("[[1,2],1]"), _json.loads("[2,4]"))"#),
        "the public case counts too: {a}"
    );
    assert!(
        a.find("[[1,2],1]") < a.find("[[5],0]"),
        "public cases first: {a}"
    );
    assert!(code(&tasks[1]).prompt.contains("class Solution:"));
    reload(&tasks);
}

#[test]
fn livecodebench_refuses_a_pickle_that_names_code() {
    use base64::Engine;
    use std::io::Write;
    // pickle.dumps(os.system) -- protocol 4: GLOBAL-style STACK_GLOBAL; and protocol 0: GLOBAL.
    for (pickled, opcode) in [
        (&b"\x80\x04\x95\x14\x00\x00\x00\x00\x00\x00\x00\x8c\x05posix\x94\x8c\x06system\x94\x93\x94."[..], "STACK_GLOBAL"),
        (b"cposix\nsystem\np0\n.", "GLOBAL"),
    ] {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(pickled).unwrap();
        let packed = base64::engine::general_purpose::STANDARD.encode(z.finish().unwrap());
        let row = json!({
            "question_id": "x", "question_content": "q", "public_test_cases": "[]",
            "private_test_cases": packed, "metadata": "{}",
        });
        let err = import_str(&Format::LiveCodeBench, "lcb.jsonl", &row.to_string())
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("lcb.jsonl:1: field `private_test_cases`:"), "{err}");
        assert!(err.contains(opcode), "{err}");
    }
}

#[test]
fn codeforces_checker_and_skipped_interactive() {
    let imported = import_file_all(&Format::Codeforces, &code_fixture("codeforces.jsonl")).unwrap();
    assert_eq!(imported.skipped.len(), 1);
    assert_eq!(imported.skipped[0].line, 3);
    assert_eq!(imported.skipped[0].reason, "interactive problem");
    let tasks = imported.tasks;
    assert_eq!(tasks.len(), 2);
    let square = code(&tasks[0]);
    assert_eq!(square.id, "codeforces/2000A");
    assert_eq!(
        (square.time_limit_ms, square.memory_mb),
        (Some(1000), Some(256))
    );
    assert!(
        square
            .prompt
            .starts_with("# Square\n\nPrint the square of n.")
    );
    assert!(
        square
            .prompt
            .contains("## Example 1\n\nInput:\n```\n3\n```")
    );
    assert_eq!(
        io(stdio(&tasks[0])),
        [
            ("3\n", "9\n", true),
            ("3\n", "9\n", false),
            ("1000\n", "1000000\n", false)
        ]
    );
    assert!(stdio(&tasks[0]).checker.is_none());
    // Any split of n is right: the checker decides.
    let split = stdio(&tasks[1]);
    let checker = split.checker.as_ref().unwrap();
    assert_eq!(
        (checker.language, checker.protocol),
        (Language::Python, CheckerProtocol::Codeforces)
    );
    assert!(checker.source.contains("a + b == n"));
    assert_eq!(code(&tasks[1]).memory_mb, Some(512));
    assert_eq!(
        tasks[1].metadata().unwrap()["official_tests_complete"],
        false
    );
    assert_eq!(meta(&tasks[1], "license"), "CC-BY-4.0");
    reload(&tasks);
}

#[test]
fn primeintellect_stdio_and_function_calls() {
    let tasks = import_file(
        &Format::PrimeIntellect,
        &code_fixture("primeintellect.jsonl"),
    )
    .unwrap();
    assert_eq!(tasks[0].id(), "primeintellect/vfc_1");
    assert_eq!(io(stdio(&tasks[0]))[1], ("Hi\n", "HI\n", false));
    assert_eq!(
        code(&tasks[0]).reference.as_deref(),
        Some("print(input().upper())\n")
    );
    assert!(tasks[0].prompt().starts_with("Solve the following"));
    assert_eq!(
        tasks[0].metadata().unwrap()["upstream"]["difficulty"],
        "easy"
    );
    let c = call(&tasks[1]);
    assert_eq!(c.entry_point, "add");
    assert_eq!(
        c.cases
            .iter()
            .map(|k| (json!(k.args), k.expected.clone()))
            .collect::<Vec<_>>(),
        [
            (json!([1, 2]), json!(3)),
            (json!([[1], [2]]), json!([1, 2]))
        ]
    );
    reload(&tasks);
}

#[test]
fn kodcode_pytest_files_become_one_program() {
    let tasks = import_file(&Format::KodCode, &code_fixture("kodcode.jsonl")).unwrap();
    assert_eq!(tasks[0].id(), "kodcode/Leetcode_1_I");
    assert!(
        tasks[0]
            .prompt()
            .ends_with("Your solution should define:\ndef is_even(n):\n")
    );
    let a = assert_code(&tasks[0]);
    assert!(!a.contains("from solution"), "{a}");
    assert!(a.ends_with("test_even()\ntest_odd()\n"), "{a}");
    let a = assert_code(&tasks[1]);
    assert!(
        !a.contains("import pytest") && !a.contains("safe_div,\n)"),
        "{a}"
    );
    assert!(
        a.contains("class pytest:") && a.ends_with("test_div()\ntest_zero()\n"),
        "{a}"
    );
    assert_eq!(
        (meta(&tasks[1], "license"), meta(&tasks[1], "subset")),
        ("CC-BY-NC-4.0", "Prefill")
    );
    reload(&tasks);
}

#[test]
fn evalplus_outputs_are_pending_until_the_reference_runs() {
    let path = code_fixture("evalplus.jsonl");
    let err = import_file(&Format::EvalPlus, &path).unwrap_err();
    assert!(err.to_string().contains("import_file_all"), "{err}");
    let imported = import_file_all(&Format::EvalPlus, &path).unwrap();
    assert_eq!(imported.pending.len(), 2);
    let script = imported.pending[0].script();
    assert!(
        script.starts_with("def add_all(xs: list) -> int:"),
        "{script}"
    );
    assert!(script.contains("    return sum(xs)\n"));
    assert!(script.contains("add_all(*_grpo_args)"));
    let he = code(&imported.tasks[0]);
    assert_eq!(
        (he.mode, he.id.as_str()),
        (CodeMode::Prefix, "HumanEval/900")
    );
    assert_eq!(call(&imported.tasks[0]).cases.len(), 3); // base and plus inputs
    assert_eq!(code(&imported.tasks[1]).mode, CodeMode::Full);
    assert_eq!(call(&imported.tasks[1]).float_tolerance, Some(1e-6));
    // A reference that printed something first: the last line holds the results.
    let tasks = imported
        .clone()
        .finalize(vec![
            Ok("debug output\n\n[3, 0, 5]\n".into()),
            Ok("[1.5, 1.3333333333333333, 0.15000000000000002]\n".into()),
        ])
        .unwrap();
    let expected: Vec<_> = call(&tasks[0])
        .cases
        .iter()
        .map(|c| c.expected.clone())
        .collect();
    assert_eq!(expected, [json!(3), json!(0), json!(5)]);
    assert_eq!(
        call(&tasks[1]).cases[2].expected,
        json!(0.15000000000000002)
    );
    assert_eq!(meta(&tasks[0], "source"), "humanevalplus");
    reload(&tasks);
    // Too few results, or a failed run, name the row.
    let err = imported
        .clone()
        .finalize(vec![Ok("[3]".into()), Ok("[1, 1, 1]".into())])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(":1: field `canonical_solution`: 1 results for 3 inputs"),
        "{err}"
    );
    let err = imported
        .finalize(vec![Ok("[3, 0, 5]".into()), Err("timed out".into())])
        .unwrap_err()
        .to_string();
    assert!(err.contains(":2: field `canonical_solution`"), "{err}");
}

#[test]
fn evalplus_script_runs_under_python() {
    // The generated script is plain Python: run it with the machine's interpreter.
    let python = which_python();
    let imported = import_file_all(&Format::EvalPlus, &code_fixture("evalplus.jsonl")).unwrap();
    let outputs = imported
        .pending
        .iter()
        .map(|p| {
            let out = std::process::Command::new(&python)
                .args(["-c", &p.script()])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            Ok(String::from_utf8(out.stdout).unwrap())
        })
        .collect();
    let tasks = imported.finalize(outputs).unwrap();
    assert_eq!(call(&tasks[0]).cases[2].expected, json!(5));
    assert_eq!(call(&tasks[1]).cases[0].expected, json!(1.5));
}

/// The machine's `python3` (every machine the tests run on has one: CI's scripts need it too).
fn which_python() -> String {
    let found = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "these tests run the generated Python with python3, not found"
    );
    "python3".to_owned()
}

#[test]
fn verl_parquet_rows_from_pyarrow() {
    let tasks = import_file(&Format::Verl, &code_fixture("verl.parquet")).unwrap();
    let Task::Math(m) = &tasks[0] else { panic!() };
    assert_eq!((m.id.as_str(), m.answer.as_str()), ("openai/gsm8k/0", "9"));
    assert!(m.prompt.starts_with("Natalia sold"));
    assert_eq!(meta(&tasks[0], "source"), "openai/gsm8k");
    assert_eq!(meta(&tasks[0], "split"), "train");
    // The user message, not the system one.
    assert_eq!(tasks[1].prompt(), "Read n and print n squared.");
    assert_eq!(
        io(stdio(&tasks[1])),
        [("2\n", "4\n", false), ("5\n", "25\n", false)]
    );
    reload(&tasks);
}

#[test]
fn verl_export_round_trips() {
    use grpo_tasks::import::parquet::{read_rows, write_verl};
    let mut tasks = import_file(&Format::Taco, &code_fixture("taco.jsonl")).unwrap();
    tasks.extend(import_file(&Format::Gsm8k, &fixture("gsm8k_test.jsonl")).unwrap());
    tasks.push(
        serde_json::from_str(r#"{"id":"own","kind":"math","prompt":"1+1?","answer":"2"}"#).unwrap(),
    );
    let pack = Pack::from_jsonl_str("mixed.jsonl", &to_jsonl(&tasks)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("train.parquet");
    let export = write_verl(&pack, &out).unwrap();
    // The `class Solution` task has assert tests: verl's ground truth cannot hold them.
    assert_eq!(export.rows, 5);
    assert_eq!(export.skipped.len(), 1);
    assert_eq!(export.skipped[0].0, "taco/2");
    let rows = read_rows("train.parquet", std::fs::read(&out).unwrap()).unwrap();
    let row = &rows[0].1;
    assert_eq!(row["data_source"], "taco");
    assert_eq!(row["ability"], "code");
    assert_eq!(row["prompt"][0]["role"], "user");
    assert_eq!(
        row["prompt"][0]["content"].as_str().unwrap(),
        pack.manifest.template.render(&tasks[0])
    );
    assert_eq!(row["reward_model"]["style"], "rule");
    let gt: serde_json::Value =
        serde_json::from_str(row["reward_model"]["ground_truth"].as_str().unwrap()).unwrap();
    assert_eq!(
        gt,
        json!({"inputs": ["1 2\n", "10 -4\n"], "outputs": ["3\n", "6\n"]})
    );
    assert_eq!(row["extra_info"], json!({"split": "mixed", "index": 0}));
    let gt: serde_json::Value =
        serde_json::from_str(rows[1].1["reward_model"]["ground_truth"].as_str().unwrap()).unwrap();
    assert_eq!(gt["fn_name"], "largest");
    assert_eq!(rows[2].1["ability"], "math");
    assert_eq!(rows[2].1["reward_model"]["ground_truth"], "72");
    assert_eq!(rows[2].1["data_source"], "gsm8k");
    assert_eq!(rows[4].1["data_source"], "grpo/mixed");
    // Read back as tasks: same sources, tests and answers.
    let back = import_file(&Format::Verl, &out).unwrap();
    assert_eq!(back.len(), 5);
    assert_eq!(meta(&back[0], "source"), "taco");
    assert_eq!(stdio(&back[0]).cases, stdio(&tasks[0]).cases);
    assert_eq!(call(&back[1]).cases, call(&tasks[1]).cases);
    let Task::Math(m) = &back[3] else { panic!() };
    assert_eq!(
        (m.answer.as_str(), meta(&back[3], "source")),
        ("14400", "gsm8k")
    );
}

#[test]
fn bad_rows_name_file_row_and_field() {
    for (format, row, want) in [
        (
            Format::Taco,
            json!({"question": "q", "input_output": "{not json"}),
            "field `input_output`: not valid JSON text",
        ),
        (
            Format::Taco,
            json!({"question": "q", "input_output": {"inputs": ["1"], "outputs": []}}),
            "field `input_output`: 1 inputs but 0 outputs",
        ),
        (
            Format::Apps,
            json!({"question": "q", "input_output": {"inputs": [[1]], "outputs": [[1]], "fn_name": "not a name"}}),
            "field `input_output.fn_name`",
        ),
        (
            Format::CodeContests,
            json!({"name": "n", "description": "d", "public_tests": {"input": ["1"], "output": ["1", "2"]}}),
            "field `public_tests.output`: 1 inputs but 2 outputs",
        ),
        (
            Format::CodeContests,
            json!({"name": "n", "description": "d", "public_tests": {"input": ["1"], "output": ["1"]}, "time_limit": "soon"}),
            "field `time_limit`",
        ),
        (
            Format::Codeforces,
            json!({"id": "1A", "description": "d", "official_tests": [{"input": "1"}]}),
            "field `official_tests[0].output`: missing",
        ),
        (
            Format::LiveCodeBench,
            json!({"question_id": "q", "question_content": "c", "public_test_cases": "[{\"input\": \"1\", \"output\": \"1\", \"testtype\": \"stdin\"}]", "private_test_cases": "@@not base64@@"}),
            "field `private_test_cases`: neither JSON nor base64",
        ),
        (
            Format::LiveCodeBench,
            json!({"question_id": "q", "question_content": "c", "public_test_cases": "[{\"input\": \"1\", \"output\": \"1\", \"testtype\": \"functional\"}]", "metadata": "{}"}),
            "field `metadata.func_name`",
        ),
        (
            Format::PrimeIntellect,
            json!({"prompt": "p", "verification_info": {"test_cases": [{"type": "interactive", "input": "", "output": ""}]}}),
            "field `verification_info`",
        ),
        (
            Format::KodCode,
            json!({"question": "q", "solution": "s", "test": "@pytest.mark.parametrize('x', [1])\ndef test_a(x):\n    pass\n"}),
            "field `test`: uses the decorator",
        ),
        (
            Format::EvalPlus,
            json!({"task_id": "HumanEval/1", "prompt": "p", "canonical_solution": "s", "entry_point": "f", "base_input": [1]}),
            "field `base_input[0]`",
        ),
        (
            Format::Verl,
            json!({"data_source": "d", "prompt": [{"role": "user", "content": "p"}], "reward_model": {"style": "rule"}}),
            "field `reward_model.ground_truth`: missing",
        ),
    ] {
        let text = format!("\n{row}\n");
        let err = match import_str_all(&format, "bad.jsonl", &text) {
            Ok(imported) => panic!("{format:?} accepted {row}: {imported:?}"),
            Err(e) => e.to_string(),
        };
        assert!(err.starts_with("bad.jsonl:2: "), "{err}");
        assert!(err.contains(want), "{format:?}: {err}");
    }
}

#[test]
fn generated_assert_tests_run_under_python() {
    // Reference + generated tests as one program, as the sandbox assembles a `full` task: the
    // reference passes and a wrong program fails.
    let python = which_python();
    let run = |program: String| {
        std::process::Command::new(&python)
            .args(["-c", &program])
            .output()
            .unwrap()
            .status
            .success()
    };
    let taco = import_file(&Format::Taco, &code_fixture("taco.jsonl")).unwrap();
    let kod = import_file(&Format::KodCode, &code_fixture("kodcode.jsonl")).unwrap();
    for t in [&taco[2], &kod[0], &kod[1]] {
        let c = code(t);
        let tests = assert_code(t);
        let reference = c.reference.as_deref().unwrap();
        assert!(
            run(format!("{reference}\n{tests}")),
            "{}: reference fails:\n{tests}",
            c.id
        );
        let wrong = reference.replace("return", "return None and");
        assert!(
            !run(format!("{wrong}\n{tests}")),
            "{}: a wrong program passes",
            c.id
        );
    }
    let lcb = import_file(&Format::LiveCodeBench, &code_fixture("livecodebench.jsonl")).unwrap();
    let tests = assert_code(&lcb[1]);
    let solution = "class Solution:\n    def doubled(self, nums, k):\n        return tuple(2 * x for x in nums)\n";
    assert!(run(format!("{solution}\n{tests}")), "{tests}");
    assert!(!run(format!("{}\n{tests}", solution.replace("2 * x", "x"))));
}
