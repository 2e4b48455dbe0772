//! Throughput probes (ignored by default; they print numbers rather than assert them):
//!
//!     cargo test -p grpo-rewards --test all sandbox_throughput:: -- --ignored --nocapture --test-threads 1

use crate::sandbox::run_all;
use std::time::Instant;

use grpo_sandbox::{Allocator, EngineOptions, Limits, Sandbox, SandboxOptions};

const CHECK: &str = "from typing import List\n\ndef has_close_elements(numbers: List[float], threshold: float) -> bool:\n    for idx, elem in enumerate(numbers):\n        for idx2, elem2 in enumerate(numbers):\n            if idx != idx2:\n                distance = abs(elem - elem2)\n                if distance < threshold:\n                    return True\n    return False\n\ndef check(candidate):\n    assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True\n    assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) == False\n    assert candidate([1.0, 2.0, 5.9, 4.0, 5.0], 0.95) == True\n\ncheck(has_close_elements)\n";

/// User + system CPU seconds of this process so far (Linux `/proc/self/stat`).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

fn measure(allocator: Allocator, concurrency: usize, threads: usize, n: usize) -> f64 {
    let options = SandboxOptions {
        engine: EngineOptions {
            allocator,
            ..EngineOptions::default()
        },
        concurrency,
        ..SandboxOptions::default()
    };
    let sandbox = Sandbox::new(&options).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .unwrap();
    let programs = |n| {
        (0..n)
            .map(|_| (CHECK.to_owned(), Vec::new()))
            .collect::<Vec<_>>()
    };
    let limits = Limits::default();
    rt.block_on(run_all(sandbox.clone(), programs(20), &limits));
    let started = Instant::now();
    let cpu = cpu_seconds();
    let results = rt.block_on(run_all(sandbox, programs(n), &limits));
    let secs = started.elapsed().as_secs_f64();
    println!(
        "  {:.2} ms CPU per check",
        (cpu_seconds() - cpu) * 1e3 / n as f64
    );
    assert!(
        results
            .iter()
            .all(|r| r.as_ref().unwrap().status == grpo_rewards::RunStatus::Ok)
    );
    n as f64 / secs
}

#[test]
#[ignore]
fn checks_per_second() {
    let pooling = |keep_resident_mb| Allocator::Pooling {
        total_instances: 16,
        max_memory_mb: 512,
        keep_resident_mb,
    };
    for allocator in [Allocator::OnDemand, pooling(0), pooling(64)] {
        for (concurrency, threads) in [(1, 1), (2, 2)] {
            let rate = measure(allocator, concurrency, threads, 400);
            println!(
                "{allocator:?} concurrency {concurrency} threads {threads}: {rate:.0} checks/s"
            );
        }
    }
}

#[test]
#[ignore]
fn serial_trivial_runs() {
    let pooling = |keep_resident_mb| Allocator::Pooling {
        total_instances: 16,
        max_memory_mb: 512,
        keep_resident_mb,
    };
    for allocator in [Allocator::OnDemand, pooling(0), pooling(64)] {
        let options = SandboxOptions {
            engine: EngineOptions {
                allocator,
                ..EngineOptions::default()
            },
            concurrency: 1,
            ..SandboxOptions::default()
        };
        let sandbox = Sandbox::new(&options).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let limits = Limits::default();
        println!("{allocator:?}");
        for program in ["pass", CHECK] {
            let started = Instant::now();
            for _ in 0..200 {
                rt.block_on(sandbox.run(program, b"", &limits)).unwrap();
            }
            println!(
                "{:.2} ms per run of {} bytes",
                started.elapsed().as_secs_f64() * 5.0,
                program.len()
            );
        }
    }
}
