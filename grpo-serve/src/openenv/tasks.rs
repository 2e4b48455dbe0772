//! The task environment (`/openenv/tasks`): the tasks of the pack given to `grpo serve
//! --pack`, one task an episode, scored as `grpo score` scores them.
//!
//! `reset(task_id=…)` picks that task; `reset(seed=…)` picks one by the seed (the same seed,
//! the same task, for the same pack); neither picks one at random; `split=…` limits the
//! choice to one of the pack's splits. The observation is `{task_id, prompt}`, the prompt
//! rendered with the pack's template. A step `{"completion": str}` (with an optional
//! `task_id`: a stateless HTTP step has no episode and names its task) is scored once with
//! the pack's [`Scorer`] — its `[rewards]` weights and `[math]` and `[code]` options, as
//! `grpo score --tasks PACK` builds it, with the service's caps on a task's own limits — and
//! ends the episode: `reward` is the scored reward, `done` true, and `metadata` holds the
//! verdict, `correct` and each reward component. At most `max_sessions` sessions (the
//! service's cap on interpreter sessions) are open at once, WebSocket and stateless alike.

use std::sync::Arc;

use grpo_rewards::code::LimitCaps;
use grpo_rewards::{Scorer, ScoringConfig};
use grpo_sandbox::Sandbox;
use grpo_tasks::{Pack, Task};
use serde_json::{Map, Value, json};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::error::EnvError;
use super::protocol::{Field, Issue, ResetArgs, StepResult, new_episode_id, parse_action};
use crate::error::ApiError;
use crate::{AppState, admit};

/// The action's fields.
const ACTION_FIELDS: [Field; 2] = [
    Field {
        name: "completion",
        required: true,
    },
    Field {
        name: "task_id",
        required: false,
    },
];

/// A pack and the scorer of its tasks, built once with the service, and the places of its
/// sessions.
pub(crate) struct TaskPack {
    pack: Pack,
    scorer: Scorer,
    /// One per open session: as many as the service's cap on interpreter sessions.
    places: Arc<Semaphore>,
    max_sessions: usize,
}

impl std::fmt::Debug for TaskPack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskPack")
            .field("pack", &self.pack.manifest.name)
            .field("tasks", &self.pack.len())
            .finish_non_exhaustive()
    }
}

impl TaskPack {
    /// The pack's scorer, as `grpo score` builds it, judging code on `sandbox` with the
    /// service's `caps` on a task's own limits; at most `max_sessions` sessions at once.
    /// Errors: the pack's weights are invalid.
    pub(crate) fn new(
        pack: Pack,
        sandbox: Sandbox,
        caps: LimitCaps,
        max_sessions: usize,
    ) -> grpo_rewards::Result<Self> {
        let config = ScoringConfig {
            caps: Some(caps),
            ..ScoringConfig::for_pack(&pack.manifest)?
        };
        let scorer = grpo_sandbox::scorer(&config, Some(sandbox))?;
        Ok(TaskPack {
            pack,
            scorer,
            places: Arc::new(Semaphore::new(max_sessions)),
            max_sessions,
        })
    }

    /// The task `reset` asks for.
    fn pick(&self, args: &ResetArgs) -> Result<&Task, EnvError> {
        if let Some(id) = string_arg(args, "task_id")? {
            return self.pack.get(&id).ok_or_else(|| {
                invalid(
                    "task_id",
                    format!("no task {id:?} in pack {}", self.pack.manifest.name),
                    Value::from(id.as_str()),
                )
            });
        }
        let candidates: Vec<&Task> = match string_arg(args, "split")? {
            Some(split) => match self.pack.split(&split) {
                Some(tasks) => tasks.iter().collect(),
                None => {
                    return Err(invalid(
                        "split",
                        format!(
                            "no split {split:?} in pack {}; it has {}",
                            self.pack.manifest.name,
                            self.pack.split_names().join(", ")
                        ),
                        Value::from(split.as_str()),
                    ));
                }
            },
            None => self.pack.tasks().collect(),
        };
        if candidates.is_empty() {
            return Err(EnvError::Api(ApiError::invalid(format!(
                "pack {} has no tasks to pick from",
                self.pack.manifest.name
            ))));
        }
        let draw = args.seed.map_or_else(rand::random::<u64>, splitmix64);
        let at = usize::try_from(draw % candidates.len() as u64).unwrap_or(0);
        Ok(candidates[at])
    }

    /// The task named by a step's `task_id`.
    fn named(&self, id: &str) -> Result<&Task, EnvError> {
        self.pack.get(id).ok_or_else(|| {
            invalid(
                "task_id",
                format!("no task {id:?} in pack {}", self.pack.manifest.name),
                Value::from(id),
            )
        })
    }

    /// `{task_id, prompt}`, the prompt rendered with the pack's template.
    fn observation(&self, task: &Task) -> Map<String, Value> {
        let mut observation = Map::new();
        observation.insert("task_id".into(), Value::from(task.id()));
        observation.insert(
            "prompt".into(),
            Value::from(self.pack.manifest.template.render(task)),
        );
        observation
    }
}

/// SplitMix64's output function: a seed spread over all 64 bits.
fn splitmix64(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn invalid(field: &str, msg: String, input: Value) -> EnvError {
    EnvError::Invalid(vec![Issue {
        kind: "value_error",
        loc: vec![field.to_owned()],
        msg,
        input,
    }])
}

fn string_arg(args: &ResetArgs, name: &str) -> Result<Option<String>, EnvError> {
    match args.all.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(EnvError::Invalid(vec![Issue {
            kind: "string_type",
            loc: vec![name.to_owned()],
            msg: "Input should be a valid string".into(),
            input: other.clone(),
        }])),
    }
}

/// One episode: its id, its task, its steps, and whether it is over.
#[derive(Debug)]
struct Episode {
    id: String,
    task_id: String,
    steps: u64,
    done: bool,
}

/// One session of the task environment.
#[derive(Debug, Default)]
pub(crate) struct TasksEnv {
    episode: Option<Episode>,
    /// The session's place under the cap, given back when it closes.
    _place: Option<OwnedSemaphorePermit>,
}

impl TasksEnv {
    /// A new session. Errors: every place is taken (capacity reached).
    pub(crate) fn open(state: &AppState) -> Result<TasksEnv, EnvError> {
        let pack = pack(state)?;
        let place = pack.places.clone().try_acquire_owned().map_err(|_| {
            EnvError::Api(ApiError::TooManySessions {
                max: pack.max_sessions,
            })
        })?;
        Ok(TasksEnv {
            episode: None,
            _place: Some(place),
        })
    }

    /// Starts an episode on the task `args` ask for.
    pub(crate) fn reset(
        &mut self,
        state: &AppState,
        args: ResetArgs,
    ) -> Result<StepResult, EnvError> {
        let pack = pack(state)?;
        let task = pack.pick(&args)?;
        self.episode = Some(Episode {
            id: args.episode_id.clone().unwrap_or_else(new_episode_id),
            task_id: task.id().to_owned(),
            steps: 0,
            done: false,
        });
        let mut metadata = Map::new();
        metadata.insert("kind".into(), Value::from(task.kind_name()));
        Ok(StepResult {
            observation: pack.observation(task),
            reward: None,
            done: false,
            metadata,
        })
    }

    /// Scores `{"completion": …}` against the episode's task (or the one it names).
    pub(crate) async fn step(
        &mut self,
        state: &AppState,
        action: &Value,
    ) -> Result<StepResult, EnvError> {
        let fields = parse_action(action, &ACTION_FIELDS).map_err(EnvError::Invalid)?;
        let completion = fields
            .get("completion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let named = fields.get("task_id").and_then(Value::as_str);
        let pack = pack(state)?;
        let task = match (&self.episode, named) {
            (Some(episode), _) if episode.done => {
                return Err(EnvError::Api(ApiError::invalid(
                    "the episode is done: send a reset to start the next one",
                )));
            }
            (Some(episode), Some(id)) if id != episode.task_id => {
                return Err(invalid(
                    "task_id",
                    format!("this episode's task is {:?}", episode.task_id),
                    Value::from(id),
                ));
            }
            (Some(episode), _) => pack.named(&episode.task_id)?,
            (None, Some(id)) => pack.named(id)?,
            (None, None) => {
                return Err(EnvError::Invalid(vec![Issue {
                    kind: "missing",
                    loc: vec!["task_id".into()],
                    msg: "Field required: send a reset first, or name the task".into(),
                    input: action.clone(),
                }]));
            }
        };
        let _admitted = admit(state, state.config.queue_wait).await?;
        let scorer = &pack.scorer;
        let scored = scorer
            .score_group(task, std::slice::from_ref(&completion), scorer.options())
            .await
            .map_err(|e| ApiError::from_scoring(e, task.id(), "/openenv/tasks"))?;
        let Some(result) = scored.into_iter().next() else {
            return Err(EnvError::Api(ApiError::Internal {
                reason: "the scorer gave no result".into(),
            }));
        };
        state.metrics.record_verdict(result.verdict.kind);
        let mut metadata = Map::new();
        metadata.insert("verdict".into(), json!(result.verdict));
        metadata.insert("correct".into(), Value::from(result.correct));
        metadata.insert("rewards".into(), json!(result.components));
        if let Some(episode) = &mut self.episode {
            episode.steps += 1;
            episode.done = true;
        }
        Ok(StepResult {
            observation: pack.observation(task),
            reward: Some(result.reward),
            done: true,
            metadata,
        })
    }

    /// `{episode_id, step_count, task_id}` (null, 0 and null before the first reset).
    pub(crate) fn state(&self) -> Value {
        match &self.episode {
            Some(e) => json!({"episode_id": e.id, "step_count": e.steps, "task_id": e.task_id}),
            None => json!({"episode_id": null, "step_count": 0, "task_id": null}),
        }
    }
}

/// The service's pack (its routes exist only when there is one).
fn pack(state: &AppState) -> Result<&TaskPack, EnvError> {
    state.tasks.as_ref().ok_or_else(|| {
        EnvError::Api(ApiError::invalid(
            "this server has no task pack: start it with `grpo serve --pack PACK`",
        ))
    })
}

/// The action's, observation's and state's JSON schemas (`GET /schema`).
pub(crate) fn schema() -> Value {
    let nullable_string = json!({"anyOf": [{"type": "string"}, {"type": "null"}], "default": null});
    json!({
        "action": {
            "title": "TaskCompletionAction",
            "description": "A completion of the episode's task (a stateless step names its task).",
            "type": "object",
            "properties": {
                "metadata": {"title": "Metadata", "type": "object", "additionalProperties": true},
                "completion": {"title": "Completion", "type": "string"},
                "task_id": nullable_string
            },
            "required": ["completion"],
            "additionalProperties": false
        },
        "observation": {
            "title": "TaskObservation",
            "description": "The task and its prompt; a step's verdict and reward components are in metadata.",
            "type": "object",
            "properties": {
                "done": {"title": "Done", "type": "boolean", "default": false},
                "reward": {"title": "Reward", "anyOf": [{"type": "number"}, {"type": "null"}], "default": null},
                "metadata": {"title": "Metadata", "type": "object", "additionalProperties": true},
                "task_id": {"title": "Task Id", "type": "string"},
                "prompt": {"title": "Prompt", "type": "string"}
            },
            "required": ["task_id", "prompt"],
            "additionalProperties": false
        },
        "state": {
            "title": "TaskState",
            "type": "object",
            "properties": {
                "episode_id": nullable_string,
                "step_count": {"title": "Step Count", "type": "integer", "minimum": 0, "default": 0},
                "task_id": nullable_string
            },
            "additionalProperties": true
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_spread_over_the_tasks() {
        let picks: std::collections::BTreeSet<u64> = (0..64).map(|s| splitmix64(s) % 7).collect();
        assert_eq!(picks.len(), 7);
        assert_eq!(splitmix64(42), splitmix64(42));
    }

    #[test]
    fn the_schema_is_not_taken_for_an_mcp_tool() {
        let schema = schema();
        assert_eq!(schema["action"]["title"], "TaskCompletionAction");
        assert_eq!(schema["action"]["required"], json!(["completion"]));
    }
}
