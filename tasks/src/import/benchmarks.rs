//! The public benchmarks' own formats.

use serde_json::Value;

use super::Record;
use crate::error::ImportError;
use crate::task::{AssertTests, CodeMode, CodeTask, CodeTests, Language, MathTask, Task};

/// HumanEval: the completion continues the prompt (signature and docstring); the test
/// defines `check(candidate)`, called on `entry_point`.
pub(super) fn humaneval(r: &Record<'_>) -> Result<Task, ImportError> {
    let task_id = r.text("task_id")?;
    let entry_point = r.text("entry_point")?;
    Ok(Task::Code(CodeTask {
        id: task_id.clone(),
        prompt: r.text("prompt")?,
        language: Language::Python,
        mode: CodeMode::Prefix,
        tests: CodeTests::Assert(AssertTests {
            code: r.text("test")?,
            entry_point: Some(entry_point),
        }),
        reference: r.opt_text("canonical_solution")?,
        time_limit_ms: None,
        memory_mb: None,
        metadata: Some(r.metadata("openai_humaneval", &task_id, Some("MIT"))),
    }))
}

/// MBPP, both layouts: original (`text`, `test_setup_code`) and sanitized (`prompt`,
/// `test_imports`). The prompt shows the tests, as in the MBPP paper, so the model learns the
/// function's name and signature.
pub(super) fn mbpp(r: &Record<'_>) -> Result<Task, ImportError> {
    let source_id = r.text("task_id")?;
    let sanitized = !r.fields.contains_key("text");
    let description = if sanitized {
        r.text("prompt")?
    } else {
        r.text("text")?
    };
    let tests = r.text_list("test_list")?;
    if tests.is_empty() {
        return Err(r.error("test_list", "no tests"));
    }
    let setup = if sanitized {
        match r.fields.get("test_imports") {
            None => String::new(),
            Some(_) => r.text_list("test_imports")?.join("\n"),
        }
    } else {
        r.opt_text("test_setup_code")?.unwrap_or_default()
    };
    let normalise = |s: &str| s.replace("\r\n", "\n");
    let mut code = normalise(&setup).trim().to_owned();
    if !code.is_empty() {
        code.push('\n');
    }
    code.push_str(
        &tests
            .iter()
            .map(|t| normalise(t))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    code.push('\n');
    let prompt = format!(
        "{}\nYour code should pass these tests:\n{}",
        normalise(description.trim()),
        tests
            .iter()
            .map(|t| normalise(t.trim()))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let mut metadata = r.metadata(
        if sanitized { "mbpp_sanitized" } else { "mbpp" },
        &source_id,
        Some("CC-BY-4.0"),
    );
    if let Some(Value::Array(challenge)) = r.fields.get("challenge_test_list")
        && !challenge.is_empty()
    {
        metadata.insert(
            "challenge_test_list".into(),
            Value::Array(challenge.clone()),
        );
    }
    Ok(Task::Code(CodeTask {
        id: format!("mbpp/{source_id}"),
        prompt,
        language: Language::Python,
        mode: CodeMode::Full,
        tests: CodeTests::Assert(AssertTests {
            code,
            entry_point: None,
        }),
        reference: Some(normalise(&r.text("code")?)),
        time_limit_ms: None,
        memory_mb: None,
        metadata: Some(metadata),
    }))
}

/// GSM8K: the answer is what follows the last `####`, without thousands separators; the
/// worked solution before it goes to `metadata.solution`.
pub(super) fn gsm8k(r: &Record<'_>) -> Result<Task, ImportError> {
    let full = r.text("answer")?;
    let Some((solution, answer)) = full.rsplit_once("####") else {
        return Err(r.error("answer", "no `#### N` final answer"));
    };
    let answer = answer.trim().replace(',', "");
    if answer.is_empty() {
        return Err(r.error("answer", "empty final answer after `####`"));
    }
    let source_id = r.index.to_string();
    let mut metadata = r.metadata("gsm8k", &source_id, Some("MIT"));
    metadata.insert("solution".into(), Value::String(solution.trim().to_owned()));
    Ok(Task::Math(MathTask {
        id: format!("gsm8k/{source_id}"),
        prompt: r.text("question")?,
        answer,
        alternatives: Vec::new(),
        metadata: Some(metadata),
    }))
}

/// MATH-style: `answer` when present, else the last `\boxed{…}` (or `\fbox{…}`) of
/// `solution`; `level` and `type` (or `subject`) go to metadata.
pub(super) fn math(r: &Record<'_>) -> Result<Task, ImportError> {
    let solution = r.opt_text("solution")?;
    let answer = match r.opt_text("answer")? {
        Some(a) => a,
        None => match &solution {
            Some(s) => boxed_answer(s).ok_or_else(|| r.error("solution", "no \\boxed{} answer"))?,
            None => {
                return Err(r.error(
                    "solution",
                    "missing: need `answer` or a `solution` with \\boxed{}",
                ));
            }
        },
    };
    let source_id = r
        .opt_text("unique_id")?
        .unwrap_or_else(|| r.index.to_string());
    let mut metadata = r.metadata("math", &source_id, Some("MIT"));
    for (from, to) in [
        ("level", "level"),
        ("type", "subject"),
        ("subject", "subject"),
    ] {
        if let Some(v) = r.fields.get(from) {
            metadata.insert(to.into(), v.clone());
        }
    }
    if let Some(s) = solution {
        metadata.insert("solution".into(), Value::String(s));
    }
    Ok(Task::Math(MathTask {
        id: format!("math/{source_id}"),
        prompt: r.text("problem")?,
        answer,
        alternatives: Vec::new(),
        metadata: Some(metadata),
    }))
}

/// The content of the last `\boxed{…}` or `\fbox{…}` (nested braces kept), or of
/// `\boxed x` without braces; `None` when there is none or its braces do not close.
///
/// ```
/// use grpo_tasks::import::boxed_answer;
/// assert_eq!(boxed_answer(r"so $\boxed{\frac{1}{2}}$.").as_deref(), Some(r"\frac{1}{2}"));
/// assert_eq!(boxed_answer(r"\boxed{1} then \boxed{2}").as_deref(), Some("2"));
/// assert_eq!(boxed_answer("no box"), None);
/// ```
pub fn boxed_answer(text: &str) -> Option<String> {
    let (start, macro_len) = ["\\boxed", "\\fbox"]
        .iter()
        .filter_map(|m| text.rfind(m).map(|i| (i, m.len())))
        .max_by_key(|(i, _)| *i)?;
    let rest = &text[start + macro_len..];
    if let Some(inner) = rest.strip_prefix('{') {
        let mut depth = 1usize;
        for (i, ch) in inner.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(inner[..i].trim().to_owned());
                    }
                }
                _ => {}
            }
        }
        None
    } else if let Some(after) = rest.strip_prefix(' ') {
        let token: String = after
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != '$')
            .collect();
        (!token.is_empty()).then_some(token)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxed_answers() {
        for (text, want) in [
            (r"\boxed{5}", Some("5")),
            (r"$\boxed{\frac{a}{b^{2}}}$", Some(r"\frac{a}{b^{2}}")),
            (r"\boxed{ 3 }", Some("3")),
            (r"first \boxed{1}, final \boxed{\{1,2\}}", Some(r"\{1,2\}")),
            (r"$\boxed 7$", Some("7")),
            (r"\fbox{x+1}", Some("x+1")),
            (r"\boxed{unclosed", None),
            (r"\boxed", None),
            ("", None),
            // The LAST box wins even when an earlier macro name is longer.
            (r"\fbox{1} \boxed{2}", Some("2")),
        ] {
            assert_eq!(boxed_answer(text).as_deref(), want, "{text}");
        }
    }
}
