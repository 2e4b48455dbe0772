//! Finding the final answer in a model's completion, and cleaning it for the parser.
//!
//! The rules are tried in the configured order ([`ExtractRule`]); the first that finds
//! something wins. Each rule looks for the *last* occurrence of its marker, because models
//! restate and correct themselves. Every scan is linear in the completion.

use serde::{Deserialize, Serialize};

use crate::math::parse::parse_answer;

/// One way of finding the answer in a completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExtractRule {
    /// The last `<answer>…</answer>` block (its content is searched again by the other rules,
    /// so `<answer>\boxed{5}</answer>` gives `5`).
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
    /// The last number in the text.
    LastNumber,
}

/// The default priority: answer tag, boxed, `####`, "the answer is", the whole (short)
/// completion, last number.
pub const DEFAULT_RULES: &[ExtractRule] = &[
    ExtractRule::AnswerTag,
    ExtractRule::Boxed,
    ExtractRule::Gsm8k,
    ExtractRule::AnswerIs,
    ExtractRule::Whole,
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
/// [`clean_answer`]. `None` when no rule finds a non-empty answer.
pub fn extract(completion: &str, rules: &[ExtractRule]) -> Option<Extracted> {
    for (k, rule) in rules.iter().enumerate() {
        let found = match rule {
            ExtractRule::AnswerTag => answer_tag(completion).map(|inner| {
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
            ExtractRule::Boxed => last_boxed(completion).map(clean_answer),
            ExtractRule::Gsm8k => gsm8k(completion).map(clean_answer),
            ExtractRule::AnswerIs => answer_is(completion).map(clean_answer),
            ExtractRule::Whole => whole(completion),
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

fn answer_tag(s: &str) -> Option<&str> {
    let start = s.rfind("<answer>")? + "<answer>".len();
    let end = s[start..].find("</answer>")?;
    Some(s[start..start + end].trim())
}

/// The content of the last balanced `\boxed{…}` / `\fbox{…}` (also `\boxed 5`).
pub fn last_boxed(s: &str) -> Option<&str> {
    let mut search_end = s.len();
    // A few tries backwards, so one unbalanced `\boxed{` at the end does not hide an earlier
    // answer, without quadratic behaviour on adversarial input.
    for _ in 0..4 {
        let hay = &s[..search_end];
        let (at, len) = match (hay.rfind("\\boxed"), hay.rfind("\\fbox")) {
            (Some(a), Some(b)) if b > a => (b, "\\fbox".len()),
            (Some(a), _) => (a, "\\boxed".len()),
            (None, Some(b)) => (b, "\\fbox".len()),
            (None, None) => return None,
        };
        let after = &s[at + len..];
        let trimmed = after.trim_start();
        if trimmed.starts_with('{') {
            if let Some(inner) = balanced_group(trimmed) {
                return Some(inner);
            }
        } else if after.starts_with(' ') {
            let end = trimmed
                .find(|c: char| c.is_whitespace() || c == '$')
                .unwrap_or(trimmed.len());
            if end > 0 {
                return Some(&trimmed[..end]);
            }
        }
        search_end = at;
    }
    None
}

/// The content of the `{…}` group that `s` starts with, honouring `\{` and `\}`.
fn balanced_group(s: &str) -> Option<&str> {
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

fn answer_is(s: &str) -> Option<&str> {
    const MARKERS: &[&str] = &["answer is", "answer:", "answer is:"];
    let lower = s.to_ascii_lowercase();
    let (at, len) = MARKERS
        .iter()
        .filter_map(|m| lower.rfind(m).map(|i| (i, m.len())))
        .max_by_key(|(i, len)| (*i, *len))?;
    let rest = s[at + len..]
        .trim_start()
        .trim_start_matches(':')
        .trim_start();
    // A `$…$` answer ends at its closing dollar; otherwise at the end of the sentence.
    if let Some(inner) = rest.strip_prefix('$') {
        let inner = inner.strip_prefix('$').unwrap_or(inner);
        let end = inner.find('$').unwrap_or(inner.len());
        return Some(&inner[..end]);
    }
    let line_end = rest.find('\n').unwrap_or(rest.len());
    let line = &rest[..line_end];
    let end = sentence_end(line);
    Some(line[..end].trim())
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

/// The last number in the text (`-1,234.5`, `3/4`), with its sign.
fn last_number(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let last_digit = b.iter().rposition(u8::is_ascii_digit)?;
    let mut start = last_digit;
    while start > 0 {
        let c = b[start - 1];
        let is_sep =
            (c == b',' || c == b'.' || c == b'/') && start >= 2 && b[start - 2].is_ascii_digit();
        if c.is_ascii_digit() || is_sep {
            start -= 1;
        } else {
            break;
        }
    }
    if start > 0 && b[start - 1] == b'-' {
        start -= 1;
    }
    Some(s[start..=last_digit].to_string())
}

/// Cleans an extracted answer for the parser: strips `$…$`, `\(…\)`, `\[…\]`, an inner
/// `\boxed{}`, `\text{…}` units after a value, degree signs, dollar signs, a leading `=` or
/// `x =`-free wrappers, trailing unit words and trailing punctuation; turns " or "/" and "
/// into commas.
pub fn clean_answer(raw: &str) -> String {
    let mut s = raw.trim();
    loop {
        let before = s;
        for (open, close) in [("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")] {
            if s.len() >= open.len() + close.len() && s.starts_with(open) && s.ends_with(close) {
                s = s[open.len()..s.len() - close.len()].trim();
            }
        }
        s = s.trim_end_matches(['.', ',', ';', ' ', '\n']).trim();
        if let Some(inner) = last_boxed(s)
            && (s.trim_start().starts_with("\\boxed") || s.trim_start().starts_with("\\fbox"))
        {
            s = inner.trim();
        }
        if s == before {
            break;
        }
    }
    let mut out = remove_text_units(s);
    for (from, to) in [
        ("\\$", ""),
        ("$", ""),
        ("^\\circ", ""),
        ("^{\\circ}", ""),
        ("°", ""),
        ("\\%", "%"),
        ("\\!", ""),
        (" or ", ", "),
        (" and ", ", "),
        ("\\text{ or }", ", "),
        ("\\text{ and }", ", "),
    ] {
        if out.contains(from) {
            out = out.replace(from, to);
        }
    }
    let out = strip_unit_words(out.trim());
    out.trim().trim_end_matches(['.', ';']).trim().to_string()
}

/// Drops `\text{…}`/`\mbox{…}` groups of letters when something else is left (they are units);
/// when the text is all there is, keeps its content.
fn remove_text_units(s: &str) -> String {
    const CMDS: &[&str] = &["\\text", "\\mbox", "\\textrm", "\\textbf", "\\mathrm"];
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    let mut kept_texts = Vec::new();
    while let Some((at, cmd)) = CMDS
        .iter()
        .filter_map(|c| rest.find(c).map(|i| (i, *c)))
        .min_by_key(|(i, c)| (*i, usize::MAX - c.len()))
    {
        let after = &rest[at + cmd.len()..];
        if !after.starts_with('{') {
            out.push_str(&rest[..at + cmd.len()]);
            rest = after;
            continue;
        }
        let Some(inner) = balanced_group(after) else {
            break;
        };
        out.push_str(&rest[..at]);
        let wordy = inner.trim().chars().any(char::is_alphabetic)
            && inner
                .chars()
                .all(|c| c.is_alphabetic() || c == ' ' || c == '.' || c == '-');
        if matches!(inner.trim(), "or" | "and") {
            out.push_str(", ");
        } else if wordy && cmd != "\\mathrm" {
            kept_texts.push(inner.trim().to_string());
        } else {
            out.push_str(inner);
        }
        rest = &after[inner.len() + 2..];
    }
    out.push_str(rest);
    if out.trim().is_empty() {
        kept_texts.join(" ")
    } else {
        out
    }
}

/// "18 dollars" → "18": trailing words of three or more letters after a value.
fn strip_unit_words(s: &str) -> String {
    let mut words: Vec<&str> = s.split(' ').collect();
    let is_unit_word = |w: &str| {
        let w = w.trim_end_matches(['.', ',']);
        w.len() >= 2
            && w.chars().all(|c| c.is_ascii_alphabetic())
            && ![
                "pi", "sqrt", "sin", "cos", "tan", "ln", "log", "exp", "or", "and", "inf", "infty",
            ]
            .contains(&w)
    };
    let before = words.len();
    while words.len() > 1 && words.last().is_some_and(|w| is_unit_word(w)) {
        words.pop();
    }
    if words.len() == before {
        return s.to_string();
    }
    let head = words.join(" ");
    // Only a value can carry a unit: the head must end in a digit, a brace or a bracket.
    if head
        .trim_end()
        .ends_with(|c: char| c.is_ascii_digit() || matches!(c, '}' | ')' | '%'))
    {
        head
    } else {
        s.to_string()
    }
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
