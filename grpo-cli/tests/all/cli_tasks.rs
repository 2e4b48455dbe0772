//! `grpo tasks …` end to end, through the built binary.

use std::path::Path;
use std::process::Output;

fn grpo(args: &[&str]) -> Output {
    crate::common::grpo()
        .args(args)
        .output()
        .expect("running grpo")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json_lines(o: &Output) -> Vec<serde_json::Value> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn validate_builtin_packs_succeeds() {
    for name in ["builtin:arith", "builtin:countdown", "builtin:python"] {
        let o = grpo(&["tasks", "validate", name]);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        assert!(stderr(&o).contains("valid"), "{}", stderr(&o));
    }
}

#[test]
fn validate_lists_every_problem_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.jsonl");
    std::fs::write(
        &path,
        [
            r#"{"id":"a","kind":"math","prompt":"1+1?","answer":"2"}"#,
            r#"{"id":"b","kind":"math","prompt":"1+1?""#,
            r#"{"id":"c","kind":"math","prompt":"p"}"#,
            r#"{"id":"a","kind":"math","prompt":"again","answer":"2"}"#,
            r#"{"id":"d","kind":"riddle","prompt":"p"}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let o = grpo(&["tasks", "validate", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let problems = json_lines(&o);
    let lines: Vec<(u64, String)> = problems
        .iter()
        .map(|p| {
            (
                p["line"].as_u64().unwrap(),
                p["field"].as_str().unwrap_or("-").to_owned(),
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            (2, "-".to_owned()),
            (3, "answer".to_owned()),
            (5, "kind".to_owned()),
            (4, "id".to_owned())
        ]
    );
    assert!(
        stderr(&o).contains("bad.jsonl:5: field `kind` (task d): unknown kind `riddle`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bad_arguments_exit_2() {
    assert_eq!(
        grpo(&["tasks", "validate", "builtin:nope"]).status.code(),
        Some(2)
    );
    assert_eq!(
        grpo(&["tasks", "validate", "/no/such/pack"]).status.code(),
        Some(2)
    );
    assert_eq!(
        grpo(&[
            "tasks",
            "generate",
            "arith",
            "--n",
            "3",
            "--difficulty",
            "extreme",
            "-o",
            "x.jsonl"
        ])
        .status
        .code(),
        Some(2)
    );
    assert_eq!(
        grpo(&["tasks", "check", "builtin:arith", "--split", "dev"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn generate_is_deterministic_and_the_output_validates() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.jsonl");
    let b = dir.path().join("b.jsonl");
    for out in [&a, &b] {
        let o = grpo(&[
            "tasks",
            "generate",
            "countdown",
            "--n",
            "50",
            "--seed",
            "7",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let c = dir.path().join("c.jsonl");
    grpo(&[
        "tasks",
        "generate",
        "countdown",
        "--n",
        "50",
        "--seed",
        "8",
        "-o",
        c.to_str().unwrap(),
    ]);
    assert_ne!(std::fs::read(&a).unwrap(), std::fs::read(&c).unwrap());

    let pack = dir.path().join("arith-pack");
    let o = grpo(&[
        "tasks",
        "generate",
        "arith",
        "--n",
        "100",
        "--eval-n",
        "20",
        "--seed",
        "1",
        "--difficulty",
        "medium",
        "-o",
        pack.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(Path::new(&pack).join("pack.toml").exists());
    let o = grpo(&["tasks", "stats", pack.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let stats = &json_lines(&o)[0];
    assert_eq!(stats["tasks"], 120);
    assert_eq!(stats["splits"]["train"]["tasks"], 100);
    assert_eq!(stats["splits"]["eval"]["kinds"]["math"], 20);
    assert_eq!(stats["splits"]["train"]["difficulty"]["medium"], 100);
    assert_eq!(stats["train_eval_overlap"], 0);
}

#[test]
fn check_passes_generated_packs_and_catches_broken_tasks() {
    let o = grpo(&["tasks", "check", "builtin:countdown", "--split", "eval"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines = json_lines(&o);
    assert_eq!(lines.len(), 200);
    assert!(
        lines
            .iter()
            .all(|l| l["passed"] == true && l["id"].is_string())
    );

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mixed.jsonl");
    std::fs::write(
        &path,
        [
            r#"{"id":"ok","kind":"math","prompt":"Half of 1?","answer":"\\frac{1}{2}"}"#,
            r#"{"id":"solvable","kind":"countdown","prompt":"p","numbers":[3,3,8,8],"target":24}"#,
            r#"{"id":"impossible","kind":"countdown","prompt":"p","numbers":[1,1],"target":3}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let o = grpo(&["tasks", "check", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let passed: Vec<(String, bool)> = json_lines(&o)
        .iter()
        .map(|l| {
            (
                l["id"].as_str().unwrap().to_owned(),
                l["passed"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        passed,
        [
            ("ok".to_owned(), true),
            ("solvable".to_owned(), true),
            ("impossible".to_owned(), false)
        ]
    );
}

#[test]
fn check_runs_code_references_and_rejects_tests_that_check_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("code.jsonl");
    std::fs::write(
        &path,
        [
            r#"{"id":"good","kind":"code","prompt":"Write add(a, b).","language":"python","mode":"full","tests":{"type":"assert","code":"assert add(2, 3) == 5\n"},"reference":"def add(a, b):\n    return a + b\n"}"#,
            r#"{"id":"vacuous","kind":"code","prompt":"Print nothing.","language":"python","mode":"full","tests":{"type":"stdio","cases":[{"stdin":"","stdout":""}]},"reference":"pass\n"}"#,
            r#"{"id":"wrong-ref","kind":"code","prompt":"Echo.","language":"python","mode":"full","tests":{"type":"stdio","cases":[{"stdin":"hi\n","stdout":"hi\n"}]},"reference":"print('ho')\n"}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let o = grpo(&["tasks", "check", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let lines = json_lines(&o);
    let passed: Vec<bool> = lines
        .iter()
        .map(|l| l["passed"].as_bool().unwrap())
        .collect();
    assert_eq!(passed, [true, false, false], "{lines:?}");
    assert!(
        lines[1]["reason"].as_str().unwrap().contains("empty"),
        "{lines:?}"
    );
}

#[test]
fn import_writes_a_valid_pack() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("gsm8k.jsonl");
    std::fs::write(
        &input,
        "{\"question\":\"Tom has 3 apples and buys 4. How many?\",\"answer\":\"3+4=<<3+4=7>>7\\n#### 7\"}\n",
    )
    .unwrap();
    let out = dir.path().join("gsm");
    let o = grpo(&[
        "tasks",
        "import",
        "gsm8k",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--split",
        "eval",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let manifest = std::fs::read_to_string(out.join("pack.toml")).unwrap();
    assert!(manifest.contains("license = \"MIT\""), "{manifest}");
    let o = grpo(&["tasks", "check", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json_lines(&o)[0]["id"], "gsm8k/0");
}
