//! Example of scoring code completions: a Python task with stdin/stdout tests, judged in the
//! wasmtime sandbox through the same [`Scorer`](grpo_rewards::Scorer) every caller uses, with
//! binary and then partial credit; hostile programs get a verdict, never the host.
//!
//!     cargo run -p grpo-sandbox --example check_code

use grpo_rewards::{Credit, ScoreOptions, ScoringConfig};
use grpo_sandbox::Sandbox;
use grpo_tasks::Task;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let task: Task = serde_json::from_str(
        r#"{"id":"sum","kind":"code","prompt":"Read two integers and print their sum.",
            "language":"python","mode":"full","tests":{"type":"stdio","cases":[
                {"stdin":"1 2\n","stdout":"3\n"},{"stdin":"-5 5\n","stdout":"0\n"}]}}"#,
    )?;
    let group = [
        "```python\na, b = map(int, input().split())\nprint(a + b)\n```",
        "<answer>a, b = map(int, input().split())\nprint(abs(a + b) if a > 0 else 1)</answer>",
        "```python\nwhile True:\n    pass\n```",
        "```python\nprint(open('/etc/passwd').read())\n```",
        "```python\nx = bytearray(1 << 30)\n```",
    ]
    .map(String::from);

    let scorer = grpo_sandbox::scorer(&ScoringConfig::default(), Some(Sandbox::shared()?))?;
    for credit in [Credit::Binary, Credit::Partial] {
        let options = ScoreOptions {
            credit,
            ..*scorer.options()
        };
        println!("{credit:?} credit:");
        for scored in scorer.score_group_blocking(&task, &group, &options)? {
            println!(
                "  {:.2} {:<13} {}",
                scored.reward,
                scored.verdict.kind.as_str(),
                scored.verdict.reason
            );
        }
    }
    Ok(())
}
