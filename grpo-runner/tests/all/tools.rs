//! The code-interpreter tool on the real sandbox, driven as the sampler drives it: calls are
//! found when their block closes, run in the completion's own session (state kept between
//! its calls, never shared with another completion), and come back as output blocks cut to
//! the budget; a program error is output, a hostile call is contained.

use grpo_rewards::RunStatus;
use grpo_runner::config::ToolsSection;
use grpo_runner::rollout::sampler::{CompletionId, ToolDriver};
use grpo_runner::rollout::tools::CodeTool;
use grpo_runner::train::sft::tool_tokenizer;
use grpo_sandbox::Sandbox;

fn settings() -> ToolsSection {
    ToolsSection {
        enabled: true,
        max_calls: 3,
        max_output_tokens: 40,
        time_limit_ms: 500,
        memory_mb: 64,
    }
}

/// Writes `text` onto completion `row`'s tokens; when it closes a call, runs it and returns
/// the output block's text (the tokens are appended, as the sampler appends them).
fn write(
    tool: &mut CodeTool<'_>,
    tok: &grpo_runner::tokenizer::Tokenizer,
    row: CompletionId,
    tokens: &mut Vec<u32>,
    text: &str,
) -> Option<String> {
    tokens.extend(tok.encode(text).expect("encodes"));
    if !tool.is_call(row, tokens).expect("is_call") {
        return None;
    }
    tool.start(row, tokens).expect("start");
    let block = tool.finish(row, 64).expect("finish");
    tokens.extend(&block);
    Some(tok.decode(&block).expect("decodes"))
}

#[test]
fn calls_run_in_each_completions_own_session() {
    let sandbox = Sandbox::shared().expect("sandbox");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let tok = tool_tokenizer(&["What is 6 * 7?"]).expect("tokenizer");
    let mut tool = CodeTool::new(sandbox, &runtime, &tok, &settings());
    let (mut a, mut b) = (Vec::new(), Vec::new());
    // Two completions of one prompt's group.
    let (first, second) = (
        CompletionId {
            prompt: 0,
            sample: 0,
        },
        CompletionId {
            prompt: 0,
            sample: 1,
        },
    );

    // An open block is not a call yet; closing it is.
    assert_eq!(
        write(&mut tool, &tok, first, &mut a, "<think>```python\nx = 6"),
        None
    );
    assert_eq!(
        write(&mut tool, &tok, first, &mut a, " * 7\nx\n```\n").as_deref(),
        Some("```output\n42\n```\n")
    );
    // The completion's state is kept for its next call; the other completion has none.
    assert_eq!(
        write(
            &mut tool,
            &tok,
            first,
            &mut a,
            "```python\nprint(x + 1)\n```\n"
        )
        .as_deref(),
        Some("```output\n43\n```\n")
    );
    assert_eq!(
        write(&mut tool, &tok, second, &mut b, "```python\nx\n```\n").as_deref(),
        Some("```output\nNameError: name 'x' is not defined\n```\n"),
        "an error is output the model sees"
    );
    // A long output is cut to the token budget.
    let long = write(
        &mut tool,
        &tok,
        second,
        &mut b,
        "```python\nprint('9' * 100)\n```\n",
    )
    .expect("a call");
    assert_eq!(long, format!("```output\n{}\n```\n", "9".repeat(40)));
    // A call that never returns is cut by its limit; the row goes on.
    let hang = write(
        &mut tool,
        &tok,
        second,
        &mut b,
        "```python\nwhile True: pass\n```\n",
    )
    .expect("a call");
    assert_eq!(hang, "```output\ntimeout\n```\n");
    // The fourth block of a completion allowed three is text, not a call.
    assert_eq!(
        write(&mut tool, &tok, second, &mut b, "```python\n1\n```\n"),
        None
    );

    let log = tool.finish_all();
    assert!(log.faults.is_empty(), "{:?}", log.faults);
    let calls = &log.calls[&first];
    assert_eq!(calls.len(), 2);
    assert_eq!(
        (calls[0].code.as_str(), calls[0].output.as_str()),
        ("x = 6 * 7\nx", "42")
    );
    assert_eq!(calls[0].status, RunStatus::Ok);
    let calls = &log.calls[&second];
    let statuses: Vec<RunStatus> = calls.iter().map(|c| c.status).collect();
    assert_eq!(
        statuses,
        [RunStatus::Error, RunStatus::Ok, RunStatus::Timeout]
    );
    assert_eq!(
        calls.iter().map(|c| c.truncated).collect::<Vec<_>>(),
        [false, true, false]
    );
    assert_eq!(
        calls[1].output,
        "9".repeat(100),
        "the record keeps the whole output"
    );
}
