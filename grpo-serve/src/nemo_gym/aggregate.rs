//! `POST /aggregate_metrics`: `{verify_responses: [...]}` (verify responses, each with its
//! `reward` and `_ng_task_index`) → NeMo Gym's `AggregateMetrics`: `group_level_metrics`,
//! one entry per task (by `_ng_task_index`, in ascending order) with the mean, max, min,
//! median and standard deviation of its rewards; `agent_metrics`, the same over every
//! response, with the count of responses and of tasks; `key_metrics`, the mean reward.
//! Masked samples (`mask_sample: true`) are left out of the statistics and counted.

use std::collections::BTreeMap;

use axum::Json;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::error::{ApiError, JsonBody};

/// NeMo Gym's `AggregateMetricsRequest`.
#[derive(Debug, Deserialize)]
pub(crate) struct AggregateRequest {
    verify_responses: Vec<Map<String, Value>>,
}

/// `POST /aggregate_metrics`.
pub(crate) async fn aggregate(
    JsonBody(request): JsonBody<AggregateRequest>,
) -> Result<Json<Value>, ApiError> {
    let mut by_task: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
    let mut all = Vec::with_capacity(request.verify_responses.len());
    let mut masked = 0usize;
    for (i, response) in request.verify_responses.iter().enumerate() {
        if response.get("mask_sample").and_then(Value::as_bool) == Some(true) {
            masked += 1;
            continue;
        }
        let reward = response
            .get("reward")
            .and_then(Value::as_f64)
            .ok_or_else(|| {
                ApiError::invalid(format!("`verify_responses[{i}].reward` must be a number"))
            })?;
        let task = match response.get("_ng_task_index") {
            None => 0,
            Some(v) => v.as_i64().ok_or_else(|| {
                ApiError::invalid(format!(
                    "`verify_responses[{i}]._ng_task_index` must be an integer"
                ))
            })?,
        };
        by_task.entry(task).or_default().push(reward);
        all.push(reward);
    }
    if request.verify_responses.is_empty() {
        return Ok(Json(json!({
            "group_level_metrics": [], "agent_metrics": {}, "key_metrics": {},
        })));
    }
    let groups: Vec<Value> = by_task
        .iter()
        .map(|(task, rewards)| {
            let mut entry = stats(rewards);
            entry.insert("_ng_task_index".to_owned(), json!(task));
            Value::Object(entry)
        })
        .collect();
    let mut agent = stats(&all);
    agent.insert("num_rollouts".to_owned(), json!(all.len()));
    agent.insert("num_tasks".to_owned(), json!(by_task.len()));
    agent.insert("num_masked".to_owned(), json!(masked));
    let key = agent
        .get("mean/reward")
        .map(|mean| json!({ "mean/reward": mean }))
        .unwrap_or_else(|| json!({}));
    Ok(Json(json!({
        "group_level_metrics": groups,
        "agent_metrics": agent,
        "key_metrics": key,
    })))
}

/// `mean/reward`, `max/reward`, `min/reward`, `median/reward`, `std/reward` (population) of
/// `rewards`; nothing when there are none.
fn stats(rewards: &[f64]) -> Map<String, Value> {
    let mut out = Map::new();
    if rewards.is_empty() {
        return out;
    }
    let n = rewards.len() as f64;
    let mean = rewards.iter().sum::<f64>() / n;
    let var = rewards.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / n;
    let mut sorted = rewards.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    let median = if sorted.len().is_multiple_of(2) {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    } else {
        sorted[mid]
    };
    out.insert("mean/reward".to_owned(), json!(mean));
    out.insert("max/reward".to_owned(), json!(sorted[sorted.len() - 1]));
    out.insert("min/reward".to_owned(), json!(sorted[0]));
    out.insert("median/reward".to_owned(), json!(median));
    out.insert("std/reward".to_owned(), json!(var.sqrt()));
    out
}
