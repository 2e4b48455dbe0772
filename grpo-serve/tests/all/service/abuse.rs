//! Clients that abuse the connection rather than the JSON: huge declared bodies, trickled
//! heads and bodies, idle connections past the cap. Every test ends with a well-formed
//! request served normally.

use super::*;

/// A well-formed `/v1/score` request is answered with its score.
async fn still_serves(server: &Server) {
    let r = server
        .post(
            "/v1/score",
            json!({"ground_truth": "1", "completions": ["\\boxed{1}", "2"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let rewards: Vec<f64> = r.json()["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["reward"].as_f64().unwrap())
        .collect();
    assert_eq!(rewards, [1.0, 0.0]);
}

fn assert_error(r: &Response, status: u16, code: &str) {
    assert_eq!(r.status, status, "{}", r.text());
    let v = r.json();
    assert_eq!(v["code"], code, "{v}");
    assert!(!v["detail"].as_str().unwrap().is_empty(), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_limit_content_length_is_refused_from_the_header() {
    let config = ServiceConfig {
        max_body_bytes: 1024,
        // Far longer than the safety net: a server that waited for the body would hang.
        body_read_timeout: Duration::from_secs(3600),
        ..ServiceConfig::default()
    };
    let server = Server::start(config).await;
    for path in ["/v1/score", "/run_code"] {
        // Headers declaring a gigabyte, then nothing: the write side stays open.
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer test-token-3f9c\r\nContent-Type: application/json\r\n\
                 Content-Length: 1000000000\r\n\r\n"
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        let r = read_response(&mut stream).await;
        assert_error(&r, 413, "body_too_large");
        assert!(
            r.json()["detail"]
                .as_str()
                .unwrap()
                .contains("--max-body-bytes")
        );
    }
    // With `Expect: 100-continue` the client is told before it sends anything.
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
            .write_all(
                b"POST /v1/score HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer test-token-3f9c\r\nExpect: 100-continue\r\n\
                  Content-Length: 5000\r\n\r\n",
            )
            .await
            .unwrap();
    assert_error(&read_response(&mut stream).await, 413, "body_too_large");
    // Exactly at the limit is read and parsed.
    let body = format!("{{\"completions\": [], \"id\": \"{}\"}}", "x".repeat(1024));
    let body = &body[..1024];
    let r = server.request("POST", "/v1/score", body.as_bytes()).await;
    assert_error(&r, 400, "malformed_json");
    still_serves(&server).await;
    let metrics = server.service.metrics().render();
    assert!(
        metrics.contains("grpo_http_requests_total{route=\"/v1/score\",status=\"413\"} 2\n"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trickled_headers_and_idle_connections_are_closed() {
    let config = ServiceConfig {
        header_read_timeout: Duration::from_millis(500),
        ..ServiceConfig::default()
    };
    let server = Server::start(config).await;
    // A header line every 100 ms, forever: the connection is closed before the head ends.
    let stream = TcpStream::connect(server.addr).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let trickle = tokio::spawn(async move {
        let _ = writer.write_all(b"POST /v1/score HTTP/1.1\r\n").await;
        for i in 0.. {
            let line = format!("X-Slow-{i}: 1\r\n");
            if writer.write_all(line.as_bytes()).await.is_err() {
                return i;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        unreachable!()
    });
    let read = async {
        let mut sink = Vec::new();
        let _ = reader.read_to_end(&mut sink).await;
        sink
    };
    let answer = tokio::time::timeout(SAFETY, read)
        .await
        .expect("a trickling client was not disconnected");
    // Closed without an answer (hyper drops the connection), or with a 408.
    assert!(answer.is_empty() || answer.starts_with(b"HTTP/1.1 408"));
    trickle.abort();
    // A connection that sends nothing at all is closed too.
    let mut silent = TcpStream::connect(server.addr).await.unwrap();
    assert!(read_until_closed(&mut silent).await.is_empty());
    // And a keep-alive connection left idle after its request.
    let mut idle = TcpStream::connect(server.addr).await.unwrap();
    idle.write_all(
        b"GET /v1/ping HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer test-token-3f9c\r\n\r\n",
    )
    .await
    .unwrap();
    assert_eq!(read_response(&mut idle).await.status, 200);
    assert!(read_until_closed(&mut idle).await.is_empty());
    still_serves(&server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trickled_body_gets_408() {
    let config = ServiceConfig {
        body_read_timeout: Duration::from_millis(500),
        ..ServiceConfig::default()
    };
    let server = Server::start(config).await;
    for path in ["/v1/score", "/run_code"] {
        let stream = TcpStream::connect(server.addr).await.unwrap();
        let (mut reader, mut writer) = stream.into_split();
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer test-token-3f9c\r\nContent-Length: 1000\r\n\r\n"
        );
        writer.write_all(head.as_bytes()).await.unwrap();
        // One byte every 100 ms: 100 s for the whole body.
        let trickle = tokio::spawn(async move {
            for _ in 0..1000 {
                if writer.write_all(b" ").await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        let raw = tokio::time::timeout(SAFETY, async {
            let mut raw = Vec::new();
            let _ = reader.read_to_end(&mut raw).await;
            raw
        })
        .await
        .expect("a trickled body was not cut off");
        trickle.abort();
        let r = parse_response(&raw);
        assert_error(&r, 408, "body_timeout");
        assert!(
            r.json()["detail"].as_str().unwrap().contains("500 ms"),
            "{}",
            r.text()
        );
    }
    still_serves(&server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_bodies_get_a_4xx_naming_the_problem() {
    let server = Server::default().await;
    // (path, body, status, code, a word the detail must contain)
    let deep = "[".repeat(100_000);
    let cases: Vec<(&str, Vec<u8>, u16, &str, &str)> = vec![
        // Invalid UTF-8, outside and inside a string.
        (
            "/v1/score",
            b"\xff\xfe{}".to_vec(),
            400,
            "malformed_json",
            "line 1",
        ),
        (
            "/run_code",
            b"{\"code\": \"\xc3\x28\"}".to_vec(),
            400,
            "malformed_json",
            "line 1",
        ),
        // 100k nested arrays stop at the parser's recursion limit, well inside the body limit.
        (
            "/v1/score",
            deep.clone().into_bytes(),
            400,
            "malformed_json",
            "recursion limit",
        ),
        // `/run_code`'s first field is a string: the parser stops at the first `[`.
        (
            "/run_code",
            deep.into_bytes(),
            422,
            "invalid_request",
            "invalid type",
        ),
        (
            "/v1/score",
            format!(
                "{{\"completions\": [], \"task\": {}1{}}}",
                "[".repeat(50_000),
                "]".repeat(50_000)
            )
            .into_bytes(),
            400,
            "malformed_json",
            "recursion limit",
        ),
    ];
    for (path, body, status, code, word) in &cases {
        let r = server.request("POST", path, body).await;
        assert_error(&r, *status, code);
        let detail = r.json()["detail"].as_str().unwrap().to_owned();
        assert!(detail.contains(word), "{path}: {detail}");
    }
    still_serves(&server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_types_in_every_field_are_422_naming_it() {
    let server = Server::default().await;
    let run_code = json!({"code": "print(1)", "language": "python", "stdin": "",
                              "compile_timeout": 1, "run_timeout": 5, "memory_limit_MB": 256,
                              "files": {}, "fetch_files": []});
    let score = json!({"ground_truth": "1", "completions": ["1"], "id": "a",
                           "credit": "binary", "format_weight": 0.0});
    // (path, base body, field, a wrong value, what the detail must name)
    let cases: &[(&str, &Value, &str, Value, &str)] = &[
        ("/run_code", &run_code, "code", json!(5), "code"),
        ("/run_code", &run_code, "language", json!(5), "language"),
        ("/run_code", &run_code, "stdin", json!([1]), "stdin"),
        (
            "/run_code",
            &run_code,
            "compile_timeout",
            json!("ten"),
            "compile_timeout",
        ),
        (
            "/run_code",
            &run_code,
            "run_timeout",
            json!("ten"),
            "run_timeout",
        ),
        (
            "/run_code",
            &run_code,
            "memory_limit_MB",
            json!("lots"),
            "memory_limit_MB",
        ),
        ("/run_code", &run_code, "files", json!([1]), "files"),
        (
            "/run_code",
            &run_code,
            "fetch_files",
            json!("x"),
            "fetch_files",
        ),
        (
            "/v1/score",
            &score,
            "completions",
            json!("abc"),
            "completions",
        ),
        (
            "/v1/score",
            &score,
            "completions",
            json!([1]),
            "completions[0]",
        ),
        ("/v1/score", &score, "id", json!(5), "id"),
        ("/v1/score", &score, "credit", json!(5), "credit"),
        (
            "/v1/score",
            &score,
            "format_weight",
            json!("x"),
            "format_weight",
        ),
        (
            "/v1/score",
            &score,
            "ground_truth",
            json!(true),
            "ground_truth",
        ),
    ];
    for (path, base, field, wrong, named) in cases {
        let mut body = (*base).clone();
        body[*field] = wrong.clone();
        let r = server.post(path, body).await;
        assert_eq!(r.status, 422, "{path} {field}={wrong}: {}", r.text());
        assert_error(&r, 422, "invalid_request");
        let detail = r.json()["detail"].as_str().unwrap().to_owned();
        assert!(detail.contains(named), "{path} {field}={wrong}: {detail}");
    }
    // `task` and `verification_info` replace `ground_truth`.
    for field in ["task", "verification_info"] {
        let body = json!({"completions": ["1"], field: 5});
        let r = server.post("/v1/score", body).await;
        assert_error(&r, 422, "invalid_request");
        let detail = r.json()["detail"].as_str().unwrap().to_owned();
        assert!(detail.contains(field), "{field}: {detail}");
    }
    still_serves(&server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_past_the_cap_wait_and_idle_ones_hold_no_worker() {
    let config = ServiceConfig {
        max_connections: 2,
        max_inflight: 1,
        ..ServiceConfig::default()
    };
    let server = Server::start(config).await;
    // Two keep-alive connections, each served once and then left idle, fill the cap; the
    // only sandbox slot stays free.
    let mut idle = Vec::new();
    for _ in 0..2 {
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        let body = verl_body("print(7)", None, 5).to_string();
        let head = format!(
            "POST /run_code HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer test-token-3f9c\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(body.as_bytes()).await.unwrap();
        let r = read_response(&mut stream).await;
        assert_eq!(r.json()["run_result"]["stdout"], "7\n");
        idle.push(stream);
    }
    assert_eq!(server.service.metrics().open_connections(), 2);
    // A third connection waits for a slot: no answer while both are open.
    let addr = server.addr;
    let mut third = tokio::spawn(async move {
        request(
            addr,
            "POST",
            "/run_code",
            verl_body("print(8)", None, 5).to_string().as_bytes(),
        )
        .await
    });
    assert!(
        tokio::time::timeout(Duration::from_millis(300), &mut third)
            .await
            .is_err(),
        "a connection past the cap was served"
    );
    // One idle connection closes: the third is served, by the one sandbox slot.
    drop(idle.pop());
    let r = tokio::time::timeout(SAFETY, third).await.unwrap().unwrap();
    assert_eq!(r.json()["run_result"]["stdout"], "8\n");
    drop(idle);
    // Every slot comes back.
    tokio::time::timeout(SAFETY, async {
        while server.service.metrics().open_connections() != 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("connections were not released");
    still_serves(&server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disconnects_mid_body_release_their_connection() {
    let server = Server::default().await;
    for _ in 0..20 {
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        stream
                .write_all(
                    b"POST /v1/score HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer test-token-3f9c\r\nContent-Length: 1000\r\n\r\n{\"comp",
                )
                .await
                .unwrap();
        drop(stream);
    }
    tokio::time::timeout(SAFETY, async {
        while server.service.metrics().open_connections() != 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("connections of departed clients were not released");
    still_serves(&server).await;
}
