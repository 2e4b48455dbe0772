//! OpenEnv's wire shapes, as its server writes them (`openenv.core.env_server`): the step
//! result every reset and step answers, the WebSocket frames, and the validation errors.
//!
//! A step result is `{"observation", "reward", "done", "metadata"}`: the observation's own
//! fields plus its `metadata` (OpenEnv's `serialize_observation` dumps every field of the
//! observation but `reward` and `done`, so `metadata` stays inside it too), and the same
//! metadata beside it when there is any. Frames are `{"type": "observation" | "state" |
//! "error", "data": …}`; an error's data is `{"message", "code", …}` with one of OpenEnv's
//! codes ([`ErrorCode`]).

use serde_json::{Map, Value, json};

/// OpenEnv's WebSocket error codes (`WSErrorCode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorCode {
    /// The frame is not JSON.
    InvalidJson,
    /// The frame's `type` is none of `reset`, `step`, `state`, `close`.
    UnknownType,
    /// The frame or its action breaks the schema.
    ValidationError,
    /// The environment failed to carry the message out.
    ExecutionError,
    /// The server's cap on sessions is full.
    CapacityReached,
    /// The session itself failed (its interpreter was closed).
    SessionError,
}

impl ErrorCode {
    /// The code as OpenEnv spells it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidJson => "INVALID_JSON",
            ErrorCode::UnknownType => "UNKNOWN_TYPE",
            ErrorCode::ValidationError => "VALIDATION_ERROR",
            ErrorCode::ExecutionError => "EXECUTION_ERROR",
            ErrorCode::CapacityReached => "CAPACITY_REACHED",
            ErrorCode::SessionError => "SESSION_ERROR",
        }
    }
}

/// What a reset or a step gives back.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StepResult {
    /// The observation's own fields (without `metadata`).
    pub(crate) observation: Map<String, Value>,
    /// The reward of the step (`None` on reset and for environments without one).
    pub(crate) reward: Option<f64>,
    /// Whether the episode is over.
    pub(crate) done: bool,
    /// What the environment adds beside the observation.
    pub(crate) metadata: Map<String, Value>,
}

impl StepResult {
    /// The JSON of OpenEnv's `serialize_observation`.
    pub(crate) fn to_json(&self) -> Value {
        let mut observation = self.observation.clone();
        observation.insert("metadata".into(), Value::Object(self.metadata.clone()));
        let mut out = Map::new();
        out.insert("observation".into(), Value::Object(observation));
        out.insert(
            "reward".into(),
            self.reward.map_or(Value::Null, Value::from),
        );
        out.insert("done".into(), Value::Bool(self.done));
        if !self.metadata.is_empty() {
            out.insert("metadata".into(), Value::Object(self.metadata.clone()));
        }
        Value::Object(out)
    }
}

/// The frame answering a reset or a step.
pub(crate) fn observation_frame(result: &StepResult) -> Value {
    json!({"type": "observation", "data": result.to_json()})
}

/// The frame answering a `state` message.
pub(crate) fn state_frame(state: Value) -> Value {
    json!({"type": "state", "data": state})
}

/// An error frame: `message` and `code`, plus `extra` fields.
pub(crate) fn error_frame(code: ErrorCode, message: &str, extra: Map<String, Value>) -> Value {
    let mut data = Map::new();
    data.insert("message".into(), Value::from(message));
    data.insert("code".into(), Value::from(code.as_str()));
    data.extend(extra);
    json!({"type": "error", "data": data})
}

/// One validation error, in pydantic's shape (`{"type", "loc", "msg", "input"}`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Issue {
    /// pydantic's error type: `missing`, `string_type`, `extra_forbidden`, ….
    pub(crate) kind: &'static str,
    /// Where: the field's path.
    pub(crate) loc: Vec<String>,
    /// What is wrong.
    pub(crate) msg: String,
    /// The value at fault.
    pub(crate) input: Value,
}

impl Issue {
    /// The error as pydantic writes it, its location under `prefix`.
    pub(crate) fn to_json(&self, prefix: &[&str]) -> Value {
        let loc: Vec<Value> = prefix
            .iter()
            .map(|p| Value::from(*p))
            .chain(self.loc.iter().map(|p| Value::from(p.as_str())))
            .collect();
        json!({"type": self.kind, "loc": loc, "msg": self.msg, "input": self.input})
    }
}

/// A string field of a message.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Field {
    /// Its name.
    pub(crate) name: &'static str,
    /// Whether it must be present.
    pub(crate) required: bool,
}

/// Checks an action object as a pydantic model with `extra="forbid"` would: every field of
/// `fields` a string (the required ones present), OpenEnv's base `metadata` an object, nothing
/// else. Returns the string fields present.
pub(crate) fn parse_action(
    action: &Value,
    fields: &[Field],
) -> Result<Map<String, Value>, Vec<Issue>> {
    let Some(object) = action.as_object() else {
        return Err(vec![Issue {
            kind: "model_type",
            loc: Vec::new(),
            msg: "Input should be a valid dictionary or instance of the action".into(),
            input: action.clone(),
        }]);
    };
    let mut issues = Vec::new();
    let mut out = Map::new();
    for field in fields {
        match object.get(field.name) {
            None | Some(Value::Null) if !field.required => {}
            None => issues.push(Issue {
                kind: "missing",
                loc: vec![field.name.into()],
                msg: "Field required".into(),
                input: action.clone(),
            }),
            Some(Value::String(s)) => {
                out.insert(field.name.into(), Value::from(s.as_str()));
            }
            Some(other) => issues.push(Issue {
                kind: "string_type",
                loc: vec![field.name.into()],
                msg: "Input should be a valid string".into(),
                input: other.clone(),
            }),
        }
    }
    for (key, value) in object {
        if key == "metadata" {
            if !value.is_object() {
                issues.push(Issue {
                    kind: "dict_type",
                    loc: vec![key.clone()],
                    msg: "Input should be a valid dictionary".into(),
                    input: value.clone(),
                });
            }
        } else if !fields.iter().any(|f| f.name == key) {
            issues.push(Issue {
                kind: "extra_forbidden",
                loc: vec![key.clone()],
                msg: "Extra inputs are not permitted".into(),
                input: value.clone(),
            });
        }
    }
    if issues.is_empty() {
        Ok(out)
    } else {
        Err(issues)
    }
}

/// The reset arguments every environment knows (OpenEnv's `ResetRequest`): `seed` (an
/// integer ≥ 0) and `episode_id` (a string of at most 255 characters); other keys are the
/// environment's own.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ResetArgs {
    /// The seed asked for.
    pub(crate) seed: Option<u64>,
    /// The episode id asked for.
    pub(crate) episode_id: Option<String>,
    /// Every argument, as sent.
    pub(crate) all: Map<String, Value>,
}

impl ResetArgs {
    /// Reads and checks the arguments of a reset.
    pub(crate) fn parse(args: &Value) -> Result<ResetArgs, Vec<Issue>> {
        let Some(all) = args.as_object() else {
            return Err(vec![Issue {
                kind: "dict_type",
                loc: Vec::new(),
                msg: "Input should be a valid dictionary".into(),
                input: args.clone(),
            }]);
        };
        let mut issues = Vec::new();
        let seed = match all.get("seed") {
            None | Some(Value::Null) => None,
            Some(v) => match v.as_u64() {
                Some(seed) => Some(seed),
                None => {
                    issues.push(Issue {
                        kind: if v.as_i64().is_some() {
                            "greater_than_equal"
                        } else {
                            "int_type"
                        },
                        loc: vec!["seed".into()],
                        msg: "Input should be an integer greater than or equal to 0".into(),
                        input: v.clone(),
                    });
                    None
                }
            },
        };
        let episode_id = match all.get("episode_id") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.chars().count() <= 255 => Some(s.clone()),
            Some(v) => {
                issues.push(Issue {
                    kind: "string_type",
                    loc: vec!["episode_id".into()],
                    msg: "Input should be a string of at most 255 characters".into(),
                    input: v.clone(),
                });
                None
            }
        };
        if issues.is_empty() {
            Ok(ResetArgs {
                seed,
                episode_id,
                all: all.clone(),
            })
        } else {
            Err(issues)
        }
    }
}

/// A fresh episode id: 32 hex digits.
pub(crate) fn new_episode_id() -> String {
    format!("{:032x}", rand::random::<u128>())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CODE: [Field; 1] = [Field {
        name: "code",
        required: true,
    }];

    #[test]
    fn a_step_result_carries_metadata_in_and_beside_the_observation() {
        let mut observation = Map::new();
        observation.insert("stdout".into(), Value::from("hi\n"));
        let mut metadata = Map::new();
        metadata.insert("status".into(), Value::from("success"));
        let result = StepResult {
            observation,
            reward: None,
            done: false,
            metadata,
        };
        assert_eq!(
            result.to_json(),
            json!({"observation": {"stdout": "hi\n", "metadata": {"status": "success"}},
                   "reward": null, "done": false, "metadata": {"status": "success"}})
        );
        let bare = StepResult {
            metadata: Map::new(),
            reward: Some(1.0),
            ..result
        };
        let json = bare.to_json();
        assert!(json.get("metadata").is_none(), "{json}");
        assert_eq!(json["reward"], json!(1.0));
    }

    #[test]
    fn actions_are_checked_like_a_pydantic_model_that_forbids_extras() {
        let ok = parse_action(&json!({"code": "x = 1", "metadata": {}}), &CODE).expect("valid");
        assert_eq!(ok["code"], json!("x = 1"));
        let missing = parse_action(&json!({}), &CODE).unwrap_err();
        assert_eq!(missing[0].kind, "missing");
        assert_eq!(
            missing[0].to_json(&["body", "action"])["loc"],
            json!(["body", "action", "code"])
        );
        let wrong = parse_action(&json!({"code": 1, "lint": true}), &CODE).unwrap_err();
        let kinds: Vec<&str> = wrong.iter().map(|i| i.kind).collect();
        assert_eq!(kinds, ["string_type", "extra_forbidden"]);
        assert_eq!(
            parse_action(&json!("x"), &CODE).unwrap_err()[0].kind,
            "model_type"
        );
    }

    #[test]
    fn reset_arguments_follow_openenvs_reset_request() {
        let args = ResetArgs::parse(&json!({"seed": 7, "episode_id": "e1", "task_id": "t"}))
            .expect("valid");
        assert_eq!(args.seed, Some(7));
        assert_eq!(args.episode_id.as_deref(), Some("e1"));
        assert_eq!(args.all["task_id"], json!("t"));
        let negative = ResetArgs::parse(&json!({"seed": -1})).unwrap_err();
        assert_eq!(negative[0].loc, ["seed"]);
        let long = ResetArgs::parse(&json!({"episode_id": "x".repeat(256)})).unwrap_err();
        assert_eq!(long[0].loc, ["episode_id"]);
        assert!(ResetArgs::parse(&json!([1])).is_err());
    }
}
