//! `grpo train` and `grpo eval` as a user runs them: the scoring contract end to end, and a
//! resume of a run killed before its first checkpoint.

/// The scoring contract, end to end: a smoke run on the Python pack gets its accuracy from
/// the sandbox; every sample's per-reward values are what `grpo score` gives the same
/// completion, `reward` is their weighted sum and `shaped_reward` what the advantage used;
/// `grpo eval` of the run's `final/` reproduces its last evaluation.
mod contract {
    use std::process::Output;

    use serde_json::Value;

    fn grpo(args: &[&str]) -> Output {
        let out = crate::common::grpo()
            .args(args)
            .output()
            .expect("running grpo");
        assert!(
            out.status.success(),
            "grpo {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    fn lines(text: &str) -> Vec<Value> {
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn last_eval_accuracy(run: &std::path::Path) -> f64 {
        let evals = lines(&std::fs::read_to_string(run.join("eval.jsonl")).unwrap());
        evals.last().unwrap()["accuracy"].as_f64().unwrap()
    }

    fn eval_final(run: &std::path::Path, pack: &str) -> f64 {
        eval_final_with(run, pack, &[])
    }

    fn eval_final_with(run: &std::path::Path, pack: &str, extra: &[&str]) -> f64 {
        let model = run.join("final");
        let mut args = vec!["eval", "--model", model.to_str().unwrap(), "--tasks", pack];
        args.extend_from_slice(extra);
        let out = grpo(&args);
        let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
        summary["greedy_accuracy"].as_f64().unwrap()
    }

    #[test]
    fn smoke_run_on_python_scores_like_grpo_score_and_grpo_eval_repeats_it() {
        let run = tempfile::tempdir().unwrap();
        let dir = run.path().to_str().unwrap();
        grpo(&[
            "train",
            "--preset",
            "smoke",
            "--set",
            "pack.source=\"builtin:python\"",
            "--set",
            "checkpoint.samples_per_step=16",
            // Keep tied groups, so every sampled completion reaches samples.jsonl.
            "--set",
            "algorithm.shaping.filter_zero_variance_groups=false",
            "--out",
            dir,
            "--quiet",
        ]);
        let steps = lines(&std::fs::read_to_string(run.path().join("metrics.jsonl")).unwrap());
        for s in &steps {
            assert!(s["sandbox_runs"].as_u64().unwrap() > 0, "{s}");
            let verdicts = s["verdicts"].as_object().unwrap();
            let counted: u64 = verdicts.values().map(|v| v.as_u64().unwrap()).sum();
            assert_eq!(counted, 16, "{s}");
            assert_eq!(s["fault_groups"], 0);
        }
        let samples = lines(&std::fs::read_to_string(run.path().join("samples.jsonl")).unwrap());
        assert!(!samples.is_empty());
        // The same completions through `grpo score` on the same pack.
        let completions: String = samples
            .iter()
            .map(|s| {
                serde_json::json!({"task_id": s["task_id"], "completion": s["completion"]})
                    .to_string()
                    + "\n"
            })
            .collect();
        let file = run.path().join("completions.jsonl");
        std::fs::write(&file, completions).unwrap();
        let scored = grpo(&[
            "score",
            "--tasks",
            "builtin:python",
            "--completions",
            file.to_str().unwrap(),
        ]);
        let scored = lines(&String::from_utf8_lossy(&scored.stdout));
        assert_eq!(scored.len(), samples.len());
        // The smoke preset's weights: accuracy 1, format 0.1; no overlong shaping.
        for (sample, score) in samples.iter().zip(&scored) {
            assert_eq!(sample["rewards"], score["rewards"], "{sample}");
            let r = &sample["rewards"];
            assert!(r.get("accuracy").is_some(), "no accuracy reward: {sample}");
            let sum = r["accuracy"].as_f64().unwrap() + 0.1 * r["format"].as_f64().unwrap();
            assert!((sample["reward"].as_f64().unwrap() - sum).abs() < 1e-12);
            assert_eq!(sample["shaped_reward"], sample["reward"]);
        }
        assert_eq!(
            eval_final(run.path(), "builtin:python"),
            last_eval_accuracy(run.path())
        );
    }

    #[test]
    fn grpo_eval_of_a_math_run_repeats_its_last_evaluation() {
        let run = tempfile::tempdir().unwrap();
        let dir = run.path().to_str().unwrap();
        // A longer warm-up than the smoke preset's, so some answers are right.
        grpo(&[
            "train",
            "--preset",
            "smoke",
            "--set",
            "warmup.steps=200",
            "--out",
            dir,
            "--quiet",
        ]);
        let want = last_eval_accuracy(run.path());
        assert!(want > 0.0, "the smoke run should get some problems right");
        assert_eq!(eval_final(run.path(), "builtin:arith-digits"), want);
    }

    #[test]
    fn grpo_eval_of_a_tools_run_repeats_its_last_evaluation_with_the_interpreter() {
        let run = tempfile::tempdir().unwrap();
        let dir = run.path().to_str().unwrap();
        // A shorter warm-up than the preset's: enough that the policy calls the tool on some
        // problems and copies what it prints.
        grpo(&[
            "train",
            "--preset",
            "tools",
            "--set",
            "budget.steps=1",
            "--set",
            "warmup.steps=300",
            "--set",
            "eval.problems=40",
            "--out",
            dir,
            "--quiet",
        ]);
        let want = last_eval_accuracy(run.path());
        assert_eq!(eval_final(run.path(), "builtin:arith"), want);
        // The interpreter is what the run's evaluation got right with: without it the same
        // model guesses.
        let without = eval_final_with(run.path(), "builtin:arith", &["--no-tools"]);
        assert!(without < want, "with the tool {want}, without {without}");
    }
}

/// A run killed during its warm-up has no checkpoint: `grpo train --resume` starts it over
/// from the saved config (with a warning) and ends where an uninterrupted run ends. A torn
/// record left by the kill is dropped.
#[test]
fn resume_before_the_first_checkpoint_starts_over() {
    let sets = [
        "--preset",
        "smoke",
        "--set",
        "budget.steps=2",
        "--set",
        "checkpoint.every=2",
        "--set",
        "threads=1",
        "--quiet",
    ];
    let whole = tempfile::tempdir().unwrap();
    let out = crate::common::grpo()
        .args(["train", "--out"])
        .arg(whole.path())
        .args(sets)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // What a kill during the warm-up leaves: the config, no checkpoint, a torn record.
    let killed = tempfile::tempdir().unwrap();
    std::fs::copy(
        whole.path().join("config.toml"),
        killed.path().join("config.toml"),
    )
    .unwrap();
    std::fs::write(killed.path().join("eval.jsonl"), "{\"step\":0,\"accur").unwrap();
    let out = crate::common::grpo()
        .args(["train", "--resume", "--quiet", "--out"])
        .arg(killed.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("starting it over"), "{stderr}");
    for name in ["eval.jsonl", "metrics.jsonl"] {
        let read = |dir: &std::path::Path| -> Vec<serde_json::Value> {
            std::fs::read_to_string(dir.join(name))
                .unwrap()
                .lines()
                .map(|l| {
                    let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                    if let Some(obj) = v.as_object_mut() {
                        obj.retain(|k, _| {
                            !(k.ends_with("_seconds")
                                || k.ends_with("per_second")
                                || k == "seconds"
                                || k == "score_fraction")
                        });
                    }
                    v
                })
                .collect()
        };
        assert_eq!(read(killed.path()), read(whole.path()), "{name}");
    }
    assert_eq!(
        std::fs::read(killed.path().join("final/model.safetensors")).unwrap(),
        std::fs::read(whole.path().join("final/model.safetensors")).unwrap()
    );
}
