//! The lexer: one pass over the answer into tokens (numbers with their separators, letters,
//! known names, LaTeX commands, environments, `\text{…}` groups).

use crate::error::{Result, RewardError};

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Num(String),
    Letter(char),
    /// A known multi-letter name (`sqrt`, `sin`, `pi`, …), from plain text or a command.
    Name(String),
    /// An unknown word of three or more letters.
    Word(String),
    /// A backslash command not known as a name (`frac`, `{`, `\\`, `cdot`, …).
    Cmd(String),
    Begin(String),
    End(String),
    Text(String),
    Ch(char),
}

pub(super) const NAMES: &[&str] = &[
    "sqrt", "sin", "cos", "tan", "cot", "sec", "csc", "arcsin", "arccos", "arctan", "asin", "acos",
    "atan", "sinh", "cosh", "tanh", "ln", "log", "exp", "pi", "inf", "infty", "infinity", "abs",
    "floor", "ceil",
];

pub(super) const GREEK: &[&str] = &[
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "varepsilon",
    "zeta",
    "eta",
    "theta",
    "vartheta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "nu",
    "xi",
    "rho",
    "sigma",
    "tau",
    "upsilon",
    "phi",
    "varphi",
    "chi",
    "psi",
    "omega",
    "Gamma",
    "Delta",
    "Theta",
    "Lambda",
    "Xi",
    "Sigma",
    "Phi",
    "Psi",
    "Omega",
];

/// Commands that only change spacing or size: dropped by the lexer.
const IGNORED: &[&str] = &[
    "left",
    "right",
    "big",
    "Big",
    "bigg",
    "Bigg",
    "bigl",
    "bigr",
    "Bigl",
    "Bigr",
    "biggl",
    "biggr",
    "displaystyle",
    "textstyle",
    "limits",
    "quad",
    "qquad",
    ",",
    ";",
    "!",
    " ",
    ":",
    "mathrm",
    "mathbf",
    "mathit",
    "boldsymbol",
    "bf",
    "rm",
    "operatorname",
    "circ",
    "degree",
    "$",
    "displaylimits",
    "mathnormal",
    "bm",
];

pub(super) fn lex(src: &str) -> Result<Vec<(Tok, usize)>> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    // Inside `(…)` or `[…]` a bare comma separates items (`(12,102)` is a pair, not 12102).
    let mut brackets = 0usize;
    while i < src.len() {
        let c = src[i..].chars().next().unwrap_or(' ');
        let start = i;
        if c.is_whitespace() {
            i += c.len_utf8();
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let (text, end) = lex_number(src, i, brackets > 0);
            out.push((Tok::Num(text), start));
            i = end;
            continue;
        }
        if c.is_ascii_alphabetic() {
            let end = src[i..]
                .find(|ch: char| !ch.is_ascii_alphabetic())
                .map_or(src.len(), |e| i + e);
            let word = &src[i..end];
            if NAMES.contains(&word) {
                out.push((Tok::Name(word.to_string()), start));
            } else if word.len() >= 3 {
                out.push((Tok::Word(word.to_string()), start));
            } else {
                for (k, ch) in word.chars().enumerate() {
                    out.push((Tok::Letter(ch), start + k));
                }
            }
            i = end;
            continue;
        }
        if c == '\\' {
            let rest = &src[i + 1..];
            let name_len = rest
                .find(|ch: char| !ch.is_ascii_alphabetic())
                .unwrap_or(rest.len());
            let (name, end) = if name_len > 0 {
                (&rest[..name_len], i + 1 + name_len)
            } else if let Some(ch) = rest.chars().next() {
                (&rest[..ch.len_utf8()], i + 1 + ch.len_utf8())
            } else {
                return Err(RewardError::parse(src, i, "a lone backslash"));
            };
            i = end;
            match name {
                n if IGNORED.contains(&n) => {}
                "text" | "textbf" | "textit" | "textrm" | "mbox" | "textnormal" | "mathrm_text" => {
                    let (content, end) = braced_raw(src, i)?;
                    i = end;
                    let t = content.trim();
                    if !t.is_empty() {
                        out.push((Tok::Text(t.to_string()), start));
                    }
                }
                "begin" | "end" => {
                    let (content, end) = braced_raw(src, i)?;
                    i = end;
                    let env = content.trim().trim_end_matches('*').to_string();
                    out.push((
                        if name == "begin" {
                            Tok::Begin(env)
                        } else {
                            Tok::End(env)
                        },
                        start,
                    ));
                    if name == "begin" && env_is_array(content.trim()) {
                        // `\begin{array}{cc}`: skip the column spec.
                        if src[i..].trim_start().starts_with('{') {
                            let skip = src[i..].len() - src[i..].trim_start().len();
                            let (_, end) = braced_raw(src, i + skip)?;
                            i = end;
                        }
                    }
                }
                n if NAMES.contains(&n) => out.push((Tok::Name(n.to_string()), start)),
                n => out.push((Tok::Cmd(n.to_string()), start)),
            }
            continue;
        }
        i += c.len_utf8();
        match c {
            '(' | '[' => brackets += 1,
            ')' | ']' => brackets = brackets.saturating_sub(1),
            _ => {}
        }
        let tok = match c {
            '≤' | '⩽' => Tok::Cmd("le".into()),
            '≥' | '⩾' => Tok::Cmd("ge".into()),
            '≠' => Tok::Cmd("ne".into()),
            '±' => Tok::Cmd("pm".into()),
            '∓' => Tok::Cmd("mp".into()),
            '×' => Tok::Cmd("times".into()),
            '÷' => Tok::Cmd("div".into()),
            '·' | '⋅' => Tok::Cmd("cdot".into()),
            '−' | '–' => Tok::Ch('-'),
            '√' => Tok::Name("sqrt".into()),
            'π' => Tok::Name("pi".into()),
            '∞' => Tok::Name("infty".into()),
            '∪' => Tok::Cmd("cup".into()),
            '∈' => Tok::Cmd("in".into()),
            '°' | '$' => continue,
            '<' | '>' | '!' if bytes.get(i) == Some(&b'=') => {
                i += 1;
                Tok::Cmd(
                    match c {
                        '<' => "le",
                        '>' => "ge",
                        _ => "ne",
                    }
                    .into(),
                )
            }
            '*' if bytes.get(i) == Some(&b'*') => {
                i += 1;
                Tok::Ch('^')
            }
            '^' if src[i..].starts_with("{\\circ}") => {
                i += "{\\circ}".len();
                continue;
            }
            '^' if src[i..].starts_with("\\circ") => {
                i += "\\circ".len();
                continue;
            }
            c if c.is_ascii() => Tok::Ch(c),
            _ => {
                return Err(RewardError::parse(
                    src,
                    start,
                    format!("unexpected character {c:?}"),
                ));
            }
        };
        out.push((tok, start));
    }
    Ok(out)
}

fn env_is_array(env: &str) -> bool {
    env == "array"
}

/// The content of the `{…}` group starting at (or after spaces from) `at`, and the byte after it.
fn braced_raw(src: &str, at: usize) -> Result<(&str, usize)> {
    let skip = src[at..].len() - src[at..].trim_start().len();
    let open = at + skip;
    if !src[open..].starts_with('{') {
        return Err(RewardError::parse(src, open, "expected `{`"));
    }
    let mut depth = 0usize;
    let bytes = src.as_bytes();
    let mut k = open;
    while k < bytes.len() {
        match bytes[k] {
            b'\\' => k += 1,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Ok((&src[open + 1..k], k + 1));
                }
            }
            _ => {}
        }
        k += 1;
    }
    Err(RewardError::parse(src, open, "unbalanced `{`"))
}

/// A number literal at `i`: digits with thousands separators (`1,000`, `1{,}000`, `1\,000`,
/// `12 500` with a space or a thin space),
/// a decimal part and an exponent; inside brackets (`in_brackets`) a bare comma is never a
/// separator. Returns the digits without separators and the end.
fn lex_number(src: &str, mut i: usize, in_brackets: bool) -> (String, usize) {
    let b = src.as_bytes();
    let digit = |k: usize| b.get(k).is_some_and(u8::is_ascii_digit);
    let mut text = String::new();
    let mut group = 0usize;
    let mut first_group = true;
    while i < b.len() {
        if digit(i) {
            text.push(b[i] as char);
            group += 1;
            i += 1;
            continue;
        }
        // Thousands separator: exactly three digits follow, then no digit.
        let sep_len = [
            ",", "{,}", "\\,", " ", "~", "\\ ", "\\;", "\u{2009}", "\u{202F}", "\u{00A0}",
        ]
        .iter()
        .find(|s| src[i..].starts_with(**s) && !(in_brackets && **s == ","))
        .map(|s| s.len());
        if let Some(len) = sep_len {
            let j = i + len;
            if (1..=3).contains(&group)
                && (first_group || group == 3)
                && digit(j)
                && digit(j + 1)
                && digit(j + 2)
                && !digit(j + 3)
                && !text.contains('.')
            {
                first_group = false;
                group = 0;
                i = j;
                continue;
            }
        }
        break;
    }
    if b.get(i) == Some(&b'.') && digit(i + 1) {
        text.push('.');
        i += 1;
        while digit(i) {
            text.push(b[i] as char);
            i += 1;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if digit(j) {
            let start = i;
            while digit(j) {
                j += 1;
            }
            text.push('e');
            text.push_str(src[start + 1..j].trim_start_matches('+'));
            i = j;
        }
    }
    (text, i)
}

/// An answer that is one bare number with commas between digits (`3,75`, `1,000`, `0,5`),
/// rewritten with a decimal point and without thousands separators; `None` for anything
/// else. A comma followed by exactly three digits is a thousands separator unless the part
/// before it is `0`; any other comma is a decimal comma, and only the last comma may be one
/// (`1,2,3` stays a list).
pub(super) fn decimal_comma(answer: &str) -> Option<String> {
    let (sign, digits) = match answer.strip_prefix(['-', '+']) {
        Some(rest) => (&answer[..1], rest),
        None => ("", answer),
    };
    let groups: Vec<&str> = digits.split(',').collect();
    if groups.len() < 2
        || groups
            .iter()
            .any(|g| g.is_empty() || !g.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    let mut out = String::from(sign);
    out.push_str(groups[0]);
    for (k, g) in groups.iter().enumerate().skip(1) {
        let thousands = g.len() == 3 && !(k == 1 && groups[0] == "0") && groups[0].len() <= 3;
        if thousands {
            out.push_str(g);
        } else if k == groups.len() - 1 {
            out.push('.');
            out.push_str(g);
        } else {
            return None;
        }
    }
    Some(out)
}
