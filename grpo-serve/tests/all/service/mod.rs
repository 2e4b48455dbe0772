//! The HTTP service driven over loopback: a real server on 127.0.0.1, real sandbox runs, and
//! requests written byte by byte (so malformed ones can be sent too). One file per route or
//! concern:
//!
//! | module | what |
//! |---|---|
//! | `sandbox_fusion` | SandboxFusion's `/run_code` in every language, files, outcomes; `/v1/languages`, ping, health |
//! | `score` | `/v1/score`: math, countdown and code groups, the data sets' verification shapes, metrics |
//! | `contract` | the scoring contract: a client's mistake is a 422 naming the field, caps, a fault is a 503 |
//! | `bad_input` | malformed requests: a clear error, never a panic |
//! | `operations` | overload answers 504, a graceful shutdown finishes the work in flight |
//! | `abuse` | clients that abuse the connection rather than the JSON |
//! | `auth` | the bearer token on every route but the health checks |
//! | `remote` | OpenRLHF's and slime's remote reward shapes |
//! | `sessions` | interpreter sessions over HTTP |

use std::sync::Arc;
use std::time::Duration;

use grpo_sandbox::Sandbox;
use grpo_serve::{AuthToken, Service, ServiceConfig};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

mod abuse;
mod auth;
mod bad_input;
mod contract;
mod operations;
mod remote;
mod sandbox_fusion;
mod score;
mod sessions;

/// The bearer token of the test servers (the literal in every request head below).
const TOKEN: &str = "test-token-3f9c";

/// A server on a free loopback port, stopped when dropped.
struct Server {
    addr: std::net::SocketAddr,
    service: Service,
    stop: Option<oneshot::Sender<()>>,
    done: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Server {
    async fn start(config: ServiceConfig) -> Server {
        let sandbox = tokio::task::spawn_blocking(Sandbox::shared)
            .await
            .unwrap()
            .unwrap();
        Server::with_sandbox(sandbox, config).await
    }

    /// Every server of these tests requires [`TOKEN`], and every request they send carries
    /// it, so the whole suite runs behind the token check; [`Server::open`] serves anyone.
    async fn with_sandbox(sandbox: Sandbox, mut config: ServiceConfig) -> Server {
        config.auth_token = Some(AuthToken::new(TOKEN, "test").unwrap());
        Server::serving(sandbox, config).await
    }

    /// A server without a token.
    async fn open(config: ServiceConfig) -> Server {
        let sandbox = tokio::task::spawn_blocking(Sandbox::shared)
            .await
            .unwrap()
            .unwrap();
        Server::serving(sandbox, config).await
    }

    async fn serving(sandbox: Sandbox, config: ServiceConfig) -> Server {
        let service = Service::new(sandbox, config).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let done = tokio::spawn(service.clone().serve(listener, async move {
            let _ = stopped.await;
        }));
        Server {
            addr,
            service,
            stop: Some(stop),
            done: Some(done),
        }
    }

    async fn default() -> Server {
        Server::start(ServiceConfig::default()).await
    }

    async fn request(&self, method: &str, path: &str, body: &[u8]) -> Response {
        request(self.addr, method, path, body).await
    }

    async fn post(&self, path: &str, body: Value) -> Response {
        self.request("POST", path, body.to_string().as_bytes())
            .await
    }

    /// Begins graceful shutdown and waits for the server to finish.
    async fn shutdown(mut self) -> std::io::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.done.take().unwrap().await.unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

#[derive(Debug)]
struct Response {
    status: u16,
    headers: String,
    body: Vec<u8>,
}

impl Response {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// One HTTP/1.1 request on a fresh connection (`Connection: close`), read to the end.
async fn request(addr: std::net::SocketAddr, method: &str, path: &str, body: &[u8]) -> Response {
    request_with(
        addr,
        method,
        path,
        "Authorization: Bearer test-token-3f9c\r\n",
        body,
    )
    .await
}

/// [`request`] with `headers` (whole lines) in place of the token's.
async fn request_with(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    headers: &str,
    body: &[u8],
) -> Response {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\n{headers}Content-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    // A server that refuses a body from its header may close before all of it is written.
    let _ = stream.write_all(body).await;
    read_response(&mut stream).await
}

/// A generous bound on anything the tests wait for: far above any expected time, there only
/// so that a hung server fails the test instead of hanging it.
const SAFETY: Duration = Duration::from_secs(60);

/// Reads one response: its head, then the body its `Content-Length` declares (or chunks, or
/// everything up to close). A reset after the response (the server closing with unread
/// request bytes) is not an error.
async fn read_response(stream: &mut TcpStream) -> Response {
    let read = async {
        let mut raw = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            if let Some(split) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&raw[..split]).to_lowercase();
                let length = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse::<usize>().ok());
                if length.is_some_and(|n| raw.len() >= split + 4 + n) {
                    return raw;
                }
            }
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return raw,
                Ok(n) => raw.extend_from_slice(&buf[..n]),
            }
        }
    };
    let raw = tokio::time::timeout(SAFETY, read)
        .await
        .expect("no response within the safety timeout");
    parse_response(&raw)
}

/// Waits until the server closes `stream` (a read returns end of file or a reset), reading
/// and returning whatever arrives first.
async fn read_until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let read = async {
        let mut raw = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return raw,
                Ok(n) => raw.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(SAFETY, read)
        .await
        .expect("the server did not close the connection within the safety timeout")
}

fn parse_response(raw: &[u8]) -> Response {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no header end in {:?}", String::from_utf8_lossy(raw)));
    let headers = String::from_utf8_lossy(&raw[..split]).to_lowercase();
    let status = headers.split(' ').nth(1).unwrap().parse().unwrap();
    let mut body = raw[split + 4..].to_vec();
    if headers.contains("transfer-encoding: chunked") {
        body = dechunk(&body);
    }
    Response {
        status,
        headers,
        body,
    }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n").unwrap();
        let size =
            usize::from_str_radix(std::str::from_utf8(&data[..line_end]).unwrap().trim(), 16)
                .unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&data[line_end + 2..line_end + 2 + size]);
        data = &data[line_end + 2 + size + 2..];
    }
}

/// The body verl's `call_sandbox_api` sends.
fn verl_body(code: &str, stdin: Option<&str>, timeout: u64) -> Value {
    json!({"compile_timeout": timeout, "run_timeout": timeout, "code": code, "stdin": stdin,
           "memory_limit_MB": 1024, "language": "python", "files": {}, "fetch_files": []})
}

/// The C/C++ toolchain for the tests that compile, installed once per test process when it is
/// not there.
fn toolchain() {
    static DONE: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    DONE.get_or_init(|| {
        if let Err(e) = grpo_sandbox::guest::cc::Toolchain::install_default(&mut |_| {}) {
            panic!("installing the C/C++ toolchain for the tests: {e}");
        }
    });
}
