//! A rollout, from prompts to the tensors the loss reads: the sampler draws G completions
//! per prompt, the code-interpreter tool runs the calls a completion makes inside it, the
//! scored completions of a prompt form a group, the step's groups are packed once into one
//! batch, and log-probs are recomputed from a forward pass over it (for the ratio and the
//! reference's KL term).

pub mod batch;
pub(crate) mod group;
pub mod logprobs;
pub(crate) mod round;
pub mod sampler;
pub mod tools;
