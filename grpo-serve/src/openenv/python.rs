//! The Python interpreter environment (`/openenv/python`): each WebSocket session holds one
//! of the service's interpreter sessions ([`crate::sessions`]), with its caps, idle
//! time-to-live, limits and metrics, opened through the same handlers as `/v1/sessions`.
//!
//! A reset gives a fresh interpreter (the one opened with the connection when nothing has
//! run in it yet, a new one otherwise); `seed` seeds the interpreter's `random`. A step runs
//! `{"code": str}` and observes exactly `stdout`, `stderr` and `exit_code` (-1 when the run
//! was stopped before it could exit: a timeout, the memory cap, an output flood); the run's
//! `status`, `duration_ms`, `cpu_ms` and `truncated` are in `metadata`. `reward` is null and
//! `done` false: the interpreter keeps its globals until the next reset.

use axum::Json;
use axum::extract::{Path, State};
use grpo_rewards::result::{RunResult, RunStatus};
use serde_json::{Map, Value, json};

use super::error::EnvError;
use super::protocol::{Field, ResetArgs, StepResult, new_episode_id, parse_action};
use crate::AppState;
use crate::error::{ApiError, JsonBody};
use crate::sessions::{self, OpenRequest, RunRequest};

/// The action's one field.
pub(crate) const ACTION_FIELDS: [Field; 1] = [Field {
    name: "code",
    required: true,
}];

/// One WebSocket session's interpreter and episode.
#[derive(Debug)]
pub(crate) struct PythonEnv {
    /// The interpreter session's id (`None` once it was found closed).
    session: Option<String>,
    /// Whether nothing has run in the interpreter yet.
    fresh: bool,
    /// The current episode: its id and steps.
    episode: Option<(String, u64)>,
}

impl PythonEnv {
    /// Opens an interpreter for a new session. Errors: the cap on sessions is full (capacity
    /// reached), the sandbox is overloaded or failed.
    pub(crate) async fn open(state: &AppState) -> Result<PythonEnv, EnvError> {
        Ok(PythonEnv {
            session: Some(open_interpreter(state).await?),
            fresh: true,
            episode: None,
        })
    }

    /// Starts an episode in a fresh interpreter.
    pub(crate) async fn reset(
        &mut self,
        state: &AppState,
        args: ResetArgs,
    ) -> Result<StepResult, EnvError> {
        if !self.fresh {
            self.close(state).await;
        }
        let id = match &self.session {
            Some(id) => id.clone(),
            None => {
                let id = open_interpreter(state).await?;
                self.session = Some(id.clone());
                self.fresh = true;
                id
            }
        };
        self.episode = None;
        if let Some(seed) = args.seed {
            let seeded = self
                .run(
                    state,
                    &id,
                    format!("import random\nrandom.seed({seed})\ndel random"),
                )
                .await?;
            if seeded.status != RunStatus::Ok {
                return Err(EnvError::Api(ApiError::Internal {
                    reason: format!("seeding the interpreter failed: {}", seeded.stderr),
                }));
            }
        }
        self.episode = Some((args.episode_id.unwrap_or_else(new_episode_id), 0));
        Ok(observe(&RunResult {
            status: RunStatus::Ok,
            exit_code: Some(0),
            stdout: String::new(),
            stderr: String::new(),
            duration_ms: 0.0,
            cpu_ms: 0.0,
            truncated: false,
        }))
    }

    /// Runs `{"code": …}` in the episode's interpreter.
    pub(crate) async fn step(
        &mut self,
        state: &AppState,
        action: &Value,
    ) -> Result<StepResult, EnvError> {
        if self.episode.is_none() {
            return Err(EnvError::NotReset);
        }
        let fields = parse_action(action, &ACTION_FIELDS).map_err(EnvError::Invalid)?;
        let code = fields
            .get("code")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let Some(id) = self.session.clone() else {
            return Err(EnvError::Api(ApiError::Invalid {
                reason: "this session's interpreter is closed: send a reset for a new one".into(),
            }));
        };
        self.fresh = false;
        let result = self.run(state, &id, code).await?;
        if let Some((_, steps)) = &mut self.episode {
            *steps += 1;
        }
        Ok(observe(&result))
    }

    /// `{episode_id, step_count}`.
    pub(crate) fn state(&self) -> Value {
        match &self.episode {
            Some((id, steps)) => json!({"episode_id": id, "step_count": steps}),
            None => PythonEnv::fresh_state(),
        }
    }

    /// The state before the first reset: a null `episode_id`, `step_count` 0.
    pub(crate) fn fresh_state() -> Value {
        json!({"episode_id": null, "step_count": 0})
    }

    /// Closes the interpreter (the WebSocket closed, or a reset needs a fresh one).
    pub(crate) async fn close(&mut self, state: &AppState) {
        if let Some(id) = self.session.take() {
            // Already closed (idle, expired, spent) is as good as closed now.
            if let Err(e) = sessions::delete_handler(State(state.clone()), Path(id)).await {
                tracing::debug!(error = %e, "interpreter already closed");
            }
        }
    }

    /// One call in the interpreter, through the `/v1/sessions/{id}/run` handler.
    async fn run(
        &mut self,
        state: &AppState,
        id: &str,
        code: String,
    ) -> Result<RunResult, EnvError> {
        match sessions::run_handler(
            State(state.clone()),
            Path(id.to_owned()),
            JsonBody(RunRequest { code }),
        )
        .await
        {
            Ok(Json(result)) => Ok(result),
            Err(e) => {
                if matches!(
                    e,
                    ApiError::SessionClosed { .. } | ApiError::UnknownSession { .. }
                ) {
                    // Reaped (idle, lifetime) or spent: the next reset opens a new one.
                    self.session = None;
                }
                Err(EnvError::Api(e))
            }
        }
    }
}

/// Opens an interpreter session through the `POST /v1/sessions` handler (its caps, limits
/// and metrics).
async fn open_interpreter(state: &AppState) -> Result<String, ApiError> {
    let (_, Json(opened)) =
        sessions::open_handler(State(state.clone()), JsonBody(OpenRequest::default())).await?;
    Ok(opened.id)
}

/// The observation of one run: `stdout`, `stderr`, `exit_code`; the rest in `metadata`.
fn observe(result: &RunResult) -> StepResult {
    let exit_code = match (result.status, result.exit_code) {
        (RunStatus::Ok, code) => code.unwrap_or(0),
        // A failed run never reads as a success.
        (_, Some(code)) if code != 0 => code,
        _ => -1,
    };
    let mut observation = Map::new();
    observation.insert("stdout".into(), Value::from(result.stdout.as_str()));
    observation.insert("stderr".into(), Value::from(result.stderr.as_str()));
    observation.insert("exit_code".into(), Value::from(exit_code));
    let mut metadata = Map::new();
    metadata.insert("status".into(), Value::from(result.status.as_str()));
    metadata.insert("duration_ms".into(), Value::from(result.duration_ms));
    metadata.insert("cpu_ms".into(), Value::from(result.cpu_ms));
    metadata.insert("truncated".into(), Value::from(result.truncated));
    StepResult {
        observation,
        reward: None,
        done: false,
        metadata,
    }
}

/// The action's, observation's and state's JSON schemas (`GET /schema`), titled so that
/// clients never take them for MCP tool calls (`Action`, `CallToolAction`, `ListToolsAction`).
pub(crate) fn schema() -> Value {
    json!({
        "action": {
            "title": "PythonCodeAction",
            "description": "Python source to run in the session's interpreter.",
            "type": "object",
            "properties": {
                "metadata": {"title": "Metadata", "type": "object", "additionalProperties": true},
                "code": {"title": "Code", "type": "string"}
            },
            "required": ["code"],
            "additionalProperties": false
        },
        "observation": {
            "title": "PythonCodeObservation",
            "description": "The run's output and exit code; its status, times and truncation are in metadata.",
            "type": "object",
            "properties": {
                "done": {"title": "Done", "type": "boolean", "default": false},
                "reward": {"title": "Reward", "anyOf": [{"type": "number"}, {"type": "null"}], "default": null},
                "metadata": {"title": "Metadata", "type": "object", "additionalProperties": true},
                "stdout": {"title": "Stdout", "type": "string", "default": ""},
                "stderr": {"title": "Stderr", "type": "string", "default": ""},
                "exit_code": {"title": "Exit Code", "type": "integer", "default": 0}
            },
            "additionalProperties": false
        },
        "state": {
            "title": "PythonCodeState",
            "type": "object",
            "properties": {
                "episode_id": {"title": "Episode Id", "anyOf": [{"type": "string"}, {"type": "null"}], "default": null},
                "step_count": {"title": "Step Count", "type": "integer", "minimum": 0, "default": 0}
            },
            "additionalProperties": true
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(status: RunStatus, exit_code: Option<i32>) -> RunResult {
        RunResult {
            status,
            exit_code,
            stdout: "out".into(),
            stderr: "err".into(),
            duration_ms: 2.5,
            cpu_ms: 1.5,
            truncated: status == RunStatus::OutputLimit,
        }
    }

    #[test]
    fn an_observation_is_stdout_stderr_and_exit_code_with_the_rest_in_metadata() {
        let observed = observe(&run(RunStatus::Ok, Some(0)));
        let keys: Vec<&str> = observed.observation.keys().map(String::as_str).collect();
        assert_eq!(keys, ["exit_code", "stderr", "stdout"]);
        assert_eq!(observed.observation["exit_code"], json!(0));
        assert_eq!(
            Value::Object(observed.metadata),
            json!({"status": "ok", "duration_ms": 2.5, "cpu_ms": 1.5, "truncated": false})
        );
        assert_eq!((observed.reward, observed.done), (None, false));
    }

    #[test]
    fn a_failed_run_never_exits_zero() {
        for (status, code, expected) in [
            (RunStatus::Error, Some(1), 1),
            (RunStatus::Timeout, None, -1),
            (RunStatus::MemoryLimit, Some(0), -1),
            (RunStatus::OutputLimit, None, -1),
        ] {
            let observed = observe(&run(status, code));
            assert_eq!(
                observed.observation["exit_code"],
                json!(expected),
                "{status:?}"
            );
            assert_eq!(observed.metadata["status"], json!(status.as_str()));
        }
    }

    #[test]
    fn the_schema_is_not_taken_for_an_mcp_tool() {
        let schema = schema();
        let title = schema["action"]["title"].as_str().expect("a title");
        assert!(!["Action", "CallToolAction", "ListToolsAction"].contains(&title));
        assert_eq!(schema["action"]["required"], json!(["code"]));
    }
}
