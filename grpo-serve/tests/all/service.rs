//! The HTTP service driven over loopback: a real server on 127.0.0.1, real sandbox runs, and
//! requests written byte by byte (so malformed ones can be sent too). Interpreter sessions
//! are in [`sessions`].

use std::sync::Arc;
use std::time::Duration;

use grpo_sandbox::Sandbox;
use grpo_serve::{AuthToken, Service, ServiceConfig};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

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

mod sandbox_fusion {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn ping_and_health() {
        let server = Server::default().await;
        let r = server.request("GET", "/v1/ping", b"").await;
        assert_eq!((r.status, r.json()), (200, json!("pong")));
        assert_eq!(server.request("GET", "/healthz", b"").await.status, 200);
        assert_eq!(server.request("GET", "/readyz", b"").await.status, 200);
        server.service.begin_shutdown();
        let r = server.request("GET", "/readyz", b"").await;
        assert_eq!(
            (r.status, r.json()["code"].clone()),
            (503, json!("shutting_down"))
        );
        assert_eq!(server.request("GET", "/healthz", b"").await.status, 200);
    }

    /// The languages this build runs, with the interpreters' real versions.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn languages_lists_every_language_with_its_version() {
        toolchain();
        let server = Server::default().await;
        let r = server.request("GET", "/v1/languages", b"").await;
        assert_eq!(r.status, 200, "{}", r.text());
        let v = r.json();
        let languages = v["languages"].as_array().unwrap();
        let names: Vec<&str> = languages
            .iter()
            .map(|l| l["language"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["python", "c", "cpp", "nodejs", "typescript"], "{v}");
        let version = languages[0]["version"].as_str().unwrap();
        let version = version.strip_prefix("CPython ").unwrap();
        let parts: Vec<u32> = version.split('.').map(|p| p.parse().unwrap()).collect();
        assert_eq!(parts.len(), 3, "{version}");
        assert!(parts[0] == 3 && parts[1] >= 12, "{version}");
        assert!(
            languages[1]["version"]
                .as_str()
                .unwrap()
                .contains("zig 0.17.0"),
            "{v}"
        );
        assert_eq!(languages[2]["compiled"], true);
        assert!(
            languages[3]["version"]
                .as_str()
                .unwrap()
                .starts_with("QuickJS-NG "),
            "{v}"
        );
    }

    /// Requests shaped as verl's and SandboxFusion's clients send them, in every language.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn run_code_in_every_language() {
        toolchain();
        let server = Server::default().await;
        let body = |code: &str, language: &str, stdin: &str| {
            json!({"compile_timeout": 30, "run_timeout": 5.5, "code": code, "stdin": stdin,
                   "memory_limit_MB": 256, "language": language, "files": {}, "fetch_files": []})
        };
        let programs = [
            ("python", "a, b = map(int, input().split())\nprint(a + b)"),
            (
                "nodejs",
                "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(' ').map(Number); console.log(a + b)",
            ),
            (
                "typescript",
                "const [a, b]: number[] = require('fs').readFileSync(0, 'utf8').trim().split(' ').map(Number); console.log(a + b)",
            ),
            (
                "c",
                "#include <stdio.h>\nint main(void) { int a, b; scanf(\"%d %d\", &a, &b); printf(\"%d\\n\", a + b); }",
            ),
            (
                "cpp",
                "#include <bits/stdc++.h>\nusing namespace std;\nint main() { ios::sync_with_stdio(false); long long a, b; cin >> a >> b; cout << a + b << endl; }",
            ),
        ];
        for (language, code) in programs {
            let v = server
                .post("/run_code", body(code, language, "2 40\n"))
                .await
                .json();
            assert_eq!(v["status"], "Success", "{language}: {v}");
            assert_eq!(v["run_result"]["stdout"], "42\n", "{language}: {v}");
            assert_eq!(v["run_result"]["return_code"], 0);
            let compiled = matches!(language, "c" | "cpp");
            assert_eq!(v["compile_result"].is_object(), compiled, "{language}: {v}");
            if compiled {
                assert_eq!(v["compile_result"]["status"], "Finished");
                assert_eq!(v["compile_result"]["return_code"], 0);
            }
        }
        // A compile error: Failed, the compiler's result, no run.
        let v = server
            .post("/run_code", body("int main() { return x; }", "cpp", ""))
            .await
            .json();
        assert_eq!(v["status"], "Failed", "{v}");
        assert_eq!(v["compile_result"]["status"], "Finished", "{v}");
        assert_ne!(v["compile_result"]["return_code"], 0, "{v}");
        assert!(
            v["compile_result"]["stderr"]
                .as_str()
                .unwrap()
                .contains("x"),
            "{v}"
        );
        assert!(v["run_result"].is_null(), "{v}");
        // A failed assert is SIGABRT's -6, as SandboxFusion reports it.
        let v = server
            .post(
                "/run_code",
                body(
                    "#include <cassert>\nint main() { assert(1 + 1 == 3); }",
                    "cpp",
                    "",
                ),
            )
            .await
            .json();
        assert_eq!(v["status"], "Failed", "{v}");
        assert_eq!(v["run_result"]["return_code"], -6, "{v}");
        assert!(
            v["run_result"]["stderr"]
                .as_str()
                .unwrap()
                .contains("Assertion"),
            "{v}"
        );
        // stdout comes back raw, not stripped.
        let v = server
            .post(
                "/run_code",
                body("process.stdout.write('  x  \\n\\n')", "nodejs", ""),
            )
            .await
            .json();
        assert_eq!(v["run_result"]["stdout"], "  x  \n\n", "{v}");
        // files in, files out, for a compiled program too.
        let v = server
            .post(
                "/run_code",
                json!({"code": "#include <stdio.h>\nint main(void) { int n; FILE *f = fopen(\"in.txt\", \"r\"); fscanf(f, \"%d\", &n); FILE *g = fopen(\"out.txt\", \"w\"); fprintf(g, \"%d\", n * 2); fclose(g); return fopen(\"/etc/passwd\", \"r\") != NULL; }",
                       "language": "c", "files": {"in.txt": "MjE=", "skip.txt": null}, "fetch_files": ["out.txt"]}),
            )
            .await
            .json();
        assert_eq!(v["status"], "Success", "{v}");
        assert_eq!(v["files"]["out.txt"], "NDI=", "{v}");
        // A time limit in C is the same verdict as in Python.
        let v = server
            .post("/run_code", json!({"code": "int main(void) { for (;;) {} }", "language": "c", "run_timeout": 1}))
            .await
            .json();
        assert_eq!(v["status"], "Failed", "{v}");
        assert_eq!(v["run_result"]["status"], "TimeLimitExceeded", "{v}");
    }

    /// SandboxFusion's `files` and `fetch_files`: files placed in the run's directory (its
    /// cwd and /tmp), files read back base64; paths that leave the directory are refused and
    /// a link a program makes to a host file is never followed.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn run_code_files_in_and_out() {
        let server = Server::default().await;
        let program = "import os\n\
            data = open('in/data.txt').read()\n\
            open('out.txt', 'w').write(data.upper())\n\
            print(open('/tmp/in/data.txt').read() == data, sorted(os.listdir('.')))\n\
            for target, name in [('/etc/passwd', 'leak'), ('out.txt', 'inner')]:\n\
            \x20   try:\n\
            \x20       os.symlink(target, name)\n\
            \x20   except OSError:\n\
            \x20       pass\n";
        let r = server
            .post(
                "/run_code",
                json!({"code": program, "language": "python",
                       "files": {"in/data.txt": "aGVsbG8=", "unused": null},
                       "fetch_files": ["out.txt", "leak", "inner", "missing.txt"]}),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text());
        let v = r.json();
        assert_eq!(v["status"], "Success", "{v}");
        assert_eq!(v["run_result"]["stdout"], "True ['in', 'out.txt']\n", "{v}");
        // "HELLO"; links (even to a file of the run) and the missing file are left out.
        assert_eq!(v["files"], json!({"out.txt": "SEVMTE8="}), "{v}");

        for (files, field) in [
            (json!({"../escape.txt": "eA=="}), "files[\"../escape.txt\"]"),
            (json!({"/etc/cron.d/x": "eA=="}), "files[\"/etc/cron.d/x\"]"),
        ] {
            let r = server
                .post("/run_code", json!({"code": "print(1)", "files": files}))
                .await;
            assert_eq!(r.status, 422, "{}", r.text());
            let detail = r.json()["detail"].as_str().unwrap_or_default().to_owned();
            assert!(detail.contains(field), "{detail}");
        }
        assert!(!std::path::Path::new("/etc/cron.d/x").exists());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn run_code_outcomes() {
        let server = Server::default().await;
        // (program, stdin, timeout, top status, run status, return code, stdout)
        type Case<'a> = (
            &'a str,
            Option<&'a str>,
            u64,
            &'a str,
            &'a str,
            Value,
            &'a str,
        );
        let table: &[Case<'_>] = &[
            (
                "print(6 * 7)",
                None,
                10,
                "Success",
                "Finished",
                json!(0),
                "42\n",
            ),
            (
                "print(input()[::-1])",
                Some("abc\n"),
                10,
                "Success",
                "Finished",
                json!(0),
                "cba\n",
            ),
            (
                "raise ValueError('no')",
                None,
                10,
                "Failed",
                "Finished",
                json!(1),
                "",
            ),
            (
                "import sys; sys.exit(3)",
                None,
                10,
                "Failed",
                "Finished",
                json!(3),
                "",
            ),
            (
                "while True: pass",
                None,
                1,
                "Failed",
                "TimeLimitExceeded",
                Value::Null,
                "",
            ),
            (
                "print('x' * 10, end='')\nimport os; os._exit(0)",
                None,
                10,
                "Success",
                "Finished",
                json!(0),
                "xxxxxxxxxx",
            ),
        ];
        for (code, stdin, timeout, top, run, rc, stdout) in table {
            let r = server
                .post("/run_code", verl_body(code, *stdin, *timeout))
                .await;
            assert_eq!(r.status, 200, "{code}: {}", r.text());
            let v = r.json();
            assert_eq!(v["status"], *top, "{code}: {v}");
            assert!(v["compile_result"].is_null());
            assert_eq!(v["run_result"]["status"], *run, "{code}: {v}");
            assert_eq!(v["run_result"]["return_code"], *rc, "{code}: {v}");
            assert_eq!(v["run_result"]["stdout"], *stdout, "{code}: {v}");
            assert!(v["run_result"]["stderr"].is_string());
            assert!(v["run_result"]["execution_time"].as_f64().unwrap() >= 0.0);
        }
        // The traceback of a failing program is in stderr.
        let v = server
            .post("/run_code", verl_body("raise ValueError('no')", None, 10))
            .await
            .json();
        assert!(
            v["run_result"]["stderr"]
                .as_str()
                .unwrap()
                .contains("ValueError: no"),
            "{v}"
        );
        // Only `code` is required; a missing language means Python.
        let v = server
            .post("/run_code", json!({"code": "print(1)"}))
            .await
            .json();
        assert_eq!(v["run_result"]["stdout"], "1\n");
    }

    /// verl's fn_name wrapper star-imports these stdlib modules and runs as `__main__`; the
    /// sandbox must allow all of it. (The same shape as verl's wrapper, written here.)
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn star_imports_and_main_guard_work() {
        let modules = "string re datetime collections heapq bisect copy math random statistics \
                       itertools functools operator io sys json builtins typing";
        let mut program = String::from("import traceback\n");
        for m in modules.split_whitespace() {
            program.push_str(&format!("from {m} import *\n"));
        }
        for m in modules.split_whitespace() {
            program.push_str(&format!("import {m}\n"));
        }
        program.push_str(
            "class Solution:\n    def twoSum(self, nums, target):\n        seen = {}\n        for i, n in enumerate(nums):\n            if target - n in seen: return [seen[target - n], i]\n            seen[n] = i\n\
             def main():\n    args = [json.loads(line) for line in sys.stdin.read().split('\\n')]\n    print(json.dumps(getattr(Solution(), 'twoSum')(*args)))\n\
             if __name__ == '__main__':\n    main()\n",
        );
        let v = server_post_once(verl_body(&program, Some("[2, 7, 11, 15]\n9"), 10)).await;
        assert_eq!(v["status"], "Success", "{v}");
        assert_eq!(v["run_result"]["stdout"], "[0, 1]\n", "{v}");
    }

    async fn server_post_once(body: Value) -> Value {
        let server = Server::default().await;
        server.post("/run_code", body).await.json()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn unsupported_routes_and_languages() {
        let server = Server::default().await;
        for route in ["/run_jupyter", "/submit", "/get_prompts", "/list_datasets"] {
            let r = server.post(route, json!({})).await;
            assert_eq!(r.status, 501, "{route}");
            assert!(
                r.json()["detail"]
                    .as_str()
                    .unwrap()
                    .contains("not implemented")
            );
        }
        assert_eq!(server.request("GET", "/nope", b"").await.status, 404);
        assert_eq!(server.request("GET", "/run_code", b"").await.status, 405);
        for language in ["go", "java", "rust", "brainfuck"] {
            let r = server
                .post("/run_code", json!({"code": "x", "language": language}))
                .await;
            assert_eq!(r.status, 422, "{language}");
            assert_eq!(r.json()["code"], "unsupported_language");
        }
    }
}

mod score {
    use super::*;

    async fn score(server: &Server, body: Value) -> Vec<Value> {
        let r = server.post("/v1/score", body).await;
        assert_eq!(r.status, 200, "{}", r.text());
        r.json()["results"].as_array().unwrap().clone()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn math_group_in_order() {
        let server = Server::default().await;
        let task = json!({"id": "m1", "kind": "math", "prompt": "Half of one?", "answer": "1/2"});
        let completions = [
            "\\boxed{0.5}",
            "\\boxed{1/3}",
            "",
            "<answer>\\frac{1}{2}</answer>",
        ];
        let results = score(&server, json!({"task": task, "completions": completions})).await;
        let correct: Vec<bool> = results
            .iter()
            .map(|r| r["correct"].as_bool().unwrap())
            .collect();
        assert_eq!(correct, [true, false, false, true]);
        let rewards: Vec<f64> = results
            .iter()
            .map(|r| r["reward"].as_f64().unwrap())
            .collect();
        assert_eq!(rewards, [1.0, 0.0, 0.0, 1.0]);
        assert_eq!(results[1]["verdict"]["kind"], "wrong_answer");
        assert_eq!(results[2]["verdict"]["kind"], "no_answer");
        assert!(
            results
                .iter()
                .all(|r| r["task_id"] == "m1" && r["verdict"]["reason"].is_string())
        );
        // verl's math ground truth, with the format reward at weight 0.5:
        // 1·1 + 0.5·1 = 1.5 for the formatted correct answer; 1·1 + 0.5·0 = 1 for the bare one.
        let results = score(
            &server,
            json!({"ground_truth": "12", "format_weight": 0.5,
                   "completions": ["<think>3*4</think><answer>12</answer>", "\\boxed{12}"]}),
        )
        .await;
        assert_eq!(results[0]["reward"], 1.5);
        assert_eq!(
            results[0]["rewards"],
            json!({"accuracy": 1.0, "format": 1.0})
        );
        assert_eq!(results[1]["reward"], 1.0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn countdown_group() {
        let server = Server::default().await;
        let task = json!({"id": "c1", "kind": "countdown", "prompt": "Reach 24 with 4 6 1 1.",
                          "numbers": [4, 6, 1, 1], "target": 24});
        // (4·6)·1·1 = 24 uses every number once; 4·6 = 24 leaves two unused.
        let completions = ["<answer>4*6*1*1</answer>", "<answer>4*6</answer>"];
        let results = score(&server, json!({"task": task, "completions": completions})).await;
        assert_eq!(results[0]["correct"], true, "{}", results[0]);
        assert_eq!(results[1]["correct"], false, "{}", results[1]);
        assert_eq!(results[0]["task_id"], "c1");
    }

    /// open-r1's `verification_info` in C++ and JavaScript: the completions' fenced code in
    /// that language is compiled (C++) and run against each case.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn verification_info_in_other_languages() {
        toolchain();
        let server = Server::default().await;
        let cases = json!([{"type": "stdin_stdout", "input": "1 2\n", "output": "3\n"},
                           {"type": "stdin_stdout", "input": "10 -3\n", "output": "7\n"}]);
        let completions = [
            "<think>add</think><answer>```cpp\n#include <iostream>\nint main() { long a, b; std::cin >> a >> b; std::cout << a + b << std::endl; }\n```</answer>",
            "```cpp\nint main() { return 0; }\n```",
            "```cpp\nint main() { this does not compile }\n```",
        ];
        let results = score(
            &server,
            json!({"verification_info": {"language": "cpp", "test_cases": cases}, "completions": completions}),
        )
        .await;
        let kinds: Vec<&str> = results
            .iter()
            .map(|r| r["verdict"]["kind"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            ["correct", "tests_failed", "tests_failed"],
            "{results:?}"
        );
        assert!(
            results[2]["verdict"]["tests"][0]["reason"]
                .as_str()
                .unwrap()
                .contains("compile error"),
            "{results:?}"
        );
        let completions = [
            "```javascript\nconst [a, b] = require('fs').readFileSync(0, 'utf8').split(' ').map(Number);\nconsole.log(a + b);\n```",
            "```js\nconsole.log(3)\n```",
        ];
        let results = score(
            &server,
            json!({"verification_info": {"language": "javascript", "test_cases": cases}, "completions": completions}),
        )
        .await;
        assert_eq!(
            (results[0]["reward"].clone(), results[1]["reward"].clone()),
            (json!(1.0), json!(0.5)),
            "{results:?}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn verl_ground_truth_code() {
        let server = Server::default().await;
        let gt = json!({"inputs": ["1 2\n", "10 -3\n"], "outputs": ["3\n", "7\n"]});
        let completions = [
            "```python\na, b = map(int, input().split())\nprint(a + b)\n```",
            "```python\nprint(3)\n```",
            "```python\nwhile True: pass\n```",
        ];
        let results = score(
            &server,
            json!({"ground_truth": gt, "completions": completions}),
        )
        .await;
        let kinds: Vec<&str> = results
            .iter()
            .map(|r| r["verdict"]["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["correct", "tests_failed", "timeout"]);
        assert_eq!(results[0]["reward"], 1.0);
        assert_eq!(results[1]["reward"], 0.0);
        assert_eq!(results[1]["verdict"]["tests"].as_array().unwrap().len(), 2);
        // fn_name: one JSON argument per input line; a LeetCode-style class also counts.
        let gt = json!({"inputs": ["[1, 2, 3]\n2", "[]\n5"], "outputs": ["[2, 4, 6]", "[]"], "fn_name": "scale"});
        let completions = [
            "def scale(xs, k):\n    return [x * k for x in xs]",
            "def scale(xs, k):\n    return xs",
        ];
        let results = score(
            &server,
            json!({"ground_truth": gt, "completions": completions}),
        )
        .await;
        assert_eq!(
            (results[0]["correct"].clone(), results[1]["correct"].clone()),
            (json!(true), json!(false))
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn open_r1_verification_info_gives_partial_credit() {
        let server = Server::default().await;
        let info = json!({"language": "python", "test_cases": [
            {"input": "2\n", "output": "4\n", "type": "stdin_stdout"},
            {"input": "3\n", "output": "9\n", "type": "stdin_stdout"},
            {"input": "0\n", "output": "0\n", "type": "stdin_stdout"},
            {"input": "5\n", "output": "25\n", "type": "stdin_stdout"}]});
        // x + x equals x * x for 2 and 0 only: 2 of 4 cases.
        let completions = [
            "n = int(input())\nprint(n * n)",
            "n = int(input())\nprint(n + n)",
        ];
        let results = score(
            &server,
            json!({"verification_info": info, "completions": completions}),
        )
        .await;
        assert_eq!(results[0]["reward"], 1.0);
        assert_eq!(results[1]["reward"], 0.5);
        assert_eq!(results[1]["correct"], false);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn empty_group_and_metrics() {
        let server = Server::default().await;
        assert!(
            score(&server, json!({"ground_truth": "1", "completions": []}))
                .await
                .is_empty()
        );
        score(
            &server,
            json!({"ground_truth": "1", "completions": ["\\boxed{1}", "\\boxed{2}"]}),
        )
        .await;
        let r = server.request("GET", "/metrics", b"").await;
        assert_eq!(r.status, 200);
        assert!(
            r.headers
                .contains("content-type: application/openmetrics-text; version=1.0.0"),
            "{}",
            r.headers
        );
        let text = r.text();
        assert!(
            text.contains("grpo_http_requests_total{route=\"/v1/score\",status=\"200\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("grpo_verdicts_total{kind=\"correct\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("grpo_verdicts_total{kind=\"wrong_answer\"} 1\n"),
            "{text}"
        );
        assert!(text.contains("grpo_completions_scored_total 2\n"), "{text}");
        assert!(text.contains("grpo_queue_depth 0\n"), "{text}");
    }
}

/// The scoring contract on `/v1/score`: a client's mistake is a 422 naming the field, a task's
/// limits are capped by the service's, and only a fault of ours is a 503.
mod contract {
    use super::*;

    fn loop_task(extra: Value) -> Value {
        let mut task = json!({"id": "k", "kind": "code", "prompt": "p", "language": "python",
            "mode": "full", "tests": {"type": "stdio", "cases": [{"stdin": "", "stdout": "1\n"}]}});
        for (k, v) in extra.as_object().unwrap() {
            task[k] = v.clone();
        }
        task
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn bad_task_limits_are_422_naming_the_field() {
        let server = Server::default().await;
        for (extra, field) in [
            (json!({"time_limit_ms": 0}), "task.time_limit_ms"),
            (json!({"memory_mb": 8}), "task.memory_mb"),
            (json!({"prompt": " "}), "task.prompt"),
            // Schema problems name the field too, inside the tagged tests as well.
            (json!({"memory_mb": -1}), "task.memory_mb"),
            (
                json!({"tests": {"type": "stdio", "cases": [{"stdin": ""}]}}),
                "task.tests.cases[0].stdout",
            ),
            (json!({"tests": {"type": "fuzz"}}), "task.tests.type"),
        ] {
            let body = json!({"task": loop_task(extra), "completions": ["print(1)"]});
            let r = server.post("/v1/score", body).await;
            assert_eq!(r.status, 422, "{field}: {}", r.text());
            assert_eq!(r.json()["code"], "invalid_request");
            let detail = r.json()["detail"].as_str().unwrap().to_owned();
            assert!(detail.contains(&format!("`{field}`")), "{detail}");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_task_limit_above_the_cap_is_clamped() {
        let config = ServiceConfig {
            max_run_timeout_s: 0.5,
            ..ServiceConfig::default()
        };
        let server = Server::start(config).await;
        // An hour asked for; without the cap this request would hold a worker for an hour.
        let task = loop_task(json!({"time_limit_ms": 3_600_000, "memory_mb": 1 << 20}));
        let body = json!({"task": task, "completions": ["while True:\n    pass\n"]});
        let r = tokio::time::timeout(Duration::from_secs(60), server.post("/v1/score", body))
            .await
            .expect("the cap did not stop the run");
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.json()["results"][0]["verdict"]["kind"], "timeout");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_sandbox_fault_is_503_never_a_zero() {
        use grpo_sandbox::SandboxOptions;
        // Run directories under a path that does not exist: every run fails on our side.
        let options = SandboxOptions {
            temp_root: Some("/nonexistent/grpo-sandbox-fault".into()),
            concurrency: 1,
            ..SandboxOptions::default()
        };
        let sandbox = tokio::task::spawn_blocking(move || Sandbox::new(&options))
            .await
            .unwrap()
            .unwrap();
        let server = Server::with_sandbox(sandbox, ServiceConfig::default()).await;
        let body = json!({"task": loop_task(json!({})), "completions": ["print(1)"]});
        let r = server.post("/v1/score", body).await;
        assert_eq!(r.status, 503, "{}", r.text());
        assert_eq!(r.json()["code"], "sandbox_error");
        // Math needs no sandbox and still scores.
        let body = json!({"ground_truth": "2", "completions": ["\\boxed{2}"]});
        let r = server.post("/v1/score", body).await;
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.json()["results"][0]["correct"], true);
    }
}

mod bad_input {
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
}

mod operations {
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
}

/// Clients that abuse the connection rather than the JSON: huge declared bodies, trickled
/// heads and bodies, idle connections past the cap. Every test ends with a well-formed
/// request served normally.
mod abuse {
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

mod auth {
    use super::*;

    /// Every route but the two health checks, with a body each accepts.
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
        for path in ["/healthz", "/readyz"] {
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
}

mod remote {
    use super::*;

    /// OpenRLHF's `/get_reward`: the response after the prompt is scored against its label
    /// (math, verl's code ground truth, our task), one reward per query in order, the
    /// queries of one label scored as one group.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn openrlhf_get_reward() {
        let server = Server::default().await;
        let prompt = "Put the answer in \\boxed{}. What is 6*7? ";
        let code_label = json!({"inputs": ["2 3\n"], "outputs": ["5\n"]}).to_string();
        let body = json!({
            "query": [
                format!("{prompt}It is \\boxed{{42}}"),
                format!("{prompt}It is \\boxed{{41}}"),
                "a, b = map(int, input().split())\nprint(a + b)".to_owned(),
                format!("{prompt}\\boxed{{42}}"),
                "print(6)".to_owned(),
                "Using 1 and 2: <answer>1 + 2</answer>".to_owned(),
            ],
            "prompts": [prompt, prompt, "", prompt, "", ""],
            "labels": ["42", "42", code_label, 42, code_label,
                {"id": "c", "kind": "countdown", "prompt": "p", "numbers": [1, 2], "target": 3}],
        });
        let r = server.post("/get_reward", body).await;
        assert_eq!(r.status, 200, "{}", r.text());
        let answer = r.json();
        assert_eq!(answer["rewards"], json!([1.0, 0.0, 1.0, 1.0, 0.0, 1.0]));
        assert_eq!(answer["scores"], answer["rewards"]);
        assert_eq!(
            answer["extra_logs"]["correct"],
            json!([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
        );
        // The prompt is not scored: its own box would otherwise be the answer.
        let body = json!({"query": ["\\boxed{42} is not the answer here: 41"],
                          "prompts": ["\\boxed{42}"], "labels": ["42"]});
        let r = server.post("/get_reward", body).await;
        assert_eq!(r.json()["rewards"], json!([0.0]), "{}", r.text());
        // The format reward, when asked for, is added and logged.
        let body = json!({"query": ["<think>6*7</think><answer>42</answer>"], "labels": ["42"],
                          "format_weight": 0.5});
        let r = server.post("/get_reward", body).await;
        assert_eq!(r.json()["rewards"], json!([1.5]), "{}", r.text());
        assert_eq!(r.json()["extra_logs"]["format"], json!([1.0]));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn openrlhf_bad_bodies_are_422_naming_the_field() {
        let server = Server::default().await;
        for (body, needle) in [
            (json!({"query": ["1"]}), "`labels` is missing"),
            (
                json!({"query": ["1", "2"], "labels": ["1"]}),
                "2 queries but 1 labels",
            ),
            (
                json!({"query": ["1"], "labels": ["1"], "prompts": []}),
                "1 queries but 0 prompts",
            ),
            (
                json!({"query": ["1", "2"], "labels": ["1", {"inputs": ["1"]}]}),
                "`labels[1]`",
            ),
            (json!({"labels": ["1"]}), "query"),
        ] {
            let r = server.post("/get_reward", body.clone()).await;
            assert_eq!(r.status, 422, "{body}: {}", r.text());
            assert!(
                r.json()["detail"].as_str().unwrap().contains(needle),
                "{body}: {}",
                r.text()
            );
        }
    }

    /// slime's remote reward: one sample in, the reward as a bare number out (or the
    /// details, for `--reward-key reward`).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn slime_reward() {
        let server = Server::default().await;
        let sample = |response: &str| json!({"prompt": "What is 1/2 + 1/4?", "response": response, "label": "\\frac{3}{4}"});
        let r = server.post("/v1/reward", sample("so \\boxed{0.75}")).await;
        assert_eq!((r.status, r.json()), (200, json!(1.0)), "{}", r.text());
        let r = server.post("/v1/reward", sample("so \\boxed{0.7}")).await;
        assert_eq!(r.json(), json!(0.0));
        let r = server
            .post("/v1/reward?details=true", sample("so \\boxed{3/4}"))
            .await;
        let details = r.json();
        assert_eq!(details["reward"], 1.0, "{details}");
        assert_eq!(details["correct"], true);
        assert_eq!(details["accuracy"], 1.0);
        let r = server
            .post("/v1/reward", json!({"prompt": "p", "response": "1"}))
            .await;
        assert_eq!(r.status, 422);
        assert!(r.text().contains("`label` is missing"), "{}", r.text());
        let r = server.post("/v1/reward?verbose=1", sample("1")).await;
        assert_eq!(r.status, 422);
    }
}

mod sessions;
