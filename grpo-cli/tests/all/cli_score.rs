//! `grpo score` when one task faults: a C++ checker that does not compile costs that task
//! (each of its completions gets a `fault` line, never a 0) and the other tasks' verdicts are
//! all printed; the command then exits 1.

use serde_json::{Value, json};

#[test]
fn a_task_whose_checker_does_not_compile_costs_that_task_not_the_batch() {
    let dir = tempfile::tempdir().unwrap();
    let code = |id: &str, tests: Value| {
        json!({"id": id, "kind": "code", "prompt": "print the sum of two numbers",
               "language": "python", "mode": "full", "tests": tests})
        .to_string()
    };
    let cases = json!([{"stdin": "1 2\n", "stdout": "3\n"}]);
    let tasks = [
        code("plain", json!({"type": "stdio", "cases": cases})),
        code(
            "broken-checker",
            json!({"type": "stdio", "cases": cases,
                   "checker": {"language": "cpp", "source": "int main( {\n"}}),
        ),
    ];
    let pack = dir.path().join("pack.jsonl");
    std::fs::write(&pack, tasks.join("\n") + "\n").unwrap();
    let right = "```python\na, b = map(int, input().split())\nprint(a + b)\n```";
    let wrong = "```python\nprint(0)\n```";
    let completions: String = [
        ("plain", right),
        ("broken-checker", right),
        ("plain", wrong),
    ]
    .iter()
    .map(|(id, c)| json!({"task_id": id, "completion": c}).to_string() + "\n")
    .collect();
    let file = dir.path().join("completions.jsonl");
    std::fs::write(&file, completions).unwrap();
    let out = crate::common::grpo()
        .args(["score", "--tasks", pack.to_str().unwrap(), "--completions"])
        .arg(&file)
        .output()
        .expect("running grpo");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0]["task_id"], "plain");
    assert_eq!(lines[0]["correct"], true, "{}", lines[0]);
    assert_eq!(lines[1]["task_id"], "broken-checker");
    let fault = lines[1]["fault"].as_str().expect("a fault line");
    assert!(fault.contains("did not compile"), "{fault}");
    assert!(
        lines[1].get("reward").is_none(),
        "a fault is never a reward"
    );
    assert_eq!(lines[2]["correct"], false, "{}", lines[2]);
    assert!(stderr.contains("broken-checker"), "{stderr}");
}
