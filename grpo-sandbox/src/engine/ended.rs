//! How a guest's run ended, before its streams are read.

use grpo_rewards::result::RunStatus;

/// The end of a run: its status, the exit code the program gave (none when the sandbox stopped
/// it or it crashed), and the detail the sandbox adds to its stderr as a `[sandbox] …` line
/// when the run did not end `ok` (empty when there is nothing to say).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ended {
    pub status: RunStatus,
    pub exit_code: Option<i32>,
    pub detail: String,
}

impl Ended {
    /// The program exited by itself with `code` (0 is `ok`, anything else `error`).
    pub(crate) fn exited(code: i32) -> Self {
        Ended {
            status: if code == 0 {
                RunStatus::Ok
            } else {
                RunStatus::Error
            },
            exit_code: Some(code),
            detail: String::new(),
        }
    }

    /// The sandbox stopped the program, or it crashed: no exit code of its own.
    pub(crate) fn stopped(status: RunStatus, detail: impl Into<String>) -> Self {
        Ended {
            status,
            exit_code: None,
            detail: detail.into(),
        }
    }

    /// This end with the exit code the program had given (`Some`) kept beside the status.
    pub(crate) fn with_exit_code(mut self, exit_code: Option<i32>) -> Self {
        self.exit_code = exit_code;
        self
    }
}
