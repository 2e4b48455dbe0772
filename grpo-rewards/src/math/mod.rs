//! The math answer checker: extraction → parsing → equivalence.
//!
//! - [`extract`] finds the final answer in a completion (`<answer>`, `\boxed{}` (several
//!   joined by `and` or commas read as a list), `#### N`, "the answer is", the last `$…$`,
//!   `\(…\)`, `\[…\]` or matrix in prose, last number; configurable priority) and cleans it.
//! - [`normalize`] is the one pipeline every answer goes through before it is parsed,
//!   reference and prediction alike (text units, `\text{}`, degree signs, thousands
//!   separators, doubled backslashes), so no rule applies to one side only; a reference
//!   written as a worked solution is read for its final answer first.
//! - [`parse`] turns LaTeX or plain math into an [`Expr`] tree, linear-time, with caps on
//!   length and nesting (numbers as people write them: `12 500`, `12,\!500`, `3,75`).
//! - [`equiv`] decides equivalence: exact big-rational arithmetic whenever the values are
//!   rational (no float false positives on near-equal values), a relative tolerance only
//!   for irrational or complex values, evaluation at sample points for expressions with
//!   variables, order-free sets, structure-aware intervals, tuples and matrices. The rules
//!   are listed in [`equiv`]'s docs.
//! - [`eval`] evaluates a tree to an exact rational where it can, a complex float where the
//!   value is irrational or complex.
//! - [`relation`] (labelled answers, chains, inequalities), [`matrix`] (matrix arithmetic),
//!   [`rounding`] (a decimal for an exact value) and [`plusminus`] (`±`) are the parts of
//!   [`equiv`] with rules of their own.
//!
//! Nothing here panics or hangs on any input: huge exponents (`10^{10^{10}}`), huge
//! factorials, deep nesting and megabyte strings give a verdict quickly.
//!
//! ```
//! use grpo_rewards::math::MathChecker;
//! let checker = MathChecker::default();
//! let check = checker.check(r"\frac{1}{2}", r"So the probability is $\boxed{0.5}$.");
//! assert!(check.correct);
//! assert_eq!(check.extracted.as_deref(), Some("0.5"));
//! assert!(!checker.check("1/2^{99}", r"\boxed{1/2^{98}}").correct);
//! assert!(checker.check(r"\frac{3}{7}", r"\boxed{0.4286}").correct);
//! assert!(checker.check("(2,9)", r"\boxed{(m,n) = (2,9)}").correct);
//! assert!(!checker.check("(4,2)", r"\boxed{\{2,4\}}").correct);
//! ```
//!
//! `cargo run --release -p grpo-benches --bin math_fuzz -- --inputs 10000000` fuzzes the
//! parser and the checker with generated and mutated inputs.

pub mod equiv;
pub mod eval;
pub mod extract;
pub mod matrix;
pub mod normalize;
pub mod number;
pub mod parse;
pub mod plusminus;
pub mod relation;
pub mod rounding;

use crate::answer::AnswerFormat;
use crate::error::{Result, RewardError};
use crate::math::normalize::{normalize_answer, unescape_doubled};
use crate::result::{Verdict, VerdictKind, clip};

pub use equiv::{EquivConfig, equivalent};
pub use extract::{DEFAULT_RULES, ExtractRule, Extracted, clean_answer, extract, extract_with};
pub use parse::{Expr, parse_answer};

/// The longest completion examined, in bytes; longer completions are read from their last
/// this-many bytes (where final answers are).
pub const MAX_COMPLETION_LEN: usize = 1 << 20;

/// How the checker finds and compares answers.
#[derive(Debug, Clone, PartialEq)]
pub struct MathConfig {
    /// Extraction rules, in priority order.
    pub rules: Vec<ExtractRule>,
    /// Tolerances and sampling for equivalence.
    pub equiv: EquivConfig,
    /// The answer tags the [`ExtractRule::AnswerTag`] rule reads.
    pub answer: AnswerFormat,
}

impl Default for MathConfig {
    fn default() -> Self {
        MathConfig {
            rules: DEFAULT_RULES.to_vec(),
            equiv: EquivConfig::default(),
            answer: AnswerFormat::default(),
        }
    }
}

/// The outcome of checking one completion.
#[derive(Debug, Clone, PartialEq)]
pub struct MathCheck {
    /// Whether the extracted answer is equivalent to the reference (or an alternative).
    pub correct: bool,
    /// The answer found in the completion, cleaned.
    pub extracted: Option<String>,
    /// The verdict with its reason.
    pub verdict: Verdict,
}

/// A reference answer parsed once, to check many completions against.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedGold {
    answers: Vec<ReadAnswer>,
}

/// An answer read for comparison: its normalised text, its tree (plain text when it does not
/// parse as math), and, for a bare number written with commas (`2,3`), its reading as a list.
#[derive(Debug, Clone, PartialEq)]
struct ReadAnswer {
    text: String,
    expr: Expr,
    parsed: std::result::Result<(), String>,
    as_list: Option<Expr>,
}

impl ReadAnswer {
    /// Reads an extracted answer through the one normalisation pipeline.
    fn new(answer: &str) -> Self {
        let text = normalize_answer(&unescape_doubled(answer));
        let parsed = parse_answer(&text);
        Self::from_parsed(text, parsed)
    }

    /// An answer already normalised, with its parse.
    fn from_parsed(text: String, parsed: Result<Expr>) -> Self {
        let (expr, parsed) = match parsed {
            Ok(e) => (e, Ok(())),
            Err(err) => (
                Expr::Text(parse::normalize_text(&text)),
                Err(err.to_string()),
            ),
        };
        // `2,3` reads as 2.3 on its own; against a collection it may list two answers.
        let as_list = (matches!(expr, Expr::Decimal(..) | Expr::Neg(_) | Expr::Num(_))
            && text.contains(','))
        .then(|| parse_answer(&text.replace(',', ", ")).ok())
        .flatten();
        ReadAnswer {
            text,
            expr,
            parsed,
            as_list,
        }
    }

    fn is_collection(&self) -> bool {
        matches!(self.expr, Expr::List(_) | Expr::Set(_) | Expr::Tuple(_))
    }
}

/// Whether two read answers are equivalent; symmetric in its arguments.
fn answers_equal(a: &ReadAnswer, b: &ReadAnswer, cfg: &EquivConfig) -> bool {
    if equivalent(&a.expr, &b.expr, cfg) {
        return true;
    }
    let listed = |x: &ReadAnswer, y: &ReadAnswer| {
        y.is_collection()
            && x.as_list
                .as_ref()
                .is_some_and(|l| equivalent(l, &y.expr, cfg))
    };
    listed(a, b) || listed(b, a)
}

impl PreparedGold {
    /// The cleaned reference texts (the answer, then the alternatives).
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        self.answers.iter().map(|a| a.text.as_str())
    }

    fn lists_answers(&self) -> bool {
        self.answers.iter().any(ReadAnswer::is_collection)
    }
}

/// The answer of a reference: its boxes (all of them when it boxes several parts), its
/// `#### N`, the whole text when it reads as an answer, else the final answer of the worked
/// solution it is (its "answer is" sentence or its last math span; not a stray last number).
fn reference_answer(gold: &str) -> ReadAnswer {
    if let Some(boxes) = extract::reference_boxes(gold).filter(|b| !b.is_empty()) {
        return ReadAnswer::new(&boxes);
    }
    if let Some(e) = extract(gold, &[ExtractRule::Gsm8k]) {
        return ReadAnswer::new(&e.text);
    }
    let whole = clean_answer(gold);
    let parsed = parse_answer(&whole);
    let reads = match &parsed {
        Ok(Expr::Text(t)) => t.split(' ').count() <= extract::MAX_WHOLE_WORDS,
        Ok(_) => true,
        Err(_) => false,
    };
    if reads {
        // Parsed once: the whole reference is the answer.
        return ReadAnswer::from_parsed(whole, parsed);
    }
    match extract(gold, &[ExtractRule::AnswerIs, ExtractRule::LastMath]) {
        Some(e) => ReadAnswer::new(&e.text),
        None => ReadAnswer::from_parsed(whole, parsed),
    }
}

/// The reusable math checker.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MathChecker {
    config: MathConfig,
}

impl MathChecker {
    /// A checker with this configuration; an empty rule list is an error.
    pub fn new(config: MathConfig) -> Result<Self> {
        if config.rules.is_empty() {
            return Err(RewardError::InvalidConfig {
                field: "rules".into(),
                reason: "no extraction rule".into(),
            });
        }
        if !(config.equiv.rel_tol >= 0.0 && config.equiv.abs_tol >= 0.0) {
            return Err(RewardError::InvalidConfig {
                field: "equiv".into(),
                reason: "tolerances must be non-negative numbers".into(),
            });
        }
        Ok(MathChecker { config })
    }

    /// The configuration.
    pub fn config(&self) -> &MathConfig {
        &self.config
    }

    /// Parses the reference answer and its alternatives once. A reference written as a
    /// solution is read for its final answer first (its boxes, `#### N`, its "answer is"
    /// sentence, last math span or number); a reference that is not math is kept as text.
    pub fn prepare(&self, gold: &str, alternatives: &[String]) -> PreparedGold {
        let answers = std::iter::once(gold)
            .chain(alternatives.iter().map(String::as_str))
            .map(|g| reference_answer(&unescape_doubled(g)))
            .collect();
        PreparedGold { answers }
    }

    /// Checks one completion against a prepared reference.
    pub fn check_prepared(&self, gold: &PreparedGold, completion: &str) -> MathCheck {
        let completion = unescape_doubled(tail(completion, MAX_COMPLETION_LEN));
        let Some(found) = extract_with(&completion, &self.config.rules, &self.config.answer) else {
            return MathCheck {
                correct: false,
                extracted: None,
                verdict: Verdict::new(
                    VerdictKind::NoAnswer,
                    "no final answer found in the completion",
                ),
            };
        };
        self.check_found_in(gold, found.text, &completion)
    }

    /// Checks the answer `answer` that the extraction rules found in `completion`: what
    /// [`MathChecker::check_prepared`] does once it has found it (the completion is read
    /// again only for a reference that lists several answers, whose parts several boxes may
    /// answer). For callers that extract first, such as a `parse` then `verify` interface.
    pub fn check_found(
        &self,
        gold: &PreparedGold,
        answer: impl Into<String>,
        completion: &str,
    ) -> MathCheck {
        self.check_found_in(gold, answer, &unescape_doubled(completion))
    }

    /// [`MathChecker::check_found`] on a completion already unescaped.
    fn check_found_in(
        &self,
        gold: &PreparedGold,
        answer: impl Into<String>,
        completion: &str,
    ) -> MathCheck {
        let check = self.check_answer(gold, answer);
        if check.correct
            || !gold.lists_answers()
            || !self.config.rules.contains(&ExtractRule::Boxed)
        {
            return check;
        }
        // Several boxes joined by a short phrase answer the parts of a listed reference.
        match extract::joined_boxes(completion) {
            Some(parts) => {
                let joined = self.check_answer(gold, parts.join(", "));
                if joined.correct { joined } else { check }
            }
            None => check,
        }
    }

    /// Checks an answer already extracted from its completion (no extraction rule runs; the
    /// answer goes through the same normalisation as the reference): what
    /// [`MathChecker::check_prepared`] does once it has found the answer. For callers that
    /// extract elsewhere, such as a `parse` then `verify` interface.
    pub fn check_answer(&self, gold: &PreparedGold, answer: impl Into<String>) -> MathCheck {
        let answer: String = answer.into();
        let reference = gold.answers.first().map_or("", |a| a.text.as_str());
        let read = ReadAnswer::new(&answer);
        if gold
            .answers
            .iter()
            .any(|g| answers_equal(g, &read, &self.config.equiv))
        {
            return correct(answer, reference);
        }
        if let Err(err) = &read.parsed {
            tracing::debug!(answer = %answer, error = %err, "unparsable answer");
            return MathCheck {
                correct: false,
                verdict: Verdict::new(
                    VerdictKind::Unparsable,
                    format!(
                        "the answer `{}` could not be read as math: {err}",
                        clip(&answer)
                    ),
                ),
                extracted: Some(answer),
            };
        }
        MathCheck {
            correct: false,
            verdict: Verdict::new(
                VerdictKind::WrongAnswer,
                format!(
                    "the answer `{}` is not equivalent to the reference `{}`",
                    clip(&answer),
                    clip(reference)
                ),
            ),
            extracted: Some(answer),
        }
    }

    /// Whether two answers, each already extracted, are equivalent: both go through the same
    /// normalisation and parsing, and the comparison is symmetric (`equal(a, b) ==
    /// equal(b, a)`) and reflexive.
    pub fn equal(&self, a: &str, b: &str) -> bool {
        answers_equal(&ReadAnswer::new(a), &ReadAnswer::new(b), &self.config.equiv)
    }

    /// Checks one completion against one reference answer.
    pub fn check(&self, gold: &str, completion: &str) -> MathCheck {
        self.check_prepared(&self.prepare(gold, &[]), completion)
    }
}

fn correct(extracted: String, reference: &str) -> MathCheck {
    MathCheck {
        correct: true,
        verdict: Verdict::new(
            VerdictKind::Correct,
            format!(
                "the answer `{}` is equivalent to the reference `{}`",
                clip(&extracted),
                clip(reference)
            ),
        ),
        extracted: Some(extracted),
    }
}

/// The last `max` bytes of `s`, cut at a character boundary.
fn tail(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}
