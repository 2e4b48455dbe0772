//! Names the embedded Python runtime for the compiled-code cache at build time: the SHA-256
//! of the compressed blob, so that a process does not hash 6 MB at start-up to find its entry.

use std::path::Path;

#[path = "src/engine/digest.rs"]
mod digest;

const BLOB: &str = "runtime/python.wasm.zst";

fn main() -> Result<(), String> {
    println!("cargo::rerun-if-changed={BLOB}");
    println!("cargo::rerun-if-changed=src/digest.rs");
    let bytes = std::fs::read(BLOB).map_err(|e| format!("reading {BLOB}: {e}"))?;
    let out = std::env::var_os("OUT_DIR").ok_or("cargo did not set OUT_DIR")?;
    let path = Path::new(&out).join("python_wasm_zst_sha256.rs");
    std::fs::write(&path, format!("\"{}\"", digest::sha256_hex(&bytes)))
        .map_err(|e| format!("writing {}: {e}", path.display()))
}
