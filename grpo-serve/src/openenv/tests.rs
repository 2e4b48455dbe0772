//! The environments driven over loopback: a real server, real interpreter sessions, and a
//! WebSocket client speaking OpenEnv's messages.

use std::net::SocketAddr;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use grpo_sandbox::SessionLimits;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;

use crate::test_server::{request, serve, serve_with};
use crate::{ServiceConfig, SessionConfig};

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>;

/// Sessions whose calls stop after 300 ms of CPU.
fn short_calls(max_sessions: usize) -> ServiceConfig {
    let mut limits = SessionLimits::default();
    limits.call.time_limit_ms = 300;
    limits.call.wall_limit_ms = Some(3_000);
    ServiceConfig {
        sessions: SessionConfig {
            max_sessions,
            limits,
            ..SessionConfig::default()
        },
        ..ServiceConfig::default()
    }
}

async fn connect(addr: SocketAddr, env: &str) -> Socket {
    let (socket, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/openenv/{env}/ws"))
        .await
        .expect("connected");
    socket
}

/// Sends one message and reads the frame answering it.
async fn call(socket: &mut Socket, message: Value) -> Value {
    socket
        .send(Message::Text(message.to_string().into()))
        .await
        .expect("sent");
    next_frame(socket).await.expect("a frame")
}

async fn next_frame(socket: &mut Socket) -> Option<Value> {
    loop {
        match tokio::time::timeout(Duration::from_secs(60), socket.next())
            .await
            .expect("answered in time")?
        {
            Ok(Message::Text(text)) => return Some(serde_json::from_str(&text).expect("JSON")),
            Ok(Message::Close(_)) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

async fn step(socket: &mut Socket, code: &str) -> Value {
    call(socket, json!({"type": "step", "data": {"code": code}})).await
}

/// One HTTP/1.1 request → (status, JSON body).
async fn http(addr: SocketAddr, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    request(addr, method, path, body.as_ref(), None).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sessions_keep_state_contain_hostile_steps_and_reset_fresh() {
    let addr = serve(short_calls(4)).await;
    let mut socket = connect(addr, "python").await;

    let early = step(&mut socket, "print(1)").await;
    assert_eq!(early["type"], "error", "{early}");
    assert_eq!(early["data"]["code"], "EXECUTION_ERROR", "{early}");

    let reset = call(
        &mut socket,
        json!({"type": "reset", "data": {"episode_id": "e-1"}}),
    )
    .await;
    assert_eq!(reset["type"], "observation", "{reset}");
    assert_eq!(reset["data"]["done"], false);
    assert_eq!(reset["data"]["observation"]["exit_code"], 0);

    assert_eq!(
        step(&mut socket, "x = 41").await["data"]["observation"]["exit_code"],
        0
    );
    let printed = step(&mut socket, "print(x + 1)").await;
    let data = &printed["data"];
    assert_eq!(data["observation"]["stdout"], "42\n", "{printed}");
    assert_eq!(data["observation"]["stderr"], "");
    assert_eq!(data["reward"], Value::Null);
    assert_eq!(data["done"], false);
    assert_eq!(data["metadata"]["status"], "ok");
    assert!(data["metadata"]["duration_ms"].is_number(), "{printed}");
    let state = call(&mut socket, json!({"type": "state"})).await;
    assert_eq!(
        state,
        json!({"type": "state", "data": {"episode_id": "e-1", "step_count": 2}})
    );

    let missing = call(&mut socket, json!({"type": "step", "data": {}})).await;
    assert_eq!(missing["data"]["code"], "VALIDATION_ERROR", "{missing}");
    assert_eq!(missing["data"]["errors"][0]["loc"], json!(["code"]));
    let bad_json = socket.send(Message::Text("{not json".into())).await;
    assert!(bad_json.is_ok());
    assert_eq!(
        next_frame(&mut socket).await.expect("a frame")["data"]["code"],
        "INVALID_JSON"
    );
    let unknown = call(&mut socket, json!({"type": "render"})).await;
    assert_eq!(unknown["data"]["code"], "UNKNOWN_TYPE");

    let endless = step(&mut socket, "while True:\n    pass").await;
    let observed = &endless["data"]["observation"];
    assert_ne!(observed["exit_code"], 0, "{endless}");
    assert_eq!(
        endless["data"]["metadata"]["status"], "timeout",
        "{endless}"
    );
    let flood = step(&mut socket, "while True:\n    print('y' * 4096)").await;
    assert_ne!(flood["data"]["observation"]["exit_code"], 0, "{flood}");
    let hog = step(&mut socket, "b = bytearray(8 << 30)").await;
    assert_ne!(hog["data"]["observation"]["exit_code"], 0, "{hog}");
    let grow = step(
        &mut socket,
        "chunks = []\nwhile True:\n    chunks.append(bytearray(64 << 20))",
    )
    .await;
    assert_ne!(grow["data"]["observation"]["exit_code"], 0, "{grow}");
    assert_eq!(grow["data"]["metadata"]["status"], "memory_limit", "{grow}");
    // The session goes on.
    let after = step(&mut socket, "print('still here')").await;
    assert_eq!(
        after["data"]["observation"]["stdout"], "still here\n",
        "{after}"
    );

    let again = call(&mut socket, json!({"type": "reset", "data": {"seed": 3}})).await;
    assert_eq!(again["type"], "observation", "{again}");
    let fresh = step(&mut socket, "print(x)").await;
    assert_eq!(fresh["data"]["observation"]["exit_code"], 1, "{fresh}");
    assert!(
        fresh["data"]["observation"]["stderr"]
            .as_str()
            .is_some_and(|s| s.contains("NameError")),
        "{fresh}"
    );
    let state = call(&mut socket, json!({"type": "state"})).await;
    assert_eq!(state["data"]["step_count"], 1);
    assert_ne!(state["data"]["episode_id"], "e-1");
    socket
        .send(Message::Text(json!({"type": "close"}).to_string().into()))
        .await
        .expect("sent");
    assert_eq!(next_frame(&mut socket).await, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_cap_refuses_a_session_and_a_closed_one_frees_its_place() {
    let addr = serve(short_calls(1)).await;
    let mut first = connect(addr, "python").await;
    call(&mut first, json!({"type": "reset"})).await;
    step(&mut first, "secret = 7").await;

    let mut refused = connect(addr, "python").await;
    let frame = next_frame(&mut refused).await.expect("an error frame");
    assert_eq!(frame["data"]["code"], "CAPACITY_REACHED", "{frame}");
    assert_eq!(frame["data"]["max_sessions"], 1);
    assert_eq!(next_frame(&mut refused).await, None);

    first.close(None).await.expect("closed");
    // The place comes back once the server has seen the close.
    let mut second = None;
    for _ in 0..50 {
        let mut socket = connect(addr, "python").await;
        let reset = call(&mut socket, json!({"type": "reset"})).await;
        if reset["type"] == "observation" {
            second = Some(socket);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut second = second.expect("a place after the first session closed");
    // Another session never sees the first one's globals.
    let isolated = step(&mut second, "print(secret)").await;
    assert!(
        isolated["data"]["observation"]["stderr"]
            .as_str()
            .is_some_and(|s| s.contains("NameError")),
        "{isolated}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_http_routes_follow_openenv() {
    let addr = serve(short_calls(4)).await;
    let base = "/openenv/python";
    assert_eq!(
        http(addr, "GET", &format!("{base}/health"), None).await,
        (200, json!({"status": "healthy"}))
    );
    let (status, schema) = http(addr, "GET", &format!("{base}/schema"), None).await;
    assert_eq!(status, 200);
    assert_eq!(schema["action"]["title"], "PythonCodeAction");
    let (status, metadata) = http(addr, "GET", &format!("{base}/metadata"), None).await;
    assert_eq!(
        (status, metadata["name"].clone()),
        (200, json!("grpo-python"))
    );
    assert_eq!(
        http(addr, "GET", &format!("{base}/state"), None).await,
        (200, json!({"episode_id": null, "step_count": 0}))
    );
    let (status, reset) = http(addr, "POST", &format!("{base}/reset"), None).await;
    assert_eq!(status, 200, "{reset}");
    assert_eq!(reset["observation"]["stdout"], "");

    let (status, stepped) = http(
        addr,
        "POST",
        &format!("{base}/step"),
        Some(json!({"action": {"code": "print(6 * 7)"}})),
    )
    .await;
    assert_eq!(status, 200, "{stepped}");
    assert_eq!(stepped["observation"]["stdout"], "42\n");
    assert_eq!(stepped["observation"]["exit_code"], 0);
    assert_eq!(stepped["done"], false);

    let (status, invalid) = http(
        addr,
        "POST",
        &format!("{base}/step"),
        Some(json!({"action": {"source": "print(1)"}})),
    )
    .await;
    assert_eq!(status, 422, "{invalid}");
    let locs: Vec<&Value> = invalid["detail"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|d| &d["loc"])
        .collect();
    assert_eq!(
        locs,
        [
            &json!(["body", "action", "code"]),
            &json!(["body", "action", "source"])
        ]
    );
    let (status, _) = http(addr, "POST", &format!("{base}/step"), Some(json!({}))).await;
    assert_eq!(status, 422);
    let (status, _) = http(
        addr,
        "POST",
        &format!("{base}/reset"),
        Some(json!({"seed": -1})),
    )
    .await;
    assert_eq!(status, 422);
}

/// A server with `pack` at `/openenv/tasks`.
async fn serve_pack(pack: &str) -> SocketAddr {
    serve_with(short_calls(2), Some(pack)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_rewards_are_the_packs_scorers_and_seeds_pick_the_same_task() {
    let spec = "builtin:arith-digits";
    let addr = serve_pack(spec).await;
    // The scorer `grpo score --tasks` builds for the pack (no code tasks: no sandbox).
    let pack = grpo_tasks::Pack::load(spec).expect("pack");
    let config = grpo_rewards::ScoringConfig::for_pack(&pack.manifest).expect("config");
    let scorer = grpo_sandbox::scorer(&config, None).expect("scorer");

    let mut socket = connect(addr, "tasks").await;
    let early = call(
        &mut socket,
        json!({"type": "step", "data": {"completion": "1"}}),
    )
    .await;
    assert_eq!(early["type"], "error", "{early}");

    let first = call(&mut socket, json!({"type": "reset", "data": {"seed": 11}})).await;
    let task_id = first["data"]["observation"]["task_id"]
        .as_str()
        .expect("a task id")
        .to_owned();
    let again = call(&mut socket, json!({"type": "reset", "data": {"seed": 11}})).await;
    assert_eq!(again["data"]["observation"]["task_id"], task_id.as_str());
    let other = call(&mut socket, json!({"type": "reset", "data": {"seed": 12}})).await;
    let task = pack.get(&task_id).expect("the task is the pack's");
    assert_eq!(
        first["data"]["observation"]["prompt"],
        pack.manifest.template.render(task).as_str()
    );
    assert!(other["data"]["observation"]["task_id"].is_string());

    let grpo_tasks::Task::Math(math) = task else {
        panic!("arith-digits has math tasks only")
    };
    let completions = [
        format!("<think>easy</think>\n<answer>{}</answer>", math.answer),
        format!("The answer is {}.", math.answer),
        // Arithmetic that evaluates to the answer: the pack's `[math] evaluated_numbers`
        // refuses it (the service's own `/v1/score` scorer would accept it).
        format!("<think>x</think>\n<answer>{} + 0</answer>", math.answer),
        "no idea".to_owned(),
    ];
    let expected = scorer
        .score_group(task, &completions, scorer.options())
        .await
        .expect("scored");
    assert!(expected[0].correct, "{:?}", expected[0]);
    assert!(!expected[2].correct, "{:?}", expected[2]);
    for (completion, expected) in completions.iter().zip(&expected) {
        let reset = call(
            &mut socket,
            json!({"type": "reset", "data": {"task_id": task_id}}),
        )
        .await;
        assert_eq!(reset["data"]["observation"]["task_id"], task_id.as_str());
        let stepped = call(
            &mut socket,
            json!({"type": "step", "data": {"completion": completion}}),
        )
        .await;
        let data = &stepped["data"];
        assert_eq!(
            data["reward"],
            json!(expected.reward),
            "{completion}: {stepped}"
        );
        assert_eq!(data["done"], true);
        assert_eq!(data["metadata"]["correct"], expected.correct);
        assert_eq!(data["metadata"]["verdict"], json!(expected.verdict));
        let state = call(&mut socket, json!({"type": "state"})).await;
        assert_eq!(state["data"]["step_count"], 1);
        assert_eq!(state["data"]["task_id"], task_id.as_str());
        let after = call(
            &mut socket,
            json!({"type": "step", "data": {"completion": "1"}}),
        )
        .await;
        assert_eq!(
            after["type"], "error",
            "a done episode takes no step: {after}"
        );
    }

    // Two sessions hold both places; a third is refused until one closes.
    let mut second = connect(addr, "tasks").await;
    call(&mut second, json!({"type": "reset"})).await;
    let mut third = connect(addr, "tasks").await;
    let refused = next_frame(&mut third).await.expect("an error frame");
    assert_eq!(refused["data"]["code"], "CAPACITY_REACHED", "{refused}");
    second.close(None).await.expect("closed");
    socket.close(None).await.expect("closed");

    // Stateless HTTP: the step names its task (once the server has seen the closes).
    let mut answer = (0, Value::Null);
    for _ in 0..50 {
        answer = http(
            addr,
            "POST",
            "/openenv/tasks/step",
            Some(json!({"action": {"completion": completions[0], "task_id": task_id}})),
        )
        .await;
        if answer.0 != 429 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, stepped) = answer;
    assert_eq!(status, 200, "{stepped}");
    assert_eq!(stepped["reward"], json!(expected[0].reward));
    let (status, unnamed) = http(
        addr,
        "POST",
        "/openenv/tasks/step",
        Some(json!({"action": {"completion": "1"}})),
    )
    .await;
    assert_eq!(status, 422, "{unnamed}");
    assert_eq!(
        unnamed["detail"][0]["loc"],
        json!(["body", "action", "task_id"])
    );
    let (status, unknown) = http(
        addr,
        "POST",
        "/openenv/tasks/reset",
        Some(json!({"task_id": "no-such-task"})),
    )
    .await;
    assert_eq!(status, 422, "{unknown}");
    assert_eq!(unknown["detail"][0]["loc"], json!(["body", "task_id"]));
    let (status, reset) = http(
        addr,
        "POST",
        "/openenv/tasks/reset",
        Some(json!({"seed": 11, "split": "train"})),
    )
    .await;
    assert_eq!(status, 200, "{reset}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_pack_there_is_no_task_environment() {
    let addr = serve(ServiceConfig::default()).await;
    let (status, _) = http(addr, "GET", "/openenv/tasks/health", None).await;
    assert_eq!(status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_guards_every_route_but_health() {
    let addr = serve(ServiceConfig {
        auth_token: Some(crate::AuthToken::new("openenv-token", "test").expect("a token")),
        ..ServiceConfig::default()
    })
    .await;
    let base = "/openenv/python";
    assert_eq!(
        http(addr, "GET", &format!("{base}/health"), None).await.0,
        200
    );
    for (method, route) in [("GET", "schema"), ("GET", "state"), ("POST", "reset")] {
        let (status, _) = http(addr, method, &format!("{base}/{route}"), None).await;
        assert_eq!(status, 401, "{route}");
    }
    let refused = tokio_tungstenite::connect_async(format!("ws://{addr}{base}/ws")).await;
    assert!(refused.is_err(), "a WebSocket without the token is refused");
    let mut request =
        tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(format!(
            "ws://{addr}{base}/ws"
        ))
        .expect("a request");
    request.headers_mut().insert(
        "authorization",
        "Bearer openenv-token".parse().expect("a header"),
    );
    let (mut socket, _) = tokio_tungstenite::connect_async(request)
        .await
        .expect("admitted with the token");
    let reset = call(&mut socket, json!({"type": "reset"})).await;
    assert_eq!(reset["type"], "observation", "{reset}");
}

/// An open WebSocket holds the place under `max_connections` of the connection it came from:
/// with two sockets open on a cap of two, a third connection waits until one closes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_websockets_count_toward_the_connection_cap() {
    let addr = serve(ServiceConfig {
        max_connections: 2,
        ..short_calls(4)
    })
    .await;
    let mut first = connect(addr, "python").await;
    let mut second = connect(addr, "python").await;
    for socket in [&mut first, &mut second] {
        let reset = call(socket, json!({"type": "reset", "data": {}})).await;
        assert_eq!(reset["type"], "observation", "{reset}");
    }
    let third = tokio::spawn(async move {
        let mut stream = TcpStream::connect(addr).await.expect("connected");
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .expect("sent");
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.expect("read");
        String::from_utf8_lossy(&answer).into_owned()
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !third.is_finished(),
        "a third connection was served beside two open sockets"
    );
    first.close(None).await.expect("closed");
    drop(first);
    let answer = tokio::time::timeout(Duration::from_secs(30), third)
        .await
        .expect("served once a socket closed")
        .expect("joined");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // The other socket still works.
    let r = step(&mut second, "print(6 * 7)").await;
    assert_eq!(r["data"]["observation"]["stdout"], "42\n", "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_longer_than_the_idle_ttl_does_not_close_the_session() {
    let mut config = short_calls(2);
    config.sessions.idle_ttl = Duration::from_secs(1);
    let addr = serve(config).await;
    let mut socket = connect(addr, "python").await;
    call(&mut socket, json!({"type": "reset", "data": {}})).await;
    let slow = step(&mut socket, "import time\ntime.sleep(2)\nx = 7").await;
    assert_eq!(slow["data"]["observation"]["exit_code"], 0, "{slow}");
    let next = step(&mut socket, "print(x)").await;
    assert_eq!(next["data"]["observation"]["stdout"], "7\n", "{next}");
}
