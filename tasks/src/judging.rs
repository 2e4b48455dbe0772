//! How a code task's output is judged: comparison modes, checker programs (special judges)
//! and the test plan (hidden versus public tests, stop at the first failure, sampling).
//!
//! These are schema types; the sandbox (`grpo-sandbox`) runs them.
//!
//! ```
//! use grpo_tasks::judging::{Compare, CompareMode};
//! // A testlib checker name is accepted where a mode is: `rcmp6` is tokens within 1e-6.
//! let c: Compare = serde_json::from_str(r#""rcmp6""#).unwrap();
//! assert_eq!(c.mode, CompareMode::Tokens);
//! assert_eq!(c.abs_tol, Some(1e-6));
//! let c: Compare = serde_json::from_str(r#"{"mode": "unordered_lines", "case_insensitive": true}"#).unwrap();
//! assert!(c.case_insensitive);
//! ```

use serde::{Deserialize, Serialize};

use crate::task::Language;

/// How a program's stdout is compared with the expected output.
///
/// Written in a task as a mode name (`"tokens"`), as one of testlib's common checker names
/// (`"wcmp"`, `"lcmp"`, `"fcmp"`, `"ncmp"`, `"hcmp"`, `"rcmp4"`, `"rcmp6"`, `"rcmp9"`,
/// `"yesno"`, `"nyesno"`, `"uncmp"`), or as an object with the fields below.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(try_from = "CompareSpec", into = "CompareSpec")]
pub struct Compare {
    /// What is compared.
    pub mode: CompareMode,
    /// Tokens that both parse as finite numbers match when they differ by at most this.
    pub abs_tol: Option<f64>,
    /// Tokens that both parse as finite numbers match when they differ by at most this times
    /// the expected value's magnitude.
    pub rel_tol: Option<f64>,
    /// Letters compare without case (`YES` = `yes`).
    pub case_insensitive: bool,
}

/// What a comparison looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompareMode {
    /// Line by line, each line as its whitespace-separated tokens; trailing empty lines are
    /// ignored (the default, and testlib's `lcmp`).
    #[default]
    Lines,
    /// The whitespace-separated tokens, wherever the line breaks fall (testlib's `wcmp`).
    Tokens,
    /// Line by line, exact except for trailing whitespace (spaces, tabs, `\r`) on each line and
    /// trailing empty lines.
    TrimmedLines,
    /// Line by line, each expected line exactly (trailing spaces count; a `\r` before the `\n`
    /// does not); the expected text's last line is not compared when empty, and what follows
    /// the expected lines in the output may only be whitespace (testlib's `fcmp`).
    ExactLines,
    /// Byte for byte.
    Exact,
    /// The lines as a multiset (each line as its tokens): any order of the expected lines.
    UnorderedLines,
    /// The tokens as a multiset: any order of the expected tokens (testlib's `uncmp`).
    UnorderedTokens,
}

impl CompareMode {
    /// The mode's name in a task.
    pub fn name(self) -> &'static str {
        match self {
            CompareMode::Lines => "lines",
            CompareMode::Tokens => "tokens",
            CompareMode::TrimmedLines => "trimmed_lines",
            CompareMode::ExactLines => "exact_lines",
            CompareMode::Exact => "exact",
            CompareMode::UnorderedLines => "unordered_lines",
            CompareMode::UnorderedTokens => "unordered_tokens",
        }
    }
}

impl Compare {
    /// Whether this is the default comparison (whitespace-normalised lines, exact tokens).
    pub fn is_default(&self) -> bool {
        *self == Compare::default()
    }

    /// The comparison testlib's checker `name` performs, if it is one of the common ones.
    pub fn testlib(name: &str) -> Option<Compare> {
        let tokens = |tol: Option<f64>| Compare {
            mode: CompareMode::Tokens,
            abs_tol: tol,
            rel_tol: tol,
            case_insensitive: false,
        };
        Some(match name {
            "lcmp" => Compare::default(),
            "wcmp" | "ncmp" | "hcmp" => tokens(None),
            "fcmp" => Compare {
                mode: CompareMode::ExactLines,
                ..Compare::default()
            },
            "rcmp4" => tokens(Some(1e-4)),
            "rcmp" | "rcmp6" => tokens(Some(1e-6)),
            "rcmp9" => tokens(Some(1e-9)),
            "yesno" | "nyesno" => Compare {
                case_insensitive: true,
                ..tokens(None)
            },
            "uncmp" => Compare {
                mode: CompareMode::UnorderedTokens,
                ..Compare::default()
            },
            _ => return None,
        })
    }

    /// The comparison of DeepMind CodeContests' own tester (`OutputsMatch` in
    /// [`execution/tester_sandboxer.cc`](https://github.com/google-deepmind/code_contests/blob/main/execution/tester_sandboxer.cc)):
    /// the whitespace-split tokens, wherever the line breaks fall, without case, two numbers
    /// matching within 1e-5 (absolute).
    pub fn code_contests() -> Compare {
        Compare {
            mode: CompareMode::Tokens,
            abs_tol: Some(1e-5),
            rel_tol: None,
            case_insensitive: true,
        }
    }

    /// The comparison of LiveCodeBench's own grader (`grade_stdio` in
    /// [`lcb_runner/evaluation/testing_util.py`](https://github.com/LiveCodeBench/LiveCodeBench/blob/main/lcb_runner/evaluation/testing_util.py)):
    /// line by line, a line that differs matching when its tokens are numbers of the same
    /// value (`1.0` = `1`). Closest here: whitespace-normalised lines, numbers within 0.
    pub fn live_code_bench() -> Compare {
        Compare {
            abs_tol: Some(0.0),
            ..Compare::default()
        }
    }

    /// Checks the tolerances.
    pub fn validate(&self) -> Result<(), String> {
        for (name, tol) in [("abs_tol", self.abs_tol), ("rel_tol", self.rel_tol)] {
            if let Some(t) = tol
                && !(t.is_finite() && t >= 0.0)
            {
                return Err(format!("{name} must be a finite number >= 0, got {t}"));
            }
        }
        let tolerant = self.abs_tol.is_some() || self.rel_tol.is_some();
        match self.mode {
            CompareMode::Exact if tolerant || self.case_insensitive => {
                Err("mode `exact` compares bytes: it takes no tolerance or case rule".into())
            }
            CompareMode::TrimmedLines
            | CompareMode::ExactLines
            | CompareMode::UnorderedLines
            | CompareMode::UnorderedTokens
                if tolerant =>
            {
                Err(format!(
                    "mode `{}` takes no numeric tolerance (use `lines` or `tokens`)",
                    self.mode.name()
                ))
            }
            _ => Ok(()),
        }
    }
}

/// The serialized form of [`Compare`]: a name or an object.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum CompareSpec {
    Name(String),
    Fields(CompareFields),
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CompareFields {
    #[serde(default)]
    mode: CompareMode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    abs_tol: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rel_tol: Option<f64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    case_insensitive: bool,
}

impl TryFrom<CompareSpec> for Compare {
    type Error = String;

    fn try_from(spec: CompareSpec) -> Result<Compare, String> {
        let compare = match spec {
            CompareSpec::Name(name) => {
                let mode: Result<CompareMode, _> =
                    serde_json::from_value(serde_json::Value::String(name.clone()));
                match (mode, Compare::testlib(&name)) {
                    (Ok(mode), _) => Compare {
                        mode,
                        ..Compare::default()
                    },
                    (Err(_), Some(compare)) => compare,
                    (Err(_), None) => {
                        return Err(format!(
                            "unknown comparison {name:?}: expected one of lines, tokens, \
                             trimmed_lines, exact_lines, exact, unordered_lines, unordered_tokens, or a \
                             testlib checker (wcmp, lcmp, fcmp, ncmp, hcmp, rcmp4, rcmp6, \
                             rcmp9, yesno, nyesno, uncmp)"
                        ));
                    }
                }
            }
            CompareSpec::Fields(f) => Compare {
                mode: f.mode,
                abs_tol: f.abs_tol,
                rel_tol: f.rel_tol,
                case_insensitive: f.case_insensitive,
            },
        };
        compare.validate()?;
        Ok(compare)
    }
}

impl From<Compare> for CompareSpec {
    fn from(c: Compare) -> CompareSpec {
        CompareSpec::Fields(CompareFields {
            mode: c.mode,
            abs_tol: c.abs_tol,
            rel_tol: c.rel_tol,
            case_insensitive: c.case_insensitive,
        })
    }
}

/// A checker program (special judge): decides whether the candidate's output is right for a
/// test, given the test's input and the expected output. It runs in the sandbox with its own
/// limits; a checker that crashes, times out or answers outside its contract is a fault of
/// the task, never a reward.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checker {
    /// The checker's language (`python`, `c` or `cpp`).
    pub language: Language,
    /// Its source.
    pub source: String,
    /// How it is called and how its answer is read.
    #[serde(default)]
    pub protocol: CheckerProtocol,
    /// CPU time limit of one checker run (default 10 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_limit_ms: Option<u64>,
    /// Memory cap of one checker run (default 512 MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
}

/// The calling convention of a checker. The three files lie in the checker's working
/// directory: `input.txt` (the test's input), `output.txt` (the candidate's output) and
/// `answer.txt` (the expected output).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckerProtocol {
    /// testlib's: `checker input.txt output.txt answer.txt`; exit code 0 accepted, 1 wrong
    /// answer, 2 presentation error, 3 checker failure, 4 (`dirt`) and 8 (unexpected end of
    /// file) wrong, 7 partial points (`points X` with `0 <= X <= 1` in its output), `50 + n`
    /// partially correct (`n` percent).
    #[default]
    Testlib,
    /// open-r1's Codeforces checkers: `checker input.txt answer.txt output.txt`; it exits 0
    /// and prints a score last (1 accepted, 0 not, or a fraction between).
    Codeforces,
}

/// Which tests decide the reward and how they run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestPlan {
    /// Whether the public cases decide the reward next to the hidden ones.
    #[serde(default, skip_serializing_if = "PublicTests::is_default")]
    pub public_tests: PublicTests,
    /// Stop at the first failing test (the tests after it count as failed, unrun). Cheaper
    /// under binary credit; tests run in order, a few at a time.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stop_at_first_failure: bool,
    /// Run at most this many of the deciding tests per scoring call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tests: Option<usize>,
    /// How `max_tests` are chosen.
    #[serde(default, skip_serializing_if = "is_default_sample")]
    pub sample: SampleRule,
    /// The seed of [`SampleRule::Random`] (mixed with the scoring call's own seed, if any).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seed: u64,
}

impl TestPlan {
    /// Whether this is the default plan (every deciding test, all of them run).
    pub fn is_default(&self) -> bool {
        *self == TestPlan::default()
    }
}

/// Whether a task's public cases (the examples its prompt may show) decide its reward. This is
/// the one rule for the whole schema: [`select_tests`] applies it to stdio and call tests
/// alike. Importers set [`PublicTests::Always`] where the data set's own evaluator grades on
/// the public cases too (LiveCodeBench, CodeContests).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PublicTests {
    /// Only when the task has no hidden case: hidden cases decide when there are any, else
    /// the public ones do (the default).
    #[default]
    IfNoHidden,
    /// Always: every case decides, public and hidden.
    Always,
}

impl PublicTests {
    /// Whether this is the default rule.
    pub fn is_default(&self) -> bool {
        *self == PublicTests::default()
    }
}

/// How a [`TestPlan`] picks `max_tests` tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SampleRule {
    /// A seeded random subset, kept in the tests' order.
    #[default]
    Random,
    /// The tests with the longest inputs (DeepCoder's rule), kept in order.
    Longest,
    /// The first tests.
    First,
}

fn is_default_sample(rule: &SampleRule) -> bool {
    *rule == SampleRule::default()
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Picks the indices of the tests to run among `count`, `public[i]` telling which are public
/// (shown in the prompt) and `input_len(i)` the size of test `i`'s input. Public tests decide
/// the reward as [`TestPlan::public_tests`] says: by default only when no hidden one exists.
/// `call_seed` varies a random sample per call.
pub fn select_tests(
    plan: &TestPlan,
    public: &[bool],
    input_len: impl Fn(usize) -> usize,
    call_seed: Option<u64>,
) -> Vec<usize> {
    let any_hidden = public.iter().any(|p| !p);
    let public_decide = match plan.public_tests {
        PublicTests::IfNoHidden => !any_hidden,
        PublicTests::Always => true,
    };
    let mut chosen: Vec<usize> = (0..public.len())
        .filter(|&i| public_decide || !public[i])
        .collect();
    let Some(max) = plan.max_tests else {
        return chosen;
    };
    if chosen.len() <= max {
        return chosen;
    }
    match plan.sample {
        SampleRule::First => chosen.truncate(max),
        SampleRule::Longest => {
            // Stable: among equal lengths the earlier test wins.
            let mut by_len = chosen.clone();
            by_len.sort_by_key(|&i| std::cmp::Reverse(input_len(i)));
            by_len.truncate(max);
            by_len.sort_unstable();
            chosen = by_len;
        }
        SampleRule::Random => {
            // A partial Fisher-Yates shuffle under splitmix64: the same seed gives the same
            // subset on every machine.
            let mut state = plan.seed ^ call_seed.unwrap_or(0).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let mut next = move || {
                state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = state;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^ (z >> 31)
            };
            for k in 0..max {
                let j = k + (next() % (chosen.len() - k) as u64) as usize;
                chosen.swap(k, j);
            }
            chosen.truncate(max);
            chosen.sort_unstable();
        }
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_objects_parse() {
        let c: Compare = serde_json::from_str(r#""tokens""#).unwrap();
        assert_eq!(c.mode, CompareMode::Tokens);
        let c: Compare = serde_json::from_str(r#""yesno""#).unwrap();
        assert!(c.case_insensitive);
        let c: Compare = serde_json::from_str(r#"{"abs_tol": 0.5}"#).unwrap();
        assert_eq!(
            (c.mode, c.abs_tol, c.rel_tol),
            (CompareMode::Lines, Some(0.5), None)
        );
        let err = serde_json::from_str::<Compare>(r#""fuzzy""#).unwrap_err();
        assert!(err.to_string().contains("unknown comparison"), "{err}");
        assert!(serde_json::from_str::<Compare>(r#"{"mode": "tokens", "tol": 1}"#).is_err());
        assert!(serde_json::from_str::<Compare>(r#"{"abs_tol": -1}"#).is_err());
        assert!(serde_json::from_str::<Compare>(r#"{"mode": "exact", "rel_tol": 1e-6}"#).is_err());
        assert!(
            serde_json::from_str::<Compare>(r#"{"mode": "unordered_lines", "abs_tol": 1}"#)
                .is_err()
        );
    }

    #[test]
    fn compare_round_trips() {
        for text in [r#""rcmp9""#, r#""uncmp""#, r#"{"mode": "exact"}"#] {
            let c: Compare = serde_json::from_str(text).unwrap();
            let back: Compare = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
            assert_eq!(c, back);
        }
    }

    #[test]
    fn hidden_tests_decide_when_there_are_any() {
        let plan = TestPlan::default();
        assert_eq!(
            select_tests(&plan, &[true, false, false], |_| 0, None),
            [1, 2]
        );
        assert_eq!(select_tests(&plan, &[true, true], |_| 0, None), [0, 1]);
        assert_eq!(select_tests(&plan, &[], |_| 0, None), Vec::<usize>::new());
    }

    #[test]
    fn a_plan_can_count_public_tests_too() {
        let plan: TestPlan = serde_json::from_str(r#"{"public_tests": "always"}"#).unwrap();
        assert_eq!(plan.public_tests, PublicTests::Always);
        assert_eq!(
            select_tests(&plan, &[true, false, false], |_| 0, None),
            [0, 1, 2]
        );
        assert_eq!(select_tests(&plan, &[true, true], |_| 0, None), [0, 1]);
        // Sampling draws from every deciding test, the public ones included.
        let first = TestPlan {
            max_tests: Some(2),
            sample: SampleRule::First,
            ..plan.clone()
        };
        assert_eq!(
            select_tests(&first, &[true, false, false], |_| 0, None),
            [0, 1]
        );
        // The default is left out when written, and an unknown rule is refused.
        assert_eq!(serde_json::to_string(&TestPlan::default()).unwrap(), "{}");
        assert!(serde_json::from_str::<TestPlan>(r#"{"public_tests": "sometimes"}"#).is_err());
    }

    #[test]
    fn code_contests_comparison_is_its_testers() {
        let c = Compare::code_contests();
        assert_eq!(c.validate(), Ok(()));
        assert_eq!(
            (c.mode, c.abs_tol, c.rel_tol, c.case_insensitive),
            (CompareMode::Tokens, Some(1e-5), None, true)
        );
    }

    #[test]
    fn samples_are_seeded_ordered_and_distinct() {
        let public = vec![false; 100];
        let plan = TestPlan {
            max_tests: Some(7),
            seed: 42,
            ..TestPlan::default()
        };
        let a = select_tests(&plan, &public, |_| 0, None);
        assert_eq!(a, select_tests(&plan, &public, |_| 0, None));
        assert_eq!(a.len(), 7);
        assert!(a.windows(2).all(|w| w[0] < w[1]), "{a:?}");
        let b = select_tests(&plan, &public, |_| 0, Some(1));
        assert_ne!(a, b, "another call seed draws another subset");
        // Every test is reachable: over many call seeds each index is drawn.
        let mut seen = [false; 100];
        for s in 0..200 {
            for i in select_tests(&plan, &public, |_| 0, Some(s)) {
                seen[i] = true;
            }
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn longest_and_first() {
        let public = vec![false; 5];
        let lens = [3, 9, 1, 9, 4];
        let plan = TestPlan {
            max_tests: Some(3),
            sample: SampleRule::Longest,
            ..TestPlan::default()
        };
        assert_eq!(select_tests(&plan, &public, |i| lens[i], None), [1, 3, 4]);
        let plan = TestPlan {
            sample: SampleRule::First,
            ..plan
        };
        assert_eq!(select_tests(&plan, &public, |i| lens[i], None), [0, 1, 2]);
    }
}
