//! The R1-Zero-style GRPO trainer on candle, and the library behind the `grpo` binary.
#![deny(clippy::unwrap_used)]
#![warn(missing_docs)]
