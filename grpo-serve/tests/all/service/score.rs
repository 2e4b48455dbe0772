//! `/v1/score`: groups of math, countdown and code completions, the data sets' own
//! verification shapes (open-r1, verl), and the metrics.

use super::*;

async fn score(server: &Server, body: Value) -> Vec<Value> {
    let r = server.post("/v1/score", body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["results"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn math_group_in_order() {
    let server = Server::default().await;
    let task = json!({"id": "m1", "kind": "math", "prompt": "Half of one?", "answer": "1/2"});
    let completions = [
        "\\boxed{0.5}",
        "\\boxed{1/3}",
        "",
        "<answer>\\frac{1}{2}</answer>",
    ];
    let results = score(&server, json!({"task": task, "completions": completions})).await;
    let correct: Vec<bool> = results
        .iter()
        .map(|r| r["correct"].as_bool().unwrap())
        .collect();
    assert_eq!(correct, [true, false, false, true]);
    let rewards: Vec<f64> = results
        .iter()
        .map(|r| r["reward"].as_f64().unwrap())
        .collect();
    assert_eq!(rewards, [1.0, 0.0, 0.0, 1.0]);
    assert_eq!(results[1]["verdict"]["kind"], "wrong_answer");
    assert_eq!(results[2]["verdict"]["kind"], "no_answer");
    assert!(
        results
            .iter()
            .all(|r| r["task_id"] == "m1" && r["verdict"]["reason"].is_string())
    );
    // verl's math ground truth, with the format reward at weight 0.5:
    // 1·1 + 0.5·1 = 1.5 for the formatted correct answer; 1·1 + 0.5·0 = 1 for the bare one.
    let results = score(
        &server,
        json!({"ground_truth": "12", "format_weight": 0.5,
                   "completions": ["<think>3*4</think><answer>12</answer>", "\\boxed{12}"]}),
    )
    .await;
    assert_eq!(results[0]["reward"], 1.5);
    assert_eq!(
        results[0]["rewards"],
        json!({"accuracy": 1.0, "format": 1.0})
    );
    assert_eq!(results[1]["reward"], 1.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn countdown_group() {
    let server = Server::default().await;
    let task = json!({"id": "c1", "kind": "countdown", "prompt": "Reach 24 with 4 6 1 1.",
                          "numbers": [4, 6, 1, 1], "target": 24});
    // (4·6)·1·1 = 24 uses every number once; 4·6 = 24 leaves two unused.
    let completions = ["<answer>4*6*1*1</answer>", "<answer>4*6</answer>"];
    let results = score(&server, json!({"task": task, "completions": completions})).await;
    assert_eq!(results[0]["correct"], true, "{}", results[0]);
    assert_eq!(results[1]["correct"], false, "{}", results[1]);
    assert_eq!(results[0]["task_id"], "c1");
}

/// open-r1's `verification_info` in C++ and JavaScript: the completions' fenced code in
/// that language is compiled (C++) and run against each case.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verification_info_in_other_languages() {
    toolchain();
    let server = Server::default().await;
    let cases = json!([{"type": "stdin_stdout", "input": "1 2\n", "output": "3\n"},
                           {"type": "stdin_stdout", "input": "10 -3\n", "output": "7\n"}]);
    let completions = [
        "<think>add</think><answer>```cpp\n#include <iostream>\nint main() { long a, b; std::cin >> a >> b; std::cout << a + b << std::endl; }\n```</answer>",
        "```cpp\nint main() { return 0; }\n```",
        "```cpp\nint main() { this does not compile }\n```",
    ];
    let results = score(
            &server,
            json!({"verification_info": {"language": "cpp", "test_cases": cases}, "completions": completions}),
        )
        .await;
    let kinds: Vec<&str> = results
        .iter()
        .map(|r| r["verdict"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["correct", "tests_failed", "tests_failed"],
        "{results:?}"
    );
    assert!(
        results[2]["verdict"]["tests"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("compile error"),
        "{results:?}"
    );
    let completions = [
        "```javascript\nconst [a, b] = require('fs').readFileSync(0, 'utf8').split(' ').map(Number);\nconsole.log(a + b);\n```",
        "```js\nconsole.log(3)\n```",
    ];
    let results = score(
            &server,
            json!({"verification_info": {"language": "javascript", "test_cases": cases}, "completions": completions}),
        )
        .await;
    assert_eq!(
        (results[0]["reward"].clone(), results[1]["reward"].clone()),
        (json!(1.0), json!(0.5)),
        "{results:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verl_ground_truth_code() {
    let server = Server::default().await;
    let gt = json!({"inputs": ["1 2\n", "10 -3\n"], "outputs": ["3\n", "7\n"]});
    let completions = [
        "```python\na, b = map(int, input().split())\nprint(a + b)\n```",
        "```python\nprint(3)\n```",
        "```python\nwhile True: pass\n```",
    ];
    let results = score(
        &server,
        json!({"ground_truth": gt, "completions": completions}),
    )
    .await;
    let kinds: Vec<&str> = results
        .iter()
        .map(|r| r["verdict"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["correct", "tests_failed", "timeout"]);
    assert_eq!(results[0]["reward"], 1.0);
    assert_eq!(results[1]["reward"], 0.0);
    assert_eq!(results[1]["verdict"]["tests"].as_array().unwrap().len(), 2);
    // fn_name: one JSON argument per input line; a LeetCode-style class also counts.
    let gt = json!({"inputs": ["[1, 2, 3]\n2", "[]\n5"], "outputs": ["[2, 4, 6]", "[]"], "fn_name": "scale"});
    let completions = [
        "def scale(xs, k):\n    return [x * k for x in xs]",
        "def scale(xs, k):\n    return xs",
    ];
    let results = score(
        &server,
        json!({"ground_truth": gt, "completions": completions}),
    )
    .await;
    assert_eq!(
        (results[0]["correct"].clone(), results[1]["correct"].clone()),
        (json!(true), json!(false))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_r1_verification_info_gives_partial_credit() {
    let server = Server::default().await;
    let info = json!({"language": "python", "test_cases": [
            {"input": "2\n", "output": "4\n", "type": "stdin_stdout"},
            {"input": "3\n", "output": "9\n", "type": "stdin_stdout"},
            {"input": "0\n", "output": "0\n", "type": "stdin_stdout"},
            {"input": "5\n", "output": "25\n", "type": "stdin_stdout"}]});
    // x + x equals x * x for 2 and 0 only: 2 of 4 cases.
    let completions = [
        "n = int(input())\nprint(n * n)",
        "n = int(input())\nprint(n + n)",
    ];
    let results = score(
        &server,
        json!({"verification_info": info, "completions": completions}),
    )
    .await;
    assert_eq!(results[0]["reward"], 1.0);
    assert_eq!(results[1]["reward"], 0.5);
    assert_eq!(results[1]["correct"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_group_and_metrics() {
    let server = Server::default().await;
    assert!(
        score(&server, json!({"ground_truth": "1", "completions": []}))
            .await
            .is_empty()
    );
    score(
        &server,
        json!({"ground_truth": "1", "completions": ["\\boxed{1}", "\\boxed{2}"]}),
    )
    .await;
    let r = server.request("GET", "/metrics", b"").await;
    assert_eq!(r.status, 200);
    assert!(
        r.headers
            .contains("content-type: application/openmetrics-text; version=1.0.0"),
        "{}",
        r.headers
    );
    let text = r.text();
    assert!(
        text.contains("grpo_http_requests_total{route=\"/v1/score\",status=\"200\"} 2\n"),
        "{text}"
    );
    assert!(
        text.contains("grpo_verdicts_total{kind=\"correct\"} 1\n"),
        "{text}"
    );
    assert!(
        text.contains("grpo_verdicts_total{kind=\"wrong_answer\"} 1\n"),
        "{text}"
    );
    assert!(text.contains("grpo_completions_scored_total 2\n"), "{text}");
    assert!(text.contains("grpo_queue_depth 0\n"), "{text}");
}
