//! Prompt templates: how a task's problem text becomes the text a model continues.
//!
//! [`Template::R1Zero`] is the DeepSeek-R1-Zero style: a short instruction to reason inside
//! `<think>…</think>` and answer inside `<answer>…</answer>`, then the problem, then
//! `Assistant:`. [`Template::Compact`] asks for the same format in a few words, for tiny
//! models whose context is short. [`Template::Plain`] is the problem text alone. A custom
//! template is any text with `{prompt}` in it; the other placeholders are `{id}`, `{kind}`,
//! and for countdown tasks `{numbers}` and `{target}`. `{{` and `}}` are literal braces.
//! Chat templates belong to the model (in `grpo-runner`), not here.
//!
//! No template opens the `<think>` tag for the model: the completion is expected to carry
//! both tag pairs, so the format reward sees the whole structure.
//!
//! ```
//! use grpo_tasks::{Task, Template};
//! let task: Task = serde_json::from_str(
//!     r#"{"id":"a1","kind":"math","prompt":"What is 2+3?","answer":"5"}"#).unwrap();
//! let t = Template::parse("Q: {prompt}\nA:").unwrap();
//! assert_eq!(t.render(&task), "Q: What is 2+3?\nA:");
//! assert!(Template::R1Zero.render(&task).ends_with("User: What is 2+3?\nAssistant:"));
//! ```

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::TemplateError;
use crate::task::Task;

const R1_ZERO: &str = "A conversation between User and Assistant. The User asks a question and \
the Assistant solves it. The Assistant first thinks through the reasoning, then gives the \
answer. The reasoning goes inside <think> </think> tags and the final answer inside \
<answer> </answer> tags, like this: <think> reasoning here </think> <answer> answer here \
</answer>.\nUser: {prompt}\nAssistant:";

const COMPACT: &str = "{prompt}\nReason in <think></think>, answer in <answer></answer>.\n";

/// A prompt template.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Template {
    /// The DeepSeek-R1-Zero instruction (reasoning in `<think>`, answer in `<answer>`).
    #[default]
    R1Zero,
    /// The same instruction in one short line after the problem, for tiny models.
    Compact,
    /// The problem text alone.
    Plain,
    /// A custom template with placeholders, already checked.
    Custom(CustomTemplate),
}

/// A checked custom template: literal text and placeholders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomTemplate {
    text: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Prompt,
    Id,
    Kind,
    Numbers,
    Target,
}

impl Template {
    /// Parses a template name (`r1_zero`, `compact`, `plain`) or a custom template text.
    pub fn parse(spec: &str) -> Result<Template, TemplateError> {
        match spec {
            "r1_zero" => Ok(Template::R1Zero),
            "compact" => Ok(Template::Compact),
            "plain" => Ok(Template::Plain),
            text => {
                let parts = parse_parts(text)?;
                if !parts.contains(&Part::Prompt) {
                    return Err(TemplateError::NoPrompt {
                        text: text.to_owned(),
                    });
                }
                Ok(Template::Custom(CustomTemplate {
                    text: text.to_owned(),
                    parts,
                }))
            }
        }
    }

    /// The name (`r1_zero`, `compact`, `plain`) or the custom text, as [`Template::parse`]
    /// reads it.
    pub fn spec(&self) -> &str {
        match self {
            Template::R1Zero => "r1_zero",
            Template::Compact => "compact",
            Template::Plain => "plain",
            Template::Custom(c) => &c.text,
        }
    }

    /// The text the model continues for this task.
    pub fn render(&self, task: &Task) -> String {
        match self {
            // The built-in texts contain only `{prompt}`: substitute it directly.
            Template::R1Zero => R1_ZERO.replacen("{prompt}", task.prompt(), 1),
            Template::Compact => COMPACT.replacen("{prompt}", task.prompt(), 1),
            Template::Plain => task.prompt().to_owned(),
            Template::Custom(c) => c.render(task),
        }
    }
}

impl CustomTemplate {
    fn render(&self, task: &Task) -> String {
        let mut out = String::with_capacity(self.text.len() + task.prompt().len());
        for part in &self.parts {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Prompt => out.push_str(task.prompt()),
                Part::Id => out.push_str(task.id()),
                Part::Kind => out.push_str(task.kind_name()),
                Part::Numbers => {
                    if let Task::Countdown(t) = task {
                        let list: Vec<String> = t.numbers.iter().map(i64::to_string).collect();
                        out.push_str(&list.join(", "));
                    }
                }
                Part::Target => {
                    if let Task::Countdown(t) = task {
                        out.push_str(&t.target.to_string());
                    }
                }
            }
        }
        out
    }
}

fn parse_parts(text: &str) -> Result<Vec<Part>, TemplateError> {
    let mut parts = Vec::new();
    let mut literal = String::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        if rest.starts_with("{{") {
            literal.push('{');
            i += 2;
        } else if rest.starts_with("}}") {
            literal.push('}');
            i += 2;
        } else if bytes[i] == b'{' {
            let Some(close) = rest.find('}') else {
                return Err(TemplateError::Unclosed { offset: i });
            };
            let name = &rest[1..close];
            let part = match name {
                "prompt" => Part::Prompt,
                "id" => Part::Id,
                "kind" => Part::Kind,
                "numbers" => Part::Numbers,
                "target" => Part::Target,
                _ => {
                    return Err(TemplateError::UnknownPlaceholder {
                        name: name.to_owned(),
                        offset: i,
                    });
                }
            };
            if !literal.is_empty() {
                parts.push(Part::Text(std::mem::take(&mut literal)));
            }
            parts.push(part);
            i += close + 1;
        } else if bytes[i] == b'}' {
            return Err(TemplateError::Unmatched { offset: i });
        } else {
            let ch = rest.chars().next().unwrap_or_default();
            literal.push(ch);
            i += ch.len_utf8().max(1);
        }
    }
    if !literal.is_empty() {
        parts.push(Part::Text(literal));
    }
    Ok(parts)
}

impl fmt::Display for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.spec())
    }
}

impl Serialize for Template {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.spec())
    }
}

impl<'de> Deserialize<'de> for Template {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spec = String::deserialize(deserializer)?;
        Template::parse(&spec).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn math(prompt: &str) -> Task {
        serde_json::from_value(serde_json::json!({
            "id": "m1", "kind": "math", "prompt": prompt, "answer": "1"
        }))
        .unwrap()
    }

    fn countdown() -> Task {
        serde_json::from_value(serde_json::json!({
            "id": "c7", "kind": "countdown", "prompt": "Reach 24.", "numbers": [3, 3, 8, 8],
            "target": 24
        }))
        .unwrap()
    }

    #[test]
    fn r1_zero_keeps_the_tags_and_ends_with_assistant() {
        let text = Template::R1Zero.render(&math("What is 2+2?"));
        assert!(text.contains("<think> </think>"));
        assert!(text.contains("<answer> </answer>"));
        assert!(text.ends_with("\nUser: What is 2+2?\nAssistant:"), "{text}");
    }

    #[test]
    fn prompt_text_with_braces_is_not_reinterpreted() {
        // The problem itself may contain `{prompt}` or LaTeX braces: they are inserted verbatim.
        let task = math(r"Simplify \frac{1}{2} {prompt}");
        assert_eq!(
            Template::Plain.render(&task),
            r"Simplify \frac{1}{2} {prompt}"
        );
        assert!(
            Template::R1Zero
                .render(&task)
                .contains(r"User: Simplify \frac{1}{2} {prompt}")
        );
        let t = Template::parse("[{prompt}]").unwrap();
        assert_eq!(t.render(&task), r"[Simplify \frac{1}{2} {prompt}]");
    }

    #[test]
    fn custom_placeholders_and_escapes() {
        let t = Template::parse("{{{id}}} {kind}: {prompt} use {numbers} → {target}").unwrap();
        assert_eq!(
            t.render(&countdown()),
            "{c7} countdown: Reach 24. use 3, 3, 8, 8 → 24"
        );
        // Countdown-only placeholders render empty for other kinds.
        assert_eq!(t.render(&math("p")), "{m1} math: p use  → ");
    }

    #[test]
    fn bad_templates_are_rejected_with_offsets() {
        for (text, want) in [
            (
                "{prompt} {answer}",
                TemplateError::UnknownPlaceholder {
                    name: "answer".into(),
                    offset: 9,
                },
            ),
            ("{prompt", TemplateError::Unclosed { offset: 0 }),
            ("{prompt} }", TemplateError::Unmatched { offset: 9 }),
            (
                "r1-zero",
                TemplateError::NoPrompt {
                    text: "r1-zero".into(),
                },
            ),
        ] {
            assert_eq!(Template::parse(text), Err(want), "{text}");
        }
    }

    #[test]
    fn names_round_trip_through_serde() {
        for spec in ["r1_zero", "compact", "plain", "Q: {prompt}\nA:"] {
            let t = Template::parse(spec).unwrap();
            let json = serde_json::to_string(&t).unwrap();
            let back: Template = serde_json::from_str(&json).unwrap();
            assert_eq!(t, back);
            assert_eq!(back.spec(), spec);
        }
    }

    #[test]
    fn non_ascii_literal_text_survives() {
        let t = Template::parse("Frage: {prompt} — Antwort:").unwrap();
        assert_eq!(t.render(&math("1+1?")), "Frage: 1+1? — Antwort:");
    }
}
