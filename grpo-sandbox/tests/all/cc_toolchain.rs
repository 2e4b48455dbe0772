//! The C/C++ toolchain for the tests that compile, installed once per test process into the
//! default cache directory when it is not there ([`Toolchain::install_default`]: from
//! `GRPO_ZIG_WHEEL` or PyPI). So `cargo test --workspace` needs nothing installed beforehand
//! on a machine that reaches PyPI.

use std::sync::OnceLock;

use grpo_sandbox::guest::cc::Toolchain;

/// Makes sure the toolchain is installed; panics saying why when it cannot be.
pub fn ensure() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| match Toolchain::install_default(&mut |_| {}) {
        Ok(Some(report)) => {
            eprintln!("installed the C/C++ toolchain in {} ms", report.elapsed_ms)
        }
        Ok(None) => {}
        Err(e) => panic!("installing the C/C++ toolchain for the tests: {e}"),
    });
}
