//! Generic JSONL with a field mapping.

use std::collections::BTreeMap;

use serde_json::Value;

use super::Record;
use crate::error::ImportError;
use crate::task::{CountdownTask, MathTask, Task, TaskKind};

/// Which input field holds each task field, for generic JSONL.
///
/// ```
/// use grpo_tasks::import::FieldMap;
/// let map = FieldMap::parse("math", "prompt=question,answer=final,id=uid").unwrap();
/// assert_eq!(map.fields["prompt"], "question");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct FieldMap {
    /// The kind of task to build (`math` or `countdown`).
    pub kind: TaskKind,
    /// Task field → input field. Math needs `prompt` and `answer`; countdown needs `prompt`,
    /// `numbers` and `target`. `id` (default: the record's index) and `alternatives`,
    /// `use_all`, `reference` are optional.
    pub fields: BTreeMap<String, String>,
    /// The source name written to `metadata.source` (default `jsonl`).
    pub source: Option<String>,
    /// The license written to `metadata.license`.
    pub license: Option<String>,
}

const MATH_FIELDS: [&str; 4] = ["id", "prompt", "answer", "alternatives"];
const COUNTDOWN_FIELDS: [&str; 6] = ["id", "prompt", "numbers", "target", "use_all", "reference"];

impl FieldMap {
    /// Parses `task_field=input_field` pairs separated by commas; fields not named map to
    /// themselves.
    pub fn parse(kind: &str, pairs: &str) -> Result<FieldMap, ImportError> {
        let kind = match kind {
            "math" => TaskKind::Math,
            "countdown" => TaskKind::Countdown,
            other => {
                return Err(ImportError::Config(format!(
                    "generic JSONL import builds math or countdown tasks, not `{other}`"
                )));
            }
        };
        let allowed: &[&str] = if kind == TaskKind::Math {
            &MATH_FIELDS
        } else {
            &COUNTDOWN_FIELDS
        };
        let mut fields: BTreeMap<String, String> = allowed
            .iter()
            .map(|f| ((*f).to_owned(), (*f).to_owned()))
            .collect();
        for pair in pairs.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((to, from)) = pair.split_once('=') else {
                return Err(ImportError::Config(format!(
                    "mapping `{pair}` is not task_field=input_field"
                )));
            };
            let (to, from) = (to.trim(), from.trim());
            if !allowed.contains(&to) {
                return Err(ImportError::Config(format!(
                    "`{to}` is not a field of {} tasks (fields: {})",
                    if kind == TaskKind::Math {
                        "math"
                    } else {
                        "countdown"
                    },
                    allowed.join(", ")
                )));
            }
            fields.insert(to.to_owned(), from.to_owned());
        }
        Ok(FieldMap {
            kind,
            fields,
            source: None,
            license: None,
        })
    }

    fn input<'a>(&'a self, field: &'a str) -> &'a str {
        self.fields.get(field).map(String::as_str).unwrap_or(field)
    }

    pub(super) fn task(&self, r: &Record<'_>) -> Result<Task, ImportError> {
        let source_id = match r.opt_text(self.input("id"))? {
            Some(id) => id,
            None => r.index.to_string(),
        };
        let source = self.source.as_deref().unwrap_or("jsonl");
        let metadata = Some(r.metadata(source, &source_id, self.license.as_deref()));
        let prompt = r.text(self.input("prompt"))?;
        match self.kind {
            TaskKind::Math => {
                let alternatives = match r.fields.get(self.input("alternatives")) {
                    None | Some(Value::Null) => Vec::new(),
                    Some(_) => r.text_list(self.input("alternatives"))?,
                };
                Ok(Task::Math(MathTask {
                    id: source_id,
                    prompt,
                    answer: r.text(self.input("answer"))?,
                    alternatives,
                    metadata,
                }))
            }
            _ => {
                let numbers_field = self.input("numbers");
                let numbers = match r.fields.get(numbers_field) {
                    Some(Value::Array(items)) => items
                        .iter()
                        .enumerate()
                        .map(|(i, v)| {
                            v.as_i64().ok_or_else(|| {
                                r.error(&format!("{numbers_field}[{i}]"), "expected an integer")
                            })
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                    Some(_) => return Err(r.error(numbers_field, "expected an array of integers")),
                    None => return Err(r.error(numbers_field, "missing required field")),
                };
                let target_field = self.input("target");
                let target = match r.fields.get(target_field) {
                    Some(v) => v
                        .as_i64()
                        .ok_or_else(|| r.error(target_field, "expected an integer"))?,
                    None => return Err(r.error(target_field, "missing required field")),
                };
                let use_all = match r.fields.get(self.input("use_all")) {
                    None | Some(Value::Null) => true,
                    Some(Value::Bool(b)) => *b,
                    Some(_) => return Err(r.error(self.input("use_all"), "expected true or false")),
                };
                Ok(Task::Countdown(CountdownTask {
                    id: source_id,
                    prompt,
                    numbers,
                    target,
                    use_all,
                    reference: r.opt_text(self.input("reference"))?,
                    metadata,
                }))
            }
        }
    }
}
