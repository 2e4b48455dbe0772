//! What a run leaves on disk, in one place: the run directory and its final model
//! ([`dir`]), the step, evaluation and sample records ([`records`]), checkpoints a run
//! resumes from ([`checkpoint`]), the plot ([`plot`]) and TensorBoard event files
//! ([`tensorboard`]).

pub mod checkpoint;
pub mod dir;
pub mod plot;
pub mod records;
pub mod tensorboard;
