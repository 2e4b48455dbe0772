//! The figures of a run: each level per target (throughput, latency percentiles, errors by
//! kind, references failed, CPU per request), the ratios of the first target to each other
//! one, and the containment table, as JSON and as text.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::load::{Checked, Tally};

/// The nearest-rank percentile of sorted values (0 when empty).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// One level on one target, as JSON. `cpu_s` is the target's CPU seconds over the level,
/// when read.
pub fn summarise(
    concurrency: usize,
    requests: usize,
    seconds: f64,
    cpu_s: Option<f64>,
    mut tally: Tally,
) -> Value {
    tally.latencies_ms.sort_by(f64::total_cmp);
    let l = &tally.latencies_ms;
    let errors: usize = tally.errors.values().sum();
    json!({
        "concurrency": concurrency,
        "requests": requests,
        "seconds": seconds,
        "throughput_rps": requests as f64 / seconds.max(1e-9),
        "latency_ms": {
            "p50": percentile(l, 50.0), "p90": percentile(l, 90.0),
            "p99": percentile(l, 99.0), "max": l.last().copied().unwrap_or(0.0),
        },
        "cpu_s": cpu_s,
        "cpu_ms_per_request": cpu_s.map(|s| s * 1000.0 / requests.max(1) as f64),
        "statuses": tally.statuses.iter().map(|(s, n)| (s.to_string(), json!(n))).collect::<serde_json::Map<_, _>>(),
        "errors": errors,
        "errors_by_kind": tally.errors,
        "timeouts": tally.errors.get("timeout").copied().unwrap_or(0),
        "references_failed": tally.references_failed,
        "outcomes": tally.outcomes,
    })
}

/// The first target over every other, level by level: throughput as first/other, latency
/// and CPU per request as other/first, so every figure above 1 favours the first target.
pub fn ratios(targets: &[Value]) -> Vec<Value> {
    let Some((first, others)) = targets.split_first() else {
        return Vec::new();
    };
    let levels = |t: &Value| t["levels"].as_array().cloned().unwrap_or_default();
    let mut out = Vec::new();
    for other in others {
        for (a, b) in levels(first).iter().zip(levels(other).iter()) {
            let div = |x: Option<f64>, y: Option<f64>| match (x, y) {
                (Some(x), Some(y)) if y > 0.0 => json!(x / y),
                _ => Value::Null,
            };
            let f = |v: &Value, path: &[&str]| path.iter().fold(v, |v, k| &v[*k]).as_f64();
            out.push(json!({
                "concurrency": a["concurrency"],
                "of": first["name"], "over": other["name"],
                "throughput": div(f(a, &["throughput_rps"]), f(b, &["throughput_rps"])),
                "p50": div(f(b, &["latency_ms", "p50"]), f(a, &["latency_ms", "p50"])),
                "p90": div(f(b, &["latency_ms", "p90"]), f(a, &["latency_ms", "p90"])),
                "p99": div(f(b, &["latency_ms", "p99"]), f(a, &["latency_ms", "p99"])),
                "max": div(f(b, &["latency_ms", "max"]), f(a, &["latency_ms", "max"])),
                "cpu_per_request": div(f(b, &["cpu_ms_per_request"]), f(a, &["cpu_ms_per_request"])),
            }));
        }
    }
    out
}

/// The containment table of one target, as JSON.
pub fn containment_json(checked: &[Checked]) -> Value {
    Value::Array(
        checked
            .iter()
            .map(|c| {
                json!({
                    "program": c.program, "limit": c.limit,
                    "contained": c.containment.contained, "how": c.containment.how,
                    "ms": c.ms,
                })
            })
            .collect(),
    )
}

fn num(v: &Value, digits: usize) -> String {
    v.as_f64()
        .map_or_else(|| "-".to_owned(), |x| format!("{x:.digits$}"))
}

/// The report as text: a table per target, the ratios, and the containment table.
pub fn text(report: &Value) -> String {
    let mut s = String::new();
    let targets = report["targets"].as_array().cloned().unwrap_or_default();
    let _ = writeln!(s, "sources: {}", report["sources"].as_str().unwrap_or(""));
    for t in &targets {
        let _ = writeln!(
            s,
            "\n{} ({}), memory {}, CPU from {}, languages {}",
            t["name"].as_str().unwrap_or(""),
            t["url"].as_str().unwrap_or(""),
            t["memory_mb"]
                .as_u64()
                .map_or("target default".to_owned(), |m| format!("{m} MiB")),
            t["cpu_from"].as_str().unwrap_or("not read"),
            t["languages"]
                .as_array()
                .map(|l| l
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(","))
                .unwrap_or_default(),
        );
        let _ = writeln!(
            s,
            "  {:>5} {:>9} {:>8} {:>8} {:>8} {:>8} {:>10} {:>6} {:>8}",
            "conc",
            "req/s",
            "p50 ms",
            "p90 ms",
            "p99 ms",
            "max ms",
            "CPU ms/req",
            "errors",
            "refs bad"
        );
        for l in t["levels"].as_array().into_iter().flatten() {
            let _ = writeln!(
                s,
                "  {:>5} {:>9} {:>8} {:>8} {:>8} {:>8} {:>10} {:>6} {:>8}",
                l["concurrency"],
                num(&l["throughput_rps"], 1),
                num(&l["latency_ms"]["p50"], 1),
                num(&l["latency_ms"]["p90"], 1),
                num(&l["latency_ms"]["p99"], 1),
                num(&l["latency_ms"]["max"], 1),
                num(&l["cpu_ms_per_request"], 2),
                l["errors"],
                l["references_failed"],
            );
        }
    }
    let ratios = report["ratios"].as_array().cloned().unwrap_or_default();
    if !ratios.is_empty() {
        let _ = writeln!(s, "\nratios (above 1 favours the first target)");
        let _ = writeln!(
            s,
            "  {:>5} {:>24} {:>8} {:>6} {:>6} {:>6} {:>6} {:>8}",
            "conc", "", "req/s", "p50", "p90", "p99", "max", "CPU/req"
        );
        for r in &ratios {
            let _ = writeln!(
                s,
                "  {:>5} {:>24} {:>8} {:>6} {:>6} {:>6} {:>6} {:>8}",
                r["concurrency"],
                format!(
                    "{} / {}",
                    r["of"].as_str().unwrap_or(""),
                    r["over"].as_str().unwrap_or("")
                ),
                num(&r["throughput"], 2),
                num(&r["p50"], 2),
                num(&r["p90"], 2),
                num(&r["p99"], 2),
                num(&r["max"], 2),
                num(&r["cpu_per_request"], 2),
            );
        }
    }
    let mut programs: Vec<String> = Vec::new();
    for t in &targets {
        for c in t["containment"].as_array().into_iter().flatten() {
            let p = c["program"].as_str().unwrap_or("").to_owned();
            if !programs.contains(&p) {
                programs.push(p);
            }
        }
    }
    if !programs.is_empty() {
        let _ = writeln!(s, "\ncontainment of hostile programs");
        for p in &programs {
            let _ = writeln!(s, "  {p}");
            for t in &targets {
                let found = t["containment"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|c| c["program"].as_str() == Some(p));
                let cell = found.map_or("not run (language not served)".to_owned(), |c| {
                    format!(
                        "{}: {}",
                        if c["contained"].as_bool() == Some(true) {
                            "contained"
                        } else {
                            "NOT contained"
                        },
                        c["how"].as_str().unwrap_or("")
                    )
                });
                let _ = writeln!(s, "    {:<20} {cell}", t["name"].as_str().unwrap_or(""));
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let sorted: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&sorted, 50.0), 50.0);
        assert_eq!(percentile(&sorted, 99.0), 99.0);
        assert_eq!(percentile(&sorted, 100.0), 100.0);
        assert_eq!(percentile(&[7.0], 99.0), 7.0);
        assert_eq!(percentile(&[], 50.0), 0.0);
    }

    #[test]
    fn ratios_favour_the_first_target_above_one() {
        let level = |rps: f64, p50: f64, cpu: Option<f64>| {
            json!({"concurrency": 4, "throughput_rps": rps,
                   "latency_ms": {"p50": p50, "p90": p50, "p99": p50, "max": p50},
                   "cpu_ms_per_request": cpu})
        };
        let targets = [
            json!({"name": "a", "levels": [level(100.0, 2.0, Some(1.5))]}),
            json!({"name": "b", "levels": [level(10.0, 20.0, Some(30.0))]}),
            json!({"name": "c", "levels": [level(50.0, 1.0, None)]}),
        ];
        let r = ratios(&targets);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0]["over"], "b");
        assert_eq!(r[0]["throughput"], 10.0);
        assert_eq!(r[0]["p50"], 10.0);
        assert_eq!(r[0]["cpu_per_request"], 20.0);
        assert_eq!(r[1]["p50"], 0.5);
        assert!(r[1]["cpu_per_request"].is_null());
        let summary = summarise(4, 8, 2.0, Some(0.5), Tally::default());
        assert_eq!(summary["throughput_rps"], 4.0);
        assert_eq!(summary["cpu_ms_per_request"], 62.5);
    }
}
