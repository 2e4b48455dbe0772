//! Integration tests of grpo-runner: the model, the sampler, the trainer and the `grpo` command line.
//!
//! One test binary per crate (each topic a module), so the crate and its dependencies link once.

mod cli_check_math;
mod cli_eval;
mod cli_tasks;
mod common;
mod model;
mod precision;
mod sampler;
mod smollm2;
mod trainer_faults;
mod trainer_resume;
mod trainer_run;
