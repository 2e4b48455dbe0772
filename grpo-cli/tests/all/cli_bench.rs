//! `grpo bench` against a real `grpo serve`: the memory hogs are stopped by the memory cap
//! asked for (not by time, not by an allocation too large to try), references pass, and the
//! server's CPU time per request is read from its process.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use super::common::grpo;

#[test]
fn the_memory_hogs_meet_our_memory_cap() {
    let mut server = grpo()
        .args(["serve", "--addr", "127.0.0.1:0"])
        .env_remove("GRPO_AUTH_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("grpo serve starts");
    let mut line = String::new();
    BufReader::new(server.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the listening line");
    let listening: serde_json::Value = serde_json::from_str(&line).expect("JSON");
    let url = format!(
        "http://{}",
        listening["listening"].as_str().expect("address")
    );
    let out = tempfile::tempdir().expect("tempdir");
    let pid = server.id().to_string();
    let bench = grpo()
        .args(["bench", "--url", &url, "--name", "ours", "--pid", &pid])
        .args(["--pack", "builtin:python", "--languages", "python+nodejs"])
        .args(["--memory-mb", "128", "--hog-mb", "400", "--flood-mb", "4"])
        .args(["--concurrency", "1", "--requests", "6", "--mix", "1:0:0"])
        .arg("--out")
        .arg(out.path())
        .output()
        .expect("grpo bench runs");
    let _ = server.kill();
    let _ = server.wait();
    assert!(
        bench.status.success(),
        "{}",
        String::from_utf8_lossy(&bench.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.path().join("bench.json")).expect("bench.json"))
            .expect("JSON");
    let target = &report["targets"][0];
    for hog in ["python/memory", "javascript/memory"] {
        let verdict = target["containment"]
            .as_array()
            .expect("a containment table")
            .iter()
            .find(|c| c["program"] == hog)
            .unwrap_or_else(|| panic!("{hog} was sent: {report}"));
        assert_eq!(verdict["contained"], true, "{verdict}");
        assert_eq!(verdict["how"], "memory limit exceeded", "{verdict}");
    }
    let level = &target["levels"][0];
    assert_eq!(level["references_failed"], 0, "{level}");
    assert_eq!(level["errors"], 0, "{level}");
    assert!(
        level["cpu_ms_per_request"].as_f64().expect("CPU read") > 0.0,
        "{level}"
    );
}
