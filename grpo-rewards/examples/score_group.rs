//! Example of scoring one GRPO group with the [`Scorer`](grpo_rewards::Scorer): math answers
//! checked by value, the format reward, a reward of your own, and custom answer tags that move
//! the format reward and the extraction together.
//!
//!     cargo run -p grpo-rewards --example score_group

use futures::future::BoxFuture;
use grpo_rewards::{
    AnswerFormat, Reward, Score, Scorer, ScoringConfig, Verdict, VerdictKind, Weights,
};
use grpo_tasks::Task;

/// A reward of your own: shorter completions score higher.
struct Brevity;

impl Reward for Brevity {
    fn name(&self) -> &str {
        "brevity"
    }

    fn score_group<'a>(
        &'a self,
        _task: &'a Task,
        completions: &'a [String],
    ) -> BoxFuture<'a, grpo_rewards::Result<Vec<Score>>> {
        Box::pin(async move {
            Ok(completions
                .iter()
                .map(|c| Score {
                    value: Some(1.0 / (1.0 + c.len() as f64 / 100.0)),
                    verdict: Verdict::new(VerdictKind::Correct, "length"),
                })
                .collect())
        })
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let task: Task = serde_json::from_str(
        r#"{"id":"half","kind":"math","prompt":"What is half of one?","answer":"1/2"}"#,
    )?;
    let group = [
        "<think>One split in two.</think><answer>0.5</answer>",
        "<think>Hmm.</think><answer>\\frac{2}{4}</answer>",
        "The answer is 1/3.",
        "<think>cut off at the token limit</think><answer>1/2",
    ]
    .map(String::from);

    let config = ScoringConfig {
        weights: Weights {
            accuracy: 1.0,
            format: 0.1,
        },
        ..ScoringConfig::default()
    };
    let scorer = Scorer::new(&config)?.with_reward(Box::new(Brevity), 0.05)?;
    for (completion, scored) in
        group
            .iter()
            .zip(scorer.score_group_blocking(&task, &group, scorer.options())?)
    {
        println!(
            "{:>6.3}  {:?}  {:<13} {completion:?}",
            scored.reward,
            scored.components.to_map(),
            scored.verdict.kind.as_str(),
        );
    }

    // nano-aha-moment's tags: `<response>` instead of `<answer>`, for format and accuracy.
    let tags = AnswerFormat {
        answer_open: "<response>".into(),
        answer_close: "</response>".into(),
        ..AnswerFormat::default()
    };
    let scorer = Scorer::new(&ScoringConfig { tags, ..config })?;
    let scored = scorer.score_group_blocking(
        &task,
        &["<think>Half.</think><response>1/2</response>".to_string()],
        scorer.options(),
    )?;
    println!(
        "custom tags: reward {} ({})",
        scored[0].reward, scored[0].verdict.reason
    );
    assert!(scored[0].correct && (scored[0].reward - 1.1).abs() < 1e-12);
    Ok(())
}
