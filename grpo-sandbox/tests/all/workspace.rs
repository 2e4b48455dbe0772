//! The workspace: files that persist across commands, the command subset, its limits, and
//! that nothing outlives it.

use std::time::Duration;

use grpo_sandbox::{Workspace, WorkspaceError, WorkspaceLimits};

use crate::common::{rt, sandbox};

fn workspace() -> Workspace {
    Workspace::create(&sandbox(), WorkspaceLimits::default()).expect("a workspace")
}

#[test]
fn files_persist_across_commands_python_and_cpp() {
    rt().block_on(async {
        let ws = workspace();
        ws.write("data/in.txt", b"3 4\n").await.expect("write");
        ws.write(
            "main.py",
            b"import sys\na, b = map(int, open('data/in.txt').read().split())\nprint(a * b)\nopen('out.txt', 'w').write(str(a + b))\nprint(sys.argv[1:])\n",
        )
        .await
        .expect("write");
        let r = ws.exec("python3 main.py out.txt x", None).await.expect("exec");
        assert_eq!((r.exit_code, r.stdout.as_str()), (0, "12\n['out.txt', 'x']\n"), "{r:?}");
        assert_eq!(ws.read("out.txt").await.expect("read"), b"7");
        assert_eq!(ws.read("/tmp/out.txt").await.expect("read"), b"7");

        ws.write(
            "hello.cpp",
            b"#include <iostream>\nint main(int argc, char** argv) { int a, b; std::cin >> a >> b; std::cout << a * b << ' ' << argc << std::endl; }\n",
        )
        .await
        .expect("write");
        let r = ws
            .exec("g++ -O2 -std=c++17 -o hello hello.cpp && ./hello arg < data/in.txt > prod.txt", None)
            .await
            .expect("exec");
        assert_eq!((r.exit_code, r.stdout.as_str()), (0, ""), "{r:?}");
        assert_eq!(ws.read("prod.txt").await.expect("read"), b"12 2\n");
        // The built program is the compiler's module.
        assert!(ws.read("hello").await.expect("read").starts_with(b"\0asm"));

        let r = ws.exec("python3 -c 'print(open(\"prod.txt\").read().split()[0])'", None).await.expect("exec");
        assert_eq!(r.stdout, "12\n", "{r:?}");

        // JavaScript and TypeScript through `node`.
        ws.write("m.ts", b"const n: number = 6; console.log(n * 7);\n").await.expect("write");
        let r = ws.exec("node m.ts", None).await.expect("exec");
        assert_eq!((r.exit_code, r.stdout.as_str()), (0, "42\n"), "{r:?}");

        let dir = ws.path().expect("open");
        ws.close().await;
        ws.close().await;
        assert!(!dir.exists(), "the directory is removed on close");
        assert!(matches!(
            ws.exec("python3 -c 1", None).await,
            Err(WorkspaceError::Closed { .. })
        ));
        assert!(matches!(ws.read("out.txt").await, Err(WorkspaceError::Closed { .. })));
    });
}

#[test]
fn failures_are_exit_codes_with_reasons() {
    rt().block_on(async {
        let ws = workspace();
        let r = ws
            .exec("python3 -c 'raise ValueError(\"boom\")'", None)
            .await
            .expect("exec");
        assert_eq!(r.exit_code, 1);
        assert!(
            r.stderr.contains("Traceback") && r.stderr.contains("ValueError: boom"),
            "{r:?}"
        );

        let r = ws.exec("ls -la", None).await.expect("exec");
        assert_eq!(
            (r.exit_code, r.stderr.as_str()),
            (127, "unsupported command: ls\n")
        );

        let r = ws.exec("python3 missing.py", None).await.expect("exec");
        assert_eq!(r.exit_code, 2);
        assert!(r.stderr.contains("can't open file 'missing.py'"), "{r:?}");

        let r = ws.exec("g++ -o x nothing.cpp", None).await.expect("exec");
        assert!(
            r.exit_code != 0 && r.stderr.contains("nothing.cpp"),
            "{r:?}"
        );

        let r = ws.exec("true && false", None).await.expect("exec");
        assert_eq!(r.exit_code, 1, "{r:?}");

        let r = ws.exec("./never_built", None).await.expect("exec");
        assert_eq!(r.exit_code, 127, "{r:?}");

        let r = ws.exec("python3 -c 1 | cat", None).await.expect("exec");
        assert_eq!(r.exit_code, 2);
        assert!(r.stderr.contains("unsupported syntax"), "{r:?}");

        // A failed command stops the `&&` chain.
        let r = ws
            .exec(
                "python3 -c 'import sys; sys.exit(3)' && python3 -c 'print(1)'",
                None,
            )
            .await
            .expect("exec");
        assert_eq!((r.exit_code, r.stdout.as_str()), (3, ""));

        // A compile error is the compiler's exit code and message.
        ws.write("bad.c", b"int main(void) { return x; }\n")
            .await
            .expect("write");
        let r = ws.exec("gcc bad.c && ./a.out", None).await.expect("exec");
        assert!(r.exit_code != 0 && r.stderr.contains("undeclared"), "{r:?}");
    });
}

#[test]
fn a_loop_honours_its_timeout() {
    rt().block_on(async {
        let ws = workspace();
        let started = std::time::Instant::now();
        let r = ws
            .exec(
                "python3 -c 'while True: pass'",
                Some(Duration::from_millis(500)),
            )
            .await
            .expect("exec");
        assert_eq!(r.exit_code, 124, "{r:?}");
        assert!(r.timed_out);
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{:?}",
            started.elapsed()
        );
        // The workspace still works after.
        let r = ws.exec("python3 -c 'print(2)'", None).await.expect("exec");
        assert_eq!(r.stdout, "2\n");
    });
}

#[test]
fn the_host_stays_out_of_reach() {
    rt().block_on(async {
        let ws = workspace();
        let marker = format!("grpo-ws-escape-{}", std::process::id());
        let r = ws
            .exec(&format!("python3 -c 'open(\"/etc/passwd\").read()' && python3 -c 'open(\"/tmp/{marker}\", \"w\").write(\"x\")'"), None)
            .await
            .expect("exec");
        assert_ne!(r.exit_code, 0);
        assert!(r.stderr.contains("FileNotFoundError"), "{r:?}");
        for bad in ["/etc/passwd", "../x", "a/../../x"] {
            assert!(matches!(ws.read(bad).await, Err(WorkspaceError::Path { .. })), "{bad}");
            assert!(matches!(ws.write(bad, b"x").await, Err(WorkspaceError::Path { .. })), "{bad}");
        }
        let r = ws.exec("python3 /etc/passwd", None).await.expect("exec");
        assert_ne!(r.exit_code, 0);
        let r = ws.exec("python3 -c 1 > /etc/x", None).await.expect("exec");
        assert!(r.exit_code != 0 && r.stderr.contains("outside the workspace"), "{r:?}");

        // What a program writes under /tmp lands in the workspace, not on the host.
        let r = ws
            .exec(&format!("python3 -c 'open(\"/tmp/{marker}\", \"w\").write(\"x\")' /tmp/{marker}"), None)
            .await
            .expect("exec");
        assert_eq!(r.exit_code, 0, "{r:?}");
        assert_eq!(ws.read(&marker).await.expect("read"), b"x");
        assert!(!std::env::temp_dir().join(&marker).exists());
    });
}

#[test]
fn two_workspaces_share_no_files() {
    rt().block_on(async {
        let (a, b) = (workspace(), workspace());
        a.write("secret.txt", b"a's").await.expect("write");
        assert!(matches!(
            b.read("secret.txt").await,
            Err(WorkspaceError::NotFound { .. })
        ));
        let r = b
            .exec("python3 -c 'open(\"secret.txt\")'", None)
            .await
            .expect("exec");
        assert!(r.stderr.contains("FileNotFoundError"), "{r:?}");
        assert_ne!(a.path(), b.path());
    });
}

#[test]
fn limits_of_the_workspace() {
    rt().block_on(async {
        let s = sandbox();
        let tight = WorkspaceLimits {
            quota_bytes: 1000,
            output_bytes: 100,
            ..WorkspaceLimits::default()
        };
        let ws = Workspace::create(&s, tight).expect("create");
        ws.write("a", &[b'x'; 600]).await.expect("under the quota");
        let e = ws
            .write("b", &[b'x'; 600])
            .await
            .expect_err("over the quota");
        assert!(
            matches!(
                e,
                WorkspaceError::Quota {
                    total: 1200,
                    quota: 1000,
                    ..
                }
            ),
            "{e}"
        );
        ws.write("a", &[b'x'; 900])
            .await
            .expect("replacing counts once");
        let r = ws
            .exec(
                "python3 -c 'with open(\"big\", \"w\") as f: f.write(\"x\" * 5000)' big",
                None,
            )
            .await
            .expect("exec");
        assert_ne!(r.exit_code, 0, "{r:?}");
        assert!(matches!(
            ws.read("big").await,
            Err(WorkspaceError::NotFound { .. })
        ));
        let r = ws
            .exec("python3 -c 'print(\"y\" * 500)'", None)
            .await
            .expect("exec");
        assert!(r.truncated && r.stdout.len() == 100, "{r:?}");

        // Memory per command: past the cap is exit 137, as an out-of-memory kill.
        let r = ws
            .exec("python3 -c 'b = bytearray(400 << 20)'", None)
            .await
            .expect("exec");
        assert_eq!(r.exit_code, 137, "{r:?}");
        let r = ws
            .exec(
                "python3 -c 'b = bytearray(100 << 20); print(len(b) >> 20)'",
                None,
            )
            .await
            .expect("exec");
        assert_eq!((r.exit_code, r.stdout.as_str()), (0, "100\n"), "{r:?}");

        // A lifetime closes it.
        let short = WorkspaceLimits {
            lifetime: Some(Duration::from_millis(50)),
            ..WorkspaceLimits::default()
        };
        let ws = Workspace::create(&s, short).expect("create");
        let dir = ws.path().expect("open");
        tokio::time::sleep(Duration::from_millis(80)).await;
        let e = ws.exec("python3 -c 1", None).await.expect_err("expired");
        assert!(e.to_string().contains("lifetime"), "{e}");
        assert!(!dir.exists());

        // A CPU budget closes it once spent.
        let budget = WorkspaceLimits {
            cpu_budget_ms: 100,
            cpu_ms: 300,
            ..WorkspaceLimits::default()
        };
        let ws = Workspace::create(&s, budget).expect("create");
        let r = ws
            .exec("python3 -c 'while True: pass'", None)
            .await
            .expect("exec");
        assert_eq!(r.exit_code, 124);
        assert!(ws.is_closed().await, "{r:?}");

        // Bad limits name their field.
        let e = Workspace::create(
            &s,
            WorkspaceLimits {
                memory_mb: 1,
                ..WorkspaceLimits::default()
            },
        )
        .expect_err("too little memory");
        assert!(e.to_string().contains("memory_mb"), "{e}");
        let e = Workspace::create(
            &s,
            WorkspaceLimits {
                timeout_ms: 0,
                ..WorkspaceLimits::default()
            },
        )
        .expect_err("no time");
        assert!(e.to_string().contains("timeout_ms"), "{e}");
    });
}

#[test]
fn dropping_leaves_nothing_behind() {
    let s = sandbox();
    let mut dirs = Vec::new();
    rt().block_on(async {
        for i in 0..20 {
            let ws = Workspace::create(&s, WorkspaceLimits::default()).expect("create");
            ws.write("f.txt", b"x").await.expect("write");
            if i % 2 == 0 {
                let r = ws.exec("python3 -c 'print(1)'", None).await.expect("exec");
                assert_eq!(r.stdout, "1\n");
            }
            dirs.push(ws.path().expect("open"));
        }
    });
    for dir in dirs {
        assert!(!dir.exists(), "{} left behind", dir.display());
    }
}

/// A program that writes past the file quota and exits at once (between two checks) is
/// still over it: the check at the end sees the directory.
#[test]
fn a_quick_write_past_the_quota_is_caught_at_the_end() {
    use grpo_rewards::RunStatus;
    use grpo_sandbox::{Limits, RunRequest};
    rt().block_on(async {
        let limits = Limits {
            file_quota_bytes: 1000,
            ..Limits::default()
        };
        let program = "with open('/tmp/big', 'w') as f: f.write('x' * 5000)";
        for _ in 0..5 {
            let request =
                RunRequest::new(grpo_tasks::Language::Python, program).with_limits(limits.clone());
            let out = sandbox().run_program(&request).await.expect("run");
            assert_eq!(out.status(), RunStatus::OutputLimit, "{out:?}");
        }
    });
}
