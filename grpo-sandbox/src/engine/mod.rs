//! The engine layer: everything a run needs that does not depend on which guest runs.
//!
//! | module | what |
//! |---|---|
//! | [`runtime`] | the wasmtime engine's configuration, the embedded Python component, the compiled-artefact disk cache |
//! | `ended` | how a run ended: status, exit code, the sandbox's detail |
//! | `host` | what every run of a sandbox shares (engine, epoch ticker, CPU and live slots, run directories, run counter) and the one way a run starts on it |
//! | `run` | the one run path every guest takes: a fresh instance, its directory, its streams, its budget, how it ended |
//! | `budget` | a run's limits as the host enforces them: CPU, memory, files, the epoch callback |
//! | `cpu_clock` | the guest thread's own CPU time, read at every poll |
//! | `slot` | CPU slots and live instances: who may compute now, and how waits give a slot back |
//! | `pipe` | capped stdout and stderr |
//! | [`files`] | the files placed before a run and read back after it |
//! | `rundir`, `stale` | run directories: made fresh, removed after, and the leftovers of dead processes swept |
//! | `digest` | SHA-256 in hex |
//!
//! Nothing here imports a guest, the judge or a session: those layers sit above it.

pub(crate) mod budget;
pub(crate) mod cpu_clock;
pub(crate) mod digest;
pub(crate) mod ended;
pub mod files;
pub(crate) mod host;
pub(crate) mod pipe;
pub(crate) mod run;
pub(crate) mod rundir;
pub mod runtime;
pub(crate) mod slot;
pub(crate) mod stale;
