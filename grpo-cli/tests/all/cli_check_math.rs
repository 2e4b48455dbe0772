//! `grpo check-math` end to end: one pair, a pairs file, and bad input (exit 2, file:line).

use crate::common::grpo;

#[test]
fn one_pair_prints_one_object() {
    let out = grpo()
        .args([
            "check-math",
            "--gold",
            "\\frac{1}{2}",
            "--pred",
            "so \\boxed{0.5}",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["correct"], true);
    assert_eq!(v["extracted"], "0.5");
    assert!(v["reason"].as_str().unwrap().contains("equivalent"));

    let out = grpo()
        .args(["check-math", "--gold", "1/2^99", "--pred", "1/2^98"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["correct"], false);

    let out = grpo()
        .args([
            "check-math",
            "--gold",
            "5",
            "--pred",
            "I could not solve this one",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["correct"], false);
    assert!(v["extracted"].is_null());
    assert_eq!(v["kind"], "no_answer");
}

#[test]
fn pairs_file_prints_one_line_per_pair_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pairs.jsonl");
    std::fs::write(
        &path,
        concat!(
            "{\"gold\":\"18\",\"pred\":\"#### 18\"}",
            "\n",
            r#"{"gold":"\\{1,2\\}","pred":"\\boxed{\\{2,1\\}}"}"#,
            "\n",
            "\n",
            r#"{"gold":"2","pred":"\\boxed{3}"}"#,
            "\n",
        ),
    )
    .unwrap();
    let out = grpo()
        .args(["check-math", "--pairs"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let correct: Vec<bool> = lines
        .iter()
        .map(|v| v["correct"].as_bool().unwrap())
        .collect();
    assert_eq!(correct, vec![true, true, false]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("checks/s"));
}

#[test]
fn bad_input_exits_2_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.jsonl");
    std::fs::write(&path, "{\"gold\":\"1\",\"pred\":\"1\"}\n{\"gold\":1}\n").unwrap();
    let out = grpo()
        .args(["check-math", "--pairs"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.jsonl:2"), "{err}");
    assert!(out.stdout.is_empty());

    let out = grpo()
        .args(["check-math", "--pairs", "/nonexistent/pairs.jsonl"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/pairs.jsonl"));
}
