//! Comparing a program's stdout with the expected output, in the modes a task names
//! ([`Compare`]). Every mode is linear in the output's size but the unordered ones, which
//! sort (`n log n`); the first difference is described for the verdict.

use grpo_tasks::judging::{Compare, CompareMode};

/// The first difference between `got` and `want` under `compare`, or `None` when they match.
///
/// ```
/// use grpo_sandbox::judge::compare::first_difference;
/// use grpo_tasks::judging::Compare;
/// let tokens = Compare::testlib("wcmp").unwrap();
/// assert_eq!(first_difference("1\n2 3", "1 2\n3\n", &tokens), None);
/// let lines = Compare::default();
/// assert!(first_difference("1\n2 3", "1 2\n3\n", &lines).is_some());
/// ```
pub fn first_difference(got: &str, want: &str, compare: &Compare) -> Option<String> {
    match compare.mode {
        CompareMode::Lines => lines(got, want, compare),
        CompareMode::Tokens => tokens(got, want, compare),
        CompareMode::TrimmedLines => trimmed_lines(got, want, compare),
        CompareMode::ExactLines => exact_lines(got, want, compare),
        CompareMode::Exact => exact(got, want),
        CompareMode::UnorderedLines => unordered(
            normalised_lines(got, compare),
            normalised_lines(want, compare),
            "line",
        ),
        CompareMode::UnorderedTokens => unordered(
            got.split_whitespace().map(|t| fold(t, compare)).collect(),
            want.split_whitespace().map(|t| fold(t, compare)).collect(),
            "token",
        ),
    }
}

/// Line by line, each line as its tokens; trailing empty lines ignored.
fn lines(got: &str, want: &str, compare: &Compare) -> Option<String> {
    fn split(text: &str) -> Vec<Vec<&str>> {
        let mut lines: Vec<Vec<&str>> = text
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        while lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        lines
    }
    let (got_lines, want_lines) = (split(got), split(want));
    for i in 0..got_lines.len().max(want_lines.len()) {
        let (g, w) = (got_lines.get(i), want_lines.get(i));
        let same = match (g, w) {
            (Some(g), Some(w)) => {
                g.len() == w.len()
                    && g.iter()
                        .zip(w.iter())
                        .all(|(a, b)| tokens_match(a, b, compare))
            }
            _ => false,
        };
        if !same {
            let show = |l: Option<&Vec<&str>>| l.map_or(END.to_owned(), |l| l.join(" "));
            return Some(format!(
                "line {}: expected {:?}, got {:?}",
                i + 1,
                cut(&show(w), 100),
                cut(&show(g), 100)
            ));
        }
    }
    None
}

const END: &str = "<end of output>";

/// The whitespace-separated tokens, wherever the line breaks fall.
fn tokens(got: &str, want: &str, compare: &Compare) -> Option<String> {
    let (mut g, mut w) = (got.split_whitespace(), want.split_whitespace());
    let mut index = 0;
    loop {
        index += 1;
        match (g.next(), w.next()) {
            (None, None) => return None,
            (Some(a), Some(b)) if tokens_match(a, b, compare) => {}
            (a, b) => {
                return Some(format!(
                    "token {index}: expected {:?}, got {:?}",
                    cut(b.unwrap_or(END), 100),
                    cut(a.unwrap_or(END), 100)
                ));
            }
        }
    }
}

/// Line by line, exact but for trailing whitespace on each line and trailing empty lines.
fn trimmed_lines(got: &str, want: &str, compare: &Compare) -> Option<String> {
    fn split(text: &str) -> Vec<&str> {
        let mut lines: Vec<&str> = text
            .split('\n')
            .map(|l| l.trim_end_matches([' ', '\t', '\r']))
            .collect();
        while lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        lines
    }
    let (g, w) = (split(got), split(want));
    for i in 0..g.len().max(w.len()) {
        let (a, b) = (g.get(i).copied(), w.get(i).copied());
        let same = match (a, b) {
            (Some(a), Some(b)) => a == b || (compare.case_insensitive && fold_eq(a, b)),
            _ => false,
        };
        if !same {
            return Some(format!(
                "line {}: expected {:?}, got {:?}",
                i + 1,
                cut(b.unwrap_or(END), 100),
                cut(a.unwrap_or(END), 100)
            ));
        }
    }
    None
}

/// testlib's `fcmp`: the expected text read line by line as testlib reads it (a line ends at
/// `\n`; a `\r` right before it is dropped), its last line left out when empty; each of those
/// lines equal to the output's line at the same place (an empty line past the output's end);
/// and nothing but whitespace after them in the output.
fn exact_lines(got: &str, want: &str, compare: &Compare) -> Option<String> {
    fn split(text: &str) -> Vec<&str> {
        text.split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
            .collect()
    }
    let mut expected = split(want);
    // What follows the last `\n` is never read when empty; then testlib stops at an empty
    // line that ends the file.
    for _ in 0..2 {
        if expected.last().is_some_and(|l| l.is_empty()) {
            expected.pop();
        }
    }
    let output = split(got);
    for (i, line) in expected.iter().enumerate() {
        let found = output.get(i).copied().unwrap_or("");
        let same = *line == found || (compare.case_insensitive && fold_eq(line, found));
        if !same {
            return Some(format!(
                "line {}: expected {:?}, got {:?}",
                i + 1,
                cut(line, 100),
                cut(found, 100)
            ));
        }
    }
    let rest = output.get(expected.len()..).unwrap_or(&[]);
    // testlib's `seekEof` skips spaces, tabs, `\r` and `\n`.
    let blank = |l: &&str| l.trim_matches([' ', '\t', '\r']).is_empty();
    if let Some(extra) = rest.iter().position(|l| !blank(l)) {
        return Some(format!(
            "line {}: expected {END:?}, got {:?}",
            expected.len() + extra + 1,
            cut(rest[extra], 100)
        ));
    }
    None
}

/// Byte for byte.
fn exact(got: &str, want: &str) -> Option<String> {
    if got == want {
        return None;
    }
    let at = got
        .bytes()
        .zip(want.bytes())
        .position(|(a, b)| a != b)
        .unwrap_or(got.len().min(want.len()));
    let line = want.as_bytes()[..at.min(want.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1;
    let around = |text: &str| {
        let start = text.floor_char_boundary(at);
        cut(&text[start..], 20)
    };
    Some(format!(
        "byte {at} (line {line}): expected {:?}, got {:?} ({} bytes expected, {} got)",
        around(want),
        around(got),
        want.len(),
        got.len()
    ))
}

fn normalised_lines(text: &str, compare: &Compare) -> Vec<String> {
    text.lines()
        .map(|l| {
            let tokens: Vec<String> = l.split_whitespace().map(|t| fold(t, compare)).collect();
            tokens.join(" ")
        })
        .filter(|l| !l.is_empty())
        .collect()
}

/// The two multisets, sorted and compared.
fn unordered(mut got: Vec<String>, mut want: Vec<String>, what: &str) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!(
            "expected {} {what}s in any order, got {}",
            want.len(),
            got.len()
        ));
    }
    got.sort_unstable();
    want.sort_unstable();
    let (g, w) = got.iter().zip(want.iter()).find(|(g, w)| g != w)?;
    // The smaller of the two is the one missing from the other side.
    Some(if w < g {
        format!("expected {what} {:?} is missing", cut(w, 100))
    } else {
        format!("{what} {:?} is not expected", cut(g, 100))
    })
}

fn fold(token: &str, compare: &Compare) -> String {
    if compare.case_insensitive {
        token.to_lowercase()
    } else {
        token.to_owned()
    }
}

fn fold_eq(a: &str, b: &str) -> bool {
    a.chars()
        .flat_map(char::to_lowercase)
        .eq(b.chars().flat_map(char::to_lowercase))
}

/// Two tokens match when equal, equal without case (when asked), or both finite numbers
/// within the absolute or the relative tolerance. One tolerance for both (testlib's `rcmp*`)
/// is testlib's `doubleCompare`: 1e-15 of slack on each side.
fn tokens_match(got: &str, want: &str, compare: &Compare) -> bool {
    if got == want || (compare.case_insensitive && fold_eq(got, want)) {
        return true;
    }
    if compare.abs_tol.is_none() && compare.rel_tol.is_none() {
        return false;
    }
    match (got.parse::<f64>(), want.parse::<f64>()) {
        (Ok(g), Ok(w)) if g.is_finite() && w.is_finite() => {
            match (compare.abs_tol, compare.rel_tol) {
                (Some(a), Some(r)) if a == r => testlib_double_compare(w, g, a),
                (abs, rel) => {
                    let diff = (g - w).abs();
                    abs.is_some_and(|a| diff <= a) || rel.is_some_and(|r| diff <= r * w.abs())
                }
            }
        }
        _ => false,
    }
}

/// testlib's `doubleCompare(expected, result, error)` on finite numbers: the error grows by
/// 1e-15, then within it absolutely, or relatively.
fn testlib_double_compare(expected: f64, result: f64, error: f64) -> bool {
    let error = error + 1e-15;
    if (result - expected).abs() <= error {
        return true;
    }
    let (a, b) = (expected * (1.0 - error), expected * (1.0 + error));
    result >= a.min(b) && result <= a.max(b)
}

/// `text`, cut to `max` characters with an ellipsis.
pub(crate) fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        format!("{}…", text.chars().take(max).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(name: &str) -> Compare {
        serde_json::from_value(serde_json::json!(name)).unwrap()
    }

    fn tol(mode_name: &str, abs: Option<f64>, rel: Option<f64>) -> Compare {
        Compare {
            abs_tol: abs,
            rel_tol: rel,
            ..mode(mode_name)
        }
    }

    /// (got, want, comparison, same). The nasty ones: line breaks moved, trailing spaces
    /// and `\r`, missing or extra lines, a prefix of the answer, case, numbers at the edge
    /// of a tolerance, `nan`/`inf`, order.
    #[test]
    fn comparison_table() {
        let lines = Compare::default();
        let cc = Compare::code_contests();
        let lcb = Compare::live_code_bench();
        let cases: Vec<(&str, &str, Compare, bool)> = vec![
            // lines (the default, testlib's lcmp)
            ("1 2\n", "1 2", lines.clone(), true),
            ("1  2 \n\n\n", "1 2\n", lines.clone(), true),
            ("  1\t2\r\n", "1 2\n", lines.clone(), true),
            ("1 2\n3\n", "1 2\n", lines.clone(), false),
            ("1\n", "1\n2\n", lines.clone(), false), // a prefix of the answer
            ("", "0\n", lines.clone(), false),
            ("\n", "", lines.clone(), true),
            ("1\n2 3", "1 2\n3\n", lines.clone(), false),
            ("YES\n", "yes\n", lines.clone(), false),
            ("\n1\n", "1\n", lines.clone(), false), // a leading empty line is a line
            // tokens (wcmp)
            ("1\n2 3", "1 2\n3\n", mode("tokens"), true),
            ("1 2", "1 2 3", mode("tokens"), false),
            ("1 2 3 4", "1 2 3", mode("tokens"), false),
            ("", "", mode("tokens"), true),
            ("   \n", "", mode("tokens"), true),
            // trimmed lines (fcmp)
            ("a b  \r\n", "a b\n", mode("trimmed_lines"), true),
            ("a  b\n", "a b\n", mode("trimmed_lines"), false),
            (" a\n", "a\n", mode("trimmed_lines"), false),
            ("a\n\n\n", "a", mode("trimmed_lines"), true),
            ("a\n\nb", "a\nb", mode("trimmed_lines"), false),
            // testlib's fcmp: a trailing space is a difference, `\r\n` is not
            ("1 2 \n", "1 2\n", mode("fcmp"), false),
            ("1 2\r\n", "1 2\n", mode("fcmp"), true),
            ("1 2\n", "1 2\r\n", mode("fcmp"), true),
            ("1  2\n", "1 2\n", mode("fcmp"), false),
            ("a\n\n \n\t\n", "a\n", mode("fcmp"), true),
            ("a\nb\n", "a\n", mode("fcmp"), false),
            ("a", "a\n\n", mode("fcmp"), true),
            ("a", "a\n\n\n", mode("fcmp"), true),
            ("a\nx", "a\n\n\n", mode("fcmp"), false),
            ("", "", mode("fcmp"), true),
            (" \n", "", mode("fcmp"), true),
            ("", "1", mode("fcmp"), false),
            (" a\n", "a\n", mode("fcmp"), false),
            // exact
            ("a\n", "a\n", mode("exact"), true),
            ("a", "a\n", mode("exact"), false),
            ("a\r\n", "a\n", mode("exact"), false),
            // unordered
            ("2\n1\n3\n", "1\n2\n3\n", mode("unordered_lines"), true),
            ("1 2\n3\n", "3\n1  2\n", mode("unordered_lines"), true),
            ("1\n1\n2\n", "1\n2\n2\n", mode("unordered_lines"), false),
            ("1\n2\n", "1\n2\n3\n", mode("unordered_lines"), false),
            ("3 1 2", "1\n2\n3", mode("uncmp"), true),
            ("3 1 1", "1 3 3", mode("uncmp"), false),
            // case-insensitive (yesno)
            ("YES\n", "yes\n", mode("yesno"), true),
            ("Yes no\n", "YES NO\n", mode("nyesno"), true),
            ("YES\n", "NO\n", mode("yesno"), false),
            ("ÄB\n", "äb\n", mode("yesno"), true),
            // float tolerance
            ("0.3333333\n", "0.333333333\n", mode("rcmp6"), true),
            ("0.3334\n", "0.333333333\n", mode("rcmp6"), false),
            ("0.3333333\n", "0.333333333\n", lines.clone(), false),
            ("nan\n", "nan\n", mode("rcmp6"), true), // identical tokens match textually
            ("nan\n", "0\n", mode("rcmp6"), false),
            (
                "inf\n",
                "1e308\n",
                tol("lines", Some(1.0), Some(1.0)),
                false,
            ),
            (
                "1000001\n",
                "1000000\n",
                tol("tokens", None, Some(1e-6)),
                true,
            ),
            (
                "1000002\n",
                "1000000\n",
                tol("tokens", None, Some(1e-6)),
                false,
            ),
            (
                "0.0000015\n",
                "0.000001\n",
                tol("tokens", None, Some(1e-6)),
                false,
            ),
            (
                "0.0000015\n",
                "0.000001\n",
                tol("tokens", Some(1e-6), None),
                true,
            ),
            ("1.5\n", "abc\n", tol("tokens", Some(10.0), None), false),
            ("0x10\n", "16\n", mode("rcmp9"), false), // no hex numbers
            ("1e3\n", "1000\n", mode("rcmp9"), true),
            // CodeContests' tester: tokens, no case, numbers within 1e-5
            ("ok\n", "OK\n", cc.clone(), true),
            ("Yes No\nYes\n", "YES\nNO\nYES\n", cc.clone(), true),
            ("YES NO\n", "yes\n", cc.clone(), false),
            ("0.333333\n", "0.3333333333\n", cc.clone(), true),
            ("1.000000\n", "1\n", cc.clone(), true),
            ("0.33332\n", "0.3333333333\n", cc.clone(), false),
            ("100000.5\n", "100000\n", cc.clone(), false), // absolute, not relative
            ("NO\n", "YES\n", cc.clone(), false),
            // LiveCodeBench's grader: lines, numbers by value
            ("1.0 2\n", "1 2.00\n", lcb.clone(), true),
            ("1.000001\n", "1\n", lcb.clone(), false),
            ("1\n2\n", "1 2\n", lcb.clone(), false),
            ("Yes\n", "YES\n", lcb.clone(), false),
        ];
        for (got, want, compare, same) in &cases {
            assert_eq!(
                first_difference(got, want, compare).is_none(),
                *same,
                "{got:?} vs {want:?} under {compare:?}"
            );
        }
    }

    #[test]
    fn differences_name_where() {
        let lines = Compare::default();
        assert_eq!(
            first_difference("a\nb\n", "a\nc\n", &lines).unwrap(),
            "line 2: expected \"c\", got \"b\""
        );
        assert!(
            first_difference("a\n", "a\nc\n", &lines)
                .unwrap()
                .contains(END)
        );
        assert_eq!(
            first_difference("1 2", "1 3", &mode("tokens")).unwrap(),
            "token 2: expected \"3\", got \"2\""
        );
        assert_eq!(
            first_difference("ab\ncx", "ab\ncd", &mode("exact")).unwrap(),
            "byte 4 (line 2): expected \"d\", got \"x\" (5 bytes expected, 5 got)"
        );
        assert_eq!(
            first_difference("1\n3\n", "1\n2\n", &mode("unordered_lines")).unwrap(),
            "expected line \"2\" is missing"
        );
        // A multi-byte character at the first difference is not split.
        assert!(first_difference("aé", "aè", &mode("exact")).is_some());
    }

    #[test]
    fn large_outputs_compare_in_linear_time() {
        let want: String = (0..200_000).map(|i| format!("{i}\n")).collect();
        let mut got = want.clone();
        got.push_str("extra\n");
        for name in [
            "lines",
            "tokens",
            "trimmed_lines",
            "exact_lines",
            "exact",
            "unordered_lines",
        ] {
            assert!(
                first_difference(&want, &want, &mode(name)).is_none(),
                "{name}"
            );
            assert!(
                first_difference(&got, &want, &mode(name)).is_some(),
                "{name}"
            );
        }
    }
}
