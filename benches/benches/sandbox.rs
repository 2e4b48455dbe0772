//! HumanEval-style checks per second through the Scorer (the code judge on the sandbox), both cores.
//!
//!     cargo bench -p grpo-benches --bench sandbox
//!
//! One iteration scores all 164 HumanEval canonical solutions (prompt + solution + tests +
//! `check(entry_point)`) concurrently on a shared sandbox; throughput is reported in checks.
//! Compare with `python3 benches/baselines/python_subprocess.py`, which runs the same programs
//! as fresh `python3 -I` subprocesses.
#![allow(
    clippy::expect_used,
    reason = "a benchmark stops, with its message, when its setup fails"
)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::sync::Arc;

use grpo_rewards::ScoringConfig;
use grpo_sandbox::Sandbox;
use grpo_tasks::Task;
use grpo_tasks::import::{Format, import_file};

/// Every HumanEval problem through the pack importer, with its canonical solution.
fn humaneval() -> Vec<(Task, Vec<String>)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../grpo-sandbox/tests/data/humaneval/HumanEval.jsonl.gz");
    import_file(&Format::HumanEval, &path)
        .unwrap()
        .into_iter()
        .map(|task| {
            let Task::Code(code) = &task else {
                unreachable!("{} is not a code task", task.id())
            };
            let canonical = code.reference.clone().expect("canonical_solution imported");
            (task, vec![canonical])
        })
        .collect()
}

fn bench_checks(c: &mut Criterion) {
    let tasks = humaneval();
    let scorer = Arc::new(
        grpo_sandbox::scorer(&ScoringConfig::default(), Some(Sandbox::shared().unwrap())).unwrap(),
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let run_all = || {
        rt.block_on(async {
            let handles: Vec<_> = tasks
                .iter()
                .cloned()
                .map(|(task, completions)| {
                    let scorer = scorer.clone();
                    tokio::spawn(async move {
                        scorer
                            .score_group(&task, &completions, scorer.options())
                            .await
                    })
                })
                .collect();
            let mut correct = 0;
            for h in handles {
                correct += h
                    .await
                    .unwrap()
                    .unwrap()
                    .iter()
                    .filter(|s| s.verdict.is_correct())
                    .count();
            }
            correct
        })
    };
    assert_eq!(run_all(), tasks.len(), "every canonical solution passes");
    let mut group = c.benchmark_group("sandbox");
    group.sample_size(10);
    group.throughput(Throughput::Elements(tasks.len() as u64));
    group.bench_function("humaneval_checks", |b| b.iter(run_all));
    group.finish();
}

criterion_group!(benches, bench_checks);
criterion_main!(benches);
