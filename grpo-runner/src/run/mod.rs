//! What a run leaves on disk, in one place: the run directory and its final model
//! ([`dir`]), the step, evaluation and sample records ([`records`]) and what a step's
//! rounds and update add up to in them (`tally`), checkpoints a run resumes from
//! ([`checkpoint`]), the plot ([`plot`]) and TensorBoard event files ([`tensorboard`]).

pub mod checkpoint;
pub mod dir;
pub mod plot;
pub mod records;
pub(crate) mod tally;
pub mod tensorboard;
