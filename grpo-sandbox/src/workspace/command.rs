//! The command line a workspace runs: simple commands joined by `&&`, each a program name, its
//! arguments and at most one `< FILE` and one `> FILE`, quoted as a POSIX shell quotes (`'…'`,
//! `"…"` with `\"`, `\\`, `\$`, `` \` `` escapes, `\` outside quotes). Everything else a shell
//! offers (pipes, `;`, `||`, `&`, variables, globs, command substitution, `2>`, `>>`) is
//! refused with a reason rather than guessed at.

/// One simple command: its words and its redirections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Simple {
    /// The program's name and its arguments.
    pub argv: Vec<String>,
    /// `< FILE`: stdin read from this workspace file.
    pub stdin: Option<String>,
    /// `> FILE`: stdout written to this workspace file.
    pub stdout: Option<String>,
}

/// Why a command line is not in the subset.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SyntaxError(pub String);

#[derive(Debug, PartialEq)]
enum Token {
    Word(String),
    And,
    In,
    Out,
}

/// Splits `line` into simple commands joined by `&&`.
pub fn parse(line: &str) -> Result<Vec<Simple>, SyntaxError> {
    let tokens = tokenize(line)?;
    let mut commands = Vec::new();
    let mut current = Simple {
        argv: Vec::new(),
        stdin: None,
        stdout: None,
    };
    let mut tokens = tokens.into_iter();
    while let Some(token) = tokens.next() {
        match token {
            Token::Word(word) => current.argv.push(word),
            Token::And => {
                if current.argv.is_empty() {
                    return Err(SyntaxError("`&&` without a command before it".into()));
                }
                commands.push(std::mem::replace(
                    &mut current,
                    Simple {
                        argv: Vec::new(),
                        stdin: None,
                        stdout: None,
                    },
                ));
            }
            redirect @ (Token::In | Token::Out) => {
                let (slot, op) = match redirect {
                    Token::In => (&mut current.stdin, "<"),
                    _ => (&mut current.stdout, ">"),
                };
                let Some(Token::Word(file)) = tokens.next() else {
                    return Err(SyntaxError(format!("`{op}` without a file name after it")));
                };
                if slot.replace(file).is_some() {
                    return Err(SyntaxError(format!("more than one `{op}` in one command")));
                }
            }
        }
    }
    if current.argv.is_empty() {
        return Err(SyntaxError(if commands.is_empty() {
            "empty command".into()
        } else {
            "`&&` without a command after it".into()
        }));
    }
    commands.push(current);
    Ok(commands)
}

fn unsupported(what: &str) -> SyntaxError {
    SyntaxError(format!(
        "unsupported syntax: {what} (the subset is simple commands joined by `&&`, with `< FILE` and `> FILE`)"
    ))
}

fn tokenize(line: &str) -> Result<Vec<Token>, SyntaxError> {
    let mut tokens = Vec::new();
    let mut word = String::new();
    // A word was started (so `''` is an empty word, not none).
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    let end_word = |tokens: &mut Vec<Token>, word: &mut String, in_word: &mut bool| {
        if *in_word {
            tokens.push(Token::Word(std::mem::take(word)));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => end_word(&mut tokens, &mut word, &mut in_word),
            '\n' | ';' => return Err(unsupported("`;` or a line break between commands")),
            '&' => {
                if chars.next_if_eq(&'&').is_none() {
                    return Err(unsupported("`&` (background jobs)"));
                }
                end_word(&mut tokens, &mut word, &mut in_word);
                tokens.push(Token::And);
            }
            '|' => return Err(unsupported("`|` (pipes and `||`)")),
            '<' => {
                if chars.peek() == Some(&'<') {
                    return Err(unsupported("`<<` (here-documents)"));
                }
                if in_word && word.chars().all(|c| c.is_ascii_digit()) {
                    return Err(unsupported("redirecting a numbered descriptor"));
                }
                end_word(&mut tokens, &mut word, &mut in_word);
                tokens.push(Token::In);
            }
            '>' => {
                if chars.peek() == Some(&'>') {
                    return Err(unsupported("`>>` (appending)"));
                }
                if chars.peek() == Some(&'&')
                    || (in_word && word.chars().all(|c| c.is_ascii_digit()))
                {
                    return Err(unsupported("redirecting a numbered descriptor"));
                }
                end_word(&mut tokens, &mut word, &mut in_word);
                tokens.push(Token::Out);
            }
            '$' => return Err(unsupported("`$` (variables and substitutions)")),
            '`' => return Err(unsupported("backquotes (command substitution)")),
            '(' | ')' | '{' | '}' => return Err(unsupported("grouping")),
            '*' | '?' | '[' => return Err(unsupported("globs (quote the character)")),
            '~' if !in_word => return Err(unsupported("`~` (quote the character)")),
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err(SyntaxError("unterminated `'`".into())),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(e @ ('"' | '\\' | '$' | '`')) => word.push(e),
                            Some('\n') => {}
                            Some(other) => {
                                word.push('\\');
                                word.push(other);
                            }
                            None => return Err(SyntaxError("unterminated `\"`".into())),
                        },
                        Some('$') => return Err(unsupported("`$` inside double quotes")),
                        Some('`') => return Err(unsupported("backquotes inside double quotes")),
                        Some(c) => word.push(c),
                        None => return Err(SyntaxError("unterminated `\"`".into())),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some('\n') => {}
                    Some(c) => word.push(c),
                    None => return Err(SyntaxError("a trailing `\\`".into())),
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    end_word(&mut tokens, &mut word, &mut in_word);
    Ok(tokens)
}

/// `argv` as one command line that [`parse`] reads back as the same words (each word single-
/// quoted unless it is plainly safe).
pub fn join(argv: &[impl AsRef<str>]) -> String {
    argv.iter()
        .map(|word| {
            let word = word.as_ref();
            let plain = !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=+,:@%".contains(c));
            if plain {
                word.to_owned()
            } else {
                format!("'{}'", word.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Vec<String>> {
        parse(line)
            .unwrap_or_else(|e| panic!("{line}: {e}"))
            .into_iter()
            .map(|s| s.argv)
            .collect()
    }

    #[test]
    fn simple_commands_joined_by_and() {
        assert_eq!(
            words("g++ -O2 -o hello hello.cpp && ./hello 1 2"),
            vec![
                vec!["g++", "-O2", "-o", "hello", "hello.cpp"],
                vec!["./hello", "1", "2"]
            ]
        );
        assert_eq!(
            words(r#"python3 -c 'print("a b")' "x y" z\ w ''"#),
            vec![vec!["python3", "-c", r#"print("a b")"#, "x y", "z w", ""]]
        );
        assert_eq!(
            words(r#"echo "a\"b\\c\n""#),
            vec![vec!["echo", r#"a"b\c\n"#]]
        );
        assert_eq!(
            words("python3 -c 'import sys\nprint(1)'")[0][2],
            "import sys\nprint(1)"
        );
    }

    #[test]
    fn redirections() {
        let parsed = parse("python3 main.py <in.txt > out.txt").unwrap();
        assert_eq!(parsed[0].argv, ["python3", "main.py"]);
        assert_eq!(parsed[0].stdin.as_deref(), Some("in.txt"));
        assert_eq!(parsed[0].stdout.as_deref(), Some("out.txt"));
    }

    #[test]
    fn what_is_not_in_the_subset_is_refused() {
        for bad in [
            "a | b",
            "a || b",
            "a ; b",
            "a\nb",
            "a &",
            "echo $HOME",
            "echo `id`",
            "a 2> err",
            "a >> log",
            "a > f > g",
            "a <",
            "&& a",
            "a &&",
            "",
            "   ",
            "ls *.py",
            "cat ~/x",
            "(a)",
            "a 'b",
            "python3 -c \"$x\"",
            "a >&2",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn join_round_trips() {
        let argv = ["g++", "-o", "x", "it's a file.cpp", "", "a&&b", "$HOME"];
        assert_eq!(words(&join(&argv)), vec![argv.to_vec()]);
    }
}
