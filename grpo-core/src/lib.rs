//! GRPO math on candle tensors.
#![deny(clippy::unwrap_used)]
#![warn(missing_docs)]
