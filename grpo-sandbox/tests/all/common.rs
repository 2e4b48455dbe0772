//! What the sandbox tests share: one sandbox (the runtime compiles once per test binary and is
//! loaded from the disk cache afterwards), one async runtime, and short limits.

use std::sync::OnceLock;

use grpo_sandbox::{Limits, Sandbox, SandboxOptions};

/// The sandbox every test runs on.
pub fn sandbox() -> Sandbox {
    static SANDBOX: OnceLock<Sandbox> = OnceLock::new();
    SANDBOX
        .get_or_init(|| Sandbox::new(&SandboxOptions::default()).unwrap())
        .clone()
}

/// A two-worker runtime for the tests' async calls.
pub fn rt() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    })
}

/// Short limits so hostile programs end fast.
pub fn quick() -> Limits {
    Limits {
        time_limit_ms: 1_000,
        memory_mb: 128,
        output_bytes: 64 * 1024,
        ..Limits::default()
    }
}
