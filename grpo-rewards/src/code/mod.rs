//! The pure side of code tasks: finding the program in a completion ([`extract`]) and the
//! settings a sandboxed run takes ([`limits`]). Running programs is `grpo-sandbox`'s, behind
//! the [`CodeJudge`](crate::CodeJudge) seam.

pub mod extract;
pub mod limits;

pub use extract::{extract_code, extract_code_in, program_for};
pub use limits::{Credit, LimitCaps, LimitError, Limits, WALL_FACTOR};
