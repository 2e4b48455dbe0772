//! The scoring contract on `/v1/score`: a client's mistake is a 422 naming the field, a task's
//! limits are capped by the service's, and only a fault of ours is a 503.

use super::*;

fn loop_task(extra: Value) -> Value {
    let mut task = json!({"id": "k", "kind": "code", "prompt": "p", "language": "python",
            "mode": "full", "tests": {"type": "stdio", "cases": [{"stdin": "", "stdout": "1\n"}]}});
    for (k, v) in extra.as_object().unwrap() {
        task[k] = v.clone();
    }
    task
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_task_limits_are_422_naming_the_field() {
    let server = Server::default().await;
    for (extra, field) in [
        (json!({"time_limit_ms": 0}), "task.time_limit_ms"),
        (json!({"memory_mb": 8}), "task.memory_mb"),
        (json!({"prompt": " "}), "task.prompt"),
        // Schema problems name the field too, inside the tagged tests as well.
        (json!({"memory_mb": -1}), "task.memory_mb"),
        (
            json!({"tests": {"type": "stdio", "cases": [{"stdin": ""}]}}),
            "task.tests.cases[0].stdout",
        ),
        (json!({"tests": {"type": "fuzz"}}), "task.tests.type"),
    ] {
        let body = json!({"task": loop_task(extra), "completions": ["print(1)"]});
        let r = server.post("/v1/score", body).await;
        assert_eq!(r.status, 422, "{field}: {}", r.text());
        assert_eq!(r.json()["code"], "invalid_request");
        let detail = r.json()["detail"].as_str().unwrap().to_owned();
        assert!(detail.contains(&format!("`{field}`")), "{detail}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_limit_above_the_cap_is_clamped() {
    let config = ServiceConfig {
        max_run_timeout_s: 0.5,
        ..ServiceConfig::default()
    };
    let server = Server::start(config).await;
    // An hour asked for; without the cap this request would hold a worker for an hour.
    let task = loop_task(json!({"time_limit_ms": 3_600_000, "memory_mb": 1 << 20}));
    let body = json!({"task": task, "completions": ["while True:\n    pass\n"]});
    let r = tokio::time::timeout(Duration::from_secs(60), server.post("/v1/score", body))
        .await
        .expect("the cap did not stop the run");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["results"][0]["verdict"]["kind"], "timeout");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandbox_fault_is_503_never_a_zero() {
    use grpo_sandbox::SandboxOptions;
    // Run directories under a path that does not exist: every run fails on our side.
    let options = SandboxOptions {
        temp_root: Some("/nonexistent/grpo-sandbox-fault".into()),
        concurrency: 1,
        ..SandboxOptions::default()
    };
    let sandbox = tokio::task::spawn_blocking(move || Sandbox::new(&options))
        .await
        .unwrap()
        .unwrap();
    let server = Server::with_sandbox(sandbox, ServiceConfig::default()).await;
    let body = json!({"task": loop_task(json!({})), "completions": ["print(1)"]});
    let r = server.post("/v1/score", body).await;
    assert_eq!(r.status, 503, "{}", r.text());
    assert_eq!(r.json()["code"], "sandbox_error");
    // Math needs no sandbox and still scores.
    let body = json!({"ground_truth": "2", "completions": ["\\boxed{2}"]});
    let r = server.post("/v1/score", body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["results"][0]["correct"], true);
}
