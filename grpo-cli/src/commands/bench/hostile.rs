//! Hostile programs, one per limit a sandbox must hold (memory, output, time, files,
//! network, process spawning), and the reading of what a target did with each.
//!
//! Each program does the forbidden thing in steps a limit can stop, and says
//! `ESCAPED:<limit>` only once it got all the way (to stderr, so a cut stdout cannot hide
//! it). The memory hog grows in chunks it writes to, to `hog_mb` (past any cap the bench
//! asks for), so it reaches a cap on a 32-bit WebAssembly target and a native one alike
//! instead of failing at one huge allocation before any limit is involved. A program that
//! never says `ESCAPED:` was contained; how is read from the answer: the time limit, the
//! target's own limit message, the signal that killed it, or the error the program died of.

use grpo_tasks::Language;
use serde_json::Value;

/// The limit a hostile program reaches for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Limit {
    Memory,
    Output,
    Time,
    Files,
    Network,
    Spawn,
}

impl Limit {
    pub fn name(self) -> &'static str {
        match self {
            Limit::Memory => "memory",
            Limit::Output => "output",
            Limit::Time => "time",
            Limit::Files => "files",
            Limit::Network => "network",
            Limit::Spawn => "spawn",
        }
    }
}

/// One hostile program.
#[derive(Debug, Clone)]
pub struct Hostile {
    pub limit: Limit,
    pub language: Language,
    pub source: String,
}

impl Hostile {
    /// `python/memory`, `cpp/memory`, ….
    pub fn name(&self) -> String {
        format!("{}/{}", self.language, self.limit.name())
    }
}

/// How large the hostile programs go.
#[derive(Debug, Clone)]
pub struct Sizes {
    /// The memory hog's goal, in MiB (above every cap asked for).
    pub hog_mb: u64,
    /// The output flood's total, in MiB.
    pub flood_mb: u64,
    /// Loopback ports the network program tries (the targets' own).
    pub ports: Vec<u16>,
}

/// Reads a host file, then writes 64 MiB into the run's directory; each step on its own.
const PYTHON_FILES: &str = r#"import sys
try:
    if 'root:' in open('/etc/passwd').read():
        sys.stderr.write('ESCAPED:files read /etc/passwd\n')
except OSError as e:
    sys.stderr.write('read refused: %s\n' % type(e).__name__)
with open('bench-fill.bin', 'wb') as f:
    for _ in range(64):
        f.write(b'x' * (1 << 20))
        f.flush()
sys.stderr.write('ESCAPED:files wrote 64 MiB\n')
"#;

/// Connects to the targets' own ports on loopback and asks them for `/v1/ping`.
const PYTHON_NETWORK: &str = r#"import socket, sys
for port in [PORTS]:
    s = socket.create_connection(('127.0.0.1', port), timeout=1)
    s.sendall(b'GET /v1/ping HTTP/1.0\r\n\r\n')
    if s.recv(64):
        sys.stderr.write('ESCAPED:network 127.0.0.1:%d\n' % port)
"#;

/// Starts a shell, through `os.system` and then `subprocess`.
const PYTHON_SPAWN: &str = r#"import os, subprocess, sys
try:
    os.system('echo ESCAPED:spawn os.system >&2')
except Exception as e:
    sys.stderr.write('os.system refused: %s\n' % type(e).__name__)
subprocess.run(['sh', '-c', 'echo ESCAPED:spawn subprocess >&2'])
"#;

/// The hostile programs, in every language listed: Python reaches for every limit; C++ and
/// JavaScript for memory (native and WebAssembly allocators differ from CPython's) and, for
/// C++, spawning through `system()`.
pub fn programs(sizes: &Sizes) -> Vec<Hostile> {
    let chunks = sizes.hog_mb.div_ceil(16).max(1);
    let flood = (sizes.flood_mb * 16).max(1);
    let ports = sizes
        .ports
        .iter()
        .map(u16::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let python = |limit, source: String| Hostile {
        limit,
        language: Language::Python,
        source,
    };
    vec![
        python(
            Limit::Memory,
            format!(
                "import sys\nheld = []\nfor i in range({chunks}):\n    held.append(b'x' * (16 << 20))\n\
                 sys.stderr.write('ESCAPED:memory %d MiB\\n' % (16 * len(held)))\n"
            ),
        ),
        python(
            Limit::Output,
            format!(
                "import sys\nblock = 'x' * 65536\nfor _ in range({flood}):\n    sys.stdout.write(block)\n\
                 sys.stdout.flush()\nsys.stderr.write('ESCAPED:output {} MiB\\n')\n",
                sizes.flood_mb
            ),
        ),
        python(Limit::Time, "while True:\n    pass\n".to_owned()),
        python(Limit::Files, PYTHON_FILES.to_owned()),
        python(Limit::Network, PYTHON_NETWORK.replace("PORTS", &ports)),
        python(Limit::Spawn, PYTHON_SPAWN.to_owned()),
        Hostile {
            limit: Limit::Memory,
            language: Language::Cpp,
            source: format!(
                "#include <cstdio>\n#include <cstring>\n#include <vector>\nint main() {{\n  \
                 std::vector<char*> held;\n  for (int i = 0; i < {chunks}; i++) {{\n    \
                 char* p = new char[16 << 20];\n    std::memset(p, 'x', 16 << 20);\n    \
                 held.push_back(p);\n  }}\n  \
                 std::fprintf(stderr, \"ESCAPED:memory %zu MiB\\n\", held.size() * 16);\n}}\n"
            ),
        },
        Hostile {
            limit: Limit::Spawn,
            language: Language::Cpp,
            source: "#include <cstdlib>\nint main() {\n  \
                     return std::system(\"echo ESCAPED:spawn system >&2\") == 0 ? 0 : 1;\n}\n"
                .to_owned(),
        },
        Hostile {
            limit: Limit::Memory,
            language: Language::Javascript,
            source: format!(
                "const held = [];\nfor (let i = 0; i < {chunks}; i++) {{\n  \
                 held.push(new Uint8Array(16 << 20).fill(120));\n}}\n\
                 console.error(`ESCAPED:memory ${{held.length * 16}} MiB`);\n"
            ),
        },
    ]
}

/// What a target did with a hostile program.
#[derive(Debug, Clone, PartialEq)]
pub struct Containment {
    /// Whether the program was stopped before it said `ESCAPED:`.
    pub contained: bool,
    /// How: the limit that stopped it, or what got through.
    pub how: String,
}

/// Reads a `/run_code` answer to a hostile program.
pub fn contained(http_status: u16, body: &str) -> Containment {
    let stop = |how: String| Containment {
        contained: true,
        how,
    };
    if http_status != 200 {
        return stop(format!("refused (HTTP {http_status})"));
    }
    let Ok(answer) = serde_json::from_str::<Value>(body) else {
        return stop("answer not JSON".to_owned());
    };
    let text = |v: &Value| v.as_str().unwrap_or("").to_owned();
    let run = &answer["run_result"];
    let (stdout, stderr) = (text(&run["stdout"]), text(&run["stderr"]));
    let escaped: Vec<&str> = stderr
        .lines()
        .chain(stdout.lines())
        .filter_map(|l| l.find("ESCAPED:").map(|i| &l[i + "ESCAPED:".len()..]))
        .collect();
    if !escaped.is_empty() {
        let mut what: Vec<String> = escaped.iter().map(|s| s.trim().to_owned()).collect();
        what.dedup();
        return Containment {
            contained: false,
            how: format!("escaped: {}", what.join("; ")),
        };
    }
    let top = answer["status"].as_str().unwrap_or("");
    if top == "SandboxError" {
        return stop(format!("sandbox error: {}", text(&answer["message"])));
    }
    let compile = &answer["compile_result"];
    if compile.is_object() && compile["return_code"].as_i64().is_some_and(|c| c != 0) {
        return stop("did not compile".to_owned());
    }
    if run["status"].as_str() == Some("TimeLimitExceeded") {
        return stop("time limit".to_owned());
    }
    let message = text(&answer["message"]);
    if !message.is_empty() {
        return stop(message);
    }
    if let Some(error) = last_error(&stderr) {
        return stop(error);
    }
    match run["return_code"].as_i64() {
        Some(code @ (-9 | 137)) => stop(format!("killed (return code {code})")),
        Some(code) if code < 0 => stop(format!("signal {} (return code {code})", -code)),
        Some(0) => stop("ran to its end without getting through".to_owned()),
        Some(code) => stop(format!("exited with {code}")),
        None => stop("no return code".to_owned()),
    }
}

/// The error a program died of: a Python exception's name (`MemoryError`,
/// `PermissionError: …`), a C++ `std::bad_alloc`, a JavaScript `RangeError`, or the last
/// line of stderr.
fn last_error(stderr: &str) -> Option<String> {
    let line = stderr.lines().rev().find(|l| !l.trim().is_empty())?.trim();
    let short: String = line.chars().take(80).collect();
    Some(short)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(
        status: &str,
        run_status: &str,
        code: Option<i64>,
        stderr: &str,
        msg: &str,
    ) -> String {
        json!({"status": status, "message": msg, "compile_result": null,
               "run_result": {"status": run_status, "return_code": code, "stdout": "", "stderr": stderr}})
        .to_string()
    }

    #[test]
    fn escapes_and_each_way_of_containment() {
        let c = contained(
            200,
            &answer(
                "Success",
                "Finished",
                Some(0),
                "ESCAPED:spawn os.system\n",
                "",
            ),
        );
        assert!(!c.contained);
        assert_eq!(c.how, "escaped: spawn os.system");
        let c = contained(
            200,
            &answer("Failed", "Finished", Some(-9), "", "memory limit exceeded"),
        );
        assert_eq!(
            (c.contained, c.how.as_str()),
            (true, "memory limit exceeded")
        );
        let c = contained(200, &answer("Failed", "TimeLimitExceeded", None, "", ""));
        assert_eq!(c.how, "time limit");
        let c = contained(
            200,
            &answer(
                "Failed",
                "Finished",
                Some(1),
                "Traceback\nMemoryError\n",
                "",
            ),
        );
        assert_eq!(c.how, "MemoryError");
        let c = contained(200, &answer("Failed", "Finished", Some(-9), "", ""));
        assert_eq!(c.how, "killed (return code -9)");
        assert!(contained(422, "{}").contained);
    }

    #[test]
    fn every_limit_is_reached_for_in_python_and_the_hog_passes_the_cap() {
        let all = programs(&Sizes {
            hog_mb: 1000,
            flood_mb: 8,
            ports: vec![8080, 8081],
        });
        for limit in [
            Limit::Memory,
            Limit::Output,
            Limit::Time,
            Limit::Files,
            Limit::Network,
            Limit::Spawn,
        ] {
            assert!(
                all.iter()
                    .any(|h| h.limit == limit && h.language == Language::Python),
                "{limit:?}"
            );
        }
        let hog = all.iter().find(|h| h.name() == "python/memory").unwrap();
        // 63 chunks of 16 MiB: 1008 MiB, no single allocation over 16 MiB.
        assert!(hog.source.contains("range(63)"), "{}", hog.source);
        let net = all.iter().find(|h| h.name() == "python/network").unwrap();
        assert!(net.source.contains("[8080, 8081]"));
    }
}
