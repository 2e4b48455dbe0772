//! Finding the code in a completion.
//!
//! The rule (DESIGN.md "Task packs"): when the completion keeps the R1 format, only its last
//! `<answer>…</answer>` block is looked at (an `<answer>` left open at the end runs to the
//! end). In that text (or the whole completion): the last fenced Python block (```` ```python ````,
//! ```` ```py ````, ```` ```python3 ````, any case) when there is one; otherwise the last
//! untagged fenced block; otherwise the text as it is (inside an answer block: without its
//! surrounding blank lines and common indentation, so `<answer> print(1) </answer>` is
//! `print(1)`). A fence left open at the end (a generation cut by the token limit) counts as
//! closed by the end of the text.

use grpo_tasks::{CodeMode, CodeTask, CodeTests, Language};

use crate::answer::AnswerFormat;

/// A block found between fences.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Fenced<'a> {
    tag: &'a str,
    body: &'a str,
}

fn fenced_blocks(text: &str) -> Vec<Fenced<'_>> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        let (tag, body_start) = match after.find('\n') {
            Some(nl) => (after[..nl].trim(), nl + 1),
            None => break,
        };
        let body_and_more = &after[body_start..];
        match find_closing_fence(body_and_more) {
            Some((body_end, next)) => {
                blocks.push(Fenced {
                    tag,
                    body: &body_and_more[..body_end],
                });
                rest = &body_and_more[next..];
            }
            None => {
                blocks.push(Fenced {
                    tag,
                    body: body_and_more,
                });
                break;
            }
        }
    }
    blocks
}

/// A closing fence is ``` at the start of a line (after optional indentation).
fn find_closing_fence(text: &str) -> Option<(usize, usize)> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("```") {
            return Some((offset, offset + line.len()));
        }
        offset += line.len();
    }
    None
}

fn is_python_tag(tag: &str) -> bool {
    is_tag_of(tag, Language::Python)
}

/// Whether a fence's info string names `language` (`cpp`, `c++`, `cc`, `cxx` for C++; `js`,
/// `javascript`, `node`, `nodejs` for JavaScript; `ts`, `typescript`; `c`; `python`, `py`).
fn is_tag_of(tag: &str, language: Language) -> bool {
    let tag = tag
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    match language {
        Language::Python => matches!(tag.as_str(), "python" | "py" | "python3"),
        Language::C => tag == "c",
        Language::Cpp => matches!(tag.as_str(), "cpp" | "c++" | "cc" | "cxx"),
        Language::Javascript => matches!(tag.as_str(), "javascript" | "js" | "node" | "nodejs"),
        Language::Typescript => matches!(tag.as_str(), "typescript" | "ts"),
    }
}

/// [`fenced_code`] for a language: the last block tagged with it, else the last untagged one.
pub fn fenced_code_in(completion: &str, language: Language) -> Option<&str> {
    let blocks = fenced_blocks(completion);
    blocks
        .iter()
        .rev()
        .find(|b| is_tag_of(b.tag, language))
        .or_else(|| blocks.iter().rev().find(|b| b.tag.is_empty()))
        .map(|b| b.body)
}

/// [`extract_code`] for a language's fences.
pub fn extract_code_in<'a>(
    completion: &'a str,
    language: Language,
    tags: &AnswerFormat,
) -> std::borrow::Cow<'a, str> {
    match tags.answer_block(completion).map(|b| b.content) {
        Some(answer) => match fenced_code_in(answer, language) {
            Some(code) => code.into(),
            None => dedent(answer).into(),
        },
        None => fenced_code_in(completion, language)
            .unwrap_or(completion)
            .into(),
    }
}

/// The code of a completion: the last fenced Python block, else the last untagged fenced
/// block, else `None` (the caller uses the completion as it is).
pub fn fenced_code(completion: &str) -> Option<&str> {
    let blocks = fenced_blocks(completion);
    blocks
        .iter()
        .rev()
        .find(|b| is_python_tag(b.tag))
        .or_else(|| blocks.iter().rev().find(|b| b.tag.is_empty()))
        .map(|b| b.body)
}

/// The code of a completion (see the module docs for the rule).
pub fn extract_code<'a>(completion: &'a str, tags: &AnswerFormat) -> std::borrow::Cow<'a, str> {
    match tags.answer_block(completion).map(|b| b.content) {
        Some(answer) => match fenced_code(answer) {
            Some(code) => code.into(),
            None => dedent(answer).into(),
        },
        None => fenced_code(completion).unwrap_or(completion).into(),
    }
}

/// `text` without its leading and trailing blank lines and without the indentation its
/// non-blank lines share (a one-line text is simply trimmed).
fn dedent(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let first = lines.iter().position(|l| !l.trim().is_empty());
    let last = lines.iter().rposition(|l| !l.trim().is_empty());
    let (Some(first), Some(last)) = (first, last) else {
        return String::new();
    };
    let body = &lines[first..=last];
    if let [only] = body {
        return format!("{}\n", only.trim());
    }
    let indent = body
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out = String::with_capacity(text.len());
    for line in body {
        // Blank lines may be shorter than the shared indentation.
        out.push_str(line.get(indent..).unwrap_or("").trim_end());
        out.push('\n');
    }
    out
}

/// The function a code task tests, when its tests name one.
pub fn entry_point(task: &CodeTask) -> Option<&str> {
    match &task.tests {
        CodeTests::Assert(t) => t.entry_point.as_deref(),
        CodeTests::Call(t) => Some(&t.entry_point),
        CodeTests::Stdio(_) => None,
    }
}

/// The program a completion stands for.
///
/// - `full` mode: the extracted code.
/// - `prefix` mode: `prompt + completion` (the completion continues the prompt's function),
///   except when the completion has a fenced block that defines the entry point itself: then
///   the prompt's import lines followed by that block (models often restate the function).
pub fn program_for(task: &CodeTask, completion: &str, tags: &AnswerFormat) -> String {
    if task.language != Language::Python {
        return match task.mode {
            CodeMode::Full => extract_code_in(completion, task.language, tags).into_owned(),
            CodeMode::Prefix => format!("{}{}", task.prompt, completion),
        };
    }
    match task.mode {
        CodeMode::Full => extract_code(completion, tags).into_owned(),
        CodeMode::Prefix => {
            if let (Some(code), Some(entry)) = (fenced_code(completion), entry_point(task))
                && defines(code, entry)
            {
                let imports: String = task
                    .prompt
                    .lines()
                    .filter(|l| l.starts_with("import ") || l.starts_with("from "))
                    .map(|l| format!("{l}\n"))
                    .collect();
                return format!("{imports}{code}");
            }
            format!("{}{}", task.prompt, completion)
        }
    }
}

fn defines(code: &str, name: &str) -> bool {
    code.lines().any(|line| {
        let line = line.trim_start();
        let rest = line
            .strip_prefix("async def ")
            .or_else(|| line.strip_prefix("def "));
        rest.is_some_and(|r| {
            r.strip_prefix(name)
                .is_some_and(|after| after.trim_start().starts_with('('))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extraction_table() {
        let cases: &[(&str, &str)] = &[
            ("x = 1", "x = 1"),
            ("text\n```python\na = 1\n```\nmore", "a = 1\n"),
            ("```py\na\n```\n```python\nb\n```", "b\n"),
            // A later untagged block does not beat a python block.
            ("```python\na\n```\n```\nb\n```", "a\n"),
            // Non-python tagged blocks are ignored; untagged is the fallback.
            ("```bash\nls\n```\n```\nb\n```", "b\n"),
            ("```Python3\nc\n```", "c\n"),
            // Open fence at the end (cut generation).
            (
                "```python\ndef f():\n    return 1",
                "def f():\n    return 1",
            ),
            ("```python\n```", ""),
            // Indented closing fence.
            ("```python\nz\n  ```\n", "z\n"),
            // Only a shell block: the completion as is.
            ("```sh\nls\n```", "```sh\nls\n```"),
            // The R1 format: the answer block, trimmed and dedented.
            (
                "<think>x*3</think><answer>def f(x): return x*3</answer>",
                "def f(x): return x*3\n",
            ),
            ("<think>t</think><answer> print(1) </answer>", "print(1)\n"),
            (
                "<think>t</think><answer>\n  def f():\n\n      return 1\n</answer>",
                "def f():\n\n    return 1\n",
            ),
            // A fenced block inside the answer wins; fences outside it are not looked at.
            (
                "```python\nno\n```<answer>```python\nyes\n```</answer>",
                "yes\n",
            ),
            // The last answer block; an open one runs to the end.
            ("<answer>a</answer><answer>b", "b\n"),
            ("<think>t</think><answer></answer>", ""),
        ];
        for (completion, want) in cases {
            assert_eq!(
                extract_code(completion, &AnswerFormat::default()),
                *want,
                "{completion:?}"
            );
        }
    }

    fn task(mode: &str) -> CodeTask {
        let line = format!(
            r#"{{"id":"t","prompt":"from typing import List\n\ndef f(x: List[int]) -> int:\n","language":"python","mode":"{mode}","tests":{{"type":"assert","code":"","entry_point":"f"}}}}"#
        );
        serde_json::from_str(&line).unwrap()
    }

    #[test]
    fn prefix_mode_continues_the_prompt() {
        let t = task("prefix");
        assert_eq!(
            program_for(&t, "    return 1\n", &AnswerFormat::default()),
            format!("{}    return 1\n", t.prompt)
        );
    }

    #[test]
    fn prefix_mode_takes_a_restated_function_with_the_prompt_imports() {
        let t = task("prefix");
        let completion = "Here:\n```python\ndef f(x):\n    return 2\n```";
        assert_eq!(
            program_for(&t, completion, &AnswerFormat::default()),
            "from typing import List\ndef f(x):\n    return 2\n"
        );
        // A fenced helper that does not define f is still a continuation.
        let completion = "```python\n    return 3\n```";
        assert!(program_for(&t, completion, &AnswerFormat::default()).starts_with(&t.prompt));
    }

    #[test]
    fn full_mode_extracts() {
        let t = task("full");
        assert_eq!(
            program_for(&t, "```python\nprint(1)\n```", &AnswerFormat::default()),
            "print(1)\n"
        );
    }

    #[test]
    fn defines_matches_def_lines_only() {
        assert!(defines("def f(x):", "f"));
        assert!(defines("  async def f (x):", "f"));
        assert!(!defines("def ff(x):", "f"));
        assert!(!defines("f(x)", "f"));
    }
}
