//! Compiling untrusted C and C++ to WebAssembly (a WASI preview 1 command module, `_start`) on
//! the host, with a pinned toolchain and a confined compiler.
//!
//! The toolchain is zig 0.17.0 from the PyPI wheel `ziglang` (pinned by URL and SHA-256): its
//! `zig cc` / `zig c++` are clang with wasi-libc and libc++ for `wasm32-wasi` built in, so one
//! download gives both languages. [`Toolchain`] finds, fetches, unpacks and warms it;
//! [`Compiler`] compiles one source per call, in a fresh job directory, as a child process
//! confined by user, network and mount namespaces, Landlock and rlimits (see [`Confinement`] and the
//! threat model in the `code` module's README), and caches modules by the hash of what was
//! compiled.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use grpo_sandbox::guest::cc::{CLang, Compiled, CompileLimits, Compiler};
//!
//! let compiler = Compiler::shared()?; // needs `grpo toolchain install` once
//! let source = "#include <stdio.h>\nint main(void) { puts(\"hi\"); }\n";
//! match compiler.compile(CLang::C, source, &CompileLimits::default()).await? {
//!     Compiled::Module { wasm, .. } => assert!(wasm.starts_with(b"\0asm")),
//!     Compiled::Failed { stderr, .. } => println!("does not compile:\n{stderr}"),
//! }
//! # Ok(()) }
//! ```

mod cache;
mod compile;
mod confine;
mod direct;
mod error;
mod lex;
mod pasted;
mod pch;
mod run;
mod shadow;
mod shared_view;
mod spawn;
mod toolchain;
mod warm;

pub use compile::{
    CLang, CompileLimits, CompileStats, Compiled, Compiler, CompilerOptions, TIMEOUT_CODE,
};
pub use confine::Confinement;
pub use error::CcError;
pub use toolchain::{
    InstallReport, PINNED_WHEELS, PinnedWheel, Progress, Toolchain, ZIG_VERSION, pinned_wheel,
};
pub use warm::WarmUp;
