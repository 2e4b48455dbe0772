//! The one normalisation pipeline, applied to the reference and to the prediction alike.
//!
//! Every answer the checker compares, whichever side it comes from and however it was found,
//! goes through [`normalize_answer`] before it is parsed, so no rule can apply to one side
//! only. The pipeline, in order (repeated until nothing changes, so it is idempotent):
//!
//! 1. math delimiters (`$…$`, `$$…$$`, `\(…\)`, `\[…\]`), an outer `\boxed{}` and trailing
//!    punctuation are stripped;
//! 2. `\text{…}`, `\textbf{…}`, `\mbox{…}`, `\textrm{…}`, `\textit{…}`, `\mathrm{…}` and
//!    `\textnormal{…}` are replaced by their content, with a space on each side: a unit or a
//!    word reads the same inside `\text{}` and outside it (`\text{4:30 p.m.}` and
//!    `4:30 \text{ p.m.}` are both `4:30 p.m.`);
//! 3. dollar signs, degree signs (`^\circ`, `^{\circ}`, `°`), `\!` and `\%` are normalised;
//!    thousands separators written `,\!` (with or without spaces after) or `{, }` are joined
//!    to the digits; `or` and `and` between items become commas; a spacing command glued to
//!    a letter (`\quadx`) is separated from it;
//! 4. a time of day (`4:30 p.m.`, `4:30pm`, `4:30 PM`) is written one way, `4:30 pm`;
//! 5. trailing unit words after a value (`18 dollars`, `5 cm`, `3 m^2`) are dropped; `am`
//!    and `pm` are not units.
//!
//! [`unescape_doubled`] runs before extraction, on whole completions and references: text
//! escaped twice on its way through JSON (`\\frac`, `\\left(`, `\\le`) is read as LaTeX.

use std::borrow::Cow;

use crate::math::extract::{balanced_group, last_boxed};

/// Command names whose doubled-backslash form (`\\frac`) marks text escaped twice: none of
/// them can follow a LaTeX line break `\\` as plain letters in an answer.
pub const DOUBLED_MARKERS: &[&str] = &[
    "frac", "dfrac", "tfrac", "sqrt", "left", "right", "boxed", "le", "leq", "ge", "geq", "ne",
    "neq", "in", "cdot", "times", "pi", "infty", "text", "mathrm", "begin", "end", "cup", "cap",
    "pm", "mp", "approx", "sum", "prod", "alpha", "beta", "theta", "quad", "qquad", "mathbf",
    "dots", "ldots", "cdots", "sin", "cos", "tan", "log", "ln", "lt", "gt",
];

/// Text escaped twice (`\\frac{1}{2}` for `\frac{1}{2}`), with every run of backslashes
/// halved; other text unchanged (borrowed). The text counts as escaped twice when it has a
/// run of exactly two backslashes followed by a command name of [`DOUBLED_MARKERS`], and none
/// of those names written with one backslash (`\frac … \\ 3` has a matrix row break, not an
/// escape; a `\n` left by a newline escaped once does not count).
pub fn unescape_doubled(s: &str) -> Cow<'_, str> {
    if !s.contains("\\\\") {
        return Cow::Borrowed(s);
    }
    let b = s.as_bytes();
    let mut doubled = false;
    let mut k = 0;
    while k < b.len() {
        if b[k] != b'\\' {
            k += 1;
            continue;
        }
        let start = k;
        while k < b.len() && b[k] == b'\\' {
            k += 1;
        }
        let run = k - start;
        let name_end = b[k..]
            .iter()
            .position(|c| !c.is_ascii_alphabetic())
            .map_or(b.len(), |e| k + e);
        let name = &s[k..name_end];
        if run == 1 && DOUBLED_MARKERS.contains(&name) {
            // A command written with one backslash: the text is not escaped twice.
            return Cow::Borrowed(s);
        }
        if run == 2 && DOUBLED_MARKERS.contains(&name) {
            doubled = true;
        }
    }
    if !doubled {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut run = 0usize;
    for c in s.chars() {
        if c == '\\' {
            run += 1;
            continue;
        }
        for _ in 0..run.div_ceil(2) {
            out.push('\\');
        }
        run = 0;
        out.push(c);
    }
    for _ in 0..run.div_ceil(2) {
        out.push('\\');
    }
    Cow::Owned(out)
}

/// The most passes of the pipeline (each pass only removes or rewrites; a fixpoint comes in
/// two or three).
const MAX_PASSES: usize = 4;

/// Normalises an answer for the parser (the module docs list the steps). Idempotent:
/// `normalize_answer(&normalize_answer(s)) == normalize_answer(s)`.
pub fn normalize_answer(raw: &str) -> String {
    let mut s = one_pass(raw);
    if s == raw {
        // Already normal (an answer normalised once, read again): one pass confirms it.
        return s;
    }
    for _ in 1..MAX_PASSES {
        let next = one_pass(&s);
        if next == s {
            break;
        }
        s = next;
    }
    s
}

/// Which bytes a text has: each step of the pipeline runs only when its trigger is there
/// (most answers are short and have few of them; a substring search per rule cost more than
/// the rest of a check).
#[derive(Clone, Copy)]
struct Has {
    backslash: bool,
    dollar: bool,
    non_ascii: bool,
    comma: bool,
    brace: bool,
    space: bool,
    paren: bool,
    colon: bool,
}

impl Has {
    fn of(s: &str) -> Has {
        let mut h = Has {
            backslash: false,
            dollar: false,
            non_ascii: false,
            comma: false,
            brace: false,
            space: false,
            paren: false,
            colon: false,
        };
        for b in s.bytes() {
            match b {
                b'\\' => h.backslash = true,
                b'$' => h.dollar = true,
                b',' => h.comma = true,
                b'{' => h.brace = true,
                b' ' => h.space = true,
                b')' => h.paren = true,
                b':' => h.colon = true,
                b if b >= 0x80 => h.non_ascii = true,
                _ => {}
            }
        }
        h
    }
}

fn replace_all(out: &mut String, rules: &[(&str, &str)]) {
    for (from, to) in rules {
        if out.contains(from) {
            *out = out.replace(from, to);
        }
    }
}

fn one_pass(raw: &str) -> String {
    let has = Has::of(raw);
    let s = strip_delimiters(raw, has.backslash || has.dollar);
    let mut out = if has.backslash {
        unwrap_text(s)
    } else {
        s.to_string()
    };
    if has.dollar {
        replace_all(&mut out, &[("\\$", ""), ("$", "")]);
    }
    if has.backslash {
        replace_all(
            &mut out,
            &[("^\\circ", ""), ("^{\\circ}", ""), ("\\%", "%")],
        );
    }
    if has.non_ascii {
        replace_all(&mut out, &[("°", "")]);
    }
    if has.comma || has.brace {
        out = join_thousands(&out);
    }
    if has.backslash {
        replace_all(&mut out, &[("\\!", "")]);
        out = separate_spacing_commands(&out);
    }
    // (`\text{or}` becomes ` or ` above: a backslash may bring spaces.)
    if has.space || has.paren || has.backslash {
        replace_all(
            &mut out,
            &[
                (" or ", ", "),
                (" and ", ", "),
                (")or(", "), ("),
                (")and(", "), ("),
            ],
        );
    }
    // `19, 46, and 82`: the `and` became a comma next to a comma.
    while out.contains(", ,") || out.contains(",,") {
        out = out.replace(", ,", ",").replace(",,", ",");
    }
    let trimmed = out.trim().trim_start_matches(',').trim();
    let out = if has.space || has.backslash {
        collapse_spaces(trimmed)
    } else {
        trimmed.to_string()
    };
    let out = if has.colon {
        time_of_day(&out).unwrap_or(out)
    } else {
        out
    };
    let out = if out.contains(' ') {
        strip_units(&out)
    } else {
        out
    };
    out.trim()
        .trim_end_matches(['.', ';', ','])
        .trim()
        .to_string()
}

/// Step 1: delimiters, an outer box and trailing punctuation.
fn strip_delimiters(raw: &str, may_be_wrapped: bool) -> &str {
    let mut s = raw.trim();
    loop {
        let before = s;
        for (open, close) in [("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")] {
            if s.len() >= open.len() + close.len() && s.starts_with(open) && s.ends_with(close) {
                s = s[open.len()..s.len() - close.len()].trim();
            }
        }
        s = s.trim_end_matches(['.', ',', ';', ' ', '\n']).trim();
        if !may_be_wrapped {
            return s;
        }
        if (s.starts_with("\\boxed") || s.starts_with("\\fbox"))
            && let Some(inner) = last_boxed(s)
            && boxed_spans_all(s, inner)
        {
            s = inner.trim();
        }
        if s == before {
            return s;
        }
    }
}

/// Whether the last box of `s` (content `inner`) ends the text: `\boxed{1} + \boxed{2}` is
/// not one box.
fn boxed_spans_all(s: &str, inner: &str) -> bool {
    let inner_end = inner.as_ptr() as usize - s.as_ptr() as usize + inner.len();
    s[inner_end..].trim_start_matches('}').trim().is_empty()
        && s.matches("\\boxed").count() + s.matches("\\fbox").count() == 1
}

/// The text commands whose content is read as it is.
const TEXT_COMMANDS: &[&str] = &[
    "\\textnormal",
    "\\textbf",
    "\\textrm",
    "\\textit",
    "\\mathrm",
    "\\text",
    "\\mbox",
];

/// Step 2: `\text{…}` and its kin replaced by their content, spaced.
fn unwrap_text(s: &str) -> String {
    if !s.contains("\\text") && !s.contains("\\mbox") && !s.contains("\\mathrm") {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut rest = s;
    while let Some(at) = rest.find('\\') {
        let after_slash = &rest[at..];
        let Some(cmd) = TEXT_COMMANDS.iter().find(|c| {
            after_slash.starts_with(**c)
                && !after_slash[c.len()..].starts_with(|ch: char| ch.is_ascii_alphabetic())
        }) else {
            // Not a text command: copy the backslash and the next character.
            let step = after_slash
                .chars()
                .take(2)
                .map(char::len_utf8)
                .sum::<usize>();
            out.push_str(&rest[..at + step]);
            rest = &rest[at + step..];
            continue;
        };
        let after = after_slash[cmd.len()..].trim_start();
        let Some(inner) = after.strip_prefix('{').and_then(|_| balanced_group(after)) else {
            out.push_str(&rest[..at + cmd.len()]);
            rest = &after_slash[cmd.len()..];
            continue;
        };
        out.push_str(&rest[..at]);
        out.push(' ');
        out.push_str(inner.trim());
        rest = &after[inner.len() + 2..];
        if rest.starts_with(|c: char| c.is_alphanumeric() || c == '\\') {
            out.push(' ');
        }
    }
    out.push_str(rest);
    out
}

/// Step 3, thousands: `12,\!500`, `12,\! 500` and `14 {, }916` become `12{,}500`-style digits
/// the lexer joins.
fn join_thousands(s: &str) -> String {
    if !s.contains(",\\!") && !s.contains("{,") {
        return s.to_string();
    }
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut k = 0;
    while k < b.len() {
        let digit_before = out.trim_end().ends_with(|c: char| c.is_ascii_digit());
        let sep_len = if s[k..].starts_with(",\\!") {
            Some(3)
        } else if s[k..].starts_with('{') {
            // `{,}` with spaces inside.
            let inner = s[k + 1..].trim_start();
            inner.strip_prefix(',').and_then(|r| {
                let r = r.trim_start();
                r.starts_with('}').then(|| s.len() - r.len() + 1 - k)
            })
        } else {
            None
        };
        if let (Some(len), true) = (sep_len, digit_before) {
            let after = s[k + len..].trim_start();
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 3 {
                while out.ends_with(' ') {
                    out.pop();
                }
                out.push_str("{,}");
                k = s.len() - after.len();
                continue;
            }
        }
        let c = s[k..].chars().next().unwrap_or(' ');
        out.push(c);
        k += c.len_utf8();
    }
    out
}

/// Step 3, spacing: `\quadx` is `\quad x`.
fn separate_spacing_commands(s: &str) -> String {
    if !s.contains("\\quad") {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 4);
    let mut rest = s;
    while let Some(at) = rest.find("\\quad").or_else(|| rest.find("\\qquad")) {
        let at_q = rest.find("\\qquad");
        let (at, len) = match at_q {
            Some(q) if q <= at => (q, "\\qquad".len()),
            _ => (at, "\\quad".len()),
        };
        out.push_str(&rest[..at + len]);
        rest = &rest[at + len..];
        if rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
            out.push(' ');
        }
    }
    out.push_str(rest);
    out
}

fn collapse_spaces(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.chars() {
        if c == ' ' {
            space = true;
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        out.push(c);
    }
    out
}

/// Step 4: `4:30 p.m.`, `4:30pm`, `4:30 P.M.` → `4:30 pm` (the whole answer a time of day).
fn time_of_day(s: &str) -> Option<String> {
    let (clock, rest) = s.split_at(s.find(|c: char| !(c.is_ascii_digit() || c == ':'))?);
    let (h, m) = clock.split_once(':')?;
    if !(1..=2).contains(&h.len())
        || m.len() != 2
        || !h.bytes().chain(m.bytes()).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let suffix: String = rest
        .chars()
        .filter(|c| !matches!(c, '.' | ' '))
        .collect::<String>()
        .to_ascii_lowercase();
    matches!(suffix.as_str(), "am" | "pm").then(|| format!("{h}:{m} {suffix}"))
}

/// Step 5 for each comma-separated item: `{35 cm, 4}` is `{35, 4}`.
fn strip_units(s: &str) -> String {
    if !s.contains(',') {
        return strip_unit_words(s);
    }
    s.split(',')
        .map(|part| {
            let lead = &part[..part.len() - part.trim_start().len()];
            let trail = &part[part.trim_end().len()..];
            format!("{lead}{}{trail}", strip_unit_words(part.trim()))
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Words that are never units.
const NOT_UNITS: &[&str] = &[
    "pi", "sqrt", "sin", "cos", "tan", "ln", "log", "exp", "or", "and", "inf", "infty", "am", "pm",
];

/// Step 5: "18 dollars" → "18", "3 m^2" → "3": trailing words of two or more letters (with an
/// optional power) after a value.
fn strip_unit_words(s: &str) -> String {
    let mut words: Vec<&str> = s.split(' ').collect();
    let is_unit_word = |w: &str| {
        let w = w.trim_end_matches(['.', ',']);
        let base = match w.split_once('^') {
            Some((b, p))
                if p.trim_matches(['{', '}'])
                    .bytes()
                    .all(|c| c.is_ascii_digit()) =>
            {
                b
            }
            Some(_) => return false,
            None => w,
        };
        base.len() >= 2
            && base.chars().all(|c| c.is_ascii_alphabetic())
            && !NOT_UNITS.contains(&base)
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
    fn doubled_backslashes_are_halved_only_when_escaped_twice() {
        let table: &[(&str, &str)] = &[
            (r"\\frac{1}{2}", r"\frac{1}{2}"),
            (
                r"\\left( 3, \\frac{\\pi}{2} \\right)",
                r"\left( 3, \frac{\pi}{2} \right)",
            ),
            (r"-2 \\le x \\le 7", r"-2 \le x \le 7"),
            // a matrix row break is not an escape
            (
                r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}",
                r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}",
            ),
            // a doubled row break inside doubled text halves to one row break
            (
                r"\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}",
                r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}",
            ),
            (r"1 \\ 2", r"1 \\ 2"),
        ];
        for (input, want) in table {
            assert_eq!(unescape_doubled(input), *want, "{input}");
        }
    }

    #[test]
    fn text_units_read_the_same_inside_and_outside_text() {
        let table: &[(&str, &str)] = &[
            (r"\text{4:30 p.m.}", "4:30 pm"),
            (r"4:30 \text{ p.m.}", "4:30 pm"),
            ("4:30pm", "4:30 pm"),
            (r"\text{4:30 PM}", "4:30 pm"),
            (r"5 \text{ cm}", "5"),
            (r"5\mathrm{cm}", "5"),
            (r"\text{5 cm}", "5"),
            (r"3 \text{cm}^2", "3"),
            (r"\text{Tuesday}", "Tuesday"),
            (r"\text{(B)}", "(B)"),
            (r"11,\! 111,\! 100", "11{,}111{,}100"),
            (r"14 {, }916", "14{,}916"),
            ("(11,7)or(7,11)", "(11,7), (7,11)"),
            (r"x_1 = 1,\quadx_2 = 2", r"x_1 = 1,\quad x_2 = 2"),
            (r"$\boxed{30^\circ}$.", "30"),
            (r"{35 cm,4}", "{35,4}"),
            (r"\boxed{1} + \boxed{2}", r"\boxed{1} + \boxed{2}"),
        ];
        for (input, want) in table {
            assert_eq!(normalize_answer(input), *want, "{input}");
            assert_eq!(normalize_answer(want), normalize_answer(input), "{input}");
        }
    }
}
