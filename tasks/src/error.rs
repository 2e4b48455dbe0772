//! Errors of this crate.
//!
//! Loading a pack never stops at the first problem: every problem found is collected as a
//! [`Problem`] (file, line, field, message) and returned together in [`PackError::Invalid`], so
//! a pack author fixes them all in one pass.

use std::fmt;
use std::path::PathBuf;

/// One problem found in a pack: where it is and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file the problem is in (a path, or `builtin:NAME/FILE`).
    pub file: String,
    /// The 1-based line, when the problem is on one line.
    pub line: Option<usize>,
    /// The field (a dotted path such as `tests.cases[2].stdout`), when one field is at fault.
    pub field: Option<String>,
    /// The task id, when the line had one.
    pub task_id: Option<String>,
    /// What is wrong, as a sentence.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": field `{field}`")?;
        }
        if let Some(id) = &self.task_id {
            write!(f, " (task {id})")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Why a pack could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PackError {
    /// The pack spec names nothing loadable.
    #[error("no task pack at `{spec}`: {reason}")]
    NotFound {
        /// The spec as given.
        spec: String,
        /// Why it is not a pack.
        reason: String,
    },
    /// A file of the pack could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The pack was read, and has problems: all of them are listed.
    #[error("{} problem(s) in the pack:\n{}", problems.len(), ProblemList(problems))]
    Invalid {
        /// Every problem found, in file and line order.
        problems: Vec<Problem>,
    },
}

impl PackError {
    /// The problems of an invalid pack (empty for other errors).
    pub fn problems(&self) -> &[Problem] {
        match self {
            PackError::Invalid { problems } => problems,
            _ => &[],
        }
    }
}

struct ProblemList<'a>(&'a [Problem]);

impl fmt::Display for ProblemList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "  {p}")?;
        }
        Ok(())
    }
}

/// A prompt template that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TemplateError {
    /// The template names a placeholder that does not exist.
    #[error(
        "unknown placeholder `{{{name}}}` at byte {offset} (known: {{prompt}}, {{id}}, {{kind}}, {{numbers}}, {{target}})"
    )]
    UnknownPlaceholder {
        /// The placeholder's name.
        name: String,
        /// Its byte offset in the template.
        offset: usize,
    },
    /// A `{` without its `}`.
    #[error("unclosed `{{` at byte {offset} (write `{{{{` for a literal brace)")]
    Unclosed {
        /// Its byte offset in the template.
        offset: usize,
    },
    /// A `}` without its `{`.
    #[error("unmatched `}}` at byte {offset} (write `}}}}` for a literal brace)")]
    Unmatched {
        /// Its byte offset in the template.
        offset: usize,
    },
    /// A custom template without `{prompt}` would drop the problem.
    #[error(
        "template `{text}` has no `{{prompt}}` placeholder and is not a known name (r1_zero, compact, plain)"
    )]
    NoPrompt {
        /// The template text.
        text: String,
    },
}

/// An arithmetic expression that cannot be parsed or evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExprError {
    /// Nothing to parse.
    #[error("empty expression")]
    Empty,
    /// A character that is not a digit, operator, parenthesis or space.
    #[error("unexpected character `{ch}` at byte {offset}")]
    UnexpectedChar {
        /// The character.
        ch: char,
        /// Its byte offset.
        offset: usize,
    },
    /// A token where another was expected.
    #[error("unexpected {found} at byte {offset}, expected {expected}")]
    UnexpectedToken {
        /// What was found.
        found: String,
        /// What was expected.
        expected: &'static str,
        /// Its byte offset.
        offset: usize,
    },
    /// A division by zero during exact evaluation.
    #[error("division by zero")]
    DivisionByZero,
    /// Longer than the parser reads.
    #[error("expression of {len} bytes is longer than the cap of {max} bytes")]
    TooLong {
        /// Its length in bytes.
        len: usize,
        /// The cap.
        max: usize,
    },
    /// Nesting deeper than the parser allows.
    #[error("expression nested deeper than {max} levels")]
    TooDeep {
        /// The limit.
        max: usize,
    },
}

/// Why an import failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The input file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A record of the input is not in the expected format.
    #[error("{file}:{line}: field `{field}`: {message}")]
    Record {
        /// The input file.
        file: String,
        /// The 1-based line (for a JSON array: the element's 1-based index).
        line: usize,
        /// The field at fault.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// The importer cannot be configured as asked.
    #[error("{0}")]
    Config(String),
    /// A Parquet file that cannot be read, or a column whose type has no JSON form.
    #[error("{file}: {message}")]
    Parquet {
        /// The input file.
        file: String,
        /// What is wrong.
        message: String,
    },
}

/// Why a pack could not be exported.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// The output file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The Parquet writer failed.
    #[error("writing {}: {message}", path.display())]
    Parquet {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// Why a generator cannot run with the given settings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GenerateError {
    /// A setting is out of its range.
    #[error("setting `{field}`: {message}")]
    Setting {
        /// The setting.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
    /// Not enough distinct problems exist for the requested count.
    #[error(
        "only {found} distinct problems found after {attempts} attempts, {wanted} wanted: lower the count or raise the difficulty"
    )]
    Exhausted {
        /// Distinct problems found.
        found: usize,
        /// Problems wanted.
        wanted: usize,
        /// Draws made.
        attempts: usize,
    },
}
