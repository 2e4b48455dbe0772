//! A program's own functions under C library names.
//!
//! A solution may define a function whose name the C library also uses: `int strlen(string s)`,
//! `long long pow(long long, long long)`, a `void exit(int)` that guards against early exits.
//! Natively (g++ with libstdc++, glibc) such a program calls its own function, but here it may
//! not:
//!
//! - libc++ declares more of the C library than libstdc++ does (`<string>` declares
//!   `::strlen`), so an overload such as `strlen(string)` loses to `strlen(const char *)` for
//!   `strlen("")`, and a test of the solution passes whatever its body is;
//! - wasi-libc is linked statically, so a definition with the C library's own signature (`void
//!   exit(int)`) can clash with the archive's at link time;
//! - in C, wasi-libc implements `isdigit` and its kin as macros too.
//!
//! So before compiling, every top-level function definition in the source whose name a C
//! header of the toolchain declares ([`libc_names.txt`](libc_names.txt), listed by
//! `scripts/libc_names.py`) is renamed to `grpo_user_<name>`, with every unqualified use of
//! that name in the program's own text (not in the headers, not after `.`, `->` or `ns::`, not
//! in strings or comments). The program's calls reach its own function, and the library's
//! declarations stay as they are (`std::strlen` is still the library's).
//!
//! In C++, when the program itself includes the header that declares the name (`<cmath>` for
//! `pow`), the library's overloads were visible natively too, so they stay candidates: a
//! forwarding template `grpo_user_<name>(A&&...)` that calls `(::name)` is declared after the
//! program's last `#include` before its definition (and a `#line` keeps the program's line
//! numbers). Overload resolution then prefers the program's function for an exact match (a
//! function over a template) and the library's where the program's needs a conversion, as
//! natively: `pow(2.0, 0.5)` beside a `pow(long long, long long)` still calls the library.
//!
//! A name that is also declared inside a class, struct, union or enum body is left alone (a
//! member's accesses after `.` are not renamed, so renaming its declaration would break it).

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use super::compile::CLang;

/// What a renamed function is called.
use super::lex::{Directive, Kind, Token, lex};

pub(super) const PREFIX: &str = "grpo_user_";

const LIBC_NAMES: &str = include_str!("libc_names.txt");

/// Each C library function name, with the C headers that declare it.
fn libc() -> &'static HashMap<&'static str, Vec<&'static str>> {
    static NAMES: OnceLock<HashMap<&'static str, Vec<&'static str>>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut names: HashMap<&'static str, Vec<&'static str>> = HashMap::new();
        for line in LIBC_NAMES.lines() {
            let Some((header, list)) = line.split_once(':') else {
                continue;
            };
            if header.starts_with('#') {
                continue;
            }
            for name in list.split_whitespace() {
                names.entry(name).or_default().push(header);
            }
        }
        names
    })
}

/// The C headers `<bits/stdc++.h>` includes (as `<cctype>`, `<cmath>`…).
const BITS_C_HEADERS: [&str; 12] = [
    "ctype.h",
    "fenv.h",
    "inttypes.h",
    "locale.h",
    "math.h",
    "stdio.h",
    "stdlib.h",
    "string.h",
    "time.h",
    "uchar.h",
    "wchar.h",
    "wctype.h",
];

/// The C headers an `#include` of `target` brings in (`cmath` and `math.h` both mean `math.h`).
fn c_headers_of(target: &str) -> Vec<&'static str> {
    if target == "bits/stdc++.h" {
        return BITS_C_HEADERS.to_vec();
    }
    let known = |name: &str| libc().values().flatten().find(|h| **h == name).copied();
    if let Some(h) = known(target) {
        return vec![h];
    }
    match target.strip_prefix('c') {
        Some(rest) if !rest.contains('.') => known(&format!("{rest}.h")).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// The rewritten program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Shadowed {
    /// The source to compile.
    pub(super) source: String,
    /// The renamed functions, sorted.
    pub(super) names: Vec<String>,
}

/// Renames the program's own functions that shadow C library names; `None` when it defines
/// none.
pub(super) fn rewrite(lang: CLang, source: &str) -> Option<Shadowed> {
    let tokens = lex(source, lang == CLang::Cpp);
    let structure = scan(source, &tokens);
    let mut names: Vec<&str> = structure
        .defined
        .keys()
        .copied()
        .filter(|n| !structure.members.contains(n))
        .collect();
    if names.is_empty() {
        return None;
    }
    names.sort_unstable();
    let renamed: HashSet<&str> = names.iter().copied().collect();
    let cpp = lang == CLang::Cpp;
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        if token.kind != Kind::Ident || token.directive == Directive::Other {
            continue;
        }
        let text = &source[token.start..token.end];
        if !renamed.contains(text) {
            continue;
        }
        // Before the program declares it, the name is the library's (as natively).
        let from = structure.declared.get(text).copied().unwrap_or(usize::MAX);
        if token.start >= from && reaches_own(source, &tokens, i, cpp) {
            edits.push((token.start, token.start, PREFIX.to_owned()));
        }
    }
    if cpp {
        if let Some(edit) = forwarders(&structure, &names) {
            edits.push(edit);
        }
        // `std::exit` names the same function as `::exit`: after each of the program's
        // declarations, `std::` gets the renamed one too (on the same line).
        for &(end, name) in &structure.ends {
            if renamed.contains(name) && STD_SAME.contains(&name) {
                let using = format!(" namespace std {{ using ::{PREFIX}{name}; }}");
                edits.push((end, end, using));
            }
        }
    }
    edits.sort_by_key(|e| e.0);
    let mut out = String::with_capacity(source.len() + edits.len() * PREFIX.len());
    let mut at = 0;
    for (start, end, text) in edits {
        out.push_str(&source[at..start]);
        out.push_str(&text);
        at = end;
    }
    out.push_str(&source[at..]);
    Some(Shadowed {
        source: out,
        names: names.into_iter().map(str::to_owned).collect(),
    })
}

/// The forwarding templates for the renamed names whose header the program includes before
/// their first definition, inserted after the last such `#include`.
fn forwarders(structure: &Structure<'_>, names: &[&str]) -> Option<(usize, usize, String)> {
    let first_definition = names
        .iter()
        .filter_map(|n| structure.declared.get(n))
        .min()
        .copied()?;
    let includes: Vec<&Include> = structure
        .includes
        .iter()
        .filter(|inc| inc.global && inc.end <= first_definition)
        .collect();
    let last = includes.last()?;
    let headers: HashSet<&str> = includes
        .iter()
        .flat_map(|inc| c_headers_of(&inc.target))
        .collect();
    let mut block = String::new();
    if !last.newline {
        block.push('\n');
    }
    for name in names {
        let declared = libc()
            .get(name)
            .is_some_and(|hs| hs.iter().any(|h| headers.contains(h)));
        if declared {
            block.push_str(&format!(
                "template <class... A> auto {PREFIX}{name}(A&&... a) -> \
                 decltype((::{name})(static_cast<A&&>(a)...)) \
                 {{ return (::{name})(static_cast<A&&>(a)...); }}\n"
            ));
        }
    }
    if block.trim().is_empty() {
        return None;
    }
    block.push_str(&format!("#line {}\n", last.line + 1));
    Some((last.end, last.end, block))
}

/// Whether the occurrence at `i` may name the program's function: not a member access, and
/// unqualified, qualified by the global scope or (in C++) by `std`, whose C library names are
/// the global ones.
fn reaches_own(source: &str, tokens: &[Token], i: usize, cpp: bool) -> bool {
    let text = |t: &Token| &source[t.start..t.end];
    let Some(prev) = i.checked_sub(1).map(|p| &tokens[p]) else {
        return true;
    };
    match text(prev) {
        "." | "->" => false,
        "::" => match i.checked_sub(2).map(|p| &tokens[p]) {
            Some(before) => {
                let word = text(before);
                if word == "std" {
                    cpp && STD_SAME.contains(&text(&tokens[i]))
                } else {
                    !(word == ">"
                        || (before.kind == Kind::Ident && !KEYWORDS_BEFORE_SCOPE.contains(&word)))
                }
            }
            None => true,
        },
        _ => true,
    }
}

/// The process-control functions whose `std::` name is the program's own function too when
/// it defines one (so `std::exit(0)` cannot step around a program's guarding `exit`). Other
/// `std::` names stay the library's: `std::remove` and `std::getline` are also algorithms and
/// stream functions, `std::abs` and `std::pow` have overloads of their own.
const STD_SAME: [&str; 5] = ["exit", "quick_exit", "abort", "atexit", "at_quick_exit"];

/// Words that may precede a global `::name` without qualifying it.
const KEYWORDS_BEFORE_SCOPE: [&str; 12] = [
    "return",
    "case",
    "else",
    "do",
    "new",
    "delete",
    "throw",
    "co_return",
    "co_yield",
    "co_await",
    "sizeof",
    "typename",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// `extern "C" { … }`: still the global scope.
    Extern,
    Namespace,
    /// A class, struct, union or enum body.
    Class,
    /// A function body, an initialiser, a lambda.
    Block,
}

#[derive(Debug)]
struct Include {
    target: String,
    /// At the global scope (not inside a namespace or function), and not conditional (code
    /// inserted after it must not be skipped).
    global: bool,
    line: u32,
    end: usize,
    newline: bool,
}

#[derive(Debug, Default)]
struct Structure<'a> {
    /// C library names with a global function definition, and where the first one starts.
    defined: HashMap<&'a str, usize>,
    /// Where the first global declaration or definition of each C library name starts.
    declared: HashMap<&'a str, usize>,
    /// Where each global declaration or definition of a C library name ends (after its `;`
    /// or `}`), with the name.
    ends: Vec<(usize, &'a str)>,
    /// C library names declared inside a class, struct, union or enum body.
    members: HashSet<&'a str>,
    includes: Vec<Include>,
}

/// Finds the global function declarations and definitions with C library names, the member
/// names and the includes.
fn scan<'a>(source: &'a str, tokens: &[Token]) -> Structure<'a> {
    let libc = libc();
    let mut structure = Structure::default();
    // Each open brace's scope, with the name of the function whose body it is.
    let mut stack: Vec<(Scope, Option<&'a str>)> = Vec::new();
    let mut head: Vec<usize> = Vec::new();
    let text = |t: &Token| &source[t.start..t.end];
    let global = |stack: &[(Scope, Option<&str>)]| stack.iter().all(|s| s.0 == Scope::Extern);
    for (i, token) in tokens.iter().enumerate() {
        if token.kind == Kind::Include {
            structure.includes.push(Include {
                target: text(token).trim().to_owned(),
                global: global(&stack) && !token.conditional,
                line: token.line,
                end: token.line_end,
                newline: token.newline,
            });
            continue;
        }
        if token.directive != Directive::None {
            continue;
        }
        match text(token) {
            ";" => {
                if global(&stack)
                    && let Some((name, at)) = definition(source, tokens, &head)
                {
                    structure.declared.entry(name).or_insert(at);
                    structure.ends.push((token.end, name));
                }
                head.clear();
            }
            "{" => {
                let scope = classify(source, tokens, &head);
                let mut function = None;
                if scope == Scope::Block
                    && global(&stack)
                    && let Some((name, at)) = definition(source, tokens, &head)
                {
                    structure.defined.entry(name).or_insert(at);
                    structure.declared.entry(name).or_insert(at);
                    function = Some(name);
                }
                stack.push((scope, function));
                head.clear();
            }
            "}" => {
                if let Some((_, Some(name))) = stack.pop() {
                    structure.ends.push((token.end, name));
                }
                head.clear();
            }
            word => {
                if token.kind == Kind::Ident
                    && stack.last().map(|s| s.0) == Some(Scope::Class)
                    && libc.contains_key(word)
                {
                    structure.members.insert(word);
                }
                head.push(i);
            }
        }
    }
    structure
}

fn classify(source: &str, tokens: &[Token], head: &[usize]) -> Scope {
    let words: Vec<&str> = head
        .iter()
        .map(|&i| &source[tokens[i].start..tokens[i].end])
        .collect();
    if words.contains(&"namespace") {
        return Scope::Namespace;
    }
    if words.len() == 2 && words[0] == "extern" && tokens[head[1]].kind == Kind::Literal {
        return Scope::Extern;
    }
    let aggregate = words
        .iter()
        .any(|w| matches!(*w, "struct" | "class" | "union" | "enum"));
    if aggregate && !words.contains(&"(") && !words.contains(&"=") {
        return Scope::Class;
    }
    Scope::Block
}

/// The C library name a function definition's head (`int strlen(string s)`) declares, with
/// where the head starts.
fn definition<'a>(source: &'a str, tokens: &[Token], head: &[usize]) -> Option<(&'a str, usize)> {
    let text = |i: usize| &source[tokens[head[i]].start..tokens[head[i]].end];
    let libc = libc();
    let mut depth = 0usize;
    for j in 0..head.len() {
        match text(j) {
            // An initialiser: `int n = strlen("a");`.
            "=" if depth == 0 => return None,
            "(" => {
                if depth == 0 && j > 0 && tokens[head[j - 1]].kind == Kind::Ident {
                    let name = text(j - 1);
                    let qualified = j >= 2 && matches!(text(j - 2), "::" | "." | "->" | "~");
                    let after_close = closing(&head[j..], source, tokens).map(|c| j + c);
                    let assigned =
                        after_close.is_some_and(|c| (c..head.len()).any(|k| text(k) == "="));
                    if libc.contains_key(name) && !qualified && !assigned {
                        return Some((name, tokens[head[0]].start));
                    }
                }
                depth += 1;
            }
            ")" => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// The index (within `head`, which starts at a `(`) of the matching `)`.
fn closing(head: &[usize], source: &str, tokens: &[Token]) -> Option<usize> {
    let mut depth = 0usize;
    for (k, &i) in head.iter().enumerate() {
        match &source[tokens[i].start..tokens[i].end] {
            "(" => depth += 1,
            ")" => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpp(source: &str) -> Option<Shadowed> {
        rewrite(CLang::Cpp, source)
    }

    #[test]
    fn a_program_without_its_own_libc_function_is_untouched() {
        let source = "#include <cstring>\nint main() { return strlen(\"ab\") + max(1, 2); }\n\
                      int max(int a, int b) { return a > b ? a : b; }\n";
        assert_eq!(cpp(source), None);
        assert_eq!(
            rewrite(CLang::C, "#include <string.h>\nint f(void);\n"),
            None
        );
    }

    #[test]
    fn the_definition_and_unqualified_uses_are_renamed() {
        let source = "#include <string>\nusing namespace std;\n\
                      int strlen(string str) { return str.size(); }\n\
                      int main() { string s; return strlen(\"\") + s.strlen + std::strlen(\"x\") \
                      + ::strlen(s) + p->strlen; } // strlen\nconst char *t = \"strlen\";\n";
        let out = cpp(source).expect("renamed");
        assert_eq!(out.names, ["strlen"]);
        assert!(
            out.source.contains("int grpo_user_strlen(string str)"),
            "{}",
            out.source
        );
        assert!(
            out.source.contains("return grpo_user_strlen(\"\")"),
            "{}",
            out.source
        );
        assert!(
            out.source.contains("s.strlen + std::strlen(\"x\")"),
            "{}",
            out.source
        );
        assert!(!out.source.contains("namespace std {"), "{}", out.source);
        assert!(
            out.source.contains("+ ::grpo_user_strlen(s) + p->strlen"),
            "{}",
            out.source
        );
        assert!(
            out.source
                .contains("// strlen\nconst char *t = \"strlen\";"),
            "{}",
            out.source
        );
        // <string> is not <cstring>: no library overload is brought back.
        assert!(!out.source.contains("template"), "{}", out.source);
        assert_eq!(out.source.lines().count(), source.lines().count());
    }

    #[test]
    fn an_included_header_keeps_the_library_overloads_with_the_line_numbers() {
        let source = "#include <iostream>\n#include <cmath>\nusing namespace std;\n\
                      long long pow(long long a, long long b) { return a; }\n\
                      int main() { cout << pow(2, 3) << __LINE__; }\n";
        let out = cpp(source).expect("renamed");
        let lines: Vec<&str> = out.source.lines().collect();
        assert_eq!(lines[0], "#include <iostream>");
        assert_eq!(lines[1], "#include <cmath>");
        assert!(lines[2].starts_with("template <class... A> auto grpo_user_pow(A&&... a)"));
        assert!(lines[2].contains("(::pow)("), "{}", lines[2]);
        assert_eq!(lines[3], "#line 3");
        assert_eq!(lines[4], "using namespace std;");
        // C has no overloading: only the renaming.
        let c = rewrite(
            CLang::C,
            "#include <math.h>\ndouble pow(double a, double b) { return a; }\n",
        )
        .expect("renamed");
        assert_eq!(
            c.source,
            "#include <math.h>\ndouble grpo_user_pow(double a, double b) { return a; }\n"
        );
    }

    #[test]
    fn nothing_is_inserted_inside_a_conditional() {
        let source = "#include <cstdlib>\n#ifdef LOCAL\n#include \"debug.h\"\n#endif\n\
                      int abs(int x) { return x; }\n";
        let out = cpp(source).expect("renamed");
        let lines: Vec<&str> = out.source.lines().collect();
        assert!(
            lines[1].starts_with("template <class... A> auto grpo_user_abs"),
            "{}",
            out.source
        );
        assert_eq!(lines[2], "#line 2");
        assert_eq!(lines[3], "#ifdef LOCAL");
    }

    #[test]
    fn uses_before_the_programs_declaration_stay_the_librarys() {
        let source = "#include <stdlib.h>\nvoid early(void) { exit(1); }\nvoid exit(int);\n\
                      void late(void) { exit(2); }\nvoid exit(int c) { for (;;) {} }\n";
        let c = rewrite(CLang::C, source).expect("renamed");
        assert_eq!(
            c.source,
            "#include <stdlib.h>\nvoid early(void) { exit(1); }\nvoid grpo_user_exit(int);\n\
             void late(void) { grpo_user_exit(2); }\nvoid grpo_user_exit(int c) { for (;;) {} }\n"
        );
        // In C++ the forwarders come before the first declaration, and `std::` follows each.
        let out = cpp(source).expect("renamed");
        assert!(
            out.source
                .contains("template <class... A> auto grpo_user_exit"),
            "{}",
            out.source
        );
        assert!(
            out.source
                .contains("void grpo_user_exit(int); namespace std { using ::grpo_user_exit; }\n"),
            "{}",
            out.source
        );
        let out = cpp("void exit(int c) { std::abort(); }\nint main() { std::exit(1); }\n")
            .expect("renamed");
        assert_eq!(
            out.source,
            "void grpo_user_exit(int c) { std::abort(); } namespace std { using ::grpo_user_exit; }\n\
             int main() { std::grpo_user_exit(1); }\n"
        );
    }

    #[test]
    fn members_locals_calls_and_declarations_are_not_definitions() {
        // A struct member named like a libc function: left alone.
        assert_eq!(
            cpp("struct S { int read() { return 1; } };\nint read() { return 2; }\n"),
            None
        );
        // A call in an initialiser, a prototype, a method defined outside its class.
        assert_eq!(
            cpp(
                "#include <cstring>\nint n = strlen(\"a\");\nsize_t strlen(const char *);\n\
                        struct T;\nint T::abs() { return 1; }\n"
            ),
            None
        );
        // A function inside a namespace is not the global one.
        assert_eq!(cpp("namespace my { int abs(int x) { return x; } }\n"), None);
        // A lambda's parameter list is not a definition either.
        assert_eq!(cpp("auto f = [](int abs) { return abs; };\n"), None);
    }

    #[test]
    fn templates_extern_c_macros_and_digit_separators() {
        let out = cpp("template <class T> T abs(T x) { return x < 0 ? -x : x; }\n\
                       #define ABS(x) abs(x)\nint main() { return ABS(1'000) + abs('a'); }\n")
        .expect("renamed");
        assert!(
            out.source.contains("T grpo_user_abs(T x)"),
            "{}",
            out.source
        );
        assert!(
            out.source.contains("#define ABS(x) grpo_user_abs(x)"),
            "{}",
            out.source
        );
        assert!(out.source.contains("grpo_user_abs('a')"), "{}", out.source);
        let out =
            cpp("extern \"C\" {\nvoid exit(int c) { for (;;) {} }\n}\nint main() { exit(0); }\n")
                .expect("renamed");
        assert_eq!(out.names, ["exit"]);
        assert!(
            out.source.contains("{ grpo_user_exit(0); }"),
            "{}",
            out.source
        );
        // #ifdef and #undef keep the library's macro name.
        let c = rewrite(
            CLang::C,
            "#include <ctype.h>\n#undef isdigit\nint isdigit(int c) { return c == 'x'; }\n",
        )
        .expect("renamed");
        assert!(
            c.source
                .contains("#undef isdigit\nint grpo_user_isdigit(int c)"),
            "{}",
            c.source
        );
    }

    #[test]
    fn every_listed_header_is_known() {
        assert!(
            libc()
                .get("strlen")
                .is_some_and(|h| h.contains(&"string.h"))
        );
        assert!(libc().get("exit").is_some_and(|h| h.contains(&"stdlib.h")));
        assert!(libc().len() > 500, "{}", libc().len());
        assert_eq!(c_headers_of("cstring"), ["string.h"]);
        assert_eq!(c_headers_of("math.h"), ["math.h"]);
        assert!(c_headers_of("vector").is_empty());
        assert!(c_headers_of("bits/stdc++.h").contains(&"stdlib.h"));
        for header in BITS_C_HEADERS {
            assert_eq!(c_headers_of(header), [header]);
        }
    }
}
