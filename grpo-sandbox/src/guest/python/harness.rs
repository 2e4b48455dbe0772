//! Test harnesses: how a code task and a completion become sandbox jobs, and how the
//! harness's report comes back.
//!
//! The guest-side harness is `harness.py` (in this directory). The runtime snapshot carries a
//! copy, loaded and set up at build time (`runtime/build.sh` records its SHA-256 in
//! `runtime/harness.sha256`); when this file is the same, a job names the snapshot's harness by
//! that hash and the guest starts it at once. When it differs (the harness was edited and the
//! snapshot not rebuilt yet), the harness is sent compiled with every run. Every job carries
//! a fresh 128-bit nonce; the harness prints `\x1egrpo-report <nonce> <json>` on stderr as its very
//! last act, after the tests ran to the end, and exits at once. The host ignores any report without
//! its nonce, so early exits (`sys.exit`, `os._exit`, `raise SystemExit`), crashes and forged
//! reports all read as "the tests did not finish".

use grpo_tasks::CallCase;
use serde::{Deserialize, Serialize};

use crate::engine::run::RawRun;
use grpo_rewards::result::RunResult;

/// The guest harness source.
pub const HARNESS_PY: &str = include_str!("harness.py");

/// SHA-256 (hex) of the harness built into the runtime snapshot.
pub const SNAPSHOT_HARNESS_SHA256: &str =
    include_str!("../../../runtime/harness.sha256").trim_ascii();

/// Whether the snapshot's harness is [`HARNESS_PY`] (computed once).
pub(crate) fn snapshot_has_harness() -> bool {
    static SAME: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| {
        let same =
            crate::engine::digest::sha256_hex(HARNESS_PY.as_bytes()) == SNAPSHOT_HARNESS_SHA256;
        if !same {
            tracing::warn!(
                "harness.py differs from the runtime snapshot's copy; sending it with every run \
                 (rebuild the snapshot with grpo-sandbox/runtime/build.sh)"
            );
        }
        same
    });
    *SAME
}

/// How a job gets its harness to the guest.
#[derive(Debug, Clone, Copy)]
pub(crate) enum HarnessFrom<'a> {
    /// The snapshot's own copy (the same as [`HARNESS_PY`]).
    Snapshot,
    /// Compiled (`marshal` bytes), sent after the job.
    Compiled(&'a [u8]),
    /// The source, compiled by the guest.
    Source,
}

const REPORT_TAG: &str = "\x1egrpo-report ";

/// What the harness does with the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Mode {
    /// Run as `__main__`, like `python3 -I file.py`.
    Script,
    /// Run the program, then the test code, then `check(entry_point)` when given.
    Assert,
    /// Run the program, then call `entry_point(*args)` per case and compare.
    Call,
    /// An interpreter session: calls arrive on stdin one after another, in one namespace
    /// (see [`crate::session`]).
    Session,
}

/// One sandbox job (everything but the nonce and the seed, added per run).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Job {
    mode: Mode,
    program: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    test: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    entry_point: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    cases: Vec<(Vec<serde_json::Value>, serde_json::Value)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    float_tolerance: Option<f64>,
    /// A script's `sys.argv[1:]`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) argv: Vec<String>,
}

#[derive(Serialize)]
struct Wire<'a> {
    seed: u64,
    /// `None`: the snapshot's harness, which must have `harness_sha256`.
    harness: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    harness_sha256: Option<&'static str>,
    /// How many bytes of compiled harness follow the job on stdin.
    #[serde(skip_serializing_if = "Option::is_none")]
    harness_len: Option<usize>,
    nonce: &'a str,
    #[serde(flatten)]
    job: &'a Job,
}

/// Loads the harness from its compiled form. Compiling `harness.py` costs the guest more than
/// running a typical test, so the sandbox compiles it once (in the sandbox itself, so the
/// bytecode matches the interpreter exactly) and sends the `marshal` bytes with every run,
/// raw, on stdin right after the job: a JSON string of their hex cost the guest more to parse
/// and decode than unmarshalling them.
const HARNESS_LOADER: &str = "def main(job):\n    import marshal, sys\n    namespace = {'__name__': '__grpo_harness__'}\n    exec(marshal.loads(sys.stdin.buffer.read(job.pop('harness_len'))), namespace)\n    namespace['main'](job)\n";

/// The program that prints the harness's compiled form (hex of `marshal.dumps`, docstrings
/// left out); its stdin is the harness source.
pub(crate) const COMPILE_HARNESS: &str = "import marshal, sys\nsource = sys.stdin.read()\nsys.stdout.write(marshal.dumps(compile(source, '<harness>', 'exec', optimize=2)).hex())\n";

impl Job {
    /// A plain script run.
    pub(crate) fn script(program: &str) -> Job {
        Job {
            mode: Mode::Script,
            program: program.to_owned(),
            test: None,
            entry_point: None,
            cases: Vec::new(),
            float_tolerance: None,
            argv: Vec::new(),
        }
    }

    /// An interpreter session's start.
    pub(crate) fn session() -> Job {
        Job {
            mode: Mode::Session,
            ..Job::script("")
        }
    }

    /// An assert-style job: `program`, then `test`, then `check(entry_point)` when given.
    pub(crate) fn assert(program: String, test: &str, entry_point: Option<&str>) -> Job {
        Job {
            mode: Mode::Assert,
            program,
            test: Some(test.to_owned()),
            entry_point: entry_point.map(str::to_owned),
            cases: Vec::new(),
            float_tolerance: None,
            argv: Vec::new(),
        }
    }

    /// A call job: `entry_point(*args) == expected` for each case, in one run.
    pub(crate) fn call(
        program: String,
        entry_point: &str,
        cases: &[CallCase],
        float_tolerance: Option<f64>,
    ) -> Job {
        Job {
            mode: Mode::Call,
            program,
            test: None,
            entry_point: Some(entry_point.to_owned()),
            cases: cases
                .iter()
                .map(|c| (c.args.clone(), c.expected.clone()))
                .collect(),
            float_tolerance,
            argv: Vec::new(),
        }
    }

    /// The bytes fed to the guest's stdin: `<len>\n<job json>`, the compiled harness when
    /// it is sent that way, then the program's stdin.
    pub(crate) fn encode(&self, nonce: &str, stdin: &[u8], harness: HarnessFrom<'_>) -> Vec<u8> {
        let (source, sha, compiled) = match harness {
            HarnessFrom::Snapshot => (None, Some(SNAPSHOT_HARNESS_SHA256), None),
            HarnessFrom::Compiled(bytes) => (Some(HARNESS_LOADER), None, Some(bytes)),
            HarnessFrom::Source => (Some(HARNESS_PY), None, None),
        };
        let wire = Wire {
            seed: rand::random::<u64>() >> 1,
            harness: source,
            harness_sha256: sha,
            harness_len: compiled.map(<[u8]>::len),
            nonce,
            job: self,
        };
        // Serialising plain strings and JSON values cannot fail.
        let json = serde_json::to_vec(&wire).unwrap_or_default();
        let compiled = compiled.unwrap_or_default();
        let mut bytes = Vec::with_capacity(json.len() + compiled.len() + stdin.len() + 16);
        bytes.extend_from_slice(format!("{}\n", json.len()).as_bytes());
        bytes.extend_from_slice(&json);
        bytes.extend_from_slice(compiled);
        bytes.extend_from_slice(stdin);
        bytes
    }
}

/// Bytes from lowercase or uppercase hex; `None` for anything else.
pub(crate) fn from_hex(hex: &str) -> Option<Vec<u8>> {
    let digit = |b: u8| (b as char).to_digit(16);
    let hex = hex.as_bytes();
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    hex.chunks_exact(2)
        .map(|pair| Some((digit(pair[0])? << 4 | digit(pair[1])?) as u8))
        .collect()
}

/// A fresh 128-bit nonce, hex.
pub(crate) fn nonce() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// What the harness reported.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct Report {
    /// The script's exit code (script mode).
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// Per-case outcomes (assert and call modes).
    #[serde(default)]
    pub cases: Vec<CaseReport>,
    /// Guarded module attributes the program replaced.
    #[serde(default)]
    pub tampered: Vec<String>,
}

/// One case's outcome as the harness saw it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct CaseReport {
    pub passed: bool,
    #[serde(default)]
    pub reason: String,
}

/// Takes the nonce-bearing report line out of stderr and builds the run result.
pub(crate) fn finish(raw: RawRun, nonce: &str) -> (RunResult, Option<Report>) {
    let mut stderr = raw.stderr;
    let tag = format!("\n{REPORT_TAG}{nonce} ");
    let mut report = None;
    if let Some(start) = rfind(&stderr, tag.as_bytes()) {
        let body_start = start + tag.len();
        let end = stderr[body_start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(stderr.len(), |p| body_start + p);
        match serde_json::from_slice::<Report>(&stderr[body_start..end]) {
            Ok(r) => report = Some(r),
            Err(e) => tracing::warn!(error = %e, "unreadable harness report"),
        }
        let after = (end + 1).min(stderr.len());
        stderr.drain(start..after);
    }
    // WASI's `exit` carries only success or failure; the harness reports the real code.
    let exit_code = match (&report, raw.exit_code) {
        (
            Some(Report {
                exit_code: Some(code),
                ..
            }),
            Some(_),
        ) => Some(*code),
        _ => raw.exit_code,
    };
    let result = RunResult {
        status: raw.status,
        exit_code,
        stdout: String::from_utf8_lossy(&raw.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        duration_ms: raw.duration_ms,
        cpu_ms: raw.cpu_ms,
        truncated: raw.truncated,
    };
    (result, report)
}

fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.len() > haystack.len() {
        return None;
    }
    (0..=haystack.len() - needle.len())
        .rev()
        .find(|&i| &haystack[i..i + needle.len()] == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use grpo_rewards::result::RunStatus;

    fn raw(stderr: &str) -> RawRun {
        RawRun {
            status: RunStatus::Ok,
            exit_code: Some(0),
            stdout: Vec::new(),
            stderr: stderr.as_bytes().to_vec(),
            duration_ms: 1.0,
            cpu_ms: 0.5,
            truncated: false,
        }
    }

    #[test]
    fn report_with_the_nonce_is_taken_out_of_stderr() {
        let stderr = "warn\n\x1egrpo-report abc {\"cases\":[{\"passed\":true,\"reason\":\"\"}]}\n";
        let (run, report) = finish(raw(stderr), "abc");
        assert_eq!(run.stderr, "warn");
        assert_eq!(
            report.unwrap().cases,
            vec![CaseReport {
                passed: true,
                reason: String::new()
            }]
        );
    }

    #[test]
    fn forged_reports_are_ignored() {
        for stderr in [
            "\n\x1egrpo-report 000 {\"cases\":[{\"passed\":true}]}\n",
            "\x1egrpo-report abc {\"cases\":[{\"passed\":true}]}\n", // no newline before: not ours
            "\n\x1egrpo-report abcd {\"cases\":[{\"passed\":true}]}\n",
            "PASSED\nall tests passed\n",
        ] {
            let (run, report) = finish(raw(stderr), "abc");
            assert!(report.is_none(), "{stderr:?}");
            assert_eq!(run.stderr, stderr);
        }
    }

    #[test]
    fn encoded_job_starts_with_its_length() {
        let bytes = Job::script("print(1)").encode("n", b"in", HarnessFrom::Source);
        let text = String::from_utf8(bytes).unwrap();
        let (len, rest) = text.split_once('\n').unwrap();
        let len: usize = len.parse().unwrap();
        let job: serde_json::Value = serde_json::from_str(&rest[..len]).unwrap();
        assert_eq!(job["mode"], "script");
        assert_eq!(job["nonce"], "n");
        assert_eq!(&rest[len..], "in");
    }

    #[test]
    fn compiled_harness_goes_between_job_and_stdin() {
        let bytes = Job::script("print(1)").encode("n", b"in", HarnessFrom::Compiled(b"\xe3code"));
        let newline = bytes.iter().position(|&b| b == b'\n').unwrap();
        let len: usize = std::str::from_utf8(&bytes[..newline])
            .unwrap()
            .parse()
            .unwrap();
        let rest = &bytes[newline + 1..];
        let job: serde_json::Value = serde_json::from_slice(&rest[..len]).unwrap();
        assert_eq!(job["harness_len"], 5);
        assert_eq!(&rest[len..], b"\xe3codein");
    }

    #[test]
    fn a_snapshot_job_names_the_harness_by_its_hash() {
        let bytes = Job::script("print(1)").encode("n", b"", HarnessFrom::Snapshot);
        let text = String::from_utf8(bytes).unwrap();
        let (_, json) = text.split_once('\n').unwrap();
        let job: serde_json::Value = serde_json::from_str(json).unwrap();
        assert!(job["harness"].is_null());
        assert_eq!(job["harness_sha256"], SNAPSHOT_HARNESS_SHA256);
        assert!(job.get("harness_len").is_none());
    }

    #[test]
    fn the_snapshot_carries_this_harness() {
        // Fails when harness.py was edited without rebuilding the snapshot
        // (grpo-sandbox/runtime/build.sh): runs would still work, sending the harness each time.
        assert_eq!(SNAPSHOT_HARNESS_SHA256.len(), 64);
        assert!(
            snapshot_has_harness(),
            "harness.py is not the snapshot's harness: run grpo-sandbox/runtime/build.sh"
        );
    }

    #[test]
    fn hex_decodes() {
        assert_eq!(from_hex("00ff1A"), Some(vec![0, 255, 26]));
        assert_eq!(from_hex("abc"), None);
        assert_eq!(from_hex("zz"), None);
    }

    #[test]
    fn nonces_differ() {
        assert_ne!(nonce(), nonce());
        assert_eq!(nonce().len(), 32);
    }
}
