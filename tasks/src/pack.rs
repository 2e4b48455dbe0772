//! Task packs: loading, strict validation, splits and the manifest.
//!
//! A *pack spec* is one of
//! - a `.jsonl` (or `.jsonl.gz`) file: one split named after the file's stem;
//! - a directory with `pack.toml` and split files (`train.jsonl`, `eval.jsonl`, …): the
//!   manifest's `[splits]` table names them, or else every `*.jsonl` file is a split named
//!   after its stem;
//! - `builtin:NAME`: a pack compiled into the crate (see [`crate::builtin`]).
//!
//! Loading is strict and complete: each line is read by the serde types ([`crate::read`]:
//! unknown fields, missing fields, wrong types, unknown kinds, broken JSON; the first such
//! problem of a line, with its field), then checked for meaning by [`Task::validate`] (every
//! empty prompt, countdown reference that misses its target, empty test list), then ids are
//! checked for duplicates across the whole pack. Every problem of every line is collected with
//! its file, line and field, and [`Pack::load`] returns them all at once in
//! [`PackError::Invalid`].
//!
//! ```
//! use grpo_tasks::Pack;
//! let pack = Pack::load("builtin:arith").unwrap();
//! assert!(pack.split("train").unwrap().len() >= 2000);
//! assert!(pack.split("eval").unwrap().len() >= 200);
//!
//! let bad = "{\"id\":\"a\",\"kind\":\"math\",\"prompt\":\"1+1\"}\n";
//! let err = Pack::from_jsonl_str("bad.jsonl", bad).unwrap_err();
//! assert_eq!(err.problems()[0].to_string(), "bad.jsonl:1: field `answer` (task a): missing field `answer`");
//! ```

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::builtin;
use crate::error::{PackError, Problem};
use crate::read;
use crate::task::Task;
use crate::template::Template;

/// A pack's description: `pack.toml` in a pack directory, or defaults for a single file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The pack's name.
    pub name: String,
    /// The pack's version (free text, semver by convention).
    #[serde(default = "default_version")]
    pub version: String,
    /// The license of the problems (an SPDX id when there is one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    /// What the pack is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The default prompt template (`r1_zero`, `compact`, `plain`, or a custom text).
    #[serde(default)]
    pub template: Template,
    /// Reward weights by reward name; an absent weight means the caller's default. An
    /// unknown name is an error naming it.
    #[serde(default, skip_serializing_if = "RewardWeights::is_empty")]
    pub rewards: RewardWeights,
    /// How math answers are judged (`[math]`): see [`MathOptions`].
    #[serde(default, skip_serializing_if = "MathOptions::is_default")]
    pub math: MathOptions,
    /// How code tasks are run (`[code]`): see [`CodeOptions`].
    #[serde(default, skip_serializing_if = "CodeOptions::is_default")]
    pub code: CodeOptions,
    /// Split name → file name relative to the pack directory; empty means every `*.jsonl`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub splits: BTreeMap<String, String>,
}

/// The `[rewards]` table of `pack.toml`: a weight per reward the project knows.
///
/// ```
/// use grpo_tasks::pack::RewardWeights;
/// let w: RewardWeights = toml::from_str("accuracy = 1.0\nformat = 0.1").unwrap();
/// assert_eq!((w.accuracy, w.format), (Some(1.0), Some(0.1)));
/// let err = toml::from_str::<RewardWeights>("acuracy = 1.0").unwrap_err().to_string();
/// assert!(err.contains("unknown field `acuracy`"), "{err}");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RewardWeights {
    /// Weight of the accuracy reward (math equivalence, countdown, code tests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<f64>,
    /// Weight of the `<think>…</think><answer>…</answer>` format reward.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<f64>,
}

impl RewardWeights {
    /// Whether no weight is given.
    pub fn is_empty(&self) -> bool {
        self.accuracy.is_none() && self.format.is_none()
    }
}

/// The `[math]` table of `pack.toml`: options of the math answer check.
///
/// ```
/// use grpo_tasks::pack::MathOptions;
/// let m: MathOptions = toml::from_str("evaluated_numbers = true").unwrap();
/// assert!(m.evaluated_numbers);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MathOptions {
    /// A reference that is a number accepts only a number written out (an integer, a
    /// decimal, a fraction in lowest terms, a percentage), not arithmetic that evaluates to
    /// it: for packs that ask to compute (`What is 60 - 1 + 32?`), where repeating the
    /// question (`60 - 1 + 32`) is not an answer. Off by default: `\frac{\sqrt{2}}{2}` and
    /// `2^{10}` are final answers elsewhere.
    #[serde(default)]
    pub evaluated_numbers: bool,
}

impl MathOptions {
    /// Whether every option is at its default.
    pub fn is_default(&self) -> bool {
        *self == MathOptions::default()
    }
}

/// The `[code]` table of `pack.toml`: how code tasks' limits are read.
///
/// ```
/// use grpo_tasks::pack::{CodeOptions, TimeLimits};
/// let c: CodeOptions = toml::from_str("time_limits = \"native\"").unwrap();
/// assert_eq!(c.time_limits, TimeLimits::Native);
/// assert_eq!(CodeOptions::default().time_limits, TimeLimits::Sandbox);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodeOptions {
    /// What the tasks' `time_limit_ms` were set for: see [`TimeLimits`].
    #[serde(default)]
    pub time_limits: TimeLimits,
}

impl CodeOptions {
    /// Whether every option is at its default.
    pub fn is_default(&self) -> bool {
        *self == CodeOptions::default()
    }
}

/// What a code task's `time_limit_ms` was set for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeLimits {
    /// The sandbox: the limit is the CPU time a run gets, as written (our own schema's
    /// default).
    #[default]
    Sandbox,
    /// A native interpreter or compiler on a judge's machine (CPython, g++, Node.js), as data
    /// sets publish them: the sandbox multiplies the limit by its runtime's measured slowdown
    /// for the task's language (what `grpo tasks import` writes).
    Native,
}

fn default_version() -> String {
    "0.0.0".into()
}

impl Manifest {
    /// A manifest with a name and every other field at its default.
    pub fn named(name: impl Into<String>) -> Manifest {
        Manifest {
            name: name.into(),
            version: default_version(),
            license: None,
            description: None,
            template: Template::default(),
            rewards: RewardWeights::default(),
            math: MathOptions::default(),
            code: CodeOptions::default(),
            splits: BTreeMap::new(),
        }
    }
}

/// One split of a pack: its name, where it came from, and its tasks in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    /// The split's name (`train`, `eval`, …).
    pub name: String,
    /// The file it was read from (a path, or `builtin:NAME/FILE`).
    pub file: String,
    /// The tasks, in file order.
    pub tasks: Vec<Task>,
}

/// A loaded, valid task pack.
#[derive(Debug, Clone, PartialEq)]
pub struct Pack {
    /// The pack's manifest.
    pub manifest: Manifest,
    splits: Vec<Split>,
}

impl Pack {
    /// Loads a pack from a spec: a `.jsonl` path, a pack directory, or `builtin:NAME`.
    pub fn load(spec: &str) -> Result<Pack, PackError> {
        if let Some(name) = spec.strip_prefix("builtin:") {
            return load_builtin(spec, name);
        }
        let path = Path::new(spec);
        if path.is_dir() {
            return load_dir(path);
        }
        if path.is_file() {
            let text = read_text(path)?;
            let label = path.display().to_string();
            return Pack::from_jsonl_str(&label, &text).map(|mut pack| {
                pack.manifest.name = split_name_of(path);
                pack
            });
        }
        Err(PackError::NotFound {
            spec: spec.into(),
            reason: "not a file, a directory, or builtin:NAME (built-in packs: ".to_owned()
                + &builtin::names().join(", ")
                + ")",
        })
    }

    /// Reads a single-file pack from text; `file` names it in errors, and its stem names the
    /// one split (`eval.jsonl` → `eval`).
    pub fn from_jsonl_str(file: &str, text: &str) -> Result<Pack, PackError> {
        let name = split_name_of(Path::new(file));
        let mut problems = Vec::new();
        let lined = parse_jsonl(file, text, &mut problems);
        check_duplicates(
            lined.iter().map(|(line, t)| (file, Some(*line), t)),
            &mut problems,
        );
        let tasks = lined.into_iter().map(|(_, t)| t).collect();
        let splits = vec![Split {
            name: name.clone(),
            file: file.to_owned(),
            tasks,
        }];
        if !problems.is_empty() {
            return Err(PackError::Invalid { problems });
        }
        Ok(Pack {
            manifest: Manifest::named(name),
            splits,
        })
    }

    /// Builds a pack from a manifest and already-parsed splits, checking ids and meaning.
    pub fn from_splits(manifest: Manifest, splits: Vec<Split>) -> Result<Pack, PackError> {
        let mut problems = Vec::new();
        for split in &splits {
            for task in &split.tasks {
                for (field, message) in task.validate().into_iter().map(|p| (p.field, p.message)) {
                    problems.push(Problem {
                        file: split.file.clone(),
                        line: None,
                        field: Some(field),
                        task_id: Some(task.id().to_owned()),
                        message,
                    });
                }
            }
        }
        check_duplicates(
            splits
                .iter()
                .flat_map(|s| s.tasks.iter().map(move |t| (s.file.as_str(), None, t))),
            &mut problems,
        );
        if !problems.is_empty() {
            return Err(PackError::Invalid { problems });
        }
        Ok(Pack { manifest, splits })
    }

    /// The tasks of one split, if the pack has it.
    pub fn split(&self, name: &str) -> Option<&[Task]> {
        self.splits
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.tasks.as_slice())
    }

    /// Every split, in manifest (or file-name) order.
    pub fn splits(&self) -> &[Split] {
        &self.splits
    }

    /// The split names.
    pub fn split_names(&self) -> Vec<&str> {
        self.splits.iter().map(|s| s.name.as_str()).collect()
    }

    /// The training tasks: split `train`, or the only split of a one-split pack.
    pub fn train(&self) -> &[Task] {
        self.split("train").unwrap_or_else(|| self.only_split())
    }

    /// The evaluation tasks: split `eval`, else `test`, else the only split of a one-split
    /// pack.
    pub fn eval(&self) -> &[Task] {
        self.split("eval")
            .or_else(|| self.split("test"))
            .unwrap_or_else(|| self.only_split())
    }

    fn only_split(&self) -> &[Task] {
        match self.splits.as_slice() {
            [only] => &only.tasks,
            _ => &[],
        }
    }

    /// Every task of every split.
    pub fn tasks(&self) -> impl Iterator<Item = &Task> {
        self.splits.iter().flat_map(|s| s.tasks.iter())
    }

    /// The number of tasks in all splits.
    pub fn len(&self) -> usize {
        self.splits.iter().map(|s| s.tasks.len()).sum()
    }

    /// Whether the pack has no task at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The task with this id, in any split.
    pub fn get(&self, id: &str) -> Option<&Task> {
        self.tasks().find(|t| t.id() == id)
    }
}

/// Serialises tasks as JSONL, one line each, with a trailing newline.
pub fn to_jsonl(tasks: &[Task]) -> String {
    let mut out = String::new();
    for task in tasks {
        // Serialising a `Task` cannot fail: every field is a string, number, bool or JSON value.
        if let Ok(line) = serde_json::to_string(task) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

fn split_name_of(path: &Path) -> String {
    let file = path.file_name().and_then(|f| f.to_str()).unwrap_or("tasks");
    let stem = file.strip_suffix(".gz").unwrap_or(file);
    stem.strip_suffix(".jsonl").unwrap_or(stem).to_owned()
}

fn read_text(path: &Path) -> Result<String, PackError> {
    read_maybe_gzip(path).map_err(|source| PackError::Io {
        path: path.to_owned(),
        source,
    })
}

/// Reads a UTF-8 text file, gunzipping it first when it starts with the gzip magic bytes
/// (so `.jsonl.gz` data sets load as they are downloaded).
pub(crate) fn read_maybe_gzip(path: &Path) -> std::io::Result<String> {
    decode_maybe_gzip(std::fs::read(path)?)
}

/// Bytes as UTF-8 text, gunzipped first when they start with gzip's magic.
pub(crate) fn decode_maybe_gzip(bytes: Vec<u8>) -> std::io::Result<String> {
    let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(bytes.as_slice()).read_to_end(&mut out)?;
        out
    } else {
        bytes
    };
    String::from_utf8(bytes).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

fn load_builtin(spec: &str, name: &str) -> Result<Pack, PackError> {
    let Some(files) = builtin::get(name) else {
        return Err(PackError::NotFound {
            spec: spec.into(),
            reason: format!(
                "no built-in pack `{name}` (built-in packs: {})",
                builtin::names().join(", ")
            ),
        });
    };
    let manifest_label = format!("builtin:{name}/pack.toml");
    let read = |file: &str| -> Option<String> {
        files
            .files
            .iter()
            .find(|(f, _)| *f == file)
            .map(|(_, text)| (*text).to_owned())
    };
    load_with(
        &manifest_label,
        files.manifest,
        |file| {
            let label = format!("builtin:{name}/{file}");
            match read(file) {
                Some(text) => Ok((label, text)),
                None => Err(Problem {
                    file: manifest_label.clone(),
                    line: None,
                    field: Some("splits".into()),
                    task_id: None,
                    message: format!("built-in pack has no file `{file}`"),
                }),
            }
        },
        files.files.iter().map(|(f, _)| (*f).to_owned()).collect(),
    )
}

fn load_dir(dir: &Path) -> Result<Pack, PackError> {
    let manifest_path = dir.join("pack.toml");
    let manifest_label = manifest_path.display().to_string();
    let manifest_text = match std::fs::read_to_string(&manifest_path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(PackError::NotFound {
                spec: dir.display().to_string(),
                reason: "the directory has no pack.toml".into(),
            });
        }
        Err(source) => {
            return Err(PackError::Io {
                path: manifest_path,
                source,
            });
        }
    };
    let mut files: Vec<String> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().to_str().map(str::to_owned))
            .filter(|f| f.ends_with(".jsonl") || f.ends_with(".jsonl.gz"))
            .collect(),
        Err(source) => {
            return Err(PackError::Io {
                path: dir.to_owned(),
                source,
            });
        }
    };
    files.sort();
    let mut io_error = None;
    let result = load_with(
        &manifest_label,
        &manifest_text,
        |file| {
            let path = dir.join(file);
            let label = path.display().to_string();
            if !path.is_file() {
                return Err(Problem {
                    file: manifest_label.clone(),
                    line: None,
                    field: Some("splits".into()),
                    task_id: None,
                    message: format!("split file `{file}` does not exist"),
                });
            }
            match read_text(&path) {
                Ok(text) => Ok((label, text)),
                Err(e) => {
                    let message = e.to_string();
                    io_error.get_or_insert(e);
                    Err(Problem {
                        file: label,
                        line: None,
                        field: None,
                        task_id: None,
                        message,
                    })
                }
            }
        },
        files,
    );
    match (result, io_error) {
        (Err(_), Some(io)) => Err(io),
        (result, _) => result,
    }
}

/// Loads a pack from its manifest text and a reader of split files; `files` lists the
/// `*.jsonl` files present, used when the manifest names no splits.
fn load_with(
    manifest_label: &str,
    manifest_text: &str,
    mut read: impl FnMut(&str) -> Result<(String, String), Problem>,
    files: Vec<String>,
) -> Result<Pack, PackError> {
    let manifest: Manifest = match toml::from_str(manifest_text) {
        Ok(m) => m,
        Err(e) => {
            let line = e.span().map(|span| line_of(manifest_text, span.start));
            return Err(PackError::Invalid {
                problems: vec![Problem {
                    file: manifest_label.to_owned(),
                    line,
                    field: None,
                    task_id: None,
                    message: e.message().to_owned(),
                }],
            });
        }
    };
    let split_files: Vec<(String, String)> = if manifest.splits.is_empty() {
        files
            .iter()
            .map(|f| (split_name_of(Path::new(f)), f.clone()))
            .collect()
    } else {
        manifest
            .splits
            .iter()
            .map(|(n, f)| (n.clone(), f.clone()))
            .collect()
    };
    let mut problems = Vec::new();
    if split_files.is_empty() {
        problems.push(Problem {
            file: manifest_label.to_owned(),
            line: None,
            field: Some("splits".into()),
            task_id: None,
            message: "the pack has no split files (*.jsonl)".into(),
        });
    }
    let mut parsed = Vec::new();
    for (name, file) in split_files {
        match read(&file) {
            Ok((label, text)) => {
                let lined = parse_jsonl(&label, &text, &mut problems);
                parsed.push((name, label, lined));
            }
            Err(problem) => problems.push(problem),
        }
    }
    // Conventional order: train, eval, test, then the rest by name.
    parsed.sort_by_key(|(name, _, _)| {
        let rank = ["train", "eval", "test"]
            .iter()
            .position(|n| n == name)
            .unwrap_or(3);
        (rank, name.clone())
    });
    check_duplicates(
        parsed.iter().flat_map(|(_, label, lined)| {
            lined
                .iter()
                .map(move |(l, t)| (label.as_str(), Some(*l), t))
        }),
        &mut problems,
    );
    let splits = parsed
        .into_iter()
        .map(|(name, file, lined)| Split {
            name,
            file,
            tasks: lined.into_iter().map(|(_, t)| t).collect(),
        })
        .collect();
    if !problems.is_empty() {
        return Err(PackError::Invalid { problems });
    }
    Ok(Pack { manifest, splits })
}

fn line_of(text: &str, byte: usize) -> usize {
    text.as_bytes()
        .iter()
        .take(byte)
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Parses JSONL text into (line, task) pairs, pushing every problem found; lines with problems
/// are left out.
pub(crate) fn parse_jsonl(
    file: &str,
    text: &str,
    problems: &mut Vec<Problem>,
) -> Vec<(usize, Task)> {
    let mut tasks = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let problem = |field: Option<String>, task_id: Option<String>, message: String| Problem {
            file: file.to_owned(),
            line: Some(line_no),
            field,
            task_id,
            message,
        };
        let value: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                problems.push(problem(
                    None,
                    None,
                    format!("broken JSON at column {}: {e}", e.column()),
                ));
                continue;
            }
        };
        let task_id = value.get("id").and_then(Value::as_str).map(str::to_owned);
        let task = match read::task_from_value(value) {
            Ok(t) => t,
            Err(e) => {
                problems.push(problem(e.field, task_id, e.message));
                continue;
            }
        };
        let meaning: Vec<(String, String)> = task
            .validate()
            .into_iter()
            .map(|p| (p.field, p.message))
            .collect();
        if meaning.is_empty() {
            tasks.push((line_no, task));
        } else {
            for (field, message) in meaning {
                problems.push(problem(Some(field), task_id.clone(), message));
            }
        }
    }
    tasks
}

/// Reports every id used more than once, naming the line of each repeat and of the first use.
fn check_duplicates<'a>(
    entries: impl IntoIterator<Item = (&'a str, Option<usize>, &'a Task)>,
    problems: &mut Vec<Problem>,
) {
    let mut first: HashMap<&str, String> = HashMap::new();
    for (file, line, task) in entries {
        let here = match line {
            Some(l) => format!("{file}:{l}"),
            None => file.to_owned(),
        };
        if let Some(prev) = first.get(task.id()) {
            problems.push(Problem {
                file: file.to_owned(),
                line,
                field: Some("id".into()),
                task_id: Some(task.id().to_owned()),
                message: format!("duplicate id (first used at {prev})"),
            });
        } else {
            first.insert(task.id(), here);
        }
    }
}

pub use crate::validate::countdown_reference_problem;

/// Reads a pack directory's split file path (for tools that write packs).
pub fn split_path(dir: &Path, split: &str) -> PathBuf {
    dir.join(format!("{split}.jsonl"))
}
