//! Names the embedded Python runtime for the compiled-code cache at build time: the SHA-256
//! of the compressed blob, so that a process does not hash 6 MB at start-up to find its entry.

use std::path::Path;

use sha2::{Digest, Sha256};

const BLOB: &str = "runtime/python.wasm.zst";

fn main() {
    println!("cargo::rerun-if-changed={BLOB}");
    let bytes = std::fs::read(BLOB).unwrap_or_else(|e| panic!("reading {BLOB}: {e}"));
    let hex: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let out = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(
        Path::new(&out).join("python_wasm_zst_sha256.rs"),
        format!("\"{hex}\""),
    )
    .expect("writing python_wasm_zst_sha256.rs");
}
