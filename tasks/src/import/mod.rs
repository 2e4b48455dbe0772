//! Importers: public benchmark files in their own formats → tasks.
//!
//! | format | input | tasks |
//! |---|---|---|
//! | `humaneval` | HumanEval JSONL (or `.jsonl.gz`) | code, `prefix` mode, assert tests with `check(candidate)` |
//! | `mbpp` | MBPP original JSONL, or sanitized JSON/JSONL | code, `full` mode, assert tests |
//! | `gsm8k` | GSM8K JSONL (`#### N` answers) | math |
//! | `math` | MATH-style JSONL (`\boxed{}` in `solution`, or an `answer` field) | math |
//! | `jsonl` | any JSONL, with a [`FieldMap`] | math or countdown |
//!
//! Every task keeps where it came from in `metadata`: `source` (the dataset), `source_id`
//! (the record's own id or its 0-based index) and `license` (the dataset's license, or the one
//! given for generic JSONL). Input may be gzip-compressed (detected by its magic bytes), a
//! JSON array, or JSON lines.

mod benchmarks;
pub mod foreign;
mod generic;

use std::path::Path;

use serde_json::{Map, Value};

use crate::error::ImportError;
use crate::task::{Metadata, Task};

pub use benchmarks::boxed_answer;
pub use generic::FieldMap;

/// An input format.
#[derive(Debug, Clone, PartialEq)]
pub enum Format {
    /// OpenAI HumanEval (`task_id`, `prompt`, `canonical_solution`, `test`, `entry_point`).
    HumanEval,
    /// MBPP, original (`text`, `code`, `test_list`, …) or sanitized (`prompt`, `code`,
    /// `test_imports`, `test_list`).
    Mbpp,
    /// GSM8K (`question`, `answer` ending in `#### N`).
    Gsm8k,
    /// MATH-style (`problem`, `solution` with `\boxed{}`, or `answer`; `level`, `type`).
    Math,
    /// Any JSONL, with the fields named by a mapping.
    Jsonl(FieldMap),
}

impl Format {
    /// Parses a format name (`humaneval`, `mbpp`, `gsm8k`, `math`); `jsonl` needs a field map
    /// and is built with [`Format::Jsonl`].
    pub fn from_name(name: &str) -> Option<Format> {
        match name {
            "humaneval" => Some(Format::HumanEval),
            "mbpp" => Some(Format::Mbpp),
            "gsm8k" => Some(Format::Gsm8k),
            "math" => Some(Format::Math),
            _ => None,
        }
    }

    /// The license this format's dataset is published under, when fixed.
    pub fn license(&self) -> Option<&str> {
        match self {
            Format::HumanEval | Format::Gsm8k | Format::Math => Some("MIT"),
            Format::Mbpp => Some("CC-BY-4.0"),
            Format::Jsonl(map) => map.license.as_deref(),
        }
    }
}

/// Imports a file (plain or gzip) in the given format.
pub fn import_file(format: &Format, path: &Path) -> Result<Vec<Task>, ImportError> {
    let text = crate::pack::read_maybe_gzip(path).map_err(|source| ImportError::Io {
        path: path.to_owned(),
        source,
    })?;
    import_str(format, &path.display().to_string(), &text)
}

/// Imports text in the given format; `file` names it in errors.
pub fn import_str(format: &Format, file: &str, text: &str) -> Result<Vec<Task>, ImportError> {
    let records = records(file, text)?;
    let tasks = records
        .iter()
        .enumerate()
        .map(|(index, (line, record))| {
            let r = Record {
                file,
                line: *line,
                index,
                fields: record,
            };
            match format {
                Format::HumanEval => benchmarks::humaneval(&r),
                Format::Mbpp => benchmarks::mbpp(&r),
                Format::Gsm8k => benchmarks::gsm8k(&r),
                Format::Math => benchmarks::math(&r),
                Format::Jsonl(map) => map.task(&r),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    tracing::info!(file, n = tasks.len(), "imported tasks");
    Ok(tasks)
}

type JsonObject = Map<String, Value>;

/// The records of a JSON array or of JSON lines, each with its 1-based line (or array
/// position).
fn records(file: &str, text: &str) -> Result<Vec<(usize, JsonObject)>, ImportError> {
    let record_error = |line, message: String| ImportError::Record {
        file: file.to_owned(),
        line,
        field: "-".into(),
        message,
    };
    let as_object = |line, v: Value| match v {
        Value::Object(map) => Ok((line, map)),
        other => Err(record_error(
            line,
            format!("expected a JSON object, found {}", short(&other)),
        )),
    };
    if text.trim_start().starts_with('[') {
        let items: Vec<Value> = serde_json::from_str(text)
            .map_err(|e| record_error(e.line(), format!("broken JSON array: {e}")))?;
        return items
            .into_iter()
            .enumerate()
            .map(|(i, v)| as_object(i + 1, v))
            .collect();
    }
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line)
            .map_err(|e| record_error(i + 1, format!("broken JSON: {e}")))?;
        out.push(as_object(i + 1, v)?);
    }
    Ok(out)
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}

/// One input record, with where it came from.
pub(crate) struct Record<'a> {
    pub file: &'a str,
    pub line: usize,
    /// 0-based position among the records.
    pub index: usize,
    pub fields: &'a Map<String, Value>,
}

impl Record<'_> {
    pub fn error(&self, field: &str, message: impl Into<String>) -> ImportError {
        ImportError::Record {
            file: self.file.to_owned(),
            line: self.line,
            field: field.to_owned(),
            message: message.into(),
        }
    }

    /// A required text field (numbers are written out as text).
    pub fn text(&self, field: &str) -> Result<String, ImportError> {
        match self.fields.get(field) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(Value::Number(n)) => Ok(n.to_string()),
            Some(other) => {
                Err(self.error(field, format!("expected a string, found {}", short(other))))
            }
            None => Err(self.error(field, "missing required field")),
        }
    }

    /// An optional text field.
    pub fn opt_text(&self, field: &str) -> Result<Option<String>, ImportError> {
        match self.fields.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(_) => self.text(field).map(Some),
        }
    }

    /// A required list of strings.
    pub fn text_list(&self, field: &str) -> Result<Vec<String>, ImportError> {
        match self.fields.get(field) {
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(self.error(
                        &format!("{field}[{i}]"),
                        format!("expected a string, found {}", short(other)),
                    )),
                })
                .collect(),
            Some(other) => Err(self.error(
                field,
                format!("expected an array of strings, found {}", short(other)),
            )),
            None => Err(self.error(field, "missing required field")),
        }
    }

    /// Metadata with `source`, `source_id` and `license`.
    pub fn metadata(&self, source: &str, source_id: &str, license: Option<&str>) -> Metadata {
        let mut m = Metadata::new();
        m.insert("source".into(), Value::String(source.to_owned()));
        m.insert("source_id".into(), Value::String(source_id.to_owned()));
        if let Some(license) = license {
            m.insert("license".into(), Value::String(license.to_owned()));
        }
        m
    }
}
