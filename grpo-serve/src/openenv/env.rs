//! The environments under `/openenv/…` and one session of either: what a reset, a step and
//! a state do, whichever transport (WebSocket or stateless HTTP) carries them.

use serde_json::{Value, json};

use super::error::EnvError;
use super::protocol::{ResetArgs, StepResult};
use super::python::{self, PythonEnv};
use super::tasks::{self, TasksEnv};
use crate::AppState;

/// Which environment a route serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EnvKind {
    /// `/openenv/python`: a Python interpreter.
    Python,
    /// `/openenv/tasks`: the tasks of the service's pack.
    Tasks,
}

impl EnvKind {
    /// The environment's name (`GET /metadata`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            EnvKind::Python => "grpo-python",
            EnvKind::Tasks => "grpo-tasks",
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
            EnvKind::Tasks => {
                "The tasks of the pack given to `grpo serve --pack`: a reset picks a task (by \
                 task_id, by seed, or at random) and observes {task_id, prompt}; a step \
                 {\"completion\": str} is scored as `grpo score` scores it and ends the episode."
            }
        }
    }

    /// The action's, observation's and state's JSON schemas (`GET /schema`).
    pub(crate) fn schema(self) -> Value {
        match self {
            EnvKind::Python => python::schema(),
            EnvKind::Tasks => tasks::schema(),
        }
    }

    /// The state of a session before its first reset (`GET /state`).
    pub(crate) fn fresh_state(self) -> Value {
        match self {
            EnvKind::Python => PythonEnv::fresh_state(),
            EnvKind::Tasks => TasksEnv::default().state(),
        }
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
    /// A task episode.
    Tasks(TasksEnv),
}

impl Env {
    /// A new session of `kind` (its resources taken now: capacity is judged here).
    pub(crate) async fn open(kind: EnvKind, state: &AppState) -> Result<Env, EnvError> {
        match kind {
            EnvKind::Python => Ok(Env::Python(PythonEnv::open(state).await?)),
            EnvKind::Tasks => Ok(Env::Tasks(TasksEnv::open(state)?)),
        }
    }

    /// One step in a fresh session, closed after it (OpenEnv's stateless `POST /step`): the
    /// interpreter is reset first, since its steps need an episode; a task step names its
    /// task.
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
            Env::Tasks(tasks) => tasks.step(state, action).await,
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
            Env::Tasks(env) => env.reset(state, args),
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
            Env::Tasks(env) => env.step(state, action).await,
        }
    }

    /// The episode's state: at least `episode_id` and `step_count`.
    pub(crate) fn state(&self) -> Value {
        match self {
            Env::Python(env) => env.state(),
            Env::Tasks(env) => env.state(),
        }
    }

    /// Frees what the session holds.
    pub(crate) async fn close(mut self, state: &AppState) {
        match &mut self {
            Env::Python(env) => env.close(state).await,
            // An episode holds nothing.
            Env::Tasks(_) => {}
        }
    }
}
