//! The code-interpreter tool of multi-turn rollouts: a completion that writes a
//! ```` ```python ```` block and closes it pauses, the code runs in that completion's own
//! interpreter session in the sandbox ([`grpo_sandbox::Session`]), and the output comes back
//! as an ```` ```output ```` block the policy reads but never wrote:
//!
//! ````text
//! <think>```python
//! 61+70+52
//! ```
//! ```output
//! 183
//! ```
//! </think><answer>183</answer>
//! ````
//!
//! The output block is what the code printed (the last expression's value is shown, as in
//! the interactive interpreter); when the call failed, the last line of its error follows
//! (`ZeroDivisionError: division by zero`): a program error is output the model sees, not a
//! fault. The block is cut to `tools.max_output_tokens` tokens. A completion makes at most
//! `tools.max_calls` calls; its session lives until the sampling call ends, and sessions
//! never share state. A failure on our side (the interpreter could not start) is a tool
//! fault: the trainer leaves that completion's group out, as it does a scoring fault.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use grpo_rewards::result::{RunResult, RunStatus};
use grpo_sandbox::{Limits, Sandbox, SandboxError, SandboxOptions, Session, SessionLimits};
use serde::{Deserialize, Serialize};
use tokio::task::JoinHandle;

use crate::config::ToolsSection;
use crate::error::{Error, Result};
use crate::rollout::sampler::{CompletionId, ToolDriver};
use crate::tokenizer::Tokenizer;

/// Opens a call: the policy writes it.
pub const CALL_OPEN: &str = "```python\n";
/// Closes a call, and an output block.
pub const BLOCK_CLOSE: &str = "\n```\n";
/// Opens the output block the tool writes.
pub const OUTPUT_OPEN: &str = "```output\n";
/// The fences, single tokens in the tiny tokenizer when tools are on.
pub const TOOL_TAGS: [&str; 3] = [CALL_OPEN, BLOCK_CLOSE, OUTPUT_OPEN];

/// One call a completion made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The code the policy wrote.
    pub code: String,
    /// What the code printed (and the error's last line when it failed), before the cut.
    pub output: String,
    /// How the call ended.
    pub status: RunStatus,
    /// Whether the output block was cut to the token budget.
    pub truncated: bool,
    /// Wall-clock seconds of the call.
    pub seconds: f64,
}

/// The code between the last [`CALL_OPEN`] of `text` and the [`BLOCK_CLOSE`] after it, when
/// `text` ends with that close.
///
/// ```
/// use grpo_runner::rollout::tools::call_code;
/// assert_eq!(call_code("<think>```python\n2+3\n```\n").as_deref(), Some("2+3"));
/// assert_eq!(call_code("<think>```python\n2+3"), None);
/// assert_eq!(call_code("no call\n```\n"), None);
/// ```
pub fn call_code(text: &str) -> Option<String> {
    let body = text.strip_suffix(BLOCK_CLOSE)?;
    let (_, code) = body.rsplit_once(CALL_OPEN)?;
    (!code.contains(BLOCK_CLOSE)).then(|| code.to_owned())
}

/// What the output block shows of a call: its stdout, then the last line of stderr when
/// the call did not succeed; trailing newlines trimmed.
pub fn shown_output(run: &RunResult) -> String {
    let mut text = run.stdout.trim_end_matches('\n').to_owned();
    if run.status != RunStatus::Ok {
        let last = run
            .stderr
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with("[sandbox]"))
            .map(str::to_owned)
            .unwrap_or_else(|| run.status.as_str().to_owned());
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&last);
    }
    text
}

/// What one completion's tool use looks like so far.
#[derive(Default)]
struct RowState {
    session: Option<Arc<Session>>,
    calls: Vec<ToolCall>,
    pending: Option<(String, Instant, JoinHandle<Outcome>)>,
    /// Tokens of the completion up to the end of its last output block.
    seen: usize,
    fault: Option<String>,
}

type Outcome = std::result::Result<(Arc<Session>, RunResult), SandboxError>;

/// The interpreter tool for one sampling call: sessions in `sandbox`, calls on `runtime`
/// (so they run while the sampler decodes other rows). Drop it (or [`CodeTool::finish_all`])
/// when the call's completions are done: their sessions close with it.
pub struct CodeTool<'a> {
    sandbox: Sandbox,
    runtime: &'a tokio::runtime::Runtime,
    tokenizer: &'a Tokenizer,
    settings: ToolsSection,
    limits: SessionLimits,
    rows: HashMap<CompletionId, RowState>,
}

/// What the tool did for each completion, once the sampling call is over.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolLog {
    /// Per completion: its calls in order.
    pub calls: HashMap<CompletionId, Vec<ToolCall>>,
    /// Per completion: a fault on our side, when there was one.
    pub faults: HashMap<CompletionId, String>,
}

/// The sandbox the tool runs in: `sessions` interpreter sessions at once, each of the
/// tool's memory, beside four program slots; `concurrency` workers (0: one per core),
/// run directories under `temp_root` (default: the system's). The trainer's and `grpo eval`'s
/// one way to build it.
pub fn sandbox(
    settings: &ToolsSection,
    sessions: usize,
    concurrency: usize,
    temp_root: Option<std::path::PathBuf>,
) -> crate::Result<Sandbox> {
    let options = sandbox_options(settings, sessions, concurrency, temp_root);
    Sandbox::new(&options).map_err(|e| crate::Error::Sandbox {
        message: e.to_string(),
    })
}

/// The options [`sandbox`] builds the tool's sandbox with.
pub fn sandbox_options(
    settings: &ToolsSection,
    sessions: usize,
    concurrency: usize,
    temp_root: Option<std::path::PathBuf>,
) -> SandboxOptions {
    SandboxOptions {
        engine: grpo_sandbox::EngineOptions {
            allocator: grpo_sandbox::Allocator::Pooling {
                total_instances: 4,
                max_memory_mb: settings.memory_mb,
                keep_resident_mb: 16,
            },
            ..Default::default()
        },
        concurrency: match concurrency {
            0 => SandboxOptions::default().concurrency,
            n => n,
        },
        temp_root,
        compile_parallel: None,
        sessions,
    }
}

impl<'a> CodeTool<'a> {
    /// A tool with the run's settings.
    pub fn new(
        sandbox: Sandbox,
        runtime: &'a tokio::runtime::Runtime,
        tokenizer: &'a Tokenizer,
        settings: &ToolsSection,
    ) -> Self {
        let limits = SessionLimits {
            call: Limits {
                time_limit_ms: settings.time_limit_ms,
                memory_mb: settings.memory_mb,
                output_bytes: 16 << 10,
                ..Limits::default()
            },
            session_cpu_ms: settings
                .time_limit_ms
                .saturating_mul(settings.max_calls.max(1) as u64),
            ..SessionLimits::default()
        };
        CodeTool {
            sandbox,
            runtime,
            tokenizer,
            settings: settings.clone(),
            limits,
            rows: HashMap::new(),
        }
    }

    /// Closes every session and returns what each completion did.
    pub fn finish_all(mut self) -> ToolLog {
        let mut log = ToolLog::default();
        for (completion, row) in self.rows.drain() {
            if let Some((_, _, handle)) = row.pending {
                handle.abort();
            }
            if !row.calls.is_empty() {
                log.calls.insert(completion, row.calls);
            }
            if let Some(fault) = row.fault {
                log.faults.insert(completion, fault);
            }
        }
        log
    }
}

impl ToolDriver for CodeTool<'_> {
    fn is_call(&mut self, completion: CompletionId, tokens: &[u32]) -> Result<bool> {
        let row = self.rows.entry(completion).or_default();
        if row.calls.len() >= self.settings.max_calls || row.fault.is_some() {
            return Ok(false);
        }
        let Some(&last) = tokens.last() else {
            return Ok(false);
        };
        // Cheap first: the call's close ends with a newline.
        if !self.tokenizer.decode(&[last])?.ends_with('\n') {
            return Ok(false);
        }
        let text = self
            .tokenizer
            .decode(&tokens[row.seen.min(tokens.len())..])?;
        Ok(call_code(&text).is_some())
    }

    fn start(&mut self, completion: CompletionId, tokens: &[u32]) -> Result<()> {
        let row = self.rows.entry(completion).or_default();
        let text = self
            .tokenizer
            .decode(&tokens[row.seen.min(tokens.len())..])?;
        let code = call_code(&text).ok_or_else(|| Error::invalid("no tool call to start"))?;
        let session = row.session.clone();
        let sandbox = self.sandbox.clone();
        let limits = self.limits.clone();
        let run_code = code.clone();
        let handle = self.runtime.spawn(async move {
            let session = match session {
                Some(session) => session,
                None => Arc::new(Session::open(&sandbox, limits).await?),
            };
            let run = session.run(&run_code).await?;
            Ok((session, run))
        });
        row.pending = Some((code, Instant::now(), handle));
        Ok(())
    }

    fn finish(&mut self, completion: CompletionId, budget: usize) -> Result<Vec<u32>> {
        let row = self.rows.entry(completion).or_default();
        let Some((code, started, handle)) = row.pending.take() else {
            return Err(Error::invalid(format!(
                "completion {completion:?} has no tool call waiting"
            )));
        };
        let (output, status) = match self.runtime.block_on(handle) {
            Ok(Ok((session, run))) => {
                row.session = Some(session);
                (shown_output(&run), run.status)
            }
            // The session's own budget is spent: the model is told, as output.
            Ok(Err(SandboxError::SessionClosed { reason })) => (
                format!("the interpreter is closed: {reason}"),
                RunStatus::Error,
            ),
            Ok(Err(e)) => {
                tracing::warn!(?completion, error = %e, "tool fault");
                row.fault = Some(e.to_string());
                (String::new(), RunStatus::Crash)
            }
            Err(e) => {
                row.fault = Some(format!("the tool call's task failed: {e}"));
                (String::new(), RunStatus::Crash)
            }
        };
        let open = self.tokenizer.encode(OUTPUT_OPEN)?;
        let close = self.tokenizer.encode(BLOCK_CLOSE)?;
        let body = self.tokenizer.encode(&output)?;
        let room = self
            .settings
            .max_output_tokens
            .min(budget.saturating_sub(open.len() + close.len()));
        let truncated = body.len() > room;
        let mut block = open;
        block.extend_from_slice(&body[..body.len().min(room)]);
        block.extend_from_slice(&close);
        row.calls.push(ToolCall {
            code,
            output,
            status,
            truncated,
            seconds: started.elapsed().as_secs_f64(),
        });
        Ok(block)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(status: RunStatus, stdout: &str, stderr: &str) -> RunResult {
        RunResult {
            status,
            exit_code: None,
            stdout: stdout.into(),
            stderr: stderr.into(),
            duration_ms: 1.0,
            cpu_ms: 0.0,
            truncated: false,
        }
    }

    #[test]
    fn calls_are_found_only_when_closed() {
        let cases: &[(&str, Option<&str>)] = &[
            ("```python\nprint(1)\n```\n", Some("print(1)")),
            (
                "<think>a```python\nx = 2\nx * 3\n```\n",
                Some("x = 2\nx * 3"),
            ),
            ("```python\nprint(1)\n```", None),
            ("```python\nprint(1)", None),
            ("text\n```\n", None),
            // Only the last open counts.
            ("```python\n1\n```python\n2\n```\n", Some("2")),
        ];
        for (text, want) in cases {
            assert_eq!(call_code(text).as_deref(), *want, "{text:?}");
        }
    }

    #[test]
    fn the_output_block_shows_stdout_and_the_errors_last_line() {
        assert_eq!(shown_output(&result(RunStatus::Ok, "183\n", "")), "183");
        let error = "Traceback (most recent call last):\n  File \"<cell 1>\", line 1\nZeroDivisionError: division by zero\n";
        assert_eq!(
            shown_output(&result(RunStatus::Error, "partial\n", error)),
            "partial\nZeroDivisionError: division by zero"
        );
        assert_eq!(
            shown_output(&result(
                RunStatus::Timeout,
                "",
                "\n[sandbox] wall-clock limit of 4000 ms; the interpreter was stopped\n"
            )),
            "timeout"
        );
    }
}
