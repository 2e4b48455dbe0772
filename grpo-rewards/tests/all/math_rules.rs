//! One test per rule of `grpo_rewards::math::equiv`'s rule list (numbered as there), each with
//! a case the rule accepts and a near case it must refuse, on parsed answers (no extraction).

use grpo_rewards::math::{DEFAULT_RULES, EquivConfig, equivalent, extract, parse_answer};

fn eq_with(gold: &str, pred: &str, cfg: &EquivConfig) -> bool {
    equivalent(
        &parse_answer(gold).unwrap(),
        &parse_answer(pred).unwrap(),
        cfg,
    )
}

fn eq(gold: &str, pred: &str) -> bool {
    eq_with(gold, pred, &EquivConfig::default())
}

#[test]
fn rule_1_text() {
    assert!(eq(r"\text{No Solution}", "no solution"));
    assert!(eq(r"\text{(B)}", "B"));
    assert!(!eq(r"\text{(B)}", "C"));
    assert!(!eq("yes", "no"));
}

#[test]
fn rule_2_matrix_arithmetic() {
    let a = r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}";
    let i = r"\begin{pmatrix} 1 & 0 \\ 0 & 1 \end{pmatrix}";
    assert!(eq(
        r"\begin{pmatrix} 2 & 2 \\ 3 & 5 \end{pmatrix}",
        &format!("{a} + {i}")
    ));
    assert!(eq(a, &format!("{i}{a}")));
    assert!(!eq(a, &format!("{a} + {i}")));
}

#[test]
fn rule_3_labels_chains_relations() {
    assert!(eq("5", "x = 5"));
    assert!(eq("4", "f(x) = 4"));
    assert!(eq("4", "|CD| = 4"));
    assert!(eq("(2,9)", "(m,n) = (2,9)"));
    assert!(eq("5:12", "P:Q = 5:12"));
    assert!(eq("5", "x = 2+3 = 5"));
    assert!(eq(r"\sqrt{2}", r"x = \sqrt{2} \approx 1.41"));
    assert!(!eq("5", "x + y = 5"));
    assert!(eq("y < 4", "-y > -4"));
    assert!(eq("y < 4", "4 > y"));
    assert!(!eq("y < 4", "-y < -4"));
    assert!(eq("2x - 6 = 0", "x = 3"));
    assert!(eq(r"[-1, 4]", r"-1 \le x \le 4"));
    assert!(eq(r"(0, 2)", r"0 < g(t) < 2"));
    assert!(!eq(r"[-1, 4]", r"-1 \le x < 4"));
}

#[test]
fn rule_4_collections() {
    assert!(eq(r"\{1, 2\}", r"\{2, 1\}"));
    assert!(eq("(1, 2)", "(1, 2)"));
    assert!(!eq("(1, 2)", "(2, 1)"));
    assert!(!eq("(4, 2)", r"\{2, 4\}"));
    assert!(!eq(r"\{2, 4\}", "(2, 4)"));
    assert!(eq("1, 2", "2, 1"));
    assert!(eq(
        r"\frac{-1 \pm \sqrt{5}}{2}",
        r"\frac{-1 + \sqrt{5}}{2}, \frac{-1 - \sqrt{5}}{2}"
    ));
    assert!(eq("(1, 2]", r"\left(1, 2\right]"));
    assert!(!eq("(1, 2]", "[1, 2]"));
    assert!(eq("10:30", "10:30"));
    assert!(!eq("10:30", "1:3"));
    assert!(eq(r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}", "(1, 2)"));
}

#[test]
fn rule_5_values() {
    assert!(eq(r"\frac{1}{2^{99}}", "2^{-99}"));
    assert!(!eq(r"\frac{1}{2^{99}}", r"\frac{1}{2^{98}}"));
    assert!(eq(r"\sqrt{8}", r"2\sqrt{2}"));
    assert!(eq(r"10^{10^{10}} + 1", r"1 + 10^{10^{10}}"));
    assert!(!eq(r"10^{10^{10}} + 1", r"10^{10^{10}} + 2"));
}

#[test]
fn rule_6_decimals_for_exact_values() {
    assert!(eq(r"\frac{3}{7}", "0.4286"));
    assert!(eq(r"\frac{3}{7}", "0.4285"));
    assert!(!eq(r"\frac{3}{7}", "0.43"));
    assert!(eq(r"\sqrt{3}", "1.732"));
    assert!(!eq(r"\sqrt{3}", "1.733"));
    assert!(!eq("3", "2.999"));
    assert!(!eq("12.75", "12.8"));
    // The rule is symmetric: a rounded reference is matched by the exact value it rounds,
    // and by nothing else.
    assert!(eq("0.4286", r"\frac{3}{7}"));
    assert!(!eq("0.4287", r"\frac{3}{7}"));
    assert!(!eq("2.999", "3"));
}

#[test]
fn rule_7_free_variables() {
    assert!(eq("(x+1)^2", "x^2 + 2x + 1"));
    assert!(!eq("(x+1)^2", "x^2 + 2x + 2"));
    assert!(eq(r"\frac{x^2 - 1}{x - 1}", "x + 1"));
}

#[test]
fn rule_8_percentages() {
    assert!(eq(r"50\%", "50"));
    assert!(eq(r"50\%", "0.5"));
    assert!(!eq(r"50\%", "0.05"));
}

#[test]
fn rule_9_variable_names_only_when_asked() {
    let free = EquivConfig {
        rename_variables: true,
        ..EquivConfig::default()
    };
    assert!(!eq("g(s)", "g(t)"));
    assert!(eq_with("g(s)", "g(t)", &free));
    assert!(eq_with("x^2 + y", "b + a^2", &free));
    assert!(!eq_with("x^2 + y", "a^2 + a", &free));
    assert!(!eq_with("x + 1", "t + 2", &free));
}

/// Rule 10: with `evaluated_numbers`, a number reference takes only a number written out.
#[test]
fn rule_10_evaluated_numbers_only_when_asked() {
    let strict = EquivConfig {
        evaluated_numbers: true,
        ..EquivConfig::default()
    };
    // (reference, prediction, by default, with evaluated_numbers)
    let cases: &[(&str, &str, bool, bool)] = &[
        ("91", "91", true, true),
        ("91", "91.0", true, true),
        ("91", "60 - 1 + 32", true, false),
        ("91", "60-1+32", true, false),
        ("8", "2^3", true, false),
        ("91", r"\frac{182}{2}", true, false),
        ("91", r"91 \cdot 1", true, false),
        ("-5", "-5", true, true),
        ("-5", "3 - 8", true, false),
        ("0.5", r"\frac{1}{2}", true, true),
        ("0.5", "1/2", true, true),
        ("0.5", "2/4", true, false),
        ("1/2", "0.5", true, true),
        ("50", r"50\%", true, true),
        ("92", "60 - 1 + 32", false, false),
        // A relation gives its value, which must be written out too.
        ("91", "x = 91", true, true),
        ("91", "x = 60 - 1 + 32", true, false),
        // Only number references are concerned.
        ("x + 1", "1 + x", true, true),
        (r"\sqrt{2}", r"\frac{2}{\sqrt{2}}", true, true),
    ];
    for &(gold, pred, default, evaluated) in cases {
        assert_eq!(eq(gold, pred), default, "{gold} vs {pred}");
        assert_eq!(
            eq_with(gold, pred, &strict),
            evaluated,
            "{gold} vs {pred}, evaluated"
        );
    }
}

/// (completion, extracted answer) for the extraction the new forms need.
#[test]
fn extraction_of_the_new_forms() {
    let cases: &[(&str, Option<&str>)] = &[
        (r"So $x = \boxed{2}$ and $x = \boxed{5}$.", Some("2, 5")),
        (r"\boxed{2}, \boxed{5}", Some("2, 5")),
        (r"\boxed{5} and \boxed{5}", Some("5")),
        (r"\boxed{1} first, then \boxed{2}", Some("2")),
        (r"The result is \(17\)", Some("17")),
        ("We conclude\n\\[\n17\n\\]", Some("17")),
        ("Therefore\n$$\n\\frac{1}{2}\n$$", Some("\\frac{1}{2}")),
        ("costs $5 and then $7 more, so 12", Some("12")),
        ("Final Answer: the largest k is 17.", Some("17")),
        ("The code is XQ7Z", None),
        ("there are 12 500 people", Some("12 500")),
        ("We found 12 items and the label H2O", Some("12")),
        (
            r"we get \left[ \begin{array}{cc} 1 & 2 \end{array} \right] in the end",
            Some(r"\left[ \begin{array}{cc} 1 & 2 \end{array} \right]"),
        ),
    ];
    for (completion, want) in cases {
        let got = extract(completion, DEFAULT_RULES).map(|e| e.text);
        assert_eq!(got.as_deref(), *want, "{completion:?}");
    }
}
