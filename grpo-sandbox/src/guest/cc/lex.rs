//! The C and C++ lexer the renaming of C library names reads programs with: identifiers,
//! punctuation and literals, comments and whitespace skipped, `#include` directives as one
//! token naming the header.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Ident,
    Punct,
    Literal,
    Include,
}

/// Where a token is: program text, a `#define`, or another directive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Directive {
    None,
    Define,
    Other,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Token {
    pub(super) kind: Kind,
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) directive: Directive,
    /// The (last) line of an include; 0 otherwise.
    pub(super) line: u32,
    /// An include's directive ends with a newline.
    pub(super) newline: bool,
    /// Where an include's directive ends (after its newline).
    pub(super) line_end: usize,
    /// An include inside `#if`/`#ifdef`/`#ifndef`.
    pub(super) conditional: bool,
}

/// Splits C or C++ source into identifiers, punctuation and literals, skipping comments and
/// whitespace; `#include` directives become one token naming the header.
pub(super) fn lex(source: &str, cpp: bool) -> Vec<Token> {
    let bytes = source.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    let mut line: u32 = 1;
    let mut at_line_start = true;
    let mut directive = Directive::None;
    let mut conditionals = 0usize;
    let push = |tokens: &mut Vec<Token>, kind, start, end, directive| {
        tokens.push(Token {
            kind,
            start,
            end,
            directive,
            line: 0,
            newline: false,
            line_end: 0,
            conditional: false,
        });
    };
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\n' => {
                line += 1;
                at_line_start = true;
                directive = Directive::None;
                i += 1;
            }
            b'\\' if bytes.get(i + 1) == Some(&b'\n') => {
                line += 1;
                i += 2;
            }
            b'\\' if bytes.get(i + 1) == Some(&b'\r') && bytes.get(i + 2) == Some(&b'\n') => {
                line += 1;
                i += 3;
            }
            _ if c.is_ascii_whitespace() => i += 1,
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    if bytes[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
                i = (i + 2).min(bytes.len());
            }
            b'#' if at_line_start => {
                at_line_start = false;
                let mut j = i + 1;
                while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'\t') {
                    j += 1;
                }
                let word_end = ident_end(bytes, j);
                let word = &source[j..word_end];
                if word == "include" || word == "include_next" || word == "import" {
                    // The header, and the end of the line.
                    let mut k = word_end;
                    while k < bytes.len() && (bytes[k] == b' ' || bytes[k] == b'\t') {
                        k += 1;
                    }
                    let close = match bytes.get(k) {
                        Some(b'<') => Some(b'>'),
                        Some(b'"') => Some(b'"'),
                        _ => None,
                    };
                    let mut end = k;
                    while end < bytes.len() && bytes[end] != b'\n' {
                        end += 1;
                    }
                    let target = close.and_then(|close| {
                        let from = k + 1;
                        source[from..end]
                            .bytes()
                            .position(|b| b == close)
                            .map(|p| (from, from + p))
                    });
                    let newline = end < bytes.len();
                    let line_end = if newline { end + 1 } else { end };
                    let (start, stop) = target.unwrap_or((k, k));
                    tokens.push(Token {
                        kind: Kind::Include,
                        start,
                        end: stop,
                        directive: Directive::Other,
                        line,
                        newline,
                        line_end,
                        conditional: conditionals > 0,
                    });
                    i = end;
                } else {
                    match word {
                        "if" | "ifdef" | "ifndef" => conditionals += 1,
                        "endif" => conditionals = conditionals.saturating_sub(1),
                        _ => {}
                    }
                    directive = if word == "define" {
                        Directive::Define
                    } else {
                        Directive::Other
                    };
                    i = word_end.max(i + 1);
                }
            }
            b'"' => {
                let end = quoted_end(bytes, i, b'"');
                push(&mut tokens, Kind::Literal, i, end, directive);
                at_line_start = false;
                i = end;
            }
            b'\'' => {
                let end = quoted_end(bytes, i, b'\'');
                push(&mut tokens, Kind::Literal, i, end, directive);
                at_line_start = false;
                i = end;
            }
            _ if c.is_ascii_digit()
                || (c == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) =>
            {
                let mut j = i + 1;
                while j < bytes.len() {
                    let d = bytes[j];
                    let exponent_sign = (d == b'+' || d == b'-')
                        && matches!(bytes[j - 1], b'e' | b'E' | b'p' | b'P');
                    let separator = cpp
                        && d == b'\''
                        && bytes.get(j + 1).is_some_and(u8::is_ascii_alphanumeric);
                    if d.is_ascii_alphanumeric()
                        || d == b'_'
                        || d == b'.'
                        || exponent_sign
                        || separator
                    {
                        j += 1;
                    } else {
                        break;
                    }
                }
                push(&mut tokens, Kind::Literal, i, j, directive);
                at_line_start = false;
                i = j;
            }
            _ if c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c >= 0x80 => {
                let end = ident_end(bytes, i);
                let word = &source[i..end];
                at_line_start = false;
                let prefix = matches!(
                    word,
                    "L" | "u" | "U" | "u8" | "R" | "LR" | "uR" | "UR" | "u8R"
                );
                match bytes.get(end) {
                    Some(b'"') if prefix && word.ends_with('R') && cpp => {
                        let close = raw_string_end(source, end);
                        line += source[i..close].matches('\n').count() as u32;
                        push(&mut tokens, Kind::Literal, i, close, directive);
                        i = close;
                    }
                    Some(&q @ (b'"' | b'\'')) if prefix => {
                        let close = quoted_end(bytes, end, q);
                        push(&mut tokens, Kind::Literal, i, close, directive);
                        i = close;
                    }
                    _ => {
                        push(&mut tokens, Kind::Ident, i, end, directive);
                        i = end;
                    }
                }
            }
            _ => {
                let two = bytes.get(i..i + 2);
                let len = if two == Some(b"::") || two == Some(b"->") {
                    2
                } else {
                    1
                };
                // A stray byte of a multi-byte character cannot start here (handled above).
                push(&mut tokens, Kind::Punct, i, i + len, directive);
                at_line_start = false;
                i += len;
            }
        }
    }
    tokens
}

pub(super) fn ident_end(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len()
        && (bytes[i].is_ascii_alphanumeric()
            || bytes[i] == b'_'
            || bytes[i] == b'$'
            || bytes[i] >= 0x80)
    {
        i += 1;
    }
    i
}

/// The end of a string or character literal opening at `open` (its closing quote included; a
/// literal the line ends first stops there).
pub(super) fn quoted_end(bytes: &[u8], open: usize, quote: u8) -> usize {
    let mut j = open + 1;
    while j < bytes.len() {
        match bytes[j] {
            b'\\' => j += 2,
            b'\n' => return j,
            b if b == quote => return j + 1,
            _ => j += 1,
        }
    }
    bytes.len()
}

/// The end of a raw string literal whose `"` is at `quote`.
pub(super) fn raw_string_end(source: &str, quote: usize) -> usize {
    let rest = &source[quote + 1..];
    let Some(open) = rest.find('(') else {
        return source.len();
    };
    let delimiter = &rest[..open];
    let closing = format!("){delimiter}\"");
    match rest[open..].find(&closing) {
        Some(at) => quote + 1 + open + at + closing.len(),
        None => source.len(),
    }
}
