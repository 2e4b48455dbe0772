//! Interpreter sessions over HTTP: `POST /v1/sessions`, `POST /v1/sessions/{id}/run`,
//! `DELETE /v1/sessions/{id}`; state across calls, ids that are unknown or closed, the cap on
//! open sessions, time-to-live, and a hostile call that cannot stall the server.

use super::*;

use grpo_serve::SessionConfig;

/// A server whose session settings are `sessions`.
async fn server_with(sessions: SessionConfig) -> Server {
    Server::start(ServiceConfig {
        sessions,
        ..ServiceConfig::default()
    })
    .await
}

/// Opens a session with `body`; panics unless it is 201.
async fn open(server: &Server, body: Value) -> String {
    let r = server.post("/v1/sessions", body).await;
    assert_eq!(r.status, 201, "{}", r.text());
    let id = r.json()["id"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 32, "{id}");
    id
}

/// Runs `code` in session `id`.
async fn run(server: &Server, id: &str, code: &str) -> Response {
    server
        .post(&format!("/v1/sessions/{id}/run"), json!({ "code": code }))
        .await
}

/// Runs `code` in session `id`; panics unless it is answered 200.
async fn run_ok(server: &Server, id: &str, code: &str) -> Value {
    let r = run(server, id, code).await;
    assert_eq!(r.status, 200, "{code}: {}", r.text());
    r.json()
}

fn assert_error(r: &Response, status: u16, code: &str) {
    assert_eq!(r.status, status, "{}", r.text());
    let v = r.json();
    assert_eq!(v["code"], code, "{v}");
    assert!(!v["detail"].as_str().unwrap().is_empty(), "{v}");
}

fn metric(text: &str, line_start: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(line_start))
        .unwrap_or_else(|| panic!("{line_start} in {text}"))
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_is_kept_across_calls_until_deleted() {
    let server = Server::default().await;
    let r = server
        .post("/v1/sessions", json!({"language": "python"}))
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let opened = r.json();
    let id = opened["id"].as_str().unwrap().to_owned();
    assert_eq!(opened["language"], "python");
    assert_eq!(opened["limits"]["call"]["time_limit_ms"], 5_000, "{opened}");

    let v = run_ok(&server, &id, "x = 6 * 7\ndef f(n):\n    return n + x").await;
    assert_eq!(
        (v["status"].as_str(), v["stdout"].as_str()),
        (Some("ok"), Some(""))
    );
    let v = run_ok(&server, &id, "print(x)").await;
    assert_eq!(v["stdout"], "42\n", "{v}");
    // The last expression's value is shown, as in the interactive interpreter.
    let v = run_ok(&server, &id, "f(1)").await;
    assert_eq!(v["stdout"], "43\n", "{v}");
    for key in [
        "status",
        "stdout",
        "stderr",
        "exit_code",
        "duration_ms",
        "truncated",
    ] {
        assert!(v.get(key).is_some(), "{key} in {v}");
    }
    // A program's error is the call's status; the namespace survives it.
    let v = run_ok(&server, &id, "1 / 0").await;
    assert_eq!(v["status"], "error", "{v}");
    assert!(
        v["stderr"].as_str().unwrap().contains("ZeroDivisionError"),
        "{v}"
    );
    // So does an output flood: cut, flagged, and the session goes on.
    let v = run_ok(&server, &id, "print('y' * 10_000_000)").await;
    assert_eq!(
        (v["status"].as_str(), v["truncated"].as_bool()),
        (Some("output_limit"), Some(true)),
        "{}",
        v["stderr"]
    );
    let v = run_ok(&server, &id, "print(x * 2)").await;
    assert_eq!(
        (v["status"].as_str(), v["stdout"].as_str()),
        (Some("ok"), Some("84\n")),
        "{v}"
    );

    // Sessions share nothing.
    let other = open(&server, json!({})).await;
    let v = run_ok(&server, &other, "print(x)").await;
    assert_eq!(v["status"], "error", "{v}");
    assert!(v["stderr"].as_str().unwrap().contains("NameError"), "{v}");

    let metrics = server.request("GET", "/metrics", b"").await.text();
    assert_eq!(metric(&metrics, "grpo_sessions_open "), 2.0);
    assert_eq!(metric(&metrics, "grpo_sessions_opened_total "), 2.0);
    assert_eq!(
        metric(&metrics, "grpo_session_calls_total{status=\"ok\"} "),
        4.0
    );
    assert_eq!(
        metric(&metrics, "grpo_session_calls_total{status=\"error\"} "),
        2.0
    );

    let r = server
        .request("DELETE", &format!("/v1/sessions/{id}"), b"")
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let closed = r.json();
    assert_eq!(
        (closed["id"].as_str(), closed["closed"].as_bool()),
        (Some(id.as_str()), Some(true))
    );
    assert_eq!(closed["stats"]["calls"], 6, "{closed}");
    // Closed is gone (410), with the reason; deleting it again is 410 too.
    let r = run(&server, &id, "print(x)").await;
    assert_error(&r, 410, "session_closed");
    assert!(
        r.json()["detail"].as_str().unwrap().contains("deleted"),
        "{}",
        r.text()
    );
    let r = server
        .request("DELETE", &format!("/v1/sessions/{id}"), b"")
        .await;
    assert_error(&r, 410, "session_closed");
    let metrics = server.request("GET", "/metrics", b"").await.text();
    assert_eq!(metric(&metrics, "grpo_sessions_open "), 1.0);
    assert_eq!(
        metric(&metrics, "grpo_sessions_closed_total{reason=\"deleted\"} "),
        1.0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_ids_and_bad_requests_are_clear_4xx() {
    let server = Server::default().await;
    let r = run(&server, "0123456789abcdef0123456789abcdef", "1").await;
    assert_error(&r, 404, "unknown_session");
    let r = server.request("DELETE", "/v1/sessions/nope", b"").await;
    assert_error(&r, 404, "unknown_session");

    let r = server
        .request("POST", "/v1/sessions", b"{\"language\": ")
        .await;
    assert_error(&r, 400, "malformed_json");
    let r = server
        .post("/v1/sessions", json!({"language": "javascript"}))
        .await;
    assert_error(&r, 422, "invalid_request");
    assert!(r.text().contains("python"), "{}", r.text());
    let r = server
        .post("/v1/sessions", json!({"limits": {"memory_mb": 1}}))
        .await;
    assert_error(&r, 422, "invalid_request");
    assert!(r.text().contains("memory_mb"), "{}", r.text());
    let r = server
        .post("/v1/sessions", json!({"limits": {"time_limit_ms": 0}}))
        .await;
    assert_error(&r, 422, "invalid_request");
    let r = server
        .post("/v1/sessions", json!({"limits": {"cpu": 5}}))
        .await;
    assert_error(&r, 422, "invalid_request");
    assert!(r.text().contains("cpu"), "{}", r.text());

    // Asks above the service's maxima are clamped to them, as /run_code's are.
    let r = server
        .post(
            "/v1/sessions",
            json!({"language": "python", "limits": {"time_limit_ms": 3_600_000, "memory_mb": 1_000_000}}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let opened = r.json();
    let caps = ServiceConfig::default().caps();
    assert_eq!(
        opened["limits"]["call"]["time_limit_ms"], caps.time_limit_ms,
        "{opened}"
    );
    assert_eq!(
        opened["limits"]["call"]["memory_mb"], caps.memory_mb,
        "{opened}"
    );
    let id = opened["id"].as_str().unwrap();
    let r = server
        .post(&format!("/v1/sessions/{id}/run"), json!({"source": "1"}))
        .await;
    assert_error(&r, 422, "invalid_request");
    let r = server
        .request("POST", &format!("/v1/sessions/{id}/run"), b"print(1)")
        .await;
    assert_error(&r, 400, "malformed_json");
    assert_eq!(
        run_ok(&server, id, "print('still here')").await["stdout"],
        "still here\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_cap_an_opening_is_refused_with_429() {
    let server = server_with(SessionConfig {
        max_sessions: 2,
        ..SessionConfig::default()
    })
    .await;
    let first = open(&server, json!({})).await;
    let _second = open(&server, json!({})).await;
    let r = server.post("/v1/sessions", json!({})).await;
    assert_error(&r, 429, "too_many_sessions");
    assert!(r.headers.contains("retry-after: 1"), "{}", r.headers);
    assert!(r.text().contains('2'), "{}", r.text());
    // The open ones still serve, and closing one makes room.
    assert_eq!(run_ok(&server, &first, "print(1)").await["stdout"], "1\n");
    let r = server
        .request("DELETE", &format!("/v1/sessions/{first}"), b"")
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    open(&server, json!({})).await;
    let metrics = server.request("GET", "/metrics", b"").await.text();
    assert_eq!(metric(&metrics, "grpo_sessions_refused_total "), 1.0);
    assert_eq!(metric(&metrics, "grpo_sessions_open "), 2.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_sessions_expire_and_are_reaped() {
    let server = server_with(SessionConfig {
        max_sessions: 1,
        idle_ttl: Duration::from_millis(300),
        ..SessionConfig::default()
    })
    .await;
    let id = open(&server, json!({})).await;
    // Calls keep it alive past its idle time-to-live.
    for i in 0..4 {
        run_ok(&server, &id, &format!("n = {i}")).await;
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    assert_eq!(run_ok(&server, &id, "n").await["stdout"], "3\n");
    // Idle, it is reaped by the background task, without any request on it.
    let deadline = tokio::time::Instant::now() + SAFETY;
    while server.service.metrics().open_sessions() != 0 {
        assert!(tokio::time::Instant::now() < deadline, "never reaped");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let r = run(&server, &id, "n").await;
    assert_error(&r, 410, "session_closed");
    assert!(r.text().contains("idle"), "{}", r.text());
    // Its place under the cap (of 1) was given back.
    let again = open(&server, json!({})).await;
    assert_eq!(run_ok(&server, &again, "print(2)").await["stdout"], "2\n");
    let metrics = server.request("GET", "/metrics", b"").await.text();
    assert_eq!(
        metric(&metrics, "grpo_sessions_closed_total{reason=\"idle\"} "),
        1.0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_ends_with_its_lifetime() {
    let server = server_with(SessionConfig {
        max_lifetime: Duration::from_millis(600),
        ..SessionConfig::default()
    })
    .await;
    let r = server
        .post(
            "/v1/sessions",
            json!({"limits": {"lifetime_ms": 3_600_000}}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.json()["limits"]["lifetime_ms"], 600, "{}", r.text());
    let id = r.json()["id"].as_str().unwrap().to_owned();
    run_ok(&server, &id, "x = 1").await;
    tokio::time::sleep(Duration::from_millis(900)).await;
    let r = run(&server, &id, "x").await;
    assert_error(&r, 410, "session_closed");
    assert!(r.text().contains("lifetime"), "{}", r.text());
    assert_eq!(server.service.metrics().open_sessions(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_never_returns_times_out_while_the_server_serves_others() {
    let server = Arc::new(Server::default().await);
    // The loop is stopped by its CPU limit only (the wall limit is far away), so however
    // loaded the machine, it cannot end before it has had 8 s of CPU: serving the others
    // takes a small part of that, and they share the machine with it.
    let hostile = open(
        &server,
        json!({"limits": {"time_limit_ms": 8_000, "wall_limit_ms": 60_000}}),
    )
    .await;
    run_ok(&server, &hostile, "kept = 'before'").await;
    let looping = {
        let (server, id) = (server.clone(), hostile.clone());
        tokio::spawn(async move { run_ok(&server, &id, "while True:\n    pass").await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    // Meanwhile: another session, a verifier request and the health checks, all served.
    let other = open(&server, json!({})).await;
    for i in 0..5 {
        let v = run_ok(&server, &other, &format!("print({i} * {i})")).await;
        assert_eq!(v["stdout"], format!("{}\n", i * i));
    }
    let r = server
        .post(
            "/v1/score",
            json!({"ground_truth": "1", "completions": ["\\boxed{1}"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(server.request("GET", "/v1/ping", b"").await.status, 200);
    assert!(
        !looping.is_finished(),
        "the loop ended before the others were served"
    );

    let v = looping.await.unwrap();
    assert_eq!(v["status"], "timeout", "{v}");
    assert!(v["stderr"].as_str().unwrap().contains("fresh"), "{v}");
    // The session goes on with a fresh interpreter (its earlier state is gone).
    let v = run_ok(&server, &hostile, "print('alive')").await;
    assert_eq!(
        (v["status"].as_str(), v["stdout"].as_str()),
        (Some("ok"), Some("alive\n")),
        "{v}"
    );
    let v = run_ok(&server, &hostile, "kept").await;
    assert!(v["stderr"].as_str().unwrap().contains("NameError"), "{v}");
    let metrics = server.request("GET", "/metrics", b"").await.text();
    assert_eq!(
        metric(&metrics, "grpo_session_calls_total{status=\"timeout\"} "),
        1.0
    );
}
