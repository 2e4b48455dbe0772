//! The C/C++ toolchain on first use: it installs itself unless downloads are forbidden, and
//! then the error says how to install it from a file.

use super::common::grpo;

#[test]
fn a_forbidden_download_says_how_to_install_from_a_file() {
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    let source = dir.path().join("main.cpp");
    std::fs::write(&source, "int main() { return 0; }\n").expect("write");
    let out = grpo()
        .arg("run-code")
        .arg(&source)
        .env("XDG_CACHE_HOME", cache.path())
        .env("GRPO_NO_DOWNLOAD", "1")
        .env_remove("GRPO_ZIG_WHEEL")
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    for needle in [
        "is not installed",
        "--from-file WHEEL",
        "GRPO_NO_DOWNLOAD",
        "files.pythonhosted.org",
    ] {
        assert!(stderr.contains(needle), "{needle}: {stderr}");
    }
    // Nothing was fetched or unpacked.
    assert!(
        !cache.path().join("grpo-rs/toolchains/zig-0.17.0").exists(),
        "{stderr}"
    );
}
