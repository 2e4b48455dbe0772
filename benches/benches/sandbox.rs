//! HumanEval-style checks per second through the Scorer (the code judge on the sandbox), both cores.
//!
//!     cargo bench -p grpo-benches --bench sandbox
//!
//! One iteration scores all 164 HumanEval canonical solutions (prompt + solution + tests +
//! `check(entry_point)`) concurrently on a shared sandbox; throughput is reported in checks.
//! Compare with `python3 benches/baselines/python_subprocess.py`, which runs the same programs
//! as fresh `python3 -I` subprocesses.
//!
//! `sandbox/trivial_*` is the per-run floor: one trivial program at a time on one thread
//! (`cargo bench -p grpo-benches --bench sandbox -- trivial`), as a script and as an
//! assert-style check; its time per iteration is the cost of one run on one core.
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

fn bench_trivial(c: &mut Criterion) {
    let sandbox = Sandbox::shared().unwrap();
    let scorer = grpo_sandbox::scorer(&ScoringConfig::default(), Some(sandbox.clone())).unwrap();
    let task: Task = serde_json::from_value(serde_json::json!({
        "kind": "code",
        "id": "trivial",
        "prompt": "f",
        "language": "python",
        "mode": "full",
        "tests": {"type": "assert", "code": "assert f() == 1", "entry_point": "f"}
    }))
    .expect("a trivial code task");
    let completion = vec!["def f():\n    return 1\n".to_owned()];
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let limits = grpo_sandbox::Limits::default();
    let script = rt.block_on(sandbox.run("x = 1", b"", &limits)).unwrap();
    assert_eq!(
        script.status,
        grpo_rewards::result::RunStatus::Ok,
        "{script:?}"
    );
    let check = || {
        rt.block_on(scorer.score_group(&task, &completion, scorer.options()))
            .unwrap()
    };
    assert!(check()[0].verdict.is_correct(), "the trivial check passes");
    let mut group = c.benchmark_group("sandbox");
    group.throughput(Throughput::Elements(1));
    group.bench_function("trivial_script", |b| {
        b.iter(|| rt.block_on(sandbox.run("x = 1", b"", &limits)).unwrap())
    });
    group.bench_function("trivial_check", |b| b.iter(check));
    group.finish();
}

criterion_group!(benches, bench_trivial, bench_checks);
criterion_main!(benches);
