//! Operating the service: overload answers 504 instead of hanging, and a graceful shutdown
//! finishes the work in flight.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overload_answers_504_instead_of_hanging() {
    let config = ServiceConfig {
        max_inflight: 1,
        max_queue: 1,
        queue_wait: Duration::from_millis(50),
        ..ServiceConfig::default()
    };
    let server = Arc::new(Server::start(config).await);
    // One slow program holds the only slot.
    let slow = {
        let server = server.clone();
        tokio::spawn(async move {
            server
                .post(
                    "/run_code",
                    verl_body("import time\ntime.sleep(1.5)\nprint('done')", None, 5),
                )
                .await
        })
    };
    // Wait until it is admitted.
    for _ in 0..200 {
        if server
            .service
            .metrics()
            .render()
            .contains("grpo_http_inflight_requests 1\n")
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // A score request waits its 50 ms in the queue, then gets 504.
    let r = server
        .post(
            "/v1/score",
            json!({"ground_truth": "1", "completions": ["1"]}),
        )
        .await;
    assert_eq!(r.status, 504, "{}", r.text());
    assert_eq!(r.json()["code"], "overloaded");
    // The slow request was not disturbed.
    let slow = slow.await.unwrap();
    assert_eq!(slow.json()["run_result"]["stdout"], "done\n");
    // With the slot free again, requests are served.
    let r = server
        .post(
            "/v1/score",
            json!({"ground_truth": "1", "completions": ["1"]}),
        )
        .await;
    assert_eq!(r.status, 200);
    let metrics = server.service.metrics().render();
    assert!(
        metrics.contains("grpo_queue_rejections_total{reason=\"queue_timeout\"} 1\n"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_shutdown_finishes_in_flight_work() {
    let server = Server::default().await;
    let addr = server.addr;
    let slow = tokio::spawn(async move {
        request(
            addr,
            "POST",
            "/run_code",
            verl_body("import time\ntime.sleep(1)\nprint('finished')", None, 5)
                .to_string()
                .as_bytes(),
        )
        .await
    });
    for _ in 0..200 {
        if server
            .service
            .metrics()
            .render()
            .contains("grpo_http_inflight_requests 1\n")
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    server.shutdown().await.unwrap();
    // The request in flight when shutdown began got its full answer.
    let r = slow.await.unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["run_result"]["stdout"], "finished\n");
    // And the listener is closed.
    assert!(TcpStream::connect(addr).await.is_err());
}
