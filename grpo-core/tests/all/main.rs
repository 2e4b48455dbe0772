//! grpo-core's integration tests, one binary: the policy loss and the other trainers'
//! conventions, with the helpers they share.

mod common;
mod conventions;
mod loss;
