//! The remote-reward shapes of the RL frameworks that call a reward URL, mapped onto the
//! same [`Scorer`](grpo_rewards::Scorer) as `/v1/score`.
//!
//! - `POST /get_reward`: OpenRLHF's remote reward model (`--remote_rm_url`, one URL or
//!   several; OpenRLHF splits a batch over them). The body is `{"query": [...], "prompts":
//!   [...], "labels": [...]}`: each `query` is the prompt and the response decoded together,
//!   so the response is what follows the prompt when the query starts with it (otherwise the
//!   whole query is scored, as OpenRLHF's own reward functions do). The answer is
//!   `{"rewards": [...], "scores": [...], "extra_logs": {...}}`, one value per query:
//!   `rewards` the total reward, `scores` the accuracy in `[0, 1]` (what OpenRLHF's dynamic
//!   filtering reads), `extra_logs` the accuracy, format and correctness per query.
//! - `POST /v1/reward`: slime's remote reward (`--rm-type remote_rm --rm-url URL`), one
//!   sample `{"prompt", "response", "label"}`, answered with the reward as a bare JSON number
//!   (what slime takes without `--reward-key`). With `?details=true` the answer is an object
//!   `{"reward", "accuracy", "format", "correct", "verdict"}` (use `--reward-key reward`).
//!
//! A label is a math answer (a string or a number), verl's code ground truth
//! (`{"inputs", "outputs", "fn_name"?}`, as an object or its JSON text), or a task in our pack
//! schema (an object with `kind`, or its JSON text). Both shapes take the optional
//! `format_weight` and `credit` of `/v1/score`; other fields are ignored, so a framework that
//! adds one keeps working. Queries with the same label are scored as one group. A scoring
//! fault answers 503 for the whole request (both frameworks retry), never a reward of 0.

use std::collections::HashMap;

use axum::Json;
use axum::extract::State;
use axum::http::Uri;
use futures::future::try_join_all;
use grpo_rewards::code::Credit;
use grpo_rewards::result::ScoredResult;
use serde::Deserialize;
use serde_json::{Value, json};

use super::error::{ApiError, JsonBody};
use super::score::{PreparedScore, TaskShape};
use super::{AppState, ServiceState, admit};

/// A `POST /get_reward` body (OpenRLHF).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct GetRewardRequest {
    /// Prompt and response, decoded together, one per sample.
    pub query: Vec<String>,
    /// The prompts, one per sample (absent: each whole query is scored).
    #[serde(default)]
    pub prompts: Option<Vec<String>>,
    /// The labels, one per sample.
    #[serde(default)]
    pub labels: Option<Vec<Value>>,
    /// Weight of the format reward (absent: none).
    #[serde(default)]
    pub format_weight: Option<f64>,
    /// Binary or partial credit for code labels.
    #[serde(default)]
    pub credit: Option<Credit>,
}

/// A `POST /v1/reward` body (slime).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RewardRequest {
    /// The prompt (not scored).
    #[serde(default)]
    pub prompt: Option<Value>,
    /// The response to score.
    pub response: String,
    /// The label.
    #[serde(default)]
    pub label: Option<Value>,
    /// Weight of the format reward (absent: none).
    #[serde(default)]
    pub format_weight: Option<f64>,
    /// Binary or partial credit for code labels.
    #[serde(default)]
    pub credit: Option<Credit>,
}

/// The part of an OpenRLHF query that is the response: what follows the prompt when the
/// query starts with it, else the whole query.
pub fn response_of<'a>(query: &'a str, prompt: Option<&str>) -> &'a str {
    prompt
        .filter(|p| !p.is_empty())
        .and_then(|p| query.strip_prefix(p))
        .unwrap_or(query)
}

/// The task a label stands for, checked as `/v1/score` checks its task: an object with
/// `kind` (or its JSON text) is our schema, anything else is verl's ground truth.
fn prepare_label(
    label: &Value,
    field: &str,
    (format_weight, credit): (Option<f64>, Option<Credit>),
) -> Result<PreparedScore, ApiError> {
    let ours = match label {
        Value::Object(o) if o.contains_key("kind") => Some(label.clone()),
        Value::String(s) if s.trim_start().starts_with('{') => serde_json::from_str::<Value>(s)
            .ok()
            .filter(|v| v.get("kind").is_some()),
        _ => None,
    };
    let shape = match &ours {
        Some(task) => TaskShape {
            task: Some(task),
            ..TaskShape::default()
        },
        None => TaskShape {
            ground_truth: Some(label),
            ..TaskShape::default()
        },
    };
    shape
        .prepare(field, credit, format_weight)
        .map_err(|e| match e {
            ApiError::Invalid { reason } => ApiError::invalid(format!("`{field}`: {reason}")),
            other => other,
        })
}

impl ServiceState {
    /// Scores `responses[i]` against `labels[i]` (labels already checked), grouping the
    /// responses of one label, after admission. One result per response, in order.
    async fn score_labelled(
        &self,
        responses: Vec<String>,
        labels: &[Value],
        request: (Option<f64>, Option<Credit>),
        field: &str,
    ) -> Result<Vec<ScoredResult>, ApiError> {
        if responses.len() > self.config.max_completions {
            return Err(ApiError::invalid(format!(
                "{} samples in one request; the limit is {}",
                responses.len(),
                self.config.max_completions
            )));
        }
        // Group by label (its JSON text), in order of first appearance.
        let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
        let mut by_text: HashMap<String, usize> = HashMap::new();
        for (i, label) in labels.iter().enumerate() {
            let key = label.to_string();
            match by_text.get(&key) {
                Some(&g) => groups[g].1.push(i),
                None => {
                    by_text.insert(key, groups.len());
                    groups.push((i, vec![i]));
                }
            }
        }
        let mut prepared = Vec::with_capacity(groups.len());
        let mut runs = 0u64;
        for (first, members) in &groups {
            let p = prepare_label(&labels[*first], &format!("{field}[{first}]"), request)?;
            runs = runs.saturating_add(p.sandbox_runs(members.len()));
            prepared.push(p);
        }
        if runs > self.config.max_sandbox_runs {
            return Err(ApiError::invalid(format!(
                "this request needs {runs} sandbox runs (samples × test cases); the limit is {}",
                self.config.max_sandbox_runs
            )));
        }
        let _admitted = admit(self, self.config.queue_wait).await?;
        let scored = try_join_all(groups.iter().zip(&prepared).map(|((_, members), p)| {
            let completions: Vec<String> = members.iter().map(|&i| responses[i].clone()).collect();
            let options = self.score_options(p);
            async move {
                self.scorer
                    .score_group(&p.task, &completions, &options)
                    .await
                    .map_err(|e| ApiError::from_scoring(e, p.task.id(), "remote reward"))
            }
        }))
        .await?;
        self.metrics.add_sandbox_runs(runs);
        let mut results: Vec<Option<ScoredResult>> = vec![None; responses.len()];
        for ((_, members), group) in groups.iter().zip(scored) {
            for (&i, result) in members.iter().zip(group) {
                self.metrics.record_verdict(result.verdict.kind);
                results[i] = Some(result);
            }
        }
        results
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                r.ok_or_else(|| ApiError::Internal {
                    reason: format!("sample {i} was not scored"),
                })
            })
            .collect()
    }
}

/// `POST /get_reward`: OpenRLHF's remote reward model.
pub(crate) async fn get_reward_handler(
    State(state): State<AppState>,
    JsonBody(request): JsonBody<GetRewardRequest>,
) -> Result<Json<Value>, ApiError> {
    let n = request.query.len();
    let labels = request.labels.as_ref().ok_or_else(|| {
        ApiError::invalid("`labels` is missing: grpo serve checks each response against its label (a math answer, verl's code ground truth, or a task)")
    })?;
    if labels.len() != n {
        return Err(ApiError::invalid(format!(
            "{n} queries but {} labels",
            labels.len()
        )));
    }
    if let Some(prompts) = &request.prompts
        && prompts.len() != n
    {
        return Err(ApiError::invalid(format!(
            "{n} queries but {} prompts",
            prompts.len()
        )));
    }
    let responses = request
        .query
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let prompt = request.prompts.as_ref().map(|p| p[i].as_str());
            response_of(q, prompt).to_owned()
        })
        .collect();
    let results = state
        .score_labelled(
            responses,
            labels,
            (request.format_weight, request.credit),
            "labels",
        )
        .await?;
    let rewards: Vec<f64> = results.iter().map(|r| r.reward).collect();
    let accuracy: Vec<f64> = results
        .iter()
        .map(|r| r.components.accuracy.unwrap_or(0.0))
        .collect();
    let format: Vec<f64> = results
        .iter()
        .map(|r| r.components.format.unwrap_or(0.0))
        .collect();
    let correct: Vec<f64> = results
        .iter()
        .map(|r| if r.correct { 1.0 } else { 0.0 })
        .collect();
    Ok(Json(json!({
        "rewards": rewards,
        "scores": accuracy,
        "extra_logs": {"accuracy": accuracy, "format": format, "correct": correct},
    })))
}

/// `POST /v1/reward`: slime's remote reward, one sample.
pub(crate) async fn reward_handler(
    State(state): State<AppState>,
    uri: Uri,
    JsonBody(request): JsonBody<RewardRequest>,
) -> Result<Json<Value>, ApiError> {
    let details = match uri.query() {
        None => false,
        Some(query) => details_asked(query)?,
    };
    let label = request.label.ok_or_else(|| {
        ApiError::invalid("`label` is missing: grpo serve checks the response against it")
    })?;
    let results = state
        .score_labelled(
            vec![request.response],
            std::slice::from_ref(&label),
            (request.format_weight, request.credit),
            "label",
        )
        .await?;
    let Some(result) = results.into_iter().next() else {
        return Err(ApiError::Internal {
            reason: "the sample was not scored".to_owned(),
        });
    };
    if !details {
        return Ok(Json(json!(result.reward)));
    }
    Ok(Json(json!({
        "reward": result.reward,
        "accuracy": result.components.accuracy,
        "format": result.components.format,
        "correct": result.correct,
        "verdict": result.verdict,
    })))
}

/// Whether the query string asks for the detailed answer (`details=true|1|false|0`).
fn details_asked(query: &str) -> Result<bool, ApiError> {
    let mut details = false;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, "true"));
        if key != "details" {
            return Err(ApiError::invalid(format!(
                "unknown query parameter `{key}` (this route takes `details`)"
            )));
        }
        details = match value {
            "true" | "1" => true,
            "false" | "0" => false,
            other => {
                return Err(ApiError::invalid(format!(
                    "`details`: expected true or false, got {other:?}"
                )));
            }
        };
    }
    Ok(details)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_response_is_what_follows_the_prompt() {
        assert_eq!(response_of("Q: 1+1? A: 2", Some("Q: 1+1? ")), "A: 2");
        assert_eq!(response_of("A: 2", Some("Q: 1+1? ")), "A: 2");
        assert_eq!(response_of("Q: A: 2", None), "Q: A: 2");
        assert_eq!(response_of("Q: A: 2", Some("")), "Q: A: 2");
    }

    #[test]
    fn labels_map_to_tasks_by_shape() {
        let prep = |label: Value| prepare_label(&label, "labels[0]", (None, None));
        let Ok(p) = prep(json!("\\frac{1}{2}")) else {
            panic!("math label")
        };
        assert!(matches!(p.task, grpo_tasks::Task::Math(_)));
        let Ok(p) = prep(json!(7)) else {
            panic!("number label")
        };
        assert!(matches!(p.task, grpo_tasks::Task::Math(_)));
        for code in [
            json!({"inputs": ["1\n"], "outputs": ["1\n"]}),
            json!("{\"inputs\": [\"1\\n\"], \"outputs\": [\"1\\n\"]}"),
        ] {
            let Ok(p) = prep(code) else {
                panic!("code label")
            };
            assert!(matches!(p.task, grpo_tasks::Task::Code(_)));
        }
        let task =
            json!({"id": "c1", "kind": "countdown", "prompt": "p", "numbers": [1, 2], "target": 3});
        for label in [task.clone(), json!(task.to_string())] {
            let Ok(p) = prep(label) else {
                panic!("task label")
            };
            assert!(matches!(p.task, grpo_tasks::Task::Countdown(_)));
        }
        let Err(err) = prep(json!({"inputs": ["1"]})) else {
            panic!("a broken label was accepted")
        };
        assert!(err.to_string().contains("`labels[0]`"), "{err}");
        assert!(err.to_string().contains("outputs"), "{err}");
    }

    #[test]
    fn details_query() {
        assert!(!details_asked("").unwrap());
        assert!(details_asked("details=true").unwrap());
        assert!(details_asked("details").unwrap());
        assert!(!details_asked("details=0").unwrap());
        assert!(details_asked("details=yes").is_err());
        assert!(details_asked("detail=1").is_err());
    }
}
