//! grpo-core's integration tests, one binary: the policy loss and the other trainers'
//! conventions, with the helpers they share.
#![allow(
    clippy::expect_used,
    reason = "a test panics, with its message, on what it did not expect"
)]

mod common;
mod conventions;
mod loss;
mod vendored_candle;
