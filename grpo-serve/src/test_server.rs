//! For the crate's unit tests: a real server on a loopback port and one raw HTTP/1.1 request.

use std::net::SocketAddr;

use grpo_sandbox::Sandbox;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::{Service, ServiceConfig};

/// A server on a free loopback port (it stops with the test's runtime).
pub(crate) async fn serve(config: ServiceConfig) -> SocketAddr {
    serve_with(config, None).await
}

/// [`serve`] with `pack` (a pack spec) at `/openenv/tasks` when given.
pub(crate) async fn serve_with(config: ServiceConfig, pack: Option<&str>) -> SocketAddr {
    let sandbox = tokio::task::spawn_blocking(Sandbox::shared)
        .await
        .expect("joined")
        .expect("sandbox");
    let service = match pack {
        Some(spec) => {
            let pack = grpo_tasks::Pack::load(spec).expect("pack");
            Service::with_pack(sandbox, config, pack)
        }
        None => Service::new(sandbox, config),
    }
    .expect("service");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bound");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(service.serve(listener, std::future::pending()));
    addr
}

/// One request with an optional JSON body and bearer token → (status, JSON answer).
pub(crate) async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&Value>,
    token: Option<&str>,
) -> (u16, Value) {
    let body = body.map(Value::to_string).unwrap_or_default();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let mut stream = TcpStream::connect(addr).await.expect("connected");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n{auth}\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream
        .write_all(format!("{head}{body}").as_bytes())
        .await
        .expect("written");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.expect("read");
    let text = String::from_utf8(raw).expect("UTF-8");
    let (head, body) = text.split_once("\r\n\r\n").expect("a head");
    let status = head[9..12].parse().expect("a status");
    (status, serde_json::from_str(body).expect("a JSON body"))
}
