//! Table-driven tests of the math checker: extraction, parsing, equivalence, near misses,
//! hostile input.

use grpo_rewards::math::{ExtractRule, MathChecker, MathConfig, extract, parse_answer};
use grpo_rewards::{RewardError, VerdictKind};

/// (gold, prediction) pairs that must be judged equivalent. The prediction goes through the
/// same extraction as a completion (a bare answer is found by the last-number rule or used
/// whole when it has no marker).
const EQUAL: &[(&str, &str)] = &[
    // integers and separators
    ("18", "18"),
    ("18", "\\boxed{18}"),
    ("1000", "1,000"),
    ("1000000", "1,000,000"),
    ("1234", "1{,}234"),
    ("1234", "1\\,234"),
    ("-5", "-5"),
    ("-5", "- 5"),
    ("0", "-0"),
    ("5", "+5"),
    ("007", "7"),
    // decimals and scientific notation
    ("0.5", "\\frac{1}{2}"),
    ("0.5", ".5"),
    ("0.50", "0.5"),
    ("1.25", "\\frac{5}{4}"),
    ("1500", "1.5e3"),
    ("1500", "1.5 \\times 10^3"),
    ("1500", "1.5 \\times 10^{3}"),
    ("0.001", "10^{-3}"),
    ("0.001", "1e-3"),
    ("3.14", "3.140"),
    ("-0.25", "-\\frac14"),
    // fractions
    ("\\frac{1}{2}", "1/2"),
    ("\\frac{1}{2}", "\\dfrac{1}{2}"),
    ("\\frac{1}{2}", "\\tfrac{1}{2}"),
    ("\\frac{1}{2}", "\\frac12"),
    ("\\frac{1}{2}", "2/4"),
    ("\\frac{3}{4}", "\\frac{6}{8}"),
    ("-\\frac{3}{4}", "\\frac{-3}{4}"),
    ("-\\frac{3}{4}", "\\frac{3}{-4}"),
    ("\\frac{7}{2}", "3\\frac{1}{2}"),
    ("\\frac{7}{2}", "3 \\frac{1}{2}"),
    ("3.5", "3\\frac12"),
    ("\\frac{1}{3}", "\\frac{2}{6}"),
    ("\\frac{10}{3}", "3\\frac{1}{3}"),
    ("\\frac{a}{b}", "a/b"),
    ("\\frac{1}{2^{99}}", "2^{-99}"),
    ("\\frac{1}{2006!}", "\\frac{1}{2006!}"),
    ("\\frac{2005!}{2006!}", "\\frac{1}{2006}"),
    ("\\frac{\\frac{1}{2}}{\\frac{3}{4}}", "\\frac{2}{3}"),
    // percentages
    ("50", "50\\%"),
    ("50\\%", "50"),
    ("50\\%", "0.5"),
    ("12.5\\%", "12.5%"),
    ("25", "25 \\%"),
    // roots and powers
    ("2\\sqrt{2}", "\\sqrt{8}"),
    ("\\sqrt{2}", "2^{1/2}"),
    ("\\sqrt{2}", "\\sqrt 2"),
    ("\\sqrt{2}/2", "\\frac{1}{\\sqrt{2}}"),
    ("\\frac{\\sqrt{3}}{3}", "\\frac{1}{\\sqrt{3}}"),
    ("3", "\\sqrt{9}"),
    ("2", "\\sqrt[3]{8}"),
    ("-2", "\\sqrt[3]{-8}"),
    ("\\frac{2}{3}", "\\sqrt{\\frac{4}{9}}"),
    ("4", "2^2"),
    ("8", "2^3"),
    ("256", "2^{2^3}"),
    ("1024", "2^{10}"),
    ("1024", "2**10"),
    ("9", "3^2"),
    ("-9", "-3^2"),
    ("9", "(-3)^2"),
    ("\\frac{1}{8}", "2^{-3}"),
    ("4", "8^{2/3}"),
    ("\\sqrt{12}", "2\\sqrt{3}"),
    ("5\\sqrt{5}", "\\sqrt{125}"),
    ("3\\sqrt[3]{2}", "\\sqrt[3]{54}"),
    ("2+\\sqrt{3}", "\\sqrt{3}+2"),
    ("\\frac{1+\\sqrt{5}}{2}", "\\frac{\\sqrt{5}+1}{2}"),
    ("\\sqrt{2}+\\sqrt{3}", "\\sqrt{5+2\\sqrt{6}}"),
    // constants
    ("\\pi", "\\pi"),
    ("2\\pi", "2 \\pi"),
    ("2\\pi", "\\pi \\cdot 2"),
    ("\\frac{\\pi}{2}", "\\pi/2"),
    ("\\frac{\\pi}{2}", "0.5\\pi"),
    ("3\\pi", "\\pi+2\\pi"),
    ("e", "e"),
    ("e^2", "e \\cdot e"),
    ("1", "\\ln e"),
    ("0", "\\ln 1"),
    ("\\infty", "\\infty"),
    ("-\\infty", "-\\infty"),
    ("\\infty", "∞"),
    ("\\pi", "π"),
    // complex numbers
    ("i", "i"),
    ("-1", "i^2"),
    ("3+4i", "4i+3"),
    ("1+i", "i+1"),
    ("\\frac{1}{2}+\\frac{1}{2}i", "\\frac{1+i}{2}"),
    ("5", "|3+4i|"),
    // functions
    ("\\frac{1}{2}", "\\sin\\frac{\\pi}{6}"),
    ("\\frac{1}{2}", "\\cos(\\pi/3)"),
    ("1", "\\tan\\frac{\\pi}{4}"),
    ("0", "\\sin 0"),
    ("1", "\\sin^2 x + \\cos^2 x"),
    ("\\frac{\\pi}{4}", "\\arctan 1"),
    ("\\frac{\\pi}{6}", "\\sin^{-1}(1/2)"),
    ("3", "\\log_2 8"),
    ("3", "\\log_{2}{8}"),
    ("2", "\\log_{10} 100"),
    ("-2", "\\log_3 \\frac19"),
    ("\\ln 2", "\\log 2"),
    ("\\ln 6", "\\ln 2 + \\ln 3"),
    ("e^{2}", "\\exp(2)"),
    ("5", "|-5|"),
    ("5", "\\left|-5\\right|"),
    ("3", "\\lfloor 3.7 \\rfloor"),
    ("4", "\\lceil 3.2 \\rceil"),
    ("120", "5!"),
    ("720", "6!"),
    ("10", "\\binom{5}{2}"),
    ("10", "\\dbinom{5}{3}"),
    ("\\frac{1}{2}", "sin(pi/6)"),
    ("2", "sqrt(4)"),
    // implicit multiplication, \cdot, \times, \div
    ("6", "2 \\cdot 3"),
    ("6", "2 \\times 3"),
    ("6", "2*3"),
    ("2", "6 \\div 3"),
    ("6", "(2)(3)"),
    ("6", "2(3)"),
    ("2x", "x+x"),
    ("2x", "2 \\cdot x"),
    ("x^2", "x \\cdot x"),
    ("2xy", "2yx"),
    ("6x^2", "2x \\cdot 3x"),
    ("\\frac{x}{2}", "0.5x"),
    // algebraic equivalence with free variables
    ("x^2-1", "(x-1)(x+1)"),
    ("(x+1)^2", "x^2+2x+1"),
    ("\\frac{x^2-1}{x-1}", "x+1"),
    ("\\frac{1}{x}+\\frac{1}{y}", "\\frac{x+y}{xy}"),
    ("a^2-b^2", "(a+b)(a-b)"),
    ("2\\sin x \\cos x", "\\sin 2x"),
    ("\\sin(2x)", "2\\sin(x)\\cos(x)"),
    ("e^{x+y}", "e^x e^y"),
    ("\\ln(xy)", "\\ln x + \\ln y"),
    ("x^3", "x \\cdot x^2"),
    ("\\sqrt{x^2}", "|x|"),
    ("\\frac{n(n+1)}{2}", "\\frac{n^2+n}{2}"),
    ("3x+2", "2+3x"),
    ("2^{n+1}", "2 \\cdot 2^n"),
    ("\\alpha+\\beta", "\\beta+\\alpha"),
    ("x_1+x_2", "x_2+x_1"),
    ("\\theta", "\\theta"),
    // equations and inequalities
    ("5", "x = 5"),
    ("5", "x=5"),
    ("5", "5 = x"),
    ("x=5", "5"),
    ("y=2x+1", "y=1+2x"),
    ("y=2x+1", "2x+1"),
    ("y = 2x + 1", "2x - y + 1 = 0"),
    ("x+y=1", "y+x=1"),
    ("x+y=1", "2x+2y=2"),
    ("x > 3", "(3, \\infty)"),
    ("(3, \\infty)", "x > 3"),
    ("x \\ge 3", "[3, \\infty)"),
    ("x < 3", "(-\\infty, 3)"),
    ("1 < x \\le 2", "(1, 2]"),
    ("(1, 2]", "1 < x \\leq 2"),
    ("x > 3", "3 < x"),
    ("x \\leq 2", "x \\le 2"),
    ("[1, 2]", "x \\in [1, 2]"),
    ("x \\neq 1", "x \\ne 1"),
    ("k = 5", "k=5"),
    // sets, lists, ±
    ("\\{1, 2\\}", "\\{2, 1\\}"),
    ("\\{1, 2, 3\\}", "\\{3, 1, 2\\}"),
    ("1, 2", "2, 1"),
    ("1, 2", "\\{1, 2\\}"),
    ("\\{1, 2\\}", "1, 2"),
    ("-2, 3", "x = 3, x = -2"),
    ("-2, 3", "x = 3 \\text{ or } x = -2"),
    ("-2, 3", "x = 3 or x = -2"),
    ("2, 3", "3 and 2"),
    ("1 \\pm \\sqrt{2}", "1+\\sqrt{2}, 1-\\sqrt{2}"),
    ("1+\\sqrt{2}, 1-\\sqrt{2}", "1 \\pm \\sqrt{2}"),
    ("\\pm 3", "3, -3"),
    ("\\pm 3", "-3, 3"),
    (
        "\\frac{-1 \\pm \\sqrt{5}}{2}",
        "\\frac{-1+\\sqrt5}{2}, \\frac{-1-\\sqrt5}{2}",
    ),
    ("\\{\\frac{1}{2}, 0.25\\}", "\\{\\frac14, 0.5\\}"),
    ("\\emptyset", "\\varnothing"),
    ("\\{1\\}", "1"),
    ("1", "\\{1\\}"),
    ("\\{1, 1, 2\\}", "\\{1, 2\\}"),
    ("\\{x, 2x\\}", "\\{x+x, x\\}"),
    // intervals
    ("(1, 2)", "(1, 2)"),
    ("[1, 2)", "[1, 2)"),
    ("(0, \\frac{1}{2}]", "(0, 0.5]"),
    ("(-\\infty, 0)", "(-\\infty, 0)"),
    ("(-\\infty, \\infty)", "\\mathbb{R}"),
    (
        "(-\\infty, -1) \\cup (1, \\infty)",
        "(1, \\infty) \\cup (-\\infty, -1)",
    ),
    ("[0, 1] \\cup [2, 3]", "[2,3] \\cup [0,1]"),
    ("\\left[ 1, 2 \\right)", "[1, 2)"),
    // tuples and vectors
    ("(1, 2)", "(1,2)"),
    ("(1, 2, 3)", "(1, 2, 3)"),
    ("(\\frac{1}{2}, 3)", "(0.5, 3)"),
    ("(1, 2)", "1, 2"),
    ("(3, -1)", "\\left(3, -1\\right)"),
    ("\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "(1, 2)"),
    ("(1, 2)", "\\begin{pmatrix} 1 & 2 \\end{pmatrix}"),
    ("\\langle 1, 2 \\rangle", "(1, 2)"),
    // matrices
    (
        "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}",
        "\\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix}",
    ),
    (
        "\\begin{pmatrix} 1/2 & 0 \\\\ 0 & 1 \\end{pmatrix}",
        "\\begin{pmatrix} 0.5 & 0 \\\\ 0 & 1 \\end{pmatrix}",
    ),
    (
        "\\begin{pmatrix} \\sqrt{4} \\end{pmatrix}",
        "\\begin{pmatrix} 2 \\end{pmatrix}",
    ),
    // units, text, degrees, dollars
    ("18", "18 dollars"),
    ("18", "\\$18"),
    ("18", "$18"),
    ("18", "18 \\text{ dollars}"),
    ("5", "5\\text{ cm}"),
    ("5", "5 \\mbox{cm}"),
    ("90", "90^\\circ"),
    ("90", "90^{\\circ}"),
    ("90", "90°"),
    ("45", "45 degrees"),
    ("12", "12 \\text{apples}"),
    ("yes", "Yes"),
    ("yes", "\\text{yes}"),
    ("Tuesday", "tuesday"),
    ("no solution", "No Solution"),
    ("\\text{(B)}", "(B)"),
    ("B", "B"),
    ("B", "\\text{B}"),
    ("B", "(B)"),
    ("C", "\\textbf{C}"),
    ("even", "\\text{even}"),
    // large and exact values
    ("2^{100}", "1267650600228229401496703205376"),
    ("10^{100}", "1e100"),
    ("2006!", "2006 \\cdot 2005!"),
];

/// Pairs that must be judged *not* equivalent: near misses, wrong forms, traps.
const UNEQUAL: &[(&str, &str)] = &[
    // the near misses a float comparison gets wrong
    ("\\frac{1}{2^{99}}", "\\frac{1}{2^{98}}"),
    ("1/2^99", "1/2^98"),
    ("\\frac{1}{2004!}", "\\frac{1}{2006!}"),
    ("2^{100}", "2^{100}+1"),
    ("10^{20}", "10^{20}+1"),
    (
        "1267650600228229401496703205376",
        "1267650600228229401496703205377",
    ),
    ("0.1+0.2", "0.30000000000000004"),
    // A decimal stands for an exact value only as its rounding or truncation to the places
    // written, with three significant digits (the matching cases are in math_forms.rs).
    ("\\frac{1}{3}", "0.334"),
    ("\\frac{1}{3}", "0.3333333334"),
    ("\\frac{2}{3}", "0.67"),
    ("\\sqrt{2}", "1.415"),
    ("\\sqrt{2}", "1.41421357"),
    ("\\pi", "3.15"),
    ("\\pi", "3.14160"),
    ("\\pi", "\\frac{22}{7}"),
    ("e", "2.719"),
    ("1000001", "1000000"),
    ("0.000001", "0.0000011"),
    // wrong answers
    ("18", "19"),
    ("18", "-18"),
    ("18", "\\boxed{17}"),
    ("\\frac{1}{2}", "\\frac{1}{3}"),
    ("\\frac{1}{2}", "2"),
    ("\\frac{7}{2}", "3\\cdot\\frac{1}{2}"),
    ("2\\sqrt{2}", "\\sqrt{2}"),
    ("\\sqrt{8}", "\\sqrt{6}"),
    ("2\\pi", "\\pi"),
    ("2\\pi", "2"),
    ("i", "-i"),
    ("3+4i", "3-4i"),
    ("3+4i", "4+3i"),
    ("\\sin x", "\\cos x"),
    ("\\ln 2", "\\log_{10} 2"),
    ("120", "4!"),
    ("50\\%", "5"),
    // expressions
    ("x^2-1", "(x-1)^2"),
    ("(x+1)^2", "x^2+1"),
    ("2x", "x^2"),
    ("x+1", "y+1"),
    ("xy", "x+y"),
    ("\\sqrt{x^2}", "x"),
    ("\\frac{1}{x}", "x"),
    ("a-b", "b-a"),
    ("2^n", "n^2"),
    ("\\sin(2x)", "2\\sin x"),
    // equations and inequalities
    ("x > 3", "x \\ge 3"),
    ("x > 3", "[3, \\infty)"),
    ("x > 3", "x < 3"),
    ("1 < x \\le 2", "[1, 2]"),
    ("y=2x+1", "y=2x-1"),
    ("x = 5", "x = 6"),
    ("5", "x = 6"),
    ("x+y=1", "x+y=2"),
    // sets, tuples, intervals
    ("\\{1, 2\\}", "\\{1, 3\\}"),
    ("\\{1, 2\\}", "\\{1, 2, 3\\}"),
    ("\\{1, 2, 3\\}", "\\{1, 2\\}"),
    ("1, 2", "1"),
    ("1", "1, 2"),
    ("(1, 2)", "(2, 1)"),
    ("(1, 2, 3)", "(1, 2)"),
    ("(1, 2)", "[1, 2]"),
    ("[1, 2)", "[1, 2]"),
    ("(1, 2]", "(1, 2)"),
    ("(0, 1)", "(0, 2)"),
    ("(-\\infty, 0)", "(0, \\infty)"),
    ("\\infty", "-\\infty"),
    ("(1, \\infty) \\cup (-\\infty, -1)", "(1, \\infty)"),
    ("1 \\pm \\sqrt{2}", "1+\\sqrt{2}"),
    ("\\pm 3", "3"),
    ("\\emptyset", "\\{0\\}"),
    (
        "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}",
        "\\begin{pmatrix} 1 & 3 \\\\ 2 & 4 \\end{pmatrix}",
    ),
    (
        "\\begin{pmatrix} 1 & 2 \\end{pmatrix}",
        "\\begin{pmatrix} 1 \\\\ 2 \\\\ 3 \\end{pmatrix}",
    ),
    // text and letters
    ("yes", "no"),
    ("B", "C"),
    ("(B)", "(D)"),
    ("Tuesday", "Wednesday"),
    ("even", "odd"),
    // huge values compare structurally, never as two infinities
    ("10^{10^{10}}", "10^{10^{10}}+1"),
    ("2^{100000}", "2^{100001}"),
    ("10^{10^{10}}", "10^{10^{11}}"),
    ("100000!", "100001!"),
    // no answer / garbage
    ("5", ""),
    ("5", "I don't know"),
    ("5", "\\boxed{}"),
];

#[test]
fn equal_pairs_are_equal() {
    let checker = MathChecker::default();
    let mut failures = Vec::new();
    for (gold, pred) in EQUAL {
        let c = checker.check(gold, pred);
        if !c.correct {
            failures.push(format!(
                "{gold:?} vs {pred:?}: {:?} {}",
                c.extracted, c.verdict.reason
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        EQUAL.len(),
        failures.join("\n")
    );
}

#[test]
fn unequal_pairs_are_unequal() {
    let checker = MathChecker::default();
    let mut failures = Vec::new();
    for (gold, pred) in UNEQUAL {
        let c = checker.check(gold, pred);
        if c.correct {
            failures.push(format!("{gold:?} vs {pred:?}: {:?}", c.extracted));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} wrongly equal:\n{}",
        failures.len(),
        UNEQUAL.len(),
        failures.join("\n")
    );
}

#[test]
fn equivalence_is_symmetric_on_value_pairs() {
    // Equality of values does not depend on which side is the reference.
    let checker = MathChecker::default();
    for (a, b) in EQUAL.iter().filter(|(a, b)| {
        !a.contains('=')
            && !b.contains('=')
            && !a.contains('<')
            && !a.contains('>')
            && !b.contains(" or ")
            && !b.contains(" and ")
            && !b.contains("\\text")
            && !b.contains("dollars")
            && !b.contains("degrees")
            && !b.contains('%')
            && !a.contains('%')
            && !b.contains("mbox")
    }) {
        assert!(checker.check(b, a).correct, "{b:?} as reference vs {a:?}");
    }
}

/// (completion, extracted answer) with the default rules.
const EXTRACTION: &[(&str, Option<&str>)] = &[
    ("So the answer is \\boxed{42}.", Some("42")),
    ("\\boxed{1} first, then \\boxed{2}", Some("2")),
    ("\\boxed{\\frac{1}{2}}", Some("\\frac{1}{2}")),
    ("$\\boxed{\\{1,2\\}}$", Some("\\{1,2\\}")),
    ("\\fbox{7}", Some("7")),
    ("the value \\boxed 5 is", Some("5")),
    (
        "Janet has 16 eggs... she makes 9 * 2 = $18 every day.\n#### 18",
        Some("18"),
    ),
    ("#### 1,000", Some("1,000")),
    ("#### -7\n", Some("-7")),
    ("<think>2+2</think><answer>4</answer>", Some("4")),
    ("<think>\\boxed{3}</think><answer>5</answer>", Some("5")),
    ("<answer>\\boxed{6}</answer>", Some("6")),
    ("<answer> The answer is 8. </answer>", Some("8")),
    ("<answer>$x = 2$</answer>", Some("x = 2")),
    ("The answer is 12.", Some("12")),
    ("The answer is $\\frac{3}{4}$.", Some("\\frac{3}{4}")),
    ("Therefore, the final answer is: 7", Some("7")),
    ("Final Answer: 3.5", Some("3.5")),
    ("We find 3 apples and then 5 pears.", Some("5")),
    ("It costs 1,234.50 dollars", Some("1,234.50")),
    ("the result is -3", Some("-3")),
    ("there are no numbers in this sentence", None),
    ("", None),
    ("\\boxed{unbalanced", None),
    ("<answer></answer>", None),
    ("\\boxed{5\\text{ cm}}", Some("5")),
    ("\\boxed{90^\\circ}", Some("90")),
    ("\\boxed{\\$18}", Some("18")),
    ("\\boxed{\\text{(B)}}", Some("(B)")),
    ("\\[\\boxed{x=3}\\]", Some("x=3")),
    ("The answer is \\(\\sqrt{2}\\).", Some("\\sqrt{2}")),
    (
        "\\boxed{\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}}",
        Some("\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}"),
    ),
    (
        "\\boxed{\\left( 1, 2 \\right]}",
        Some("\\left( 1, 2 \\right]"),
    ),
];

#[test]
fn extraction_table() {
    let rules = grpo_rewards::math::DEFAULT_RULES;
    for (completion, want) in EXTRACTION {
        let got = extract(completion, rules).map(|e| e.text);
        assert_eq!(got.as_deref(), *want, "{completion:?}");
    }
}

#[test]
fn extraction_priority_is_configurable() {
    let text = "<answer>5</answer> but \\boxed{3}";
    assert_eq!(
        extract(text, &[ExtractRule::AnswerTag, ExtractRule::Boxed])
            .unwrap()
            .text,
        "5"
    );
    assert_eq!(
        extract(text, &[ExtractRule::Boxed, ExtractRule::AnswerTag])
            .unwrap()
            .text,
        "3"
    );
    // Without the last-number rule, a bare number is not an answer.
    let strict = MathChecker::new(MathConfig {
        rules: vec![ExtractRule::Boxed],
        ..Default::default()
    })
    .unwrap();
    let c = strict.check("5", "it is 5");
    assert!(!c.correct);
    assert_eq!(c.verdict.kind, VerdictKind::NoAnswer);
    assert!(
        MathChecker::new(MathConfig {
            rules: vec![],
            ..Default::default()
        })
        .is_err()
    );
}

#[test]
fn gsm8k_solutions_extract_and_check() {
    let gold = "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\nNatalia sold 48+24 = <<48+24=72>>72 clips altogether in April and May.\n#### 72";
    let checker = MathChecker::default();
    assert!(checker.check(gold, "She sold 72 clips.\n#### 72").correct);
    assert!(checker.check(gold, "The answer is 72.").correct);
    assert!(!checker.check(gold, "#### 71").correct);
    assert!(checker.check("#### 18", "\\boxed{18}").correct);
}

#[test]
fn alternatives_are_accepted() {
    let checker = MathChecker::default();
    let gold = checker.prepare(
        "\\frac{1}{2}",
        &["50\\%".to_string(), "one half".to_string()],
    );
    assert!(checker.check_prepared(&gold, "\\boxed{0.5}").correct);
    assert!(
        checker
            .check_prepared(&gold, "The answer is one half.")
            .correct
    );
    assert!(!checker.check_prepared(&gold, "\\boxed{0.4}").correct);
}

#[test]
fn verdict_kinds() {
    let checker = MathChecker::default();
    assert_eq!(
        checker.check("5", "\\boxed{5}").verdict.kind,
        VerdictKind::Correct
    );
    assert_eq!(
        checker.check("5", "\\boxed{6}").verdict.kind,
        VerdictKind::WrongAnswer
    );
    assert_eq!(
        checker.check("5", "I have no idea at all").verdict.kind,
        VerdictKind::NoAnswer
    );
    let c = checker.check("5", "\\boxed{5 @@ #}");
    assert_eq!(c.verdict.kind, VerdictKind::Unparsable);
    assert_eq!(c.extracted.as_deref(), Some("5 @@ #"));
}

/// Parse results for hostile inputs: an error or a tree, never a panic, and quickly (the
/// caps make every case linear; no timing is asserted).
#[test]
fn hostile_inputs_return() {
    let long = "1+".repeat(600_000) + "1";
    let deep_braces = "{".repeat(100_000) + &"}".repeat(100_000);
    let deep_frac = "\\frac{".repeat(10_000) + "1";
    let unbalanced = "\\boxed{".repeat(50_000);
    let cases: Vec<String> = vec![
        long.clone(),
        deep_braces.clone(),
        deep_frac,
        unbalanced.clone(),
        "10^{10^{10}}".into(),
        "10^10^10".into(),
        "(10^{10})!".into(),
        "2^{2^{2^{2^{2^{2}}}}}".into(),
        "\\sqrt[10^{10}]{2}".into(),
        "e^{10^{10}}".into(),
        "\\frac{1}{0}".into(),
        "0^{-1}".into(),
        "\\log_1 5".into(),
        "\\ln 0".into(),
        "\\infty - \\infty".into(),
        "((((((((((((((((((((".into(),
        "))))))))".into(),
        "\\\\\\\\".into(),
        "\\".into(),
        "$".into(),
        "\u{0}\u{1}\u{7f}".into(),
        "ℵ₀".into(),
        "1e999999999999999999".into(),
        "9".repeat(100_000),
        "0.".to_string() + &"0".repeat(3000) + "1",
    ];
    let checker = MathChecker::default();
    for s in &cases {
        let _ = parse_answer(s);
        let c = checker.check(s, s);
        let _ = checker.check("5", &format!("\\boxed{{{s}}}"));
        let _ = c;
    }
    assert!(matches!(
        parse_answer(&long),
        Err(RewardError::InputTooLong { .. })
    ));
    assert!(!checker.check("10^{10^{10}}", "10^{10^{10}} + 1").correct);
    assert!(checker.check("10^{10^{10}}", "10^{10^{10}}").correct);
    let huge_completion = "x".repeat(2_000_000) + " \\boxed{5}";
    assert!(checker.check("5", &huge_completion).correct);
    assert_eq!(
        checker.check("5", &unbalanced).verdict.kind,
        VerdictKind::NoAnswer
    );
}
