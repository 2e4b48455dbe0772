//! Answer forms people (and models) write, one table per kind: each pair goes through the
//! whole checker (extraction, parsing, equivalence) with the default configuration, and each
//! kind has pairs that must stay unequal next to the ones that must match.

use grpo_rewards::math::{EquivConfig, MathChecker, MathConfig};

/// Checks every `(gold, completion, expected)` row and reports all wrong verdicts at once.
fn check_table(kind: &str, checker: &MathChecker, rows: &[(&str, &str, bool)]) {
    let failures: Vec<String> = rows
        .iter()
        .filter_map(|(gold, pred, want)| {
            let c = checker.check(gold, pred);
            (c.correct != *want).then(|| {
                format!(
                    "{gold:?} vs {pred:?}: got {} (extracted {:?}; {})",
                    c.correct, c.extracted, c.verdict.reason
                )
            })
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{kind}: {} of {} wrong:\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n")
    );
}

/// [`check_table`] with the default checker (also the answer families' tables).
pub(crate) fn default_table(kind: &str, rows: &[(&str, &str, bool)]) {
    check_table(kind, &MathChecker::default(), rows);
}

#[test]
fn numbers_as_people_write_them() {
    default_table(
        "numbers",
        &[
            ("12500", "12 500", true),
            ("12500", r"\boxed{12,\!500}", true),
            ("12500", r"\boxed{12\,500}", true),
            ("1234567", r"\boxed{1 234 567}", true),
            ("3.75", r"\boxed{3,75}", true),
            ("0.375", r"\boxed{0,375}", true),
            ("1000", r"\boxed{1,000}", true),
            ("12.5", "12,5", true),
            // against a list reference, commas list the answers
            ("2, 3", r"\boxed{2,3}", true),
            (r"\{2, 3\}", r"\boxed{3,2}", true),
            ("2, 3", r"\boxed{2,4}", false),
            ("2.3", r"\boxed{2,3}", true),
            ("-2.5", r"\boxed{-2,5}", true),
            // inside brackets a comma separates items
            ("(3,1)", r"\boxed{(3,1)}", true),
            ("(3,1)", r"\boxed{3.1}", false),
            ("\\{2,3\\}", r"\boxed{\{3,2\}}", true),
            ("3.75", r"\boxed{3,76}", false),
            ("12500", "12 501", false),
            ("1000", r"\boxed{1,0}", false),
            // a number glued inside a word is not an answer
            ("7", "The code is XQ7Z", false),
            ("7", "so the value is 7", true),
            ("12", "We found 12 items and the label H2O", true),
        ],
    );
}

#[test]
fn relations() {
    default_table(
        "relations",
        &[
            (r"x \geq 3", r"\boxed{x \ge 3}", true),
            (r"x \geq 3", r"\boxed{x >= 3}", true),
            (r"x \geq 3", r"\boxed{3 \le x}", true),
            (r"x > 3", r"\boxed{x \gt 3}", true),
            (r"x < 3", r"\boxed{x \lt 3}", true),
            (r"x \neq 3", r"\boxed{x != 3}", true),
            (r"x \ne 3", r"\boxed{3 \neq x}", true),
            ("y < 4", r"\boxed{-y > -4}", true),
            ("y < 4", r"\boxed{-y < -4}", false),
            ("2x + 1 > 5", r"\boxed{x > 2}", true),
            ("x > 2", r"\boxed{x \geq 2}", false),
            ("5", r"\boxed{x = 2+3 = 5}", true),
            ("5", r"\boxed{2+3 = 5}", true),
            ("6", r"\boxed{x = 2+3 = 5}", false),
            (r"\pi", r"\boxed{x = \pi \approx 3.1416}", true),
            (r"[-1, 4]", r"\boxed{-1 \le x \le 4}", true),
            (r"[-1, 4]", r"\boxed{-1 < x \le 4}", false),
            (r"x \in [-1, 4]", r"\boxed{-1 \le x \le 4}", true),
            ("(0, 2)", r"\boxed{0 < g(t) < 2}", true),
            ("(0, 2]", r"\boxed{2 \geq y > 0}", true),
            (
                r"(-\infty, -1) \cup (2, \infty)",
                r"\boxed{x < -1 \text{ or } x > 2}",
                true,
            ),
            (
                r"(-\infty, -1) \cup (2, \infty)",
                r"\boxed{x < -1 \text{ or } x \ge 2}",
                false,
            ),
        ],
    );
}

#[test]
fn matrices() {
    default_table(
        "matrices",
        &[
            (
                r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}",
                r"\boxed{\begin{bmatrix} 1 & 2 \\ 3 & 4 \end{bmatrix}}",
                true,
            ),
            (
                r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}",
                r"\boxed{\left[ \begin{array}{cc} 1 & 2 \\ 3 & 4 \end{array} \right]}",
                true,
            ),
            (
                r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}",
                r"So the matrix is $\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}$.",
                true,
            ),
            (
                r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}",
                "Multiplying out we get \\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix} as the result",
                true,
            ),
            (
                r"\begin{pmatrix} 2 & 2 \\ 3 & 5 \end{pmatrix}",
                r"\boxed{\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix} + \begin{pmatrix} 1 & 0 \\ 0 & 1 \end{pmatrix}}",
                true,
            ),
            (
                r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}",
                r"\boxed{\begin{pmatrix} 1 & 0 \\ 0 & 1 \end{pmatrix}\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}}",
                true,
            ),
            (
                r"\begin{pmatrix} 7 & 10 \\ 15 & 22 \end{pmatrix}",
                r"\boxed{\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}}",
                true,
            ),
            (
                r"\begin{pmatrix} 2 & 4 \\ 6 & 8 \end{pmatrix}",
                r"\boxed{2\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}}",
                true,
            ),
            (
                r"\begin{pmatrix} \frac{1}{2} & 0 \\ 0 & 1 \end{pmatrix}",
                r"\boxed{\begin{pmatrix} 0.5 & 0 \\ 0 & 1 \end{pmatrix}}",
                true,
            ),
            (
                r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}",
                r"\boxed{\begin{pmatrix} 1 & 3 \\ 2 & 4 \end{pmatrix}}",
                false,
            ),
            (
                r"\begin{pmatrix} 2 & 2 \\ 3 & 5 \end{pmatrix}",
                r"\boxed{\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix} - \begin{pmatrix} 1 & 0 \\ 0 & 1 \end{pmatrix}}",
                false,
            ),
            (
                r"\begin{pmatrix} 1 & 2 \end{pmatrix}",
                r"\boxed{\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix} + \begin{pmatrix} 1 & 2 \end{pmatrix}}",
                false,
            ),
        ],
    );
}

#[test]
fn several_answers() {
    default_table(
        "several answers",
        &[
            (
                r"\{2, 5\}",
                r"So $x = \boxed{2}$ and $x = \boxed{5}$.",
                true,
            ),
            ("2, 5", r"\boxed{5} and \boxed{2}", true),
            ("2, 5", r"\boxed{2}, \boxed{5}", true),
            ("2, 5", r"\boxed{2}, \boxed{6}", false),
            ("(1,4), (4,1)", r"\boxed{(4,1), (1,4)}", true),
            ("(1,4), (4,1)", r"\boxed{(1,4) \text{ and } (4,1)}", true),
            ("(1,4), (4,1)", r"\boxed{(4,1) and (1,4)}", true),
            ("(1,4), (4,1)", r"\boxed{(1,4), (1,4)}", false),
            ("3, 8", r"\boxed{a = 3, b = 8}", true),
            ("3, 8", r"\boxed{a = 3, b = 9}", false),
            ("(2,9)", r"\boxed{(m,n) = (2,9)}", true),
            ("(2,9)", r"\boxed{(m,n) = (9,2)}", false),
            ("5:12", r"\boxed{P:Q = 5:12}", true),
            ("5:12", r"\boxed{12:5}", false),
            ("4", r"\boxed{f(x) = 4}", true),
            ("4", r"\boxed{|CD| = 4}", true),
            ("4", r"\boxed{|CD| = 5}", false),
        ],
    );
}

#[test]
fn decimals_against_exact_values() {
    default_table(
        "decimals",
        &[
            (r"\frac{3}{7}", r"\boxed{0.4286}", true),
            (r"\frac{3}{7}", r"\boxed{0.4285}", true),
            (r"\frac{3}{7}", r"\boxed{0.429}", true),
            (r"\frac{3}{7}", r"\boxed{0.43}", false),
            (r"\frac{3}{7}", r"\boxed{0.4287}", false),
            (r"\frac{2}{3}", r"\boxed{0.667}", true),
            (r"\frac{2}{3}", r"\boxed{0.666}", true),
            (r"\frac{2}{3}", r"\boxed{0.668}", false),
            (r"\sqrt{2}", r"\boxed{1.414}", true),
            (r"\sqrt{2}", r"\boxed{1.4142}", true),
            (r"\sqrt{2}", r"\boxed{1.415}", false),
            (r"\sqrt{2}", r"\boxed{1.416}", false),
            (r"\pi", r"\boxed{3.14}", true),
            (r"\pi", r"\boxed{3.1}", false),
            (r"-\frac{1}{3}", r"\boxed{-0.333}", true),
            (
                r"(\frac{1}{4}, \frac{5}{3}]",
                r"\boxed{(0.25, 1.6667]}",
                true,
            ),
            (
                r"(\frac{1}{4}, \frac{5}{3}]",
                r"\boxed{(0.25, 1.6667)}",
                false,
            ),
            // exact decimals always match; integers and terminating decimals need every digit
            ("0.125", r"\boxed{\frac{1}{8}}", true),
            ("3", r"\boxed{2.999}", false),
            ("3", r"\boxed{3.000}", true),
            ("12.75", r"\boxed{12.8}", false),
            ("1/2^{99}", r"\boxed{1/2^{98}}", false),
        ],
    );
}

#[test]
fn delimiters_and_prose() {
    default_table(
        "delimiters",
        &[
            ("17", r"The result is \(17\)", true),
            ("17", "We conclude\n\\[\n17\n\\]", true),
            (r"\frac{1}{2}", "Therefore\n$$\n\\frac{1}{2}\n$$", true),
            (r"\frac{1}{2}", "so the probability is $\\frac{1}{2}$", true),
            ("17", "Final Answer: the largest k is 17.", true),
            ("17", "Final Answer: the largest k is 18.", false),
            (
                "x^2 + 1",
                "Expanding, we get $x = 3$ and then $f(x) = x^2 + 1$",
                true,
            ),
            (
                "42",
                "First we add 20 and 20 to get 40.\nThen we add 2 more.\nSo in total we have $42$.",
                true,
            ),
            (
                "42",
                "First we add 20 and 20 to get 40.\nThen we add 2 more.\nSo in total we have $43$.",
                false,
            ),
        ],
    );
}

#[test]
fn text_and_symbols() {
    default_table(
        "text",
        &[
            (r"\text{(B)}", r"\boxed{B}", true),
            (r"\text{(B)}", r"\boxed{\textbf{(B)}}", true),
            (r"\text{(B)}", r"\boxed{(C)}", false),
            (r"\text{Tuesday}", r"\boxed{\text{tuesday}}", true),
            ("19, 46, and 82", r"\boxed{19, 46, \text{ and } 82}", true),
            ("19, 46, and 82", r"\boxed{19, 82, \text{and } 46}", true),
            ("19, 46, and 82", r"\boxed{19, 46, \text{ and } 83}", false),
            ("10:30", r"\boxed{10:30}", true),
            ("10:30", r"\boxed{10:45}", false),
            (r"a + b", r"\boxed{b + a}", true),
            (r"10^{10^{10}} + 1", r"\boxed{1 + 10^{10^{10}}}", true),
            (
                r"2 \cdot 10^{10^{10}}",
                r"\boxed{10^{10^{10}} \cdot 2}",
                true,
            ),
            (r"10^{10^{10}} + 1", r"\boxed{2 + 10^{10^{10}}}", false),
        ],
    );
}

#[test]
fn variable_names_only_under_the_option() {
    let rows_default: &[(&str, &str, bool)] = &[
        ("g(s)", r"\boxed{g(t)}", false),
        ("x^2 + 1", r"\boxed{t^2 + 1}", false),
        ("x^2 + 1", r"\boxed{1 + x^2}", true),
    ];
    default_table("variable names (default)", rows_default);
    let free = MathChecker::new(MathConfig {
        equiv: EquivConfig {
            rename_variables: true,
            ..EquivConfig::default()
        },
        ..MathConfig::default()
    })
    .unwrap();
    check_table(
        "variable names (renaming on)",
        &free,
        &[
            ("g(s)", r"\boxed{g(t)}", true),
            ("x^2 + 1", r"\boxed{t^2 + 1}", true),
            ("x^2 + y", r"\boxed{b + a^2}", true),
            ("x^2 + y", r"\boxed{a + b^2}", true),
            ("x^2 + 1", r"\boxed{t^2 + 2}", false),
            ("x + y", r"\boxed{2t}", false),
            ("5", r"\boxed{5}", true),
        ],
    );
}

#[test]
fn must_stay_unequal() {
    default_table(
        "must stay unequal",
        &[
            ("(4,2)", r"\boxed{\{2,4\}}", false),
            (r"\{2,4\}", r"\boxed{(4,2)}", false),
            (r"\{2,4\}", r"\boxed{(2,4)}", false),
            ("(2,4)", r"\boxed{(2,4)}", true),
            (r"\frac{1}{2^{99}}", r"\boxed{\frac{1}{2^{98}}}", false),
            (r"\frac{1}{2004!}", r"\boxed{\frac{1}{2006!}}", false),
            ("[1, 2)", r"\boxed{[1, 2]}", false),
            ("[1, 2)", r"\boxed{(1, 2)}", false),
            ("[1, 2)", r"\boxed{[1, 2)}", true),
        ],
    );
}
