//! The remote reward shapes of OpenRLHF (`/get_reward`) and slime.

use super::*;

/// OpenRLHF's `/get_reward`: the response after the prompt is scored against its label
/// (math, verl's code ground truth, our task), one reward per query in order, the
/// queries of one label scored as one group.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openrlhf_get_reward() {
    let server = Server::default().await;
    let prompt = "Put the answer in \\boxed{}. What is 6*7? ";
    let code_label = json!({"inputs": ["2 3\n"], "outputs": ["5\n"]}).to_string();
    let body = json!({
        "query": [
            format!("{prompt}It is \\boxed{{42}}"),
            format!("{prompt}It is \\boxed{{41}}"),
            "a, b = map(int, input().split())\nprint(a + b)".to_owned(),
            format!("{prompt}\\boxed{{42}}"),
            "print(6)".to_owned(),
            "Using 1 and 2: <answer>1 + 2</answer>".to_owned(),
        ],
        "prompts": [prompt, prompt, "", prompt, "", ""],
        "labels": ["42", "42", code_label, 42, code_label,
            {"id": "c", "kind": "countdown", "prompt": "p", "numbers": [1, 2], "target": 3}],
    });
    let r = server.post("/get_reward", body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let answer = r.json();
    assert_eq!(answer["rewards"], json!([1.0, 0.0, 1.0, 1.0, 0.0, 1.0]));
    assert_eq!(answer["scores"], answer["rewards"]);
    assert_eq!(
        answer["extra_logs"]["correct"],
        json!([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    );
    // The prompt is not scored: its own box would otherwise be the answer.
    let body = json!({"query": ["\\boxed{42} is not the answer here: 41"],
                          "prompts": ["\\boxed{42}"], "labels": ["42"]});
    let r = server.post("/get_reward", body).await;
    assert_eq!(r.json()["rewards"], json!([0.0]), "{}", r.text());
    // The format reward, when asked for, is added and logged.
    let body = json!({"query": ["<think>6*7</think><answer>42</answer>"], "labels": ["42"],
                          "format_weight": 0.5});
    let r = server.post("/get_reward", body).await;
    assert_eq!(r.json()["rewards"], json!([1.5]), "{}", r.text());
    assert_eq!(r.json()["extra_logs"]["format"], json!([1.0]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openrlhf_bad_bodies_are_422_naming_the_field() {
    let server = Server::default().await;
    for (body, needle) in [
        (json!({"query": ["1"]}), "`labels` is missing"),
        (
            json!({"query": ["1", "2"], "labels": ["1"]}),
            "2 queries but 1 labels",
        ),
        (
            json!({"query": ["1"], "labels": ["1"], "prompts": []}),
            "1 queries but 0 prompts",
        ),
        (
            json!({"query": ["1", "2"], "labels": ["1", {"inputs": ["1"]}]}),
            "`labels[1]`",
        ),
        (json!({"labels": ["1"]}), "query"),
    ] {
        let r = server.post("/get_reward", body.clone()).await;
        assert_eq!(r.status, 422, "{body}: {}", r.text());
        assert!(
            r.json()["detail"].as_str().unwrap().contains(needle),
            "{body}: {}",
            r.text()
        );
    }
}

/// slime's remote reward: one sample in, the reward as a bare number out (or the
/// details, for `--reward-key reward`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slime_reward() {
    let server = Server::default().await;
    let sample = |response: &str| json!({"prompt": "What is 1/2 + 1/4?", "response": response, "label": "\\frac{3}{4}"});
    let r = server.post("/v1/reward", sample("so \\boxed{0.75}")).await;
    assert_eq!((r.status, r.json()), (200, json!(1.0)), "{}", r.text());
    let r = server.post("/v1/reward", sample("so \\boxed{0.7}")).await;
    assert_eq!(r.json(), json!(0.0));
    let r = server
        .post("/v1/reward?details=true", sample("so \\boxed{3/4}"))
        .await;
    let details = r.json();
    assert_eq!(details["reward"], 1.0, "{details}");
    assert_eq!(details["correct"], true);
    assert_eq!(details["accuracy"], 1.0);
    let r = server
        .post("/v1/reward", json!({"prompt": "p", "response": "1"}))
        .await;
    assert_eq!(r.status, 422);
    assert!(r.text().contains("`label` is missing"), "{}", r.text());
    let r = server.post("/v1/reward?verbose=1", sample("1")).await;
    assert_eq!(r.status, 422);
}
