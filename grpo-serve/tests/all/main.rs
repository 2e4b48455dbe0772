//! Integration tests of grpo-serve: the HTTP service end to end over real sockets
//! (`/run_code`, `/v1/score`, admission, limits, abuse, shutdown).
//!
//! One test binary per crate (each topic a module), so the crate and its dependencies link once.
#![allow(
    clippy::expect_used,
    reason = "a test panics, with its message, on what it did not expect"
)]

mod service;
