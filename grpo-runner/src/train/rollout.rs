//! The rollout phase: sample a round's groups with the current policy and score them with the
//! reward set (code in the sandbox, the first half scored while the second is sampled), as
//! free functions of what they read. Sampling and scoring are one phase because they overlap;
//! its parts are [`score_with_retries`] (a group scored again while it faults) and
//! [`into_groups`] (scores, shaping and tool logs put together, faulted groups left out).

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::join_all;
use grpo_rewards::{RewardError, ScoreOptions, ScoredResult, Scorer};
use grpo_tasks::Task;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{Parts, derive_seed};
use crate::error::{Error, Result};
use crate::rollout::group::Group;
use crate::rollout::round::RoundMetrics;
use crate::rollout::sampler::{
    Completion, CompletionId, SampleRequest, Sampled, SamplingConfig, ToolDriver, sample,
};
use crate::rollout::tools::{CodeTool, ToolLog};

/// `count` training problems drawn with replacement, in the order `rng` gives.
pub(super) fn draw_tasks(rng: &mut ChaCha8Rng, tasks: &[Task], count: usize) -> Vec<Task> {
    (0..count)
        .map(|_| tasks[rng.gen_range(0..tasks.len())].clone())
        .collect()
}

/// Samples and scores one group per task of `tasks` (sampling round `round` of the step):
/// the groups whose scoring (and tool) succeeded, and what the round cost.
pub(super) fn rollout(
    parts: &Parts<'_>,
    tasks: Vec<Task>,
    round: u64,
) -> Result<(Vec<Group>, RoundMetrics)> {
    let config = parts.config;
    let count = tasks.len();
    let encoded: Vec<(String, Vec<u32>)> = tasks
        .iter()
        .map(|t| parts.encode_prompt(t))
        .collect::<Result<_>>()?;
    let s = &config.sampling;
    let g = s.group_size;
    let sampling = SamplingConfig {
        temperature: s.temperature,
        top_p: s.top_p,
        top_k: s.top_k,
        max_new_tokens: s.max_new_tokens,
        seed: derive_seed(config.seed, 2, parts.step, round),
        max_batch_rows: s.max_batch_rows,
        ignore_eos: s.ignore_eos,
    };
    let prompt_ids: Vec<Vec<u32>> = encoded.iter().map(|(_, ids)| ids.clone()).collect();
    // With code tasks the prompts are sampled in two pieces and the first piece is scored
    // in the sandbox while the second is sampled; the draws are the same either way (each
    // completion has its own random stream).
    let pieces = if parts.scores_code && count > 1 { 2 } else { 1 };
    let per_piece = count.div_ceil(pieces);
    let retries = config.rewards.fault_retries;
    let timeout = config.rewards.group_timeout();
    // A code task that samples its tests draws another subset each step.
    let test_seed = Some(derive_seed(config.seed, 3, parts.step, round));
    // One entry per prompt: its G completions and their decoded texts.
    let mut sampled: Vec<(Vec<Completion>, Vec<String>)> = Vec::with_capacity(count);
    let mut scoring = Vec::with_capacity(pieces);
    let mut metrics = RoundMetrics::default();
    let mut tool_log = ToolLog::default();
    for (piece, ids) in prompt_ids.chunks(per_piece).enumerate() {
        let start = Instant::now();
        let first = piece * per_piece;
        let mut tool = parts.tool_sandbox.map(|sandbox| {
            CodeTool::new(
                sandbox.clone(),
                parts.runtime,
                parts.tokenizer,
                &config.tools,
            )
        });
        let request = SampleRequest::new(ids, g, &sampling)
            .starting_at(first)
            .with_tools(tool.as_mut().map(|t| t as &mut dyn ToolDriver));
        let Sampled { groups, stats } = sample(parts.policy, request)?;
        if let Some(tool) = tool {
            let log = tool.finish_all();
            tool_log.calls.extend(log.calls);
            tool_log.faults.extend(log.faults);
        }
        metrics.sample_seconds += start.elapsed().as_secs_f64();
        metrics.tool_wait_seconds += stats.tool_wait_seconds;
        metrics.generated_tokens += stats.generated_tokens;
        let mut jobs: Vec<(Task, Vec<String>)> = Vec::with_capacity(groups.len());
        for (task, group) in tasks[first..].iter().zip(groups) {
            let texts = group
                .iter()
                .map(|c| parts.tokenizer.decode(&c.tokens))
                .collect::<Result<Vec<_>>>()?;
            jobs.push((task.clone(), texts.clone()));
            sampled.push((group, texts));
        }
        let rewards = Arc::clone(parts.scorer);
        scoring.push(parts.runtime.spawn(async move {
            let started = Instant::now();
            let scored = score_with_retries(&rewards, &jobs, retries, timeout, test_seed).await;
            (scored, started.elapsed().as_secs_f64())
        }));
    }
    let wait = Instant::now();
    let mut scored = Vec::with_capacity(count);
    for handle in scoring {
        let (piece, seconds) = parts
            .runtime
            .block_on(handle)
            .map_err(|e| Error::invalid(format!("scoring task failed: {e}")))?;
        scored.extend(piece);
        metrics.scoring_seconds += seconds;
    }
    metrics.score_seconds = wait.elapsed().as_secs_f64();
    let rounds = tasks.into_iter().zip(encoded).zip(sampled).zip(scored);
    let rounds = rounds
        .map(|(((task, prompt), sampled), scores)| Sampling {
            task,
            prompt,
            sampled,
            scores,
        })
        .collect();
    metrics.tool_faults = config.tools.enabled.then_some(tool_log.faults.len());
    let tool_log = config.tools.enabled.then_some(tool_log);
    let (groups, fault_groups) = into_groups(
        rounds,
        g,
        tool_log,
        config.algorithm.shaping.overlong.as_ref(),
    )?;
    metrics.fault_groups = fault_groups;
    Ok((groups, metrics))
}

/// One prompt of a round, sampled and scored: its task, its text and ids, its completions
/// and their texts, and their scores (`None` when scoring faulted on every try).
pub(super) struct Sampling {
    pub(super) task: Task,
    pub(super) prompt: (String, Vec<u32>),
    pub(super) sampled: (Vec<Completion>, Vec<String>),
    pub(super) scores: Option<Vec<ScoredResult>>,
}

/// The groups of a round's sampled and scored prompts (in order, `group_size` completions
/// each): each score's reward plus the overlong penalty (when `overlong` is set), each
/// completion's tool calls (with a `tool_log`, the run's tool being on). A group whose
/// scoring faulted on every try is left out, and so is one whose tool failed on our side (its
/// completions saw no real output): a fault is never a reward. Returns the groups kept and
/// how many were left out.
pub(super) fn into_groups(
    sampled: Vec<Sampling>,
    group_size: usize,
    mut tool_log: Option<ToolLog>,
    overlong: Option<&grpo_core::OverlongConfig>,
) -> Result<(Vec<Group>, usize)> {
    let mut groups = Vec::with_capacity(sampled.len());
    let mut fault_groups = 0;
    for (prompt_index, one) in sampled.into_iter().enumerate() {
        let Sampling {
            task,
            prompt: (prompt, ids),
            sampled: (completions, texts),
            scores,
        } = one;
        let ids_of_group = (0..group_size).map(|sample| CompletionId {
            prompt: prompt_index,
            sample,
        });
        let tool_fault = tool_log
            .as_ref()
            .is_some_and(|log| ids_of_group.clone().any(|id| log.faults.contains_key(&id)));
        let Some(scores) = scores.filter(|_| !tool_fault) else {
            fault_groups += 1;
            continue;
        };
        let tool_calls = match tool_log.as_mut() {
            Some(log) => ids_of_group
                .map(|id| log.calls.remove(&id).unwrap_or_default())
                .collect(),
            None => Vec::new(),
        };
        let mut rewards = Vec::with_capacity(group_size);
        for (c, s) in completions.iter().zip(&scores) {
            let penalty = match overlong {
                Some(o) => grpo_core::overlong_penalty(c.tokens.len(), o)?,
                None => 0.0,
            };
            rewards.push(s.reward + penalty);
        }
        groups.push(Group {
            task,
            prompt,
            prompt_ids: ids,
            completions,
            texts,
            scores,
            rewards,
            tool_calls,
        });
    }
    Ok((groups, fault_groups))
}

/// Scores `groups`, scoring a group again (up to `retries` times) while it faults; a group
/// that faults on every try is `None`: it gets no reward at all. A group whose scoring takes
/// longer than `timeout` (a reward that hangs) is a fault like any other. `test_seed` varies
/// the tests a code task samples ([`ScoreOptions::test_seed`]).
pub(super) async fn score_with_retries(
    scorer: &Scorer,
    groups: &[(Task, Vec<String>)],
    retries: usize,
    timeout: Option<Duration>,
    test_seed: Option<u64>,
) -> Vec<Option<Vec<ScoredResult>>> {
    let options = ScoreOptions {
        test_seed,
        ..*scorer.options()
    };
    let options = &options;
    let mut out: Vec<Option<Vec<ScoredResult>>> = vec![None; groups.len()];
    let mut pending: Vec<usize> = (0..groups.len()).collect();
    for attempt in 0..=retries {
        let results = join_all(pending.iter().map(|&i| async move {
            let (task, completions) = &groups[i];
            let scoring = scorer.score_group(task, completions, options);
            match timeout {
                Some(limit) => tokio::time::timeout(limit, scoring)
                    .await
                    .unwrap_or_else(|_| {
                        Err(RewardError::fault(
                            task.id(),
                            format!(
                                "scoring took longer than rewards.group_timeout_s = {}",
                                limit.as_secs_f64()
                            ),
                        ))
                    }),
                None => scoring.await,
            }
        }))
        .await;
        let mut failed = Vec::new();
        for (&i, result) in pending.iter().zip(results) {
            match result {
                Ok(scores) => out[i] = Some(scores),
                Err(e) => {
                    tracing::warn!(attempt, task = groups[i].0.id(), error = %e, "scoring fault");
                    failed.push(i);
                }
            }
        }
        pending = failed;
        if pending.is_empty() {
            break;
        }
    }
    out
}

#[cfg(test)]
pub(super) mod tests {
    use grpo_rewards::ScoringConfig;
    use grpo_tasks::MathTask;

    use super::*;
    use crate::rollout::sampler::FinishReason;
    use crate::rollout::tools::ToolCall;

    fn task() -> Task {
        Task::Math(MathTask {
            id: "add".into(),
            prompt: "What is 2 + 3?".into(),
            answer: "5".into(),
            alternatives: Vec::new(),
            metadata: None,
        })
    }

    /// `texts`, each a completion of as many tokens as characters, scored by the default
    /// reward set (accuracy and format) against 2 + 3 = 5.
    fn sampling(texts: &[&str], retries: usize) -> Sampling {
        let texts: Vec<String> = texts.iter().map(|t| (*t).to_owned()).collect();
        let completions = texts
            .iter()
            .map(|t| Completion {
                prompt_index: 0,
                tokens: vec![1; t.len()],
                logprobs: vec![-0.5; t.len()],
                finish_reason: FinishReason::Eos,
                tool_spans: Vec::new(),
            })
            .collect();
        let scorer = Scorer::new(&ScoringConfig::default()).expect("the default reward set");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let jobs = [(task(), texts.clone())];
        let scores = runtime
            .block_on(score_with_retries(&scorer, &jobs, retries, None, None))
            .pop()
            .flatten();
        Sampling {
            task: task(),
            prompt: ("What is 2 + 3?".into(), vec![1, 2, 3]),
            sampled: (completions, texts),
            scores,
        }
    }

    /// One group of `texts`, scored and shaped as the rollout does without tools.
    pub(crate) fn scored_group(texts: &[&str]) -> Result<Group> {
        let (mut groups, faults) = into_groups(vec![sampling(texts, 0)], texts.len(), None, None)?;
        assert_eq!(faults, 0);
        Ok(groups.remove(0))
    }

    #[test]
    fn scoring_gives_each_completion_its_reward_and_faults_leave_the_group_out() -> Result<()> {
        let right = "<think>2 + 3</think><answer>5</answer>";
        let wrong = "<think>2 + 3 is six</think><answer>6</answer>";
        let overlong = grpo_core::OverlongConfig {
            max_len: right.len() + 4,
            cache_len: 4,
        };
        // A group scored, one whose scoring faulted on every try, one whose tool faulted.
        let mut faulted = sampling(&[right, wrong], 1);
        faulted.scores = None;
        let mut log = ToolLog::default();
        let call = ToolCall {
            code: "print(5)".into(),
            output: "5\n".into(),
            status: grpo_rewards::RunStatus::Ok,
            truncated: false,
            seconds: 0.1,
        };
        log.calls.insert(
            CompletionId {
                prompt: 0,
                sample: 1,
            },
            vec![call.clone()],
        );
        log.faults.insert(
            CompletionId {
                prompt: 2,
                sample: 0,
            },
            "no session".into(),
        );
        let sampled = vec![
            sampling(&[right, wrong], 0),
            faulted,
            sampling(&[right, wrong], 0),
        ];
        let (groups, faults) = into_groups(sampled, 2, Some(log), Some(&overlong))?;
        assert_eq!((groups.len(), faults), (1, 2));
        let group = &groups[0];
        assert!(group.scores[0].correct && !group.scores[1].correct);
        // The rewards are the scores' plus shaping: the right answer is within the length
        // limit, the longer wrong one past it (a penalty of 1).
        assert_eq!(group.rewards[0], group.scores[0].reward);
        assert_eq!(group.rewards[1], group.scores[1].reward - 1.0);
        assert_eq!(group.tool_calls, [Vec::new(), vec![call]]);
        Ok(())
    }
}
