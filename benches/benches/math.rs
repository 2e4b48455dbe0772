//! Throughput of the math checker (extraction + parse + equivalence) on the shared pairs,
//! one thread: `cargo bench -p grpo-benches --bench math`.
//!
//! `math/check_all` checks every pair of `benches/data/math_pairs.jsonl` per iteration
//! (gold parsed each time, as the Python baseline does); the per-category benches show
//! where time goes. Compare with `python3 benches/baselines/math_verify.py`, which times both
//! checkers in one run (ours through the `math_pairs` binary).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use grpo_benches::math_pairs::math_pairs;
use grpo_rewards::MathChecker;

fn bench_math(c: &mut Criterion) {
    let pairs = math_pairs();
    let checker = MathChecker::default();
    let mut group = c.benchmark_group("math");
    group.throughput(Throughput::Elements(pairs.len() as u64));
    group.bench_function("check_all", |b| {
        b.iter(|| {
            for p in &pairs {
                black_box(checker.check(black_box(&p.gold), black_box(&p.pred)));
            }
        })
    });
    let mut categories: Vec<&str> = pairs.iter().map(|p| p.category.as_str()).collect();
    categories.sort_unstable();
    categories.dedup();
    for cat in categories {
        let subset: Vec<_> = pairs.iter().filter(|p| p.category == cat).collect();
        group.throughput(Throughput::Elements(subset.len() as u64));
        group.bench_function(cat, |b| {
            b.iter(|| {
                for p in &subset {
                    black_box(checker.check(black_box(&p.gold), black_box(&p.pred)));
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_math);
criterion_main!(benches);
