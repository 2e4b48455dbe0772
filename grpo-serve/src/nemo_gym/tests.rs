//! The NeMo Gym routes driven over loopback: a real server, the service's scorer and sandbox.

use std::io::Write;
use std::net::SocketAddr;

use base64::Engine;
use serde_json::{Value, json};

use crate::test_server::{request, serve};
use crate::{AuthToken, ServiceConfig};

/// One POST with a JSON body (and an optional bearer token) → status and JSON answer.
async fn post(addr: SocketAddr, path: &str, body: &Value, token: Option<&str>) -> (u16, Value) {
    request(addr, "POST", path, Some(body), token).await
}

/// An OpenAI Responses `response` whose output is a reasoning item then `text`.
fn response(text: &str) -> Value {
    json!({
        "id": "resp_1", "created_at": 0.0, "model": "m", "object": "response",
        "parallel_tool_calls": false, "tool_choice": "auto", "tools": [],
        "output": [
            {"id": "rs_1", "type": "reasoning",
             "summary": [{"type": "summary_text", "text": "the answer is \\boxed{41}"}]},
            {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": text, "annotations": []}]}
        ]
    })
}

fn params() -> Value {
    json!({"input": [{"role": "user", "content": "What is 6 * 7?"}]})
}

fn math_row(text: &str) -> Value {
    json!({
        "responses_create_params": params(),
        "response": response(text),
        "question": "What is 6 * 7?",
        "expected_answer": "42",
    })
}

const SUM: &str = "```python\na, b = map(int, input().split())\nprint(a + b)\n```";
const PRODUCT: &str = "```python\na, b = map(int, input().split())\nprint(a * b)\n```";

fn code_row(text: &str, unit_tests: Value) -> Value {
    json!({
        "responses_create_params": params(),
        "response": response(text),
        "verifier_metadata": {"unit_tests": unit_tests, "difficulty": "easy"},
    })
}

fn sum_tests() -> Value {
    json!({"inputs": ["1 2\n", "2 2\n"], "outputs": ["3\n", "4\n"]})
}

fn packed(tests: &Value) -> String {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(tests.to_string().as_bytes())
        .expect("compressed");
    base64::engine::general_purpose::STANDARD.encode(z.finish().expect("compressed"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_scores_math_and_code_rows_and_echoes_the_request() {
    let addr = serve(ServiceConfig::default()).await;

    let right = math_row("6 * 7 = \\boxed{42}");
    let (status, answer) = post(addr, "/verify", &right, None).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["reward"], 1.0, "{answer}");
    assert_eq!(answer["library_reward"], 1.0, "{answer}");
    assert_eq!(answer["judge_evaluations"], Value::Null, "{answer}");
    for field in [
        "responses_create_params",
        "response",
        "question",
        "expected_answer",
    ] {
        assert_eq!(answer[field], right[field], "{field} echoed unchanged");
    }
    // The reasoning says 41 and is not scored; the output text says 41 and is.
    let (_, wrong) = post(addr, "/verify", &math_row("\\boxed{41}"), None).await;
    assert_eq!(wrong["reward"], 0.0, "{wrong}");

    let (status, right) = post(addr, "/verify", &code_row(SUM, sum_tests()), None).await;
    assert_eq!(status, 200, "{right}");
    assert_eq!(right["reward"], 1.0, "{right}");
    assert_eq!(right["verifier_metadata"]["difficulty"], "easy");
    // 2 * 2 == 2 + 2: one test of two passes, and the credit is binary.
    let (_, wrong) = post(addr, "/verify", &code_row(PRODUCT, sum_tests()), None).await;
    assert_eq!(wrong["reward"], 0.0, "{wrong}");

    let packed = json!({"packed": packed(&sum_tests())});
    let (status, right) = post(addr, "/verify", &code_row(SUM, packed.clone()), None).await;
    assert_eq!((status, &right["reward"]), (200, &json!(1.0)), "{right}");
    let (_, wrong) = post(addr, "/verify", &code_row(PRODUCT, packed), None).await;
    assert_eq!(wrong["reward"], 0.0, "{wrong}");

    // Call tests: `add(*args)` on each input's JSON lines.
    let calls = json!({"inputs": ["1\n2", "5\n5"], "outputs": ["3", "10"], "fn_name": "add"});
    let solution = "```python\ndef add(a, b):\n    return a + b\n```";
    let (status, right) = post(addr, "/verify", &code_row(solution, calls.clone()), None).await;
    assert_eq!((status, &right["reward"]), (200, &json!(1.0)), "{right}");
    let wrong_solution = solution.replace("a + b", "a * b");
    let (_, wrong) = post(
        addr,
        "/verify",
        &code_row(&wrong_solution, calls.clone()),
        None,
    )
    .await;
    assert_eq!(wrong["reward"], 0.0, "{wrong}");
    // LeetCode's form: the method of a fresh `Solution()`.
    let leetcode =
        "```python\nclass Solution:\n    def add(self, a, b):\n        return a + b\n```";
    let (status, right) = post(addr, "/verify", &code_row(leetcode, calls.clone()), None).await;
    assert_eq!((status, &right["reward"]), (200, &json!(1.0)), "{right}");
    let wrong_leetcode = leetcode.replace("a + b", "a - b");
    let (_, wrong) = post(addr, "/verify", &code_row(&wrong_leetcode, calls), None).await;
    assert_eq!(wrong["reward"], 0.0, "{wrong}");

    // Our own task shape.
    let mut ours = math_row("\\boxed{0.5}");
    let ours_map = ours.as_object_mut().expect("object");
    ours_map.remove("expected_answer");
    ours_map.insert(
        "task".into(),
        json!({"id": "m", "kind": "math", "prompt": "p", "answer": "1/2"}),
    );
    let (status, scored) = post(addr, "/verify", &ours, None).await;
    assert_eq!((status, &scored["reward"]), (200, &json!(1.0)), "{scored}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_verify_requests_are_422_naming_the_field() {
    let addr = serve(ServiceConfig::default()).await;
    let cases: Vec<(Value, &str)> = vec![
        (
            {
                let mut r = math_row("\\boxed{42}");
                r.as_object_mut().expect("object").remove("response");
                r
            },
            "`response`",
        ),
        (
            {
                let mut r = math_row("\\boxed{42}");
                r.as_object_mut()
                    .expect("object")
                    .remove("responses_create_params");
                r
            },
            "`responses_create_params`",
        ),
        (
            json!({"responses_create_params": params(), "response": response("42")}),
            "`expected_answer`",
        ),
        (
            json!({"responses_create_params": params(), "response": {"id": "r"}}),
            "`response.output`",
        ),
        (
            code_row(SUM, json!({"inputs": ["1 2\n"]})),
            "`verifier_metadata.unit_tests`",
        ),
        (
            code_row(SUM, json!({"packed": "not base64!"})),
            "`verifier_metadata.unit_tests.packed`",
        ),
        (
            json!({"responses_create_params": params(), "response": response("42"),
                   "verifier_metadata": {}}),
            "`verifier_metadata.unit_tests`",
        ),
    ];
    for (body, field) in cases {
        let (status, answer) = post(addr, "/verify", &body, None).await;
        assert_eq!(status, 422, "{body}: {answer}");
        assert!(answer.get("reward").is_none(), "{answer}");
        let detail = answer["detail"].as_str().expect("a detail");
        assert!(detail.contains(field), "{field} not named in {detail}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_metrics_and_the_rollout_prefix() {
    let addr = serve(ServiceConfig::default()).await;
    for prefix in ["", "/ng-rollout/r-17"] {
        let seeded = json!({"resources_session_id": "s1", "episode_id": "e1",
                            "task_id": "t1", "task_data": {"x": 1}});
        let (status, answer) = post(addr, &format!("{prefix}/seed_session"), &seeded, None).await;
        assert_eq!(
            (status, answer),
            (200, json!({"resources_session_id": "s1"}))
        );
        let (status, answer) =
            post(addr, &format!("{prefix}/seed_session"), &json!({}), None).await;
        assert_eq!((status, answer), (200, json!({})));
        let bad = json!({"resources_session_id": "", "episode_id": "e1",
                         "task_id": "t1", "task_data": {}});
        let (status, answer) = post(addr, &format!("{prefix}/seed_session"), &bad, None).await;
        assert_eq!(status, 422, "{answer}");

        let close = json!({"resources_session_id": "s1", "episode_id": "e1"});
        let (status, answer) = post(addr, &format!("{prefix}/close_session"), &close, None).await;
        assert_eq!(
            (status, answer),
            (200, json!({"resources_session_id": "s1"}))
        );
        let (status, _) = post(addr, &format!("{prefix}/close_session"), &json!({}), None).await;
        assert_eq!(status, 422);

        let (status, verified) = post(
            addr,
            &format!("{prefix}/verify"),
            &math_row("\\boxed{42}"),
            None,
        )
        .await;
        assert_eq!(
            (status, &verified["reward"]),
            (200, &json!(1.0)),
            "{verified}"
        );

        let responses = json!({"verify_responses": [
            {"_ng_task_index": 0, "reward": 1.0}, {"_ng_task_index": 0, "reward": 0.0},
            {"_ng_task_index": 1, "reward": 1.0}, {"_ng_task_index": 1, "reward": 0.0,
                                                   "mask_sample": true},
        ]});
        let (status, metrics) = post(
            addr,
            &format!("{prefix}/aggregate_metrics"),
            &responses,
            None,
        )
        .await;
        assert_eq!(status, 200, "{metrics}");
        assert_eq!(metrics["group_level_metrics"][0]["mean/reward"], 0.5);
        assert_eq!(metrics["group_level_metrics"][1]["mean/reward"], 1.0);
        assert_eq!(metrics["agent_metrics"]["num_rollouts"], 3);
        assert_eq!(metrics["agent_metrics"]["num_masked"], 1);
        assert_eq!(metrics["key_metrics"]["mean/reward"], 2.0 / 3.0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_routes_require_the_token() {
    let token = "s3cret-token-of-enough-length";
    let addr = serve(ServiceConfig {
        auth_token: Some(AuthToken::new(token, "the test").expect("a token")),
        ..ServiceConfig::default()
    })
    .await;
    for path in [
        "/verify",
        "/seed_session",
        "/ng-rollout/r/verify",
        "/aggregate_metrics",
    ] {
        let (status, _) = post(addr, path, &math_row("\\boxed{42}"), None).await;
        assert_eq!(status, 401, "{path}");
    }
    let (status, answer) = post(addr, "/verify", &math_row("\\boxed{42}"), Some(token)).await;
    assert_eq!((status, &answer["reward"]), (200, &json!(1.0)), "{answer}");
}
