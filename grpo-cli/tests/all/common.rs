//! Shared helpers.

/// The `grpo` binary of this build, ready for arguments.
pub fn grpo() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_grpo"))
}
