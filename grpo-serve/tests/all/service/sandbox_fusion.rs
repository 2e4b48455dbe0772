//! SandboxFusion's routes: `/run_code` in every language, files in and out, outcomes, and
//! `/v1/languages`, ping and health.

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
        .post(
            "/run_code",
            json!({"code": "int main(void) { for (;;) {} }", "language": "c", "run_timeout": 1}),
        )
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
