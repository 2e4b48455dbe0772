//! Which C++ sources compile with the precompiled `<bits/stdc++.h>`.
//!
//! Parsing the standard headers is most of a small C++ compile: `<iostream>`, `<vector>`,
//! `<string>` and `<algorithm>` are about 80,000 lines to clang. The warm-up precompiles our
//! [`<bits/stdc++.h>`](stdc++.h) once, and a program whose every `#include` is a standard
//! header that it covers compiles with `-include-pch` of it: the program's own includes then
//! hit include guards, and nothing is parsed twice. A program that includes
//! `<bits/stdc++.h>` itself always uses it.
//!
//! The precompiled header makes every standard header visible, not only those the program
//! asked for. Where that could change what the program means, the program compiles without it:
//!
//! - an include that is not `<standard header>` (a user header, `"..."`, an unknown or
//!   unsupported header, `#include_next`, a macro), or one inside `#if` or a block;
//! - a directive before the last include that could change how a header reads: `#define` or
//!   `#undef` of a reserved name (`_LIBCPP_…`), of `NDEBUG` (`<cassert>` reads it; `#undef
//!   NDEBUG` is allowed, as the flags never define it), of a keyword or of a standard name, and
//!   any `#pragma` but `once` and `GCC optimize`;
//! - a function declared at namespace scope under a name that `std` declares
//!   ([`std_names.txt`](std_names.txt)): with `using namespace std;` a standard overload the
//!   program did not include could be a better match than its own function for some call, and
//!   the call would silently go elsewhere.
//!
//! What remains is a name clash the compiler reports (a global `int count;` against
//! `std::count` under `using namespace std;`): the compiler compiles such a source again
//! without the precompiled header and reports that compile's result (see `compile.rs`), so a
//! program is never rejected because of it. The other way round, a program that calls a
//! standard function whose header it forgot compiles with the precompiled header (as with
//! g++, whose headers include each other more).

use std::collections::HashSet;
use std::sync::OnceLock;

use super::lex::{Directive, Kind, Token, lex};
use super::toolchain::BITS_STDCXX_H;

/// Why a source compiles without the precompiled header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Refusal {
    /// It includes nothing: there is nothing to save.
    NoInclude,
    /// An include that the precompiled header does not cover (or not as written).
    Include(String),
    /// An include inside `#if` or inside braces.
    PlacedInclude(String),
    /// A directive before the last include that could change how a header reads.
    Directive(String),
    /// A function declared under a name of `std`.
    StdName(String),
}

/// `Ok` when `source` (C++, after `shadow::rewrite`) may compile with the precompiled
/// `<bits/stdc++.h>`.
pub(super) fn check(source: &str) -> Result<(), Refusal> {
    let tokens = lex(source, true);
    let text = |t: &Token| &source[t.start..t.end];
    if tokens
        .iter()
        .any(|t| t.kind == Kind::Include && text(t).trim() == "bits/stdc++.h")
    {
        return Ok(());
    }
    let last = tokens
        .iter()
        .rposition(|t| t.kind == Kind::Include)
        .ok_or(Refusal::NoInclude)?;
    let mut seen_directive = None;
    let mut braces: Vec<bool> = Vec::new(); // each open brace: does it keep namespace scope?
    let mut head = 0; // where the current declaration starts
    for (i, token) in tokens.iter().enumerate() {
        if token.kind == Kind::Include {
            let target = text(token);
            let angled = token.start > 0 && source.as_bytes()[token.start - 1] == b'<';
            let plain = directive_at(source, token.start).map(|(_, word)| word) == Some("include");
            if !angled || !plain || !covered(target) {
                return Err(Refusal::Include(target.to_owned()));
            }
            if token.conditional || !braces.is_empty() {
                return Err(Refusal::PlacedInclude(target.to_owned()));
            }
            continue;
        }
        if token.directive != Directive::None {
            let Some((hash, word)) = directive_at(source, token.start) else {
                if i < last {
                    return Err(Refusal::Directive(text(token).to_owned()));
                }
                continue;
            };
            // The first token of each directive before the last include.
            if i < last && seen_directive != Some(hash) {
                seen_directive = Some(hash);
                let next = tokens.get(i + 1).map(text).unwrap_or("");
                if !harmless_directive(word, text(token), next) {
                    return Err(Refusal::Directive(format!("#{word} {}", text(token))));
                }
            }
            continue;
        }
        match text(token) {
            "{" => {
                let words: Vec<&str> = tokens[head..i].iter().map(text).collect();
                let keeps_scope = words.contains(&"namespace")
                    || (words.len() == 2
                        && words[0] == "extern"
                        && tokens[i - 1].kind == Kind::Literal);
                braces.push(keeps_scope);
                head = i + 1;
            }
            "}" => {
                braces.pop();
                head = i + 1;
            }
            ";" => head = i + 1,
            name if token.kind == Kind::Ident
                && braces.iter().all(|&keeps| keeps)
                && std_names().contains(name)
                && declares_function(source, &tokens, i) =>
            {
                return Err(Refusal::StdName(name.to_owned()));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Whether the identifier at `i` (at namespace scope) is declared as a function there: `T
/// name(`, `vector<T> name(`, `T *name(`, `T &name(`. A call in an initialiser follows `=`, an
/// operator or a keyword instead (`int x = count(…)`, `return gcd(…)` in a lambda).
fn declares_function(source: &str, tokens: &[Token], i: usize) -> bool {
    let text = |t: &Token| &source[t.start..t.end];
    let opens = tokens
        .get(i + 1)
        .is_some_and(|t| t.directive == Directive::None && text(t) == "(");
    let Some(prev) = i.checked_sub(1).map(|p| &tokens[p]) else {
        return false;
    };
    let declarator = match text(prev) {
        ">" | "*" | "&" | "&&" => true,
        word => prev.kind == Kind::Ident && !NOT_TYPES.contains(&word),
    };
    opens && declarator
}

/// Words that may precede a call rather than a declared name.
const NOT_TYPES: [&str; 11] = [
    "return",
    "new",
    "delete",
    "throw",
    "sizeof",
    "case",
    "else",
    "do",
    "co_return",
    "co_yield",
    "co_await",
];

/// The `#` and the word of the directive that the token at `at` belongs to, when its line
/// starts with one (a directive continued over lines is not recognised, and refused).
fn directive_at(source: &str, at: usize) -> Option<(usize, &str)> {
    let line_start = source[..at].rfind('\n').map_or(0, |p| p + 1);
    let line = &source[line_start..at];
    let hash = line_start + line.find(|c: char| !c.is_ascii_whitespace())?;
    let rest = source[hash..].strip_prefix('#')?;
    let rest = rest.trim_start_matches([' ', '\t']);
    let word_len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    Some((hash, &rest[..word_len]))
}

/// Whether `#word first next…` before an include leaves the standard headers as they are.
fn harmless_directive(word: &str, first: &str, next: &str) -> bool {
    match word {
        "if" | "ifdef" | "ifndef" | "elif" | "elifdef" | "elifndef" | "else" | "endif" | "line" => {
            true
        }
        "undef" if first == "NDEBUG" => true,
        "define" | "undef" => {
            !(first.starts_with('_')
                || first == "NDEBUG"
                || KEYWORDS.split_whitespace().any(|k| k == first)
                || std_names().contains(first))
        }
        "pragma" => first == "once" || (first == "GCC" && next == "optimize"),
        _ => false,
    }
}

/// The C headers that our `<bits/stdc++.h>` includes as `<cname>` (`<cmath>` includes
/// `<math.h>`).
const C_HEADERS: [&str; 19] = [
    "assert", "ctype", "errno", "fenv", "float", "inttypes", "limits", "locale", "math", "stdarg",
    "stddef", "stdint", "stdio", "stdlib", "string", "time", "uchar", "wchar", "wctype",
];

/// Whether `<target>` is a header the precompiled `<bits/stdc++.h>` has already read.
fn covered(target: &str) -> bool {
    static HEADERS: OnceLock<HashSet<String>> = OnceLock::new();
    HEADERS
        .get_or_init(|| {
            let mut headers: HashSet<String> = BITS_STDCXX_H
                .lines()
                .filter_map(|line| line.trim().strip_prefix("#include <")?.strip_suffix('>'))
                .map(str::to_owned)
                .collect();
            headers.extend(C_HEADERS.iter().map(|h| format!("{h}.h")));
            headers
        })
        .contains(target)
}

/// The names declared directly in `std` by our `<bits/stdc++.h>`.
fn std_names() -> &'static HashSet<&'static str> {
    static NAMES: OnceLock<HashSet<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| {
        include_str!("std_names.txt")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .collect()
    })
}

/// C++ keywords, alternative tokens and `assert`: a macro named so rewrites the headers too.
const KEYWORDS: &str = "\
    alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t \
    char16_t char32_t class compl concept const consteval constexpr constinit const_cast \
    continue co_await co_return co_yield decltype default delete do double dynamic_cast \
    else enum explicit export extern false float for friend goto if inline int long \
    mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected \
    public register reinterpret_cast requires return short signed sizeof static \
    static_assert static_cast struct switch template this thread_local throw true try \
    typedef typeid typename union unsigned using virtual void volatile wchar_t while xor \
    xor_eq final override import module restrict assert";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_c_header_is_included_by_bits_as_cname() {
        for header in C_HEADERS {
            let line = format!("#include <c{header}>");
            assert!(BITS_STDCXX_H.contains(&line), "{line}");
        }
        assert!(covered("vector") && covered("math.h") && covered("thread"));
        assert!(!covered("mutex") && !covered("unistd.h") && !covered("complex.h"));
    }

    #[test]
    fn ordinary_includes_use_it_wherever_they_are() {
        let source = "#include<stdio.h>\n#include<math.h>\n#include<vector>\nusing namespace std;\n\
                      #include<algorithm>\nbool f(vector<float> v) { return v.empty(); }\n\
                      #undef NDEBUG\n#include<assert.h>\nint main() { assert(f({})); }\n";
        assert_eq!(check(source), Ok(()));
        let bits = "#define int long long\n#include <bits/stdc++.h>\nint32_t main() {}\n";
        assert_eq!(check(bits), Ok(()));
    }

    #[test]
    fn other_includes_are_refused() {
        for (source, refusal) in [
            ("int main() {}\n", Refusal::NoInclude),
            ("#include \"vector\"\n", Refusal::Include("vector".into())),
            ("#include <mutex>\n", Refusal::Include("mutex".into())),
            (
                "#include_next <vector>\n",
                Refusal::Include("vector".into()),
            ),
            (
                "#ifdef X\n#include <map>\n#endif\n",
                Refusal::PlacedInclude("map".into()),
            ),
            (
                "namespace a {\n#include <map>\n}\n",
                Refusal::PlacedInclude("map".into()),
            ),
        ] {
            assert_eq!(check(source), Err(refusal), "{source}");
        }
    }

    #[test]
    fn directives_that_reach_the_headers_are_refused() {
        for (source, ok) in [
            ("#define ll long long\n#include <map>\n", true),
            ("#undef NDEBUG\n#include <cassert>\n", true),
            ("#pragma GCC optimize(\"O2\")\n#include <map>\n", true),
            ("#define NDEBUG\n#include <cassert>\n", false),
            (
                "#define _LIBCPP_HARDENING_MODE 1\n#include <vector>\n",
                false,
            ),
            ("#define int long long\n#include <vector>\n", false),
            ("#define endl '\\n'\n#include <iostream>\n", false),
            ("#pragma pack(1)\n#include <map>\n", false),
            (
                "#include <map>\n#define int long long\n#pragma pack(1)\n",
                true,
            ),
        ] {
            assert_eq!(check(source).is_ok(), ok, "{source}");
        }
    }

    #[test]
    fn a_function_under_a_std_name_is_refused() {
        for (source, ok) in [
            (
                "#include <cstdio>\nint gcd(int a, int b) { return b ? gcd(b, a % b) : a; }\n",
                false,
            ),
            (
                "#include <vector>\nstd::vector<int> unique(std::vector<int> v);\n",
                false,
            ),
            (
                "#include <vector>\nnamespace x { int *find(int); }\n",
                false,
            ),
            ("#include <vector>\nstruct D { int find(int x); };\n", true),
            (
                "#include <vector>\nint Foo::count(int x) { return x; }\n",
                true,
            ),
            (
                "#include <algorithm>\nint m = std::max(1, 2), n = max(3, 4);\n",
                true,
            ),
            (
                "#include <numeric>\nint main() { return gcd(4, 6); }\n",
                true,
            ),
            (
                "#include <string>\nint count_upper(std::string s) { return 0; }\n",
                true,
            ),
        ] {
            assert_eq!(check(source).is_ok(), ok, "{source}");
        }
    }
}
