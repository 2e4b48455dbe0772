//! Finding the final answer in a model's completion, and cleaning it for the parser.
//!
//! The rules are tried in the configured order ([`ExtractRule`]); the first that finds
//! something wins. Each rule looks for the *last* occurrence of its marker, because models
//! restate and correct themselves. Every scan is linear in the completion.

use serde::{Deserialize, Serialize};

use crate::answer::AnswerFormat;
use crate::math::normalize::normalize_answer;
use crate::math::parse::parse_answer;

/// One way of finding the answer in a completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExtractRule {
    /// The last `<answer>…</answer>` block, or an `<answer>` left open to the end of the
    /// completion ([`AnswerFormat::answer_block`]); its content is searched again by the other
    /// rules, so `<answer>\boxed{5}</answer>` gives `5`.
    AnswerTag,
    /// The last `\boxed{…}` or `\fbox{…}` (nested braces allowed).
    Boxed,
    /// GSM8K's `#### N` (the rest of that line).
    Gsm8k,
    /// "The answer is …", "Final answer: …" (the rest of that sentence).
    AnswerIs,
    /// The whole completion, when it is one short line that parses as math or is a plain
    /// word answer (a bare `\frac{1}{2}` or `(1, 2]` with no marker around it).
    Whole,
    /// The last math span (`$…$`, `$$…$$`, `\(…\)`, `\[…\]`) or matrix environment in the
    /// text, when no number follows it (long reasoning that ends with its answer in LaTeX).
    LastMath,
    /// The last number in the text that is not glued inside a word (`XQ7Z` has none).
    LastNumber,
}

/// The default priority: answer tag, boxed, `####`, "the answer is", the whole (short)
/// completion, the last math span, last number.
pub const DEFAULT_RULES: &[ExtractRule] = &[
    ExtractRule::AnswerTag,
    ExtractRule::Boxed,
    ExtractRule::Gsm8k,
    ExtractRule::AnswerIs,
    ExtractRule::Whole,
    ExtractRule::LastMath,
    ExtractRule::LastNumber,
];

/// The longest completion the [`ExtractRule::Whole`] rule takes as an answer, in bytes.
pub const MAX_WHOLE_LEN: usize = 512;

/// The most words a plain-text whole completion may have to count as an answer.
pub const MAX_WHOLE_WORDS: usize = 3;

/// An answer found in a completion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extracted {
    /// The cleaned answer text.
    pub text: String,
    /// The rule that found it.
    pub rule: ExtractRule,
}

/// Finds the answer in `completion` with the first matching rule of `rules`, cleaned by
/// [`clean_answer`], reading the default `<answer>` tags. `None` when no rule finds a
/// non-empty answer.
pub fn extract(completion: &str, rules: &[ExtractRule]) -> Option<Extracted> {
    extract_with(completion, rules, &AnswerFormat::default())
}

/// [`extract`] with the answer block of `tags` (the rule for a block left open is
/// [`AnswerFormat::answer_block`]'s: it runs to the end of the completion).
pub fn extract_with(
    completion: &str,
    rules: &[ExtractRule],
    tags: &AnswerFormat,
) -> Option<Extracted> {
    for (k, rule) in rules.iter().enumerate() {
        let found = match rule {
            ExtractRule::AnswerTag => tags.answer_block(completion).map(|block| {
                let inner = block.content.trim();
                let rest: Vec<ExtractRule> = rules[k + 1..]
                    .iter()
                    .copied()
                    .filter(|r| {
                        matches!(
                            r,
                            ExtractRule::Boxed | ExtractRule::AnswerIs | ExtractRule::Gsm8k
                        )
                    })
                    .collect();
                extract(inner, &rest).map_or_else(|| clean_answer(inner), |e| e.text)
            }),
            ExtractRule::Boxed => boxed_answers(completion, only_connectors).map(|(text, end)| {
                // A final "the answer is …" stated after the last box is the answer (the boxes
                // were steps), when it reads as math.
                if rules.contains(&ExtractRule::AnswerIs)
                    && let Some((at, stated)) = answer_is_at(completion)
                    && at >= end
                {
                    let stated = clean_answer(stated);
                    if reads_as_math(&stated) {
                        return stated;
                    }
                }
                text
            }),
            ExtractRule::Gsm8k => gsm8k(completion).map(clean_answer),
            ExtractRule::AnswerIs => {
                answer_is_at(completion).map(|(_, a)| prose_answer(clean_answer(a)))
            }
            ExtractRule::Whole => whole(completion),
            ExtractRule::LastMath => last_math(completion).map(clean_answer),
            ExtractRule::LastNumber => last_number(completion).map(|s| clean_answer(&s)),
        };
        if let Some(text) = found.filter(|t| !t.is_empty()) {
            return Some(Extracted { text, rule: *rule });
        }
    }
    None
}

fn whole(s: &str) -> Option<String> {
    let t = s.trim();
    if t.len() > MAX_WHOLE_LEN || (t.contains('\n') && !t.contains("\\begin")) {
        return None;
    }
    let cleaned = clean_answer(t);
    match parse_answer(&cleaned) {
        // A sentence is not an answer; a word or three is (`yes`, `no solution`).
        Ok(crate::math::parse::Expr::Text(text)) => {
            (text.split(' ').count() <= MAX_WHOLE_WORDS).then_some(cleaned)
        }
        Ok(_) => Some(cleaned),
        Err(_) => None,
    }
}

/// The most `\boxed{}` answers read together.
pub const MAX_BOXED: usize = 16;

/// The content of the last balanced `\boxed{…}` / `\fbox{…}` (also `\boxed 5`).
pub fn last_boxed(s: &str) -> Option<&str> {
    last_boxed_span(s).map(|(_, inner, _)| inner)
}

/// The last boxed answer as (start of the command, content, end of the group).
fn last_boxed_span(s: &str) -> Option<(usize, &str, usize)> {
    let mut search_end = s.len();
    // A few tries backwards, so one unbalanced `\boxed{` at the end does not hide an earlier
    // answer, without quadratic behaviour on adversarial input.
    for _ in 0..4 {
        let (at, len) = last_box_command(&s[..search_end])?;
        let after = &s[at + len..];
        let trimmed = after.trim_start();
        let offset = s.len() - trimmed.len();
        if trimmed.starts_with('{') {
            if let Some(inner) = balanced_group(trimmed) {
                return Some((at, inner, offset + inner.len() + 2));
            }
        } else if after.starts_with(' ') {
            let end = trimmed
                .find(|c: char| c.is_whitespace() || c == '$')
                .unwrap_or(trimmed.len());
            if end > 0 {
                return Some((at, &trimmed[..end], offset + end));
            }
        }
        search_end = at;
    }
    None
}

/// The last `\\boxed` or `\\fbox` command: (its start, its length); one backwards pass over
/// the backslashes.
fn last_box_command(hay: &str) -> Option<(usize, usize)> {
    hay.rmatch_indices('\\').find_map(|(i, _)| {
        let rest = &hay[i..];
        if rest.starts_with("\\boxed") {
            Some((i, "\\boxed".len()))
        } else if rest.starts_with("\\fbox") {
            Some((i, "\\fbox".len()))
        } else {
            None
        }
    })
}

/// Whether `text` parses as math other than plain words.
fn reads_as_math(text: &str) -> bool {
    matches!(parse_answer(text), Ok(e) if !matches!(e, crate::math::parse::Expr::Text(_)))
}

/// The last boxed answer, together with the boxes right before it that `joined` accepts the
/// text between (`x = \boxed{2}` and `x = \boxed{5}` is the list `2, 5`), and the end of the
/// last box.
fn boxed_answers(s: &str, joined: fn(&str) -> bool) -> Option<(String, usize)> {
    let (mut start, inner, last_end) = last_boxed_span(s)?;
    let mut parts = vec![clean_answer(inner)];
    while parts.len() < MAX_BOXED {
        let Some((prev_start, prev_inner, prev_end)) = last_boxed_span(&s[..start]) else {
            break;
        };
        if prev_end > start || !joined(&s[prev_end..start]) {
            break;
        }
        parts.push(clean_answer(prev_inner));
        start = prev_start;
    }
    parts.retain(|p| !p.is_empty());
    parts.reverse();
    // A restated box (`\boxed{5}. \boxed{5}`) is one answer.
    let mut unique: Vec<String> = Vec::with_capacity(parts.len());
    for p in parts {
        if !unique.contains(&p) {
            unique.push(p);
        }
    }
    Some((unique.join(", "), last_end))
}

/// The boxed answers of a reference: its last box with the boxes before it that a short
/// phrase joins (`\boxed{35} cm and \boxed{4}` lists both parts); `None` without a box.
pub fn reference_boxes(s: &str) -> Option<String> {
    boxed_answers(s, short_phrase).map(|(text, _)| text)
}

/// The boxes at the end of a prediction joined by a short phrase (`\boxed{(3,3)} \text{ for
/// part (a) and } \boxed{(1,1)}`), read together: the reading of a prediction that answers
/// several parts, compared only against a reference that lists as many answers. `None` when
/// it is no more than the boxes [`ExtractRule::Boxed`] reads.
pub fn joined_boxes(s: &str) -> Option<Vec<String>> {
    let (text, _) = boxed_answers(s, short_phrase)?;
    let (strict, _) = boxed_answers(s, only_connectors)?;
    (text != strict).then(|| text.split(", ").map(str::to_string).collect())
}

/// A short phrase between two boxed answers of one response that lists them: only symbols
/// (`++++`), or a few words that join (`and`, `or`, `part`, `respectively`: `papers and`,
/// `\text{ for part (a) and }`), with no digits (beyond a label's subscript) and nothing that
/// takes back or moves past what came before (`then after checking`, `wait`, `not`).
fn short_phrase(between: &str) -> bool {
    if between.len() > 80 {
        return false;
    }
    if only_connectors(between) {
        return true;
    }
    const JOINS: &[&str] = &["and", "or", "part", "parts", "respectively"];
    const BLOCKS: &[&str] = &[
        "not",
        "no",
        "wait",
        "but",
        "instead",
        "actual",
        "wrong",
        "correct",
        "incorrect",
        "mistak",
        "however",
        "check",
        "recheck",
        "verif",
        "after",
        "then",
        "final",
        "so",
    ];
    let lower = between.to_ascii_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .collect();
    words.len() <= 8
        && (words.is_empty() || words.iter().any(|w| JOINS.contains(w)))
        && words.iter().all(|w| {
            !w.bytes().any(|b| b.is_ascii_digit())
                && !BLOCKS
                    .iter()
                    .any(|b| w.starts_with(b) && (b.len() > 2 || w == b))
        })
}

/// Whether the text between two boxed answers only joins them: commas, `and`/`or`, math
/// delimiters, spacing, and a one-letter label with `=` (`$ and $x = `).
fn only_connectors(between: &str) -> bool {
    if between.len() > 60 {
        return false;
    }
    let mut t = between.to_string();
    for noise in [
        "\\text{",
        "\\mathrm{",
        "\\qquad",
        "\\quad",
        "\\(",
        "\\)",
        "\\[",
        "\\]",
        "\\,",
        "$",
        "}",
    ] {
        t = t.replace(noise, " ");
    }
    t.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '=' | '.'))
        .filter(|w| !w.is_empty())
        .all(|w| {
            matches!(w, "and" | "or" | "also")
                || (w.starts_with(|c: char| c.is_ascii_alphabetic())
                    && (w.len() == 1
                        || w.as_bytes().get(1) == Some(&b'_')
                            && w.len() <= 4
                            && w[2..].chars().all(|c| c.is_ascii_alphanumeric())))
        })
}

/// An "answer is" sentence that is prose (`the largest k is 17`): its last math span or its
/// last number; kept as it is when it reads as math or a short text answer.
fn prose_answer(text: String) -> String {
    let reads = match parse_answer(&text) {
        Ok(crate::math::parse::Expr::Text(t)) => t.split(' ').count() <= MAX_WHOLE_WORDS,
        Ok(_) => true,
        Err(_) => false,
    };
    if reads {
        return text;
    }
    last_math(&text)
        .map(clean_answer)
        .or_else(|| last_number(&text).map(|n| clean_answer(&n)))
        .unwrap_or(text)
}

/// The content of the last `$…$`, `$$…$$`, `\(…\)` or `\[…\]` span, or the last matrix
/// environment (with its `\left[ … \right]`), when no digit follows it in the text.
fn last_math(s: &str) -> Option<&str> {
    let mut best: Option<(usize, &str)> = last_dollar_span(s);
    for (open, close) in [("\\(", "\\)"), ("\\[", "\\]")] {
        if let Some(c) = s.rfind(close)
            && let Some(o) = s[..c].rfind(open)
        {
            let (end, inner) = (c + close.len(), &s[o + open.len()..c]);
            if best.is_none_or(|(e, _)| end > e) {
                best = Some((end, inner));
            }
        }
    }
    for env in [
        "pmatrix", "bmatrix", "array", "matrix", "vmatrix", "Bmatrix",
    ] {
        let end_tag = format!("\\end{{{env}}}");
        let begin_tag = format!("\\begin{{{env}}}");
        let Some(e) = s.rfind(&end_tag) else {
            continue;
        };
        let Some(mut b) = s[..e].rfind(&begin_tag) else {
            continue;
        };
        let mut end = e + end_tag.len();
        for (left, right) in [("\\left[", "\\right]"), ("\\left(", "\\right)")] {
            if s[..b].trim_end().ends_with(left) && s[end..].trim_start().starts_with(right) {
                b = s[..b].trim_end().len() - left.len();
                end = s.len() - s[end..].trim_start().len() + right.len();
            }
        }
        if best.is_none_or(|(e, _)| end > e) {
            best = Some((end, &s[b..end]));
        }
    }
    let (end, inner) = best?;
    let inner = inner.trim();
    (!inner.is_empty() && !s[end..].bytes().any(|c| c.is_ascii_digit())).then_some(inner)
}

/// The last `$…$` or `$$…$$` span as (end, content); `\$` is a dollar sign, not a delimiter.
fn last_dollar_span(s: &str) -> Option<(usize, &str)> {
    let b = s.as_bytes();
    let mut open: Option<(usize, usize)> = None; // (delimiter length, content start)
    let mut last = None;
    let mut k = 0;
    while k < b.len() {
        match b[k] {
            b'\\' => k += 1,
            b'$' => {
                let len = if b.get(k + 1) == Some(&b'$') { 2 } else { 1 };
                match open {
                    Some((l, start)) if l == len => {
                        last = Some((k + len, &s[start..k]));
                        open = None;
                    }
                    _ => open = Some((len, k + len)),
                }
                k += len - 1;
            }
            _ => {}
        }
        k += 1;
    }
    last
}

/// The content of the `{…}` group that `s` starts with, honouring `\{` and `\}`.
pub(crate) fn balanced_group(s: &str) -> Option<&str> {
    let bytes = s.as_bytes();
    let mut depth = 0usize;
    let mut k = 0;
    while k < bytes.len() {
        match bytes[k] {
            b'\\' => k += 1,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(&s[1..k]);
                }
            }
            _ => {}
        }
        k += 1;
    }
    None
}

fn gsm8k(s: &str) -> Option<&str> {
    let start = s.rfind("####")? + 4;
    let rest = &s[start..];
    let end = rest.find('\n').unwrap_or(rest.len());
    Some(rest[..end].trim())
}

/// The last "answer is" sentence: where its marker starts, and the answer text.
fn answer_is_at(s: &str) -> Option<(usize, &str)> {
    // "answer is", "answer:" or "answer is:", in any case: the last "answer" followed by
    // " is" or ":", found without copying the completion.
    let marker = |needle: &str| {
        s.rmatch_indices(needle).find_map(|(i, _)| {
            let start = i.checked_sub(1)?;
            if !s.as_bytes()[start].eq_ignore_ascii_case(&b'a') {
                return None;
            }
            let after = &s.as_bytes()[i + needle.len()..];
            if after.first() == Some(&b':') {
                Some((start, "answer:".len()))
            } else if after.len() >= 3 && after[..3].eq_ignore_ascii_case(b" is") {
                Some((start, "answer is".len()))
            } else {
                None
            }
        })
    };
    let (at, len) = [marker("nswer"), marker("NSWER")]
        .into_iter()
        .flatten()
        .max_by_key(|(i, _)| *i)?;
    let rest = s[at + len..]
        .trim_start()
        .trim_start_matches(':')
        .trim_start();
    // A `$…$` answer ends at its closing dollar; otherwise at the end of the sentence.
    if let Some(inner) = rest.strip_prefix('$') {
        let inner = inner.strip_prefix('$').unwrap_or(inner);
        let end = inner.find('$').unwrap_or(inner.len());
        return Some((at, &inner[..end]));
    }
    let line_end = rest.find('\n').unwrap_or(rest.len());
    let line = &rest[..line_end];
    let end = sentence_end(line);
    Some((at, line[..end].trim()))
}

/// The end of the first sentence: a `.` followed by a space or the end, not inside a number.
fn sentence_end(line: &str) -> usize {
    let b = line.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'.' && b.get(i + 1).is_none_or(|n| n.is_ascii_whitespace()) {
            return i;
        }
    }
    line.len()
}

/// The last number in the text (`-1,234.5`, `3/4`, `12 500`), with its sign; a number
/// glued to a letter before it (`XQ7Z`, `H2O`) is skipped.
fn last_number(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut limit = b.len();
    loop {
        let last_digit = b[..limit].iter().rposition(u8::is_ascii_digit)?;
        let mut start = last_digit;
        while start > 0 {
            let c = b[start - 1];
            let is_sep = (c == b',' || c == b'.' || c == b'/')
                && start >= 2
                && b[start - 2].is_ascii_digit();
            // `12 500`: a space before a group of exactly three digits.
            let is_space_sep = c == b' '
                && start >= 2
                && b[start - 2].is_ascii_digit()
                && b[start..].iter().take_while(|d| d.is_ascii_digit()).count() == 3;
            if c.is_ascii_digit() || is_sep || is_space_sep {
                start -= 1;
            } else {
                break;
            }
        }
        if start > 0 && b[start - 1].is_ascii_alphabetic() {
            limit = start;
            continue;
        }
        let mut number = &s[start..=last_digit];
        // A space-grouped number needs a first group of one to three digits.
        if let Some((first, _)) = number.split_once(' ')
            && !(1..=3).contains(&first.len())
        {
            number = number.rsplit(' ').next().unwrap_or(number);
            return Some(number.to_string());
        }
        if start > 0 && b[start - 1] == b'-' {
            return Some(format!("-{number}"));
        }
        return Some(number.to_string());
    }
}

/// Cleans an extracted answer for the parser: the one pipeline of
/// [`crate::math::normalize`], the same for references and predictions.
pub fn clean_answer(raw: &str) -> String {
    normalize_answer(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxed_with_nested_braces() {
        assert_eq!(
            last_boxed(r"so \boxed{\frac{1}{2}} done"),
            Some(r"\frac{1}{2}")
        );
        assert_eq!(
            last_boxed(r"\boxed{1} then \boxed{\{1,2\}}"),
            Some(r"\{1,2\}")
        );
        assert_eq!(last_boxed(r"\boxed{1} then \boxed{2"), Some("1"));
    }

    #[test]
    fn last_number_keeps_sign_and_separators() {
        assert_eq!(
            last_number("we get -1,234.5 apples").as_deref(),
            Some("-1,234.5")
        );
        assert_eq!(last_number("no digits"), None);
    }
}
