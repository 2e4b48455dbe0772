//! The guests: what runs inside the engine, one module per kind of program.
//!
//! | module | what |
//! |---|---|
//! | [`python`] | CPython, a WASIp2 component snapshotted with the test harness; its job encoding and reports |
//! | `wasip1` | WASIp1 core modules (QuickJS-NG, and C and C++ programs compiled to `wasm32-wasi`) on the one run path |
//! | `quickjs` | JavaScript: QuickJS-NG with a Node.js prelude |
//! | [`typescript`] | TypeScript: types stripped, then run as JavaScript |
//! | [`cc`] | C and C++: the pinned zig toolchain, the confined compiler, the compile cache |
//!
//! Guests use the [`engine`](crate::engine) layer and nothing above it.

pub mod cc;
pub mod python;
pub(crate) mod quickjs;
pub mod typescript;
pub(crate) mod wasip1;
