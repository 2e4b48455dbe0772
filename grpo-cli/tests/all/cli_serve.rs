//! `grpo serve`'s options: each way of giving the token, the session flags, and the
//! mistakes refused before the server starts.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};

use super::common::grpo;

/// Starts `grpo serve` on a free port and returns it with its address.
fn serve(args: &[&str], env: Option<&str>) -> (Child, String) {
    let mut command = grpo();
    command
        .args(["serve", "--addr", "127.0.0.1:0"])
        .args(args)
        .env_remove("GRPO_AUTH_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(token) = env {
        command.env("GRPO_AUTH_TOKEN", token);
    }
    let mut child = command.spawn().expect("grpo serve starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the listening line");
    let listening: serde_json::Value = serde_json::from_str(&line).expect("JSON");
    let addr = listening["listening"].as_str().expect("address").to_owned();
    (child, addr)
}

/// The status of `GET path` with an optional bearer token.
fn status(addr: &str, path: &str, token: Option<&str>) -> u16 {
    let mut stream = TcpStream::connect(addr).expect("connect");
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: x\r\n{auth}Connection: close\r\n\r\n"
    )
    .expect("write");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read");
    answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status line")
}

#[test]
fn the_token_comes_from_a_file_or_the_environment() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("token");
    std::fs::write(&file, "file-token-1\n").expect("write");
    let file = file.to_str().expect("utf-8 path");
    for (args, env, token) in [
        (vec!["--auth-token-file", file], None, "file-token-1"),
        (vec![], Some("env-token-2"), "env-token-2"),
    ] {
        let (mut child, addr) = serve(&args, env);
        assert_eq!(status(&addr, "/v1/ping", None), 401);
        assert_eq!(status(&addr, "/v1/ping", Some("other")), 401);
        assert_eq!(status(&addr, "/v1/ping", Some(token)), 200);
        assert_eq!(status(&addr, "/healthz", None), 200);
        assert_eq!(status(&addr, "/readyz", None), 200);
        child.kill().expect("kill");
        let _ = child.wait();
    }
    // No token: open, as before.
    let (mut child, addr) = serve(&[], None);
    assert_eq!(status(&addr, "/v1/ping", None), 200);
    child.kill().expect("kill");
    let _ = child.wait();
}

#[test]
fn bad_token_settings_are_refused_before_serving() {
    let dir = tempfile::tempdir().expect("tempdir");
    let empty = dir.path().join("empty");
    std::fs::write(&empty, "\n").expect("write");
    let good = dir.path().join("good");
    std::fs::write(&good, "t0ken\n").expect("write");
    let absent = dir.path().join("absent");
    let cases: [(&[&str], Option<&str>, &str); 4] = [
        (
            &["--auth-token-file", absent.to_str().expect("path")],
            None,
            "absent",
        ),
        (
            &["--auth-token-file", empty.to_str().expect("path")],
            None,
            "the token is empty",
        ),
        (&[], Some("has space"), "GRPO_AUTH_TOKEN"),
        (
            &["--auth-token-file", good.to_str().expect("path")],
            Some("t0ken"),
            "give the token one way",
        ),
    ];
    for (args, env, needle) in cases {
        let mut command = grpo();
        command
            .args(["serve", "--addr", "127.0.0.1:0"])
            .args(args)
            .env_remove("GRPO_AUTH_TOKEN");
        if let Some(token) = env {
            command.env("GRPO_AUTH_TOKEN", token);
        }
        let out = command.output().expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} {env:?} started");
        assert!(stderr.contains(needle), "{args:?} {env:?}: {stderr}");
        assert!(out.stdout.is_empty(), "it listened: {args:?}");
    }
}

/// The answer's status and body of `POST path` with a JSON body.
fn post(addr: &str, path: &str, body: &str) -> (u16, serde_json::Value) {
    let mut stream = TcpStream::connect(addr).expect("connect");
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("write");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read");
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let json = answer
        .split_once("\r\n\r\n")
        .and_then(|(_, b)| serde_json::from_str(b).ok())
        .unwrap_or(serde_json::Value::Null);
    (status, json)
}

#[test]
fn session_flags_set_the_cap_and_the_idle_time_to_live() {
    let (mut child, addr) = serve(&["--max-sessions", "2", "--session-idle-ttl-s", "30"], None);
    let open = r#"{"language": "python"}"#;
    let (first, body) = post(&addr, "/v1/sessions", open);
    assert_eq!(first, 201, "{body}");
    assert_eq!(body["idle_ttl_ms"], 30_000);
    let id = body["id"].as_str().expect("an id").to_owned();
    let (ran, out) = post(
        &addr,
        &format!("/v1/sessions/{id}/run"),
        r#"{"code": "6 * 7"}"#,
    );
    assert_eq!((ran, out["stdout"].as_str()), (200, Some("42\n")), "{out}");
    assert_eq!(post(&addr, "/v1/sessions", open).0, 201);
    assert_eq!(
        post(&addr, "/v1/sessions", open).0,
        429,
        "the third is over --max-sessions 2"
    );
    child.kill().expect("kill");
    let _ = child.wait();
    for args in [
        ["--max-sessions", "0"],
        ["--session-idle-ttl-s", "0"],
        ["--session-lifetime-s", "inf"],
    ] {
        let out = grpo()
            .args(["serve", "--addr", "127.0.0.1:0"])
            .args(args)
            .output()
            .expect("runs");
        assert!(!out.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(args[0]), "{args:?}: {stderr}");
    }
}
