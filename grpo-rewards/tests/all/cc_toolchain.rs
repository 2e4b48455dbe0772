//! The C/C++ toolchain for the tests that compile: found in the default cache directory, or
//! installed there once, from `GRPO_ZIG_WHEEL` (a local copy of the pinned wheel) when set,
//! else downloaded from PyPI (pinned URL and SHA-256), as `grpo toolchain install` does. So
//! `cargo test --workspace` needs nothing installed beforehand on a machine that reaches PyPI.

use std::sync::OnceLock;

use grpo_rewards::code::cc::Toolchain;

/// Makes sure the toolchain is installed; panics saying why when it cannot be.
pub fn ensure() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let root = Toolchain::default_cache_root().unwrap_or_else(|e| panic!("{e}"));
        if Toolchain::locate(&root).is_ok() {
            return;
        }
        let report = match std::env::var_os("GRPO_ZIG_WHEEL") {
            Some(wheel) => Toolchain::install_from_file(&root, wheel.as_ref(), &mut |_| {}),
            None => Toolchain::install(&root, &mut |_| {}),
        }
        .unwrap_or_else(|e| panic!("installing the C/C++ toolchain for the tests: {e}"));
        eprintln!("installed the C/C++ toolchain in {} ms", report.elapsed_ms);
    });
}
