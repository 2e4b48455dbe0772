//! `grpo eval` and `grpo sample` on a tiny saved model, and the evaluation loop with a
//! known judge.

use crate::common::grpo;

use candle_core::Device;
use grpo_runner::eval::{EvalConfig, evaluate};
use grpo_runner::loading::save_hf_dir;
use grpo_runner::tiny::{TinyModelSpec, tiny_model};

const PACK: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../grpo-runner/tests/data/gsm8k_mini.jsonl"
);

fn small_spec() -> TinyModelSpec {
    TinyModelSpec {
        hidden_size: 32,
        num_hidden_layers: 1,
        num_attention_heads: 2,
        num_key_value_heads: 1,
        intermediate_size: 64,
        ..Default::default()
    }
}

fn saved_tiny_model() -> tempfile::TempDir {
    let vocab = std::fs::read_to_string(PACK).unwrap();
    let (model, tokenizer) = tiny_model(&small_spec(), &vocab, &Device::Cpu).unwrap();
    let dir = tempfile::tempdir().unwrap();
    save_hf_dir(&model, &tokenizer, dir.path()).unwrap();
    dir
}

#[test]
fn eval_prints_a_json_summary() {
    let dir = saved_tiny_model();
    let out = grpo()
        .args(["eval", "--model"])
        .arg(dir.path())
        .args([
            "--tasks",
            PACK,
            "--samples",
            "3",
            "--max-new-tokens",
            "6",
            "--limit",
            "4",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let summary: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(summary["tasks"], 4);
    assert_eq!(summary["samples"], 3);
    let accuracy = summary["greedy_accuracy"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&accuracy));
    for k in ["pass@1", "pass@2", "pass@3"] {
        let v = summary["pass_at_k"][k]
            .as_f64()
            .unwrap_or_else(|| panic!("{k} missing"));
        assert!((0.0..=1.0).contains(&v));
    }
    // Each greedy completion has at most 6 tokens; 3 samples too: at most 4 × 4 × 6 tokens.
    assert!(summary["generated_tokens"].as_u64().unwrap() <= 96);
}

#[test]
fn eval_rejects_a_missing_pack_with_exit_code_2() {
    let dir = saved_tiny_model();
    let out = grpo()
        .args(["eval", "--model"])
        .arg(dir.path())
        .args(["--tasks", "/nonexistent/pack.jsonl"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/pack.jsonl"));
}

#[test]
fn sample_prints_one_completion() {
    let dir = saved_tiny_model();
    let out = grpo()
        .args(["sample", "--model"])
        .arg(dir.path())
        .args(["--prompt", "Tom has 3 boxes.", "--max-new-tokens", "5"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(line["tokens"].as_u64().unwrap() <= 5);
    assert!(line["completion"].is_string());
}

#[test]
fn evaluate_counts_what_the_judge_accepts() {
    let vocab = "0123456789 abc";
    let (model, tokenizer) = tiny_model(&small_spec(), vocab, &Device::Cpu).unwrap();
    let prompts: Vec<Vec<u32>> = ["1 2", "a b", "3", "c"]
        .iter()
        .map(|s| tokenizer.encode(s).unwrap())
        .collect();
    let config = EvalConfig {
        max_new_tokens: 4,
        samples: 4,
        batch_prompts: 3,
        ..Default::default()
    };
    // Prompts 0 and 2 are always right, prompt 1 never, prompt 3 on its first sample only.
    let mut calls = vec![0usize; 4];
    let report = evaluate(&model, &tokenizer, &prompts, &config, |i, completions| {
        calls[i] += 1;
        let first_call = calls[i] == 1;
        Ok(completions
            .iter()
            .enumerate()
            .map(|(j, _)| match i {
                0 | 2 => true,
                1 => false,
                _ => !first_call && j == 0,
            })
            .collect())
    })
    .unwrap();
    assert_eq!(report.prompts, 4);
    assert_eq!(report.greedy_correct, 2);
    assert_eq!(report.greedy_accuracy, 0.5);
    // pass@1 = mean(1, 0, 1, 1/4) = 0.5625; pass@4 = mean(1, 0, 1, 1) = 0.75.
    let pass: std::collections::HashMap<usize, f64> = report.pass_at_k.iter().copied().collect();
    assert!((pass[&1] - 0.5625).abs() < 1e-12);
    assert!((pass[&4] - 0.75).abs() < 1e-12);
    assert_eq!(calls, [2, 2, 2, 2]);
}
