//! Importers: public benchmark files in their own formats → tasks.
//!
//! | format | input | tasks |
//! |---|---|---|
//! | `humaneval` | HumanEval JSONL (or `.jsonl.gz`) | code, `prefix` mode, assert tests with `check(candidate)` |
//! | `mbpp` | MBPP original JSONL, or sanitized JSON/JSONL | code, `full` mode, assert tests |
//! | `gsm8k` | GSM8K JSONL (`#### N` answers) | math |
//! | `math` | MATH-style JSONL (`\boxed{}` in `solution`, or an `answer` field) | math |
//! | `jsonl` | any JSONL, with a [`FieldMap`] | math or countdown |
//! | `taco`, `apps` | `input_output` (JSON text: `inputs`, `outputs`, `fn_name`), `solutions` | code: stdio, or call tests with `fn_name` (assert tests for a `class Solution` starter) |
//! | `codecontests` | `public_tests`/`private_tests`/`generated_tests`, `time_limit`, `memory_limit_bytes`, `solutions` | code, stdio (public tests `public`, every test deciding, compared as CodeContests' tester: tokens, no case, numbers within 1e-5), Python 3 or C++ reference |
//! | `livecodebench` | `public_test_cases`, compressed `private_test_cases` (base64, zlib, pickle), `metadata.func_name` | code: stdio (public and private cases deciding, numbers by value), or assert tests calling `Solution().func_name` on every case |
//! | `codeforces` | open-r1 rows: `examples`, `official_tests`, `generated_checker`, limits | code, stdio with a `codeforces` checker when given; interactive and file-input rows skipped |
//! | `primeintellect` | `prompt`, `verification_info` (`stdin_stdout` or `function_call` cases), `gold_standard_solution` | code: stdio or call |
//! | `kodcode` | `question`, pytest-style `test`, `test_info`, `solution` | code, assert tests that call every `test_*` function |
//! | `evalplus` | HumanEval+/MBPP+: `prompt`, `canonical_solution`, `entry_point`, `base_input`, `plus_input`, `atol` | code, call tests whose expected values come from running the reference ([`Imported::pending`]) |
//! | `parquet` | verl rows: `data_source`, `prompt` (chat messages), `reward_model.ground_truth`, `extra_info` | math or code, through [`foreign::from_ground_truth`] |
//!
//! Every task keeps where it came from in `metadata`: `source` (the dataset), `source_id`
//! (the record's own id or its 0-based index) and `license` (the dataset's license when it is
//! fixed and known, or the one given for generic JSONL). Input may be gzip-compressed
//! (detected by its magic bytes), a JSON array, JSON lines, or a Parquet file (detected by its
//! `PAR1` magic; each row is converted to a JSON object once, then read like a JSON line,
//! its 1-based row number standing for the line in errors).
//!
//! Rows a format cannot express are skipped, not failed, when the dataset holds them by design
//! (Codeforces' interactive and file-input problems; CodeContests' file-input problems): they are
//! counted in [`Imported::skipped`] with the reason. A row that breaks its format is an error
//! naming file, line (or row) and field.

mod benchmarks;
mod contests;
mod evalplus;
pub mod foreign;
mod generic;
mod kodcode;
mod livecodebench;
pub mod parquet;
pub mod pickle;

use std::path::Path;

use serde_json::{Map, Value};

use crate::error::ImportError;
use crate::task::{Metadata, Task};

pub use benchmarks::boxed_answer;
pub use evalplus::PendingOutputs;
pub use generic::FieldMap;
pub use livecodebench::live_code_bench_asserts;

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
    /// TACO (`question`, `input_output`, `solutions`, `starter_code`, limits as text).
    Taco,
    /// APPS (`problem_id`, `question`, `input_output`, `solutions`, `starter_code`).
    Apps,
    /// DeepMind CodeContests.
    CodeContests,
    /// LiveCodeBench code generation (`code_generation_lite`).
    LiveCodeBench,
    /// open-r1's Codeforces problems.
    Codeforces,
    /// PrimeIntellect's verifiable coding problems (`verification_info`).
    PrimeIntellect,
    /// KodCode (pytest-style tests).
    KodCode,
    /// EvalPlus: HumanEval+ and MBPP+.
    EvalPlus,
    /// verl's training rows (`data_source`, `prompt`, `reward_model`, `extra_info`).
    Verl,
}

impl Format {
    /// Parses a format name (`humaneval`, `mbpp`, `gsm8k`, `math`, `taco`, `apps`,
    /// `codecontests`, `livecodebench`, `codeforces`, `primeintellect`, `kodcode`, `evalplus`,
    /// `parquet` or its alias `verl`); `jsonl` needs a field map
    /// and is built with [`Format::Jsonl`].
    pub fn from_name(name: &str) -> Option<Format> {
        match name {
            "humaneval" => Some(Format::HumanEval),
            "mbpp" => Some(Format::Mbpp),
            "gsm8k" => Some(Format::Gsm8k),
            "math" => Some(Format::Math),
            "taco" => Some(Format::Taco),
            "apps" => Some(Format::Apps),
            "codecontests" => Some(Format::CodeContests),
            "livecodebench" => Some(Format::LiveCodeBench),
            "codeforces" => Some(Format::Codeforces),
            "primeintellect" => Some(Format::PrimeIntellect),
            "kodcode" => Some(Format::KodCode),
            "evalplus" => Some(Format::EvalPlus),
            "parquet" | "verl" => Some(Format::Verl),
            _ => None,
        }
    }

    /// The license this format's dataset is published under, when fixed.
    pub fn license(&self) -> Option<&str> {
        match self {
            Format::HumanEval | Format::Gsm8k | Format::Math | Format::Apps => Some("MIT"),
            Format::Mbpp | Format::CodeContests | Format::Codeforces => Some("CC-BY-4.0"),
            Format::Taco | Format::EvalPlus => Some("Apache-2.0"),
            Format::KodCode => Some("CC-BY-NC-4.0"),
            Format::Jsonl(map) => map.license.as_deref(),
            // Not one fixed license (LiveCodeBench's and PrimeIntellect's cards vary by
            // release; verl rows come from anywhere): the caller says.
            Format::LiveCodeBench | Format::PrimeIntellect | Format::Verl => None,
        }
    }
}

/// What an import made: the tasks, the tasks whose expected outputs still have to be computed,
/// and the rows left out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Imported {
    /// The tasks, in input order. Tasks named in `pending` are incomplete until
    /// [`Imported::finalize`] fills them.
    pub tasks: Vec<Task>,
    /// Expected values to compute by running a reference program once per task (EvalPlus):
    /// run each [`PendingOutputs::script`] in the sandbox and hand its stdout to
    /// [`Imported::finalize`].
    pub pending: Vec<PendingOutputs>,
    /// Rows left out on purpose, with why.
    pub skipped: Vec<Skipped>,
}

/// A row an importer left out on purpose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The 1-based line (or Parquet row).
    pub line: usize,
    /// Why it was left out.
    pub reason: String,
}

impl Imported {
    /// The tasks, once every pending output is filled: `outputs[i]` is the stdout of
    /// `pending[i].script()` run to completion (or why it could not run). An output that is
    /// missing, failed or does not decode is an error naming the task's row.
    pub fn finalize(
        mut self,
        outputs: Vec<Result<String, String>>,
    ) -> Result<Vec<Task>, ImportError> {
        if outputs.len() != self.pending.len() {
            return Err(ImportError::Config(format!(
                "{} pending tasks but {} outputs",
                self.pending.len(),
                outputs.len()
            )));
        }
        for (pending, output) in self.pending.iter().zip(outputs) {
            pending.fill(&mut self.tasks, output)?;
        }
        Ok(self.tasks)
    }
}

/// What one row became.
pub(crate) enum Converted {
    Task(Task),
    Pending(Task, PendingOutputs),
    Skip(String),
}

impl From<Task> for Converted {
    fn from(task: Task) -> Converted {
        Converted::Task(task)
    }
}

/// Imports a file (plain, gzip or Parquet) in the given format. Rows the format skips by
/// design are dropped (see [`import_file_all`] to count them); a format whose tasks need
/// outputs computed (EvalPlus) is an error here: use [`import_file_all`].
pub fn import_file(format: &Format, path: &Path) -> Result<Vec<Task>, ImportError> {
    complete(import_file_all(format, path)?)
}

/// Imports a file (plain, gzip or Parquet) in the given format, with pending outputs and
/// skipped rows.
pub fn import_file_all(format: &Format, path: &Path) -> Result<Imported, ImportError> {
    let io = |source| ImportError::Io {
        path: path.to_owned(),
        source,
    };
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(io)?;
    if bytes.starts_with(parquet::MAGIC) {
        let rows = parquet::read_rows(&file, bytes)?;
        return convert(format, &file, &rows);
    }
    let text = crate::pack::decode_maybe_gzip(bytes).map_err(io)?;
    import_str_all(format, &file, &text)
}

/// Imports text in the given format; `file` names it in errors. See [`import_file`].
pub fn import_str(format: &Format, file: &str, text: &str) -> Result<Vec<Task>, ImportError> {
    complete(import_str_all(format, file, text)?)
}

/// Imports text in the given format, with pending outputs and skipped rows.
pub fn import_str_all(format: &Format, file: &str, text: &str) -> Result<Imported, ImportError> {
    convert(format, file, &records(file, text)?)
}

fn complete(imported: Imported) -> Result<Vec<Task>, ImportError> {
    if !imported.pending.is_empty() {
        return Err(ImportError::Config(
            "these tasks need their expected outputs computed by running the reference \
             solution: import them with `import_file_all` and `Imported::finalize`"
                .into(),
        ));
    }
    Ok(imported.tasks)
}

/// Converts records (1-based line, object) in the given format.
pub(crate) fn convert(
    format: &Format,
    file: &str,
    records: &[(usize, JsonObject)],
) -> Result<Imported, ImportError> {
    let mut out = Imported::default();
    for (index, (line, record)) in records.iter().enumerate() {
        let r = Record {
            file,
            line: *line,
            index,
            fields: record,
        };
        let converted: Converted = match format {
            Format::HumanEval => benchmarks::humaneval(&r)?.into(),
            Format::Mbpp => benchmarks::mbpp(&r)?.into(),
            Format::Gsm8k => benchmarks::gsm8k(&r)?.into(),
            Format::Math => benchmarks::math(&r)?.into(),
            Format::Jsonl(map) => map.task(&r)?.into(),
            Format::Taco => contests::apps(&r, contests::AppsFlavour::Taco)?,
            Format::Apps => contests::apps(&r, contests::AppsFlavour::Apps)?,
            Format::CodeContests => contests::codecontests(&r)?,
            Format::LiveCodeBench => livecodebench::livecodebench(&r)?.into(),
            Format::Codeforces => contests::codeforces(&r)?,
            Format::PrimeIntellect => contests::primeintellect(&r)?.into(),
            Format::KodCode => kodcode::kodcode(&r)?.into(),
            Format::EvalPlus => evalplus::evalplus(&r)?,
            Format::Verl => contests::verl(&r)?.into(),
        };
        match converted {
            Converted::Task(task) => out.tasks.push(task),
            Converted::Pending(task, mut pending) => {
                pending.task = out.tasks.len();
                out.tasks.push(task);
                out.pending.push(pending);
            }
            Converted::Skip(reason) => out.skipped.push(Skipped {
                line: *line,
                reason,
            }),
        }
    }
    tracing::info!(
        file,
        n = out.tasks.len(),
        skipped = out.skipped.len(),
        pending = out.pending.len(),
        "imported tasks"
    );
    Ok(out)
}

pub(crate) type JsonObject = Map<String, Value>;

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

pub(crate) fn short(v: &Value) -> String {
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

    /// An optional field holding JSON, or JSON text (as HF datasets store nested data):
    /// text is decoded; `null` and the empty string are absent.
    pub fn json(&self, field: &str) -> Result<Option<Value>, ImportError> {
        match self.fields.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) if text.trim().is_empty() => Ok(None),
            Some(Value::String(text)) => serde_json::from_str(text)
                .map(Some)
                .map_err(|e| self.error(field, format!("not valid JSON text: {e}"))),
            Some(other) => Ok(Some(other.clone())),
        }
    }

    /// A required field holding JSON or JSON text.
    pub fn required_json(&self, field: &str) -> Result<Value, ImportError> {
        self.json(field)?
            .ok_or_else(|| self.error(field, "missing required field"))
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
