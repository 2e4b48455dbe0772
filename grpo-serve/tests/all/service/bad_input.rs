//! Malformed requests and departing clients: a clear 4xx naming what is wrong, never a panic,
//! and the server keeps serving.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clear_4xx_and_the_server_keeps_serving() {
    let config = ServiceConfig {
        max_body_bytes: 64 * 1024,
        max_sandbox_runs: 5,
        ..ServiceConfig::default()
    };
    let server = Server::start(config).await;
    let huge = format!("{{\"code\": \"{}\"}}", "x".repeat(100 * 1024));
    let cases: &[(&str, &[u8], u16, &str)] = &[
            ("/run_code", b"{", 400, "malformed_json"),
            ("/run_code", b"", 400, "malformed_json"),
            ("/run_code", b"print(1)", 400, "malformed_json"),
            (
                "/run_code",
                b"{\"code\": \"print('\xff')\"}",
                400,
                "malformed_json",
            ),
            (
                "/run_code",
                br#"{"code": "print('\udc80')"}"#,
                400,
                "malformed_json",
            ),
            ("/run_code", br#"{"code": 5}"#, 422, "invalid_request"),
            (
                "/run_code",
                br#"{"code": "1", "run_timeout": "ten"}"#,
                422,
                "invalid_request",
            ),
            ("/run_code", br#"{"stdin": ""}"#, 422, "invalid_request"),
            ("/run_code", huge.as_bytes(), 413, "body_too_large"),
            (
                "/v1/score",
                br#"{"completions": "abc", "ground_truth": "1"}"#,
                422,
                "invalid_request",
            ),
            (
                "/v1/score",
                br#"{"completions": [1], "ground_truth": "1"}"#,
                422,
                "invalid_request",
            ),
            (
                "/v1/score",
                br#"{"completions": [], "task": {"kind": "poetry"}}"#,
                422,
                "invalid_request",
            ),
            (
                "/v1/score",
                br#"{"completions": [], "ground_truth": "1", "extra": 1}"#,
                422,
                "invalid_request",
            ),
            (
                "/v1/score",
                b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
                400,
                "malformed_json",
            ),
            // 3 completions × 2 stdio cases = 6 runs, over the configured 5.
            (
                "/v1/score",
                br#"{"ground_truth": {"inputs": ["", ""], "outputs": ["", ""]}, "completions": ["a", "b", "c"]}"#,
                422,
                "invalid_request",
            ),
        ];
    for (path, body, status, code) in cases {
        let r = server.request("POST", path, body).await;
        let shown = String::from_utf8_lossy(&body[..body.len().min(60)]);
        assert_eq!(r.status, *status, "{path} {shown}: {}", r.text());
        let v = r.json();
        assert_eq!(v["code"], *code, "{path} {shown}: {v}");
        assert!(!v["detail"].as_str().unwrap().is_empty());
    }
    // Deeply nested JSON hits the parser's recursion limit, not the stack.
    let deep = "[".repeat(100_000);
    assert_eq!(
        server
            .request("POST", "/v1/score", deep.as_bytes())
            .await
            .status,
        413
    );
    let deep = "[".repeat(10_000);
    assert_eq!(
        server
            .request("POST", "/v1/score", deep.as_bytes())
            .await
            .status,
        400
    );
    let r = server.request("GET", "/v1/ping", b"").await;
    assert_eq!(r.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_that_disconnect_are_dropped_cleanly() {
    let server = Server::default().await;
    // Headers promise 1000 bytes; 10 arrive, then the client goes away.
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
            .write_all(
                b"POST /run_code HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer test-token-3f9c\r\nContent-Length: 1000\r\n\r\n{\"code\": ",
            )
            .await
            .unwrap();
    drop(stream);
    // A client that sends a slow program and leaves before the answer.
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let body = verl_body("import time\ntime.sleep(0.5)\nprint(1)", None, 5).to_string();
    let head = format!(
        "POST /run_code HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer test-token-3f9c\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    drop(stream);
    // Garbage that is not HTTP at all.
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(b"\x00\x01\x02 hello\r\n\r\n")
        .await
        .unwrap();
    let mut sink = Vec::new();
    let _ = stream.read_to_end(&mut sink).await;
    // The server still answers.
    let v = server
        .post("/run_code", verl_body("print(2)", None, 10))
        .await
        .json();
    assert_eq!(v["run_result"]["stdout"], "2\n");
}
