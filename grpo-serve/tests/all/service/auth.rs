use super::*;

/// Every route but the health checks, with a body each accepts.
fn guarded_routes() -> Vec<(&'static str, String, Value)> {
    let mut routes = vec![
        (
            "POST",
            "/run_code".to_owned(),
            verl_body("print(1)", None, 5),
        ),
        ("GET", "/v1/ping".to_owned(), json!(null)),
        ("GET", "/v1/languages".to_owned(), json!(null)),
        ("GET", "/metrics".to_owned(), json!(null)),
        (
            "POST",
            "/v1/score".to_owned(),
            json!({"ground_truth": "1", "completions": ["1"]}),
        ),
        (
            "POST",
            "/get_reward".to_owned(),
            json!({"query": ["1"], "labels": ["1"]}),
        ),
        (
            "POST",
            "/v1/reward".to_owned(),
            json!({"response": "1", "label": "1"}),
        ),
        (
            "POST",
            "/v1/sessions".to_owned(),
            json!({"language": "python"}),
        ),
        (
            "POST",
            "/v1/sessions/0123/run".to_owned(),
            json!({"code": "1"}),
        ),
        ("DELETE", "/v1/sessions/0123".to_owned(), json!(null)),
        ("GET", "/no/such/route".to_owned(), json!(null)),
    ];
    for route in grpo_serve::UNSUPPORTED_ROUTES {
        routes.push(("POST", route.to_owned(), json!({})));
    }
    // The OpenEnv environments: everything under each base but its `/health`.
    for base in ["/openenv/python", "/openenv/tasks"] {
        routes.push(("POST", format!("{base}/reset"), json!({})));
        routes.push((
            "POST",
            format!("{base}/step"),
            json!({"action": {"code": "1"}}),
        ));
        for path in ["state", "schema", "metadata", "ws"] {
            routes.push(("GET", format!("{base}/{path}"), json!(null)));
        }
    }
    // NeMo Gym's resource-server routes, at the root and under a rollout's prefix.
    for prefix in ["", "/ng-rollout/r1"] {
        routes.push(("POST", format!("{prefix}/seed_session"), json!({})));
        routes.push(("POST", format!("{prefix}/verify"), json!({})));
        routes.push(("POST", format!("{prefix}/close_session"), json!({})));
        routes.push(("POST", format!("{prefix}/aggregate_metrics"), json!({})));
    }
    routes
}

/// Without the token, or with another, every route but the health checks is 401 (with
/// the bearer challenge, before the body is looked at); with it, each answers as usual.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_but_the_health_checks_needs_the_token() {
    let server = Server::default().await;
    let refused_headers = [
        "",
        "Authorization: Bearer wrong-token\r\n",
        "Authorization: Bearer test-token-3f9\r\n",
        "Authorization: Basic dGVzdA==\r\n",
        "Authorization: test-token-3f9c\r\n",
    ];
    for (method, path, body) in guarded_routes() {
        let body = body.to_string();
        for headers in refused_headers {
            let r = request_with(server.addr, method, &path, headers, body.as_bytes()).await;
            assert_eq!(
                r.status,
                401,
                "{method} {path} with {headers:?}: {}",
                r.text()
            );
            assert_eq!(r.json()["code"], "unauthorized", "{path}");
            assert!(
                r.headers
                    .to_ascii_lowercase()
                    .contains("www-authenticate: bearer"),
                "{}",
                r.headers
            );
        }
        let r = server.request(method, &path, body.as_bytes()).await;
        assert_ne!(
            r.status,
            401,
            "{method} {path} with the token: {}",
            r.text()
        );
    }
    for path in [
        "/healthz",
        "/readyz",
        // (`/openenv/tasks` exists only with a pack; its routes above answer 404, not 401.)
        "/openenv/python/health",
    ] {
        let r = request_with(server.addr, "GET", path, "", b"").await;
        assert_eq!(r.status, 200, "{path}");
    }
    // A refused request never reaches the body: a declared 1 GB body is not waited for.
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(b"POST /v1/score HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n{")
        .await
        .unwrap();
    let r = read_response(&mut stream).await;
    assert_eq!(r.status, 401, "{}", r.text());
    let metrics = server.request("GET", "/metrics", b"").await.text();
    assert!(metrics.contains("status=\"401\""), "{metrics}");
}

/// Without a configured token the service serves anyone (the default).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_token_the_service_is_open() {
    let server = Server::open(ServiceConfig::default()).await;
    let r = request_with(
        server.addr,
        "POST",
        "/v1/score",
        "",
        json!({"ground_truth": "2", "completions": ["\\boxed{2}"]})
            .to_string()
            .as_bytes(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["results"][0]["correct"], true);
    let r = request_with(server.addr, "GET", "/v1/ping", "", b"").await;
    assert_eq!(r.status, 200);
}
