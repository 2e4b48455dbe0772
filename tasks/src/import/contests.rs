//! Competitive-programming and code-RL data sets: TACO, APPS, CodeContests, open-r1's
//! Codeforces, PrimeIntellect, and verl's training rows (KodCode's pytest files: `kodcode.rs`).

use serde_json::Value;

use super::foreign::{self, text_of, unwrap_apps_output};
use super::livecodebench::live_code_bench_asserts;
use super::{Converted, Record, short};
use crate::error::ImportError;
use crate::judging::{Checker, CheckerProtocol, Compare, PublicTests, TestPlan};
use crate::task::{
    AssertTests, CallCase, CallTests, CodeMode, CodeTask, CodeTests, Language, Metadata, StdioCase,
    StdioTests, Task,
};

/// Which of the two APPS-shaped data sets a row comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AppsFlavour {
    Taco,
    Apps,
}

/// TACO and APPS: `input_output` holds `inputs`, `outputs` and, for call-based problems,
/// `fn_name`. Call-based outputs are unwrapped from their one-element lists
/// ([`unwrap_apps_output`]); a `class Solution` starter makes assert tests that call the
/// method on a fresh `Solution()`.
pub(super) fn apps(r: &Record<'_>, flavour: AppsFlavour) -> Result<Converted, ImportError> {
    let (source, license) = match flavour {
        AppsFlavour::Taco => ("taco", "Apache-2.0"),
        AppsFlavour::Apps => ("apps", "MIT"),
    };
    let source_id = match r.opt_text("problem_id")? {
        Some(id) => id,
        None => r.index.to_string(),
    };
    let question = r.text("question")?;
    let starter = r.opt_text("starter_code")?.filter(|s| !s.trim().is_empty());
    let io = match r.required_json("input_output")? {
        Value::Object(io) => io,
        other => {
            return Err(r.error(
                "input_output",
                format!(
                    "expected an object with `inputs` and `outputs`, found {}",
                    short(&other)
                ),
            ));
        }
    };
    let list = |name: &str| match io.get(name) {
        Some(Value::Array(items)) => Ok(items),
        Some(other) => Err(r.error(
            &format!("input_output.{name}"),
            format!("expected a list, found {}", short(other)),
        )),
        None => Err(r.error(&format!("input_output.{name}"), "missing")),
    };
    let (inputs, outputs) = (list("inputs")?, list("outputs")?);
    if inputs.len() != outputs.len() {
        return Err(r.error(
            "input_output",
            format!("{} inputs but {} outputs", inputs.len(), outputs.len()),
        ));
    }
    if inputs.is_empty() {
        return Err(r.error("input_output.inputs", "no test cases"));
    }
    let tests = match io.get("fn_name") {
        None | Some(Value::Null) => foreign::stdio_from_in_outs(inputs, outputs),
        Some(Value::String(name)) if foreign::is_identifier(name) => {
            let cases: Vec<(Vec<Value>, Value)> = inputs
                .iter()
                .zip(outputs)
                .map(|(i, o)| {
                    let args = match i {
                        Value::Array(args) => args.clone(),
                        other => vec![other.clone()],
                    };
                    (args, unwrap_apps_output(o.clone()))
                })
                .collect();
            if starter
                .as_deref()
                .is_some_and(|s| s.contains("class Solution"))
            {
                CodeTests::Assert(AssertTests {
                    code: live_code_bench_asserts(name, &cases),
                    entry_point: None,
                })
            } else {
                CodeTests::Call(CallTests {
                    entry_point: name.clone(),
                    cases: cases
                        .into_iter()
                        .map(|(args, expected)| CallCase {
                            args,
                            expected,
                            public: false,
                        })
                        .collect(),
                    ..CallTests::default()
                })
            }
        }
        Some(other) => {
            return Err(r.error(
                "input_output.fn_name",
                format!("expected a Python identifier, found {}", short(other)),
            ));
        }
    };
    let reference = match r.json("solutions")? {
        None => None,
        Some(Value::Array(items)) => match items.first() {
            None => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                return Err(r.error(
                    "solutions[0]",
                    format!("expected a string, found {}", short(other)),
                ));
            }
        },
        Some(other) => {
            return Err(r.error(
                "solutions",
                format!("expected a list of programs, found {}", short(&other)),
            ));
        }
    };
    let mut metadata = r.metadata(source, &source_id, Some(license));
    for (from, to) in [
        ("difficulty", "difficulty"),
        ("url", "url"),
        ("name", "name"),
        ("source", "origin"),
        ("tags", "tags"),
        ("skill_types", "skill_types"),
    ] {
        copy(r, &mut metadata, from, to);
    }
    let time_limit = r.opt_text("time_limit")?;
    let memory_limit = r.opt_text("memory_limit")?;
    let time_limit_ms = time_limit.as_deref().and_then(parse_time_ms);
    let memory_mb = memory_limit.as_deref().and_then(parse_memory_mb);
    // A limit written in a way we do not read is kept as it was, not guessed.
    for (field, text, parsed) in [
        ("time_limit", &time_limit, time_limit_ms.is_some()),
        ("memory_limit", &memory_limit, memory_mb.is_some()),
    ] {
        if let Some(text) = text
            && !parsed
        {
            metadata.insert(field.into(), Value::String(text.clone()));
        }
    }
    let mut prompt = question;
    if let Some(starter) = &starter {
        prompt.push_str(&format!(
            "\n\nUse this starter code:\n```python\n{}\n```\n",
            starter.trim_end()
        ));
    }
    Ok(Converted::Task(Task::Code(CodeTask {
        id: format!("{source}/{source_id}"),
        prompt,
        language: Language::Python,
        mode: CodeMode::Full,
        tests,
        reference,
        time_limit_ms,
        memory_mb,
        metadata: Some(metadata),
    })))
}

/// `"2 seconds"`, `"1.5 s"`, `"500 ms"`, or a bare number of seconds.
fn parse_time_ms(text: &str) -> Option<u64> {
    let (value, unit) = number_and_unit(text)?;
    let ms = if unit.starts_with("ms") || unit.starts_with("milli") {
        value
    } else if unit.is_empty() || unit.starts_with('s') {
        value * 1000.0
    } else {
        return None;
    };
    positive(ms)
}

/// `"256 megabytes"`, `"256 MB"`, `"64 MiB"`, `"1 GB"`, or a bare number of megabytes.
fn parse_memory_mb(text: &str) -> Option<u64> {
    let (value, unit) = number_and_unit(text)?;
    let mb = match unit.chars().next() {
        None | Some('m') => value,
        Some('g') => value * 1024.0,
        Some('k') => value / 1024.0,
        _ => return None,
    };
    positive(mb)
}

fn number_and_unit(text: &str) -> Option<(f64, String)> {
    let text = text.trim();
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let value: f64 = text[..end].parse().ok()?;
    Some((value, text[end..].trim().to_ascii_lowercase()))
}

fn positive(value: f64) -> Option<u64> {
    (value.is_finite() && value > 0.0).then(|| value.ceil() as u64)
}

pub(super) fn copy(r: &Record<'_>, metadata: &mut Metadata, from: &str, to: &str) {
    if let Some(v) = r.fields.get(from)
        && !v.is_null()
        && v.as_str() != Some("")
    {
        metadata.insert(to.into(), v.clone());
    }
}

/// One test group of CodeContests: `{"input": [...], "output": [...]}`.
fn test_group(r: &Record<'_>, field: &str, public: bool) -> Result<Vec<StdioCase>, ImportError> {
    let group = match r.json(field)? {
        None => return Ok(Vec::new()),
        Some(Value::Object(group)) => group,
        Some(other) => {
            return Err(r.error(
                field,
                format!(
                    "expected {{\"input\": [...], \"output\": [...]}}, found {}",
                    short(&other)
                ),
            ));
        }
    };
    let strings = |name: &str| -> Result<Vec<String>, ImportError> {
        let at = format!("{field}.{name}");
        match group.get(name) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(r.error(
                        &format!("{at}[{i}]"),
                        format!("expected a string, found {}", short(other)),
                    )),
                })
                .collect(),
            Some(other) => Err(r.error(
                &at,
                format!("expected a list of strings, found {}", short(other)),
            )),
        }
    };
    let (inputs, outputs) = (strings("input")?, strings("output")?);
    if inputs.len() != outputs.len() {
        return Err(r.error(
            &format!("{field}.output"),
            format!("{} inputs but {} outputs", inputs.len(), outputs.len()),
        ));
    }
    Ok(inputs
        .into_iter()
        .zip(outputs)
        .map(|(stdin, stdout)| StdioCase {
            stdin,
            stdout,
            public,
        })
        .collect())
}

/// CodeContests' language codes (1 is Python 2, never taken).
const CC_CPP: i64 = 2;
const CC_PYTHON3: i64 = 3;

/// DeepMind CodeContests: public tests are `public`, private and generated ones hidden, and
/// all of them decide the reward, compared as CodeContests' own tester compares
/// ([`Compare::code_contests`]: tokens, without case, numbers within 1e-5); the reference is
/// the first Python 3 solution, else the first C++ one (and the task is then a C++ task).
/// Python 2 solutions are never taken. File-input problems are skipped.
pub(super) fn codecontests(r: &Record<'_>) -> Result<Converted, ImportError> {
    let name = r.text("name")?;
    for field in ["input_file", "output_file"] {
        if r.opt_text(field)?.is_some_and(|f| !f.trim().is_empty()) {
            return Ok(Converted::Skip(format!(
                "`{field}` is set: the problem reads or writes files"
            )));
        }
    }
    let mut cases = test_group(r, "public_tests", true)?;
    cases.extend(test_group(r, "private_tests", false)?);
    cases.extend(test_group(r, "generated_tests", false)?);
    if cases.is_empty() {
        return Err(r.error(
            "private_tests",
            "no tests in public_tests, private_tests or generated_tests",
        ));
    }
    let time_limit_ms = match r.json("time_limit")? {
        None => None,
        Some(Value::Number(n)) => n.as_f64().and_then(|s| positive(s * 1000.0)),
        Some(Value::Object(t)) => {
            let part = |k: &str| match t.get(k) {
                None | Some(Value::Null) => Ok(0.0),
                Some(v) => v
                    .as_f64()
                    .ok_or_else(|| r.error(&format!("time_limit.{k}"), "expected a number")),
            };
            positive(part("seconds")? * 1000.0 + part("nanos")? / 1e6)
        }
        Some(other) => {
            return Err(r.error(
                "time_limit",
                format!(
                    "expected {{seconds, nanos}} or a number of seconds, found {}",
                    short(&other)
                ),
            ));
        }
    };
    let memory_mb = match r.fields.get("memory_limit_bytes") {
        None | Some(Value::Null) => None,
        Some(v) => {
            let bytes = v
                .as_f64()
                .ok_or_else(|| r.error("memory_limit_bytes", "expected a number"))?;
            positive(bytes / (1024.0 * 1024.0))
        }
    };
    let (language, reference) = match r.json("solutions")? {
        None => (Language::Python, None),
        Some(Value::Object(s)) => {
            let languages = match s.get("language") {
                Some(Value::Array(l)) => l,
                _ => return Err(r.error("solutions.language", "expected a list of integers")),
            };
            let programs = match s.get("solution") {
                Some(Value::Array(p)) => p,
                _ => return Err(r.error("solutions.solution", "expected a list of strings")),
            };
            if languages.len() != programs.len() {
                return Err(r.error(
                    "solutions",
                    format!(
                        "{} languages but {} solutions",
                        languages.len(),
                        programs.len()
                    ),
                ));
            }
            let pick = |want: i64| {
                languages
                    .iter()
                    .zip(programs)
                    .find(|(l, _)| l.as_i64() == Some(want))
                    .and_then(|(_, p)| p.as_str().map(str::to_owned))
            };
            match (pick(CC_PYTHON3), pick(CC_CPP)) {
                (Some(py), _) => (Language::Python, Some(py)),
                (None, Some(cpp)) => (Language::Cpp, Some(cpp)),
                (None, None) => (Language::Python, None),
            }
        }
        Some(other) => {
            return Err(r.error(
                "solutions",
                format!(
                    "expected {{\"language\": [...], \"solution\": [...]}}, found {}",
                    short(&other)
                ),
            ));
        }
    };
    let mut metadata = r.metadata("code_contests", &name, Some("CC-BY-4.0"));
    for (from, to) in [
        ("difficulty", "difficulty"),
        ("source", "origin"),
        ("cf_contest_id", "cf_contest_id"),
        ("cf_index", "cf_index"),
        ("cf_rating", "cf_rating"),
        ("cf_tags", "cf_tags"),
    ] {
        copy(r, &mut metadata, from, to);
    }
    Ok(Converted::Task(Task::Code(CodeTask {
        id: format!("codecontests/{name}"),
        prompt: r.text("description")?,
        language,
        mode: CodeMode::Full,
        tests: CodeTests::Stdio(StdioTests {
            cases,
            compare: Compare::code_contests(),
            plan: TestPlan {
                public_tests: PublicTests::Always,
                ..TestPlan::default()
            },
            ..StdioTests::default()
        }),
        reference,
        time_limit_ms,
        memory_mb,
        metadata: Some(metadata),
    })))
}

/// `[{"input": ..., "output": ...}]` as stdio cases.
fn io_cases(r: &Record<'_>, field: &str, public: bool) -> Result<Vec<StdioCase>, ImportError> {
    match r.json(field)? {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let get = |k: &str| {
                    item.get(k)
                        .filter(|v| !v.is_null())
                        .map(text_of)
                        .ok_or_else(|| r.error(&format!("{field}[{i}].{k}"), "missing"))
                };
                Ok(StdioCase {
                    stdin: get("input")?,
                    stdout: get("output")?,
                    public,
                })
            })
            .collect(),
        Some(other) => Err(r.error(
            field,
            format!(
                "expected a list of {{input, output}}, found {}",
                short(&other)
            ),
        )),
    }
}

/// open-r1's Codeforces rows: `examples` become public cases, `official_tests` hidden ones,
/// which alone decide the reward as in open-r1's `score_submission` (its `generated_tests` is
/// a count here, the tests themselves a data set of their own); `generated_checker` (Python)
/// judges with the `codeforces` protocol. Interactive problems
/// (`interaction_format` set) and file-input ones (`input_mode` other than `stdio`) are
/// skipped: a stdin/stdout test cannot hold them.
pub(super) fn codeforces(r: &Record<'_>) -> Result<Converted, ImportError> {
    let id = r.text("id")?;
    if r.opt_text("interaction_format")?
        .is_some_and(|f| !f.trim().is_empty())
    {
        return Ok(Converted::Skip("interactive problem".into()));
    }
    if let Some(mode) = r.opt_text("input_mode")?
        && mode != "stdio"
    {
        return Ok(Converted::Skip(format!(
            "input_mode `{mode}`: the problem reads files"
        )));
    }
    let mut cases = io_cases(r, "examples", true)?;
    let public = cases.len();
    cases.extend(io_cases(r, "official_tests", false)?);
    if cases.len() == public {
        return Err(r.error("official_tests", "no tests"));
    }
    let prompt = match r.opt_text("prompt")? {
        Some(p) if !p.trim().is_empty() => p,
        _ => codeforces_prompt(r, &cases[..public])?,
    };
    let number = |field: &str, scale: f64| -> Result<Option<u64>, ImportError> {
        match r.fields.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => Ok(positive(
                v.as_f64()
                    .ok_or_else(|| r.error(field, "expected a number"))?
                    * scale,
            )),
        }
    };
    let checker = r
        .opt_text("generated_checker")?
        .filter(|c| !c.trim().is_empty())
        .map(|source| Checker {
            language: Language::Python,
            source,
            protocol: CheckerProtocol::Codeforces,
            time_limit_ms: None,
            memory_mb: None,
        });
    let mut metadata = r.metadata("open-r1/codeforces", &id, Some("CC-BY-4.0"));
    for key in [
        "contest_id",
        "index",
        "title",
        "rating",
        "tags",
        "official_tests_complete",
    ] {
        copy(r, &mut metadata, key, key);
    }
    Ok(Converted::Task(Task::Code(CodeTask {
        id: format!("codeforces/{id}"),
        prompt,
        language: Language::Python,
        mode: CodeMode::Full,
        tests: CodeTests::Stdio(StdioTests {
            cases,
            checker,
            ..StdioTests::default()
        }),
        reference: None,
        time_limit_ms: number("time_limit", 1000.0)?,
        memory_mb: number("memory_limit", 1.0)?,
        metadata: Some(metadata),
    })))
}

/// A Codeforces statement from its parts, for rows without a ready `prompt`.
fn codeforces_prompt(r: &Record<'_>, examples: &[StdioCase]) -> Result<String, ImportError> {
    let mut out = String::new();
    if let Some(title) = r.opt_text("title")? {
        out.push_str(&format!("# {title}\n\n"));
    }
    out.push_str(r.text("description")?.trim());
    for (field, heading) in [("input_format", "Input"), ("output_format", "Output")] {
        if let Some(text) = r.opt_text(field)?.filter(|t| !t.trim().is_empty()) {
            out.push_str(&format!("\n\n## {heading}\n\n{}", text.trim()));
        }
    }
    for (i, case) in examples.iter().enumerate() {
        out.push_str(&format!(
            "\n\n## Example {}\n\nInput:\n```\n{}\n```\nOutput:\n```\n{}\n```",
            i + 1,
            case.stdin.trim_end(),
            case.stdout.trim_end()
        ));
    }
    if let Some(note) = r.opt_text("note")?.filter(|t| !t.trim().is_empty()) {
        out.push_str(&format!("\n\n## Note\n\n{}", note.trim()));
    }
    Ok(out)
}

/// PrimeIntellect's verifiable coding problems: `verification_info` through
/// [`foreign::from_verification_info`], `gold_standard_solution` (code fences removed) as the
/// reference.
pub(super) fn primeintellect(r: &Record<'_>) -> Result<Task, ImportError> {
    let source_id = match r.opt_text("problem_id")? {
        Some(id) => id,
        None => r.index.to_string(),
    };
    let info = r.required_json("verification_info")?;
    let id = format!("primeintellect/{source_id}");
    let Task::Code(mut task) = foreign::from_verification_info(&info, &id)
        .map_err(|e| r.error("verification_info", e.to_string()))?
    else {
        return Err(r.error("verification_info", "not a code task"));
    };
    task.prompt = r.text("prompt")?;
    task.reference = r
        .opt_text("gold_standard_solution")?
        .map(|s| strip_fence(&s))
        .filter(|s| !s.trim().is_empty());
    let mut metadata = r.metadata("primeintellect", &source_id, None);
    copy(r, &mut metadata, "task_type", "task_type");
    copy(r, &mut metadata, "source", "origin");
    if let Some(upstream) = r.json("metadata")? {
        metadata.insert("upstream".into(), upstream);
    }
    task.metadata = Some(metadata);
    Ok(Task::Code(task))
}

/// The code inside a surrounding Markdown fence, or the text as it is.
fn strip_fence(text: &str) -> String {
    let t = text.trim();
    if let Some(rest) = t.strip_prefix("```")
        && let Some(body) = rest.strip_suffix("```")
        && let Some((_lang, code)) = body.split_once('\n')
    {
        return code.to_owned();
    }
    text.to_owned()
}

/// verl's training rows: the task from `reward_model.ground_truth`
/// ([`foreign::from_ground_truth`]), the prompt from the last user message of `prompt`,
/// `data_source` kept as `metadata.source`, `extra_info.index` as the source id.
pub(super) fn verl(r: &Record<'_>) -> Result<Task, ImportError> {
    let data_source = r.text("data_source")?;
    let extra = r.json("extra_info")?;
    let source_id = match extra.as_ref().and_then(|e| e.get("index")) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => r.index.to_string(),
    };
    let reward_model = r.required_json("reward_model")?;
    let ground_truth = reward_model
        .get("ground_truth")
        .filter(|v| !v.is_null())
        .ok_or_else(|| r.error("reward_model.ground_truth", "missing"))?;
    let id = format!("{data_source}/{source_id}");
    let mut task = foreign::from_ground_truth(ground_truth, &id)
        .map_err(|e| r.error("reward_model.ground_truth", e.to_string()))?;
    let prompt = match r.json("prompt")? {
        Some(Value::String(s)) => s,
        Some(Value::Array(messages)) => messages
            .iter()
            .rev()
            .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
            .and_then(|m| m.get("content"))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| r.error("prompt", "no user message with text content"))?,
        Some(other) => {
            return Err(r.error(
                "prompt",
                format!("expected chat messages, found {}", short(&other)),
            ));
        }
        None => return Err(r.error("prompt", "missing required field")),
    };
    let mut metadata = r.metadata(&data_source, &source_id, None);
    copy(r, &mut metadata, "ability", "ability");
    if let Some(split) = extra
        .as_ref()
        .and_then(|e| e.get("split"))
        .filter(|s| s.is_string())
    {
        metadata.insert("split".into(), split.clone());
    }
    match &mut task {
        Task::Math(t) => {
            t.prompt = prompt;
            t.metadata = Some(metadata);
        }
        Task::Code(t) => {
            t.prompt = prompt;
            t.metadata = Some(metadata);
        }
        Task::Countdown(t) => {
            t.prompt = prompt;
            t.metadata = Some(metadata);
        }
    }
    Ok(task)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_in_words() {
        assert_eq!(parse_time_ms("2 seconds"), Some(2000));
        assert_eq!(parse_time_ms("1.5 s"), Some(1500));
        assert_eq!(parse_time_ms("250 ms"), Some(250));
        assert_eq!(parse_time_ms("3"), Some(3000));
        assert_eq!(parse_time_ms("None"), None);
        assert_eq!(parse_time_ms("2 hours"), None);
        assert_eq!(parse_memory_mb("256 megabytes"), Some(256));
        assert_eq!(parse_memory_mb("1 GB"), Some(1024));
        assert_eq!(parse_memory_mb("0 MB"), None);
    }

    #[test]
    fn fences_are_stripped() {
        assert_eq!(strip_fence("```python\nx = 1\n```"), "x = 1\n");
        assert_eq!(strip_fence("x = 1"), "x = 1");
    }
}
