//! The environments under `/openenv/…` and one session of either: what a reset, a step and
//! a state do, whichever transport (WebSocket or stateless HTTP) carries them.

use serde_json::{Value, json};

use super::error::EnvError;
use super::protocol::{ResetArgs, StepResult};
use super::python::{self, PythonEnv};
use crate::AppState;

/// Which environment a route serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EnvKind {
    /// `/openenv/python`: a Python interpreter.
    Python,
}

impl EnvKind {
    /// The environment's name (`GET /metadata`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            EnvKind::Python => "grpo-python",
        }
    }

    /// What the environment does (`GET /metadata`).
    pub(crate) fn description(self) -> &'static str {
        match self {
            EnvKind::Python => {
                "A Python interpreter in grpo-rs's WebAssembly sandbox: each reset gives a \
                 fresh interpreter, each step runs {\"code\": str} in it and observes stdout, \
                 stderr and exit_code; globals persist across the steps of an episode."
            }
        }
    }

    /// The action's, observation's and state's JSON schemas (`GET /schema`).
    pub(crate) fn schema(self) -> Value {
        match self {
            EnvKind::Python => python::schema(),
        }
    }

    /// The state of a session before its first reset (`GET /state`).
    pub(crate) fn fresh_state(self) -> Value {
        json!({"episode_id": null, "step_count": 0})
    }

    /// `GET /metadata`, OpenEnv's `EnvironmentMetadata`.
    pub(crate) fn metadata(self) -> Value {
        json!({
            "name": self.name(),
            "description": self.description(),
            "readme_content": null,
            "version": env!("CARGO_PKG_VERSION"),
            "author": null,
            "documentation_url": null,
        })
    }
}

/// One session of an environment.
#[derive(Debug)]
pub(crate) enum Env {
    /// A Python interpreter session.
    Python(PythonEnv),
}

impl Env {
    /// A new session of `kind` (its resources taken now: capacity is judged here).
    pub(crate) async fn open(kind: EnvKind, state: &AppState) -> Result<Env, EnvError> {
        match kind {
            EnvKind::Python => Ok(Env::Python(PythonEnv::open(state).await?)),
        }
    }

    /// One step in a fresh session, closed after it (OpenEnv's stateless `POST /step`): the
    /// interpreter is reset first, since its steps need an episode.
    pub(crate) async fn stateless_step(
        kind: EnvKind,
        state: &AppState,
        action: &Value,
    ) -> Result<StepResult, EnvError> {
        let mut env = Env::open(kind, state).await?;
        let result = match &mut env {
            Env::Python(python) => match python.reset(state, ResetArgs::default()).await {
                Ok(_) => python.step(state, action).await,
                Err(e) => Err(e),
            },
        };
        env.close(state).await;
        result
    }

    /// Starts an episode.
    pub(crate) async fn reset(
        &mut self,
        state: &AppState,
        args: ResetArgs,
    ) -> Result<StepResult, EnvError> {
        match self {
            Env::Python(env) => env.reset(state, args).await,
        }
    }

    /// Carries out one action.
    pub(crate) async fn step(
        &mut self,
        state: &AppState,
        action: &Value,
    ) -> Result<StepResult, EnvError> {
        match self {
            Env::Python(env) => env.step(state, action).await,
        }
    }

    /// The episode's state: at least `episode_id` and `step_count`.
    pub(crate) fn state(&self) -> Value {
        match self {
            Env::Python(env) => env.state(),
        }
    }

    /// Frees what the session holds.
    pub(crate) async fn close(mut self, state: &AppState) {
        match &mut self {
            Env::Python(env) => env.close(state).await,
        }
    }
}
