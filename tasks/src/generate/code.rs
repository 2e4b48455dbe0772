//! `code`: small Python function-writing problems with call or stdin/stdout tests.
//!
//! Every problem is one short sentence whose single-digit constants fix the behaviour, and its
//! reference is one line. The built-in `pyfunc` pack trains a 109k-parameter character-level
//! model on them (supervised warm-up on the references, then GRPO with sandbox rewards), so
//! prompts stay within 70 characters and the wording repeats across problems.
//!
//! | family | problems | example prompt | reference |
//! |---|---|---|---|
//! | `linear` | `x*a+b`, `x*a-b`, `(x+a)*b`, `(x-a)*b`, `x*x+a`, `(x+a)*b+c`, `(x*a+b)*c`, `x*a+y*b`, `x*a-y*b` | `Write f(x) that returns x times 3 plus 1.` | `def f(x): return x*3+1` |
//! | `conditional` | `a if x>b else c`, `x if x>a else b`, `x>a`, `max`, `min`, `abs` (comparisons `>` `<` `>=` `<=` `==`) | `Write f(x) that returns 7 if x is above 4, else 2.` | `def f(x): return 7 if x>4 else 2` |
//! | `list` | filtered sum (plus a constant), count and list; each item plus, minus or times a constant; `max`/`min`/`sum`/`len` plus, minus or times a constant | `Write f(a) that returns the sum of the items of a above 4.` | `def f(a): return sum(v for v in a if v>4)` |
//! | `string` | repeat, slices, length, digits added, inserted, replaced, removed or counted, starts/ends with, contains, index | `Write f(s) that returns s without its first 2 characters.` | `def f(s): return s[2:]` |
//! | `modulo` | `x%a`, divisibility, `x%a==b`, `x//a`, `a if x%b==0 else c`, `x%a+b`, `(x+a)%b`, `x*a%b`, `x%a*b`, `x//a+b`, `(x+a)%b+c` | `Write f(x) that returns x mod 3.` | `def f(x): return x%3` |
//! | `stdio` | read an integer and print a linear or modulo expression of it, or read a line and print it repeated or its length plus a constant | `Read an integer n and print n plus 5.` | `print(int(input())+5)` |
//!
//! A family is drawn uniformly, then one of its kinds (`x*a+b`, `(x+a)*b`, …) with weight
//! proportional to its number of problems, capped at 100, then one problem of the kind: no
//! single-constant kind is drawn over and over, and no family runs out of problems before a
//! 2000/200 split is drawn (each has more than 800). Booleans are asked for as "whether …"
//! (`Write f(x) that returns whether x is divisible by 3.` → `x%3==0`).
//!
//! Tests have 4 to 6 cases whose expected values are computed here with Python's semantics
//! (`%` and `//` round toward negative infinity, slices clamp), on arguments chosen so that a
//! wrong constant or a wrong operator fails at least one case (a unit test checks this for
//! every problem the generator can draw). `metadata.plan` is a short worked plan (`x*3+1`, `sum a>4`) for
//! the `<think>` part of a warm-up solution.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

use super::Draft;
use crate::error::GenerateError;
use crate::task::{
    CallCase, CallTests, CodeMode, CodeTask, CodeTests, Language, StdioCase, StdioTests, Task,
};

/// A family of `code` problems (see the module table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CodeFamily {
    /// Linear expressions of `x` (or `x` and `y`).
    Linear,
    /// A comparison of `x` with a constant picks the result.
    Conditional,
    /// Sums, counts, filters and maps over a list of integers.
    List,
    /// Slices, repeats and digit edits of a string.
    String,
    /// Remainders, floor division and divisibility.
    Modulo,
    /// A whole program: read stdin, print the result.
    Stdio,
}

impl CodeFamily {
    /// Every family, in the module table's order.
    pub const ALL: [CodeFamily; 6] = [
        CodeFamily::Linear,
        CodeFamily::Conditional,
        CodeFamily::List,
        CodeFamily::String,
        CodeFamily::Modulo,
        CodeFamily::Stdio,
    ];

    /// The lowercase name, as in `metadata.family`.
    pub fn as_str(self) -> &'static str {
        match self {
            CodeFamily::Linear => "linear",
            CodeFamily::Conditional => "conditional",
            CodeFamily::List => "list",
            CodeFamily::String => "string",
            CodeFamily::Modulo => "modulo",
            CodeFamily::Stdio => "stdio",
        }
    }

    /// The problem shapes of the family.
    fn kinds(self) -> &'static [Kind] {
        use Kind::*;
        match self {
            CodeFamily::Linear => &[
                MulAdd, MulSub, AddMul, SubMul, Square, TwoAdd, TwoSub, AddMulAdd, MulAddMul,
            ],
            CodeFamily::Conditional => &[IfElse, KeepIf, Test, Larger, Smaller, Distance],
            CodeFamily::List => &[
                SumIf, CountIf, Filter, FilterMap, Map, Largest, Smallest, Total, Length,
                SumIfPlus, MapMulAdd,
            ],
            CodeFamily::String => &[
                Repeat,
                DropFirst,
                DropLast,
                First,
                Last,
                Trim,
                StrLen,
                Append,
                Prepend,
                Replace,
                Count,
                Starts,
                Ends,
                CharAt,
                Between,
                RepeatAppend,
                FirstRepeat,
                CountPlus,
                LenCmp,
                Contains,
                Remove,
                Insert,
                Substr,
            ],
            CodeFamily::Modulo => &[
                Mod,
                Divisible,
                ModIs,
                FloorDiv,
                DivisibleIf,
                ModPlus,
                AddMod,
                TimesMod,
                ModTimes,
                FloorDivPlus,
                AddModPlus,
            ],
            CodeFamily::Stdio => &[
                ReadMulAdd,
                ReadMulSub,
                ReadAddMul,
                ReadAddMulAdd,
                ReadMulAddMul,
                ReadSubMul,
                ReadApply,
                ReadMod,
                ReadModPlus,
                ReadRepeat,
                ReadLength,
            ],
        }
    }
}

impl fmt::Display for CodeFamily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for CodeFamily {
    type Err = GenerateError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CodeFamily::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| GenerateError::Setting {
                field: "families",
                message: format!(
                    "unknown family `{s}` (linear, conditional, list, string, modulo or stdio)"
                ),
            })
    }
}

/// Settings of the `code` generator.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeSettings {
    /// The families to draw from, each equally often (default: all).
    pub families: Vec<CodeFamily>,
}

impl Default for CodeSettings {
    fn default() -> Self {
        CodeSettings {
            families: CodeFamily::ALL.to_vec(),
        }
    }
}

impl CodeSettings {
    pub(crate) fn check(&self) -> Result<(), GenerateError> {
        if self.families.is_empty() {
            return Err(GenerateError::Setting {
                field: "families",
                message: "no family is on: name at least one".into(),
            });
        }
        for (i, family) in self.families.iter().enumerate() {
            if self.families[..i].contains(family) {
                return Err(GenerateError::Setting {
                    field: "families",
                    message: format!("`{family}` is listed twice"),
                });
            }
        }
        Ok(())
    }
}

/// Draws one problem: a family, then one of its kinds (weighted by how many problems the kind
/// has, up to `KIND_WEIGHT_CAP`, so that small kinds are not drawn over and over), then one
/// problem of the kind. `None` only if a kind had no problem, which the tests rule out.
pub(crate) fn draw(settings: &CodeSettings, seed: u64, rng: &mut ChaCha8Rng) -> Option<Draft> {
    let family = *settings.families.choose(rng)?;
    let kind = *family
        .kinds()
        .choose_weighted(rng, |&kind| kind.weight())
        .ok()?;
    let shape = *kind.shapes().choose(rng)?;
    let tests = shape.tests()?;
    let key = format!("{shape:?}");
    Some(Draft {
        key,
        build: Box::new(move |id| {
            let metadata = json!({
                "source": "grpo-tasks generate code",
                "license": "Apache-2.0",
                "family": family.as_str(),
                "plan": shape.plan(),
                "seed": seed,
            });
            Task::Code(CodeTask {
                id,
                prompt: shape.prompt(),
                language: Language::Python,
                mode: CodeMode::Full,
                tests,
                reference: Some(shape.reference()),
                time_limit_ms: None,
                memory_mb: None,
                metadata: metadata.as_object().cloned(),
            })
        }),
    })
}

/// A comparison with a constant, in words and in Python.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Cmp {
    Above,
    Below,
    AtLeast,
    AtMost,
    Equal,
}

impl Cmp {
    const ALL: [Cmp; 5] = [
        Cmp::Above,
        Cmp::Below,
        Cmp::AtLeast,
        Cmp::AtMost,
        Cmp::Equal,
    ];

    fn words(self) -> &'static str {
        match self {
            Cmp::Above => "above",
            Cmp::Below => "below",
            Cmp::AtLeast => "at least",
            Cmp::AtMost => "at most",
            Cmp::Equal => "equal to",
        }
    }

    fn python(self) -> &'static str {
        match self {
            Cmp::Above => ">",
            Cmp::Below => "<",
            Cmp::AtLeast => ">=",
            Cmp::AtMost => "<=",
            Cmp::Equal => "==",
        }
    }

    fn holds(self, v: i64, c: i64) -> bool {
        match self {
            Cmp::Above => v > c,
            Cmp::Below => v < c,
            Cmp::AtLeast => v >= c,
            Cmp::AtMost => v <= c,
            Cmp::Equal => v == c,
        }
    }
}

/// Plus, minus or times a constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Operator {
    Plus,
    Minus,
    Times,
}

impl Operator {
    const ALL: [Operator; 3] = [Operator::Plus, Operator::Minus, Operator::Times];

    fn words(self) -> &'static str {
        match self {
            Operator::Plus => "plus",
            Operator::Minus => "minus",
            Operator::Times => "times",
        }
    }

    fn python(self) -> char {
        match self {
            Operator::Plus => '+',
            Operator::Minus => '-',
            Operator::Times => '*',
        }
    }

    fn apply(self, v: i64, c: i64) -> i64 {
        match self {
            Operator::Plus => v + c,
            Operator::Minus => v - c,
            Operator::Times => v * c,
        }
    }
}

/// One problem shape, with up to three constants `k[0]`, `k[1]`, `k[2]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Kind {
    // linear
    MulAdd,
    MulSub,
    AddMul,
    SubMul,
    Square,
    TwoAdd,
    TwoSub,
    AddMulAdd,
    MulAddMul,
    // conditional
    IfElse,
    KeepIf,
    Test,
    Larger,
    Smaller,
    Distance,
    // list
    SumIf,
    CountIf,
    Filter,
    FilterMap,
    Map,
    Largest,
    Smallest,
    Total,
    Length,
    SumIfPlus,
    MapMulAdd,
    // string
    Repeat,
    DropFirst,
    DropLast,
    First,
    Last,
    Trim,
    StrLen,
    Append,
    Prepend,
    Replace,
    Count,
    Starts,
    Ends,
    CharAt,
    Between,
    RepeatAppend,
    FirstRepeat,
    CountPlus,
    LenCmp,
    Contains,
    Remove,
    Insert,
    Substr,
    // modulo
    Mod,
    Divisible,
    ModIs,
    FloorDiv,
    DivisibleIf,
    ModPlus,
    AddMod,
    TimesMod,
    ModTimes,
    FloorDivPlus,
    AddModPlus,
    // stdio
    ReadMulAdd,
    ReadMulSub,
    ReadAddMul,
    ReadAddMulAdd,
    ReadMulAddMul,
    ReadSubMul,
    ReadApply,
    ReadMod,
    ReadModPlus,
    ReadRepeat,
    ReadLength,
}

/// A kind with this many problems or more is drawn as often as one with exactly this many.
const KIND_WEIGHT_CAP: usize = 100;

/// Every valid shape of every kind, in a fixed order (built on first use).
fn catalogue() -> &'static Vec<(Kind, Vec<Shape>)> {
    static CATALOGUE: OnceLock<Vec<(Kind, Vec<Shape>)>> = OnceLock::new();
    CATALOGUE.get_or_init(|| {
        CodeFamily::ALL
            .iter()
            .flat_map(|f| f.kinds())
            .map(|&kind| (kind, kind.enumerate()))
            .collect()
    })
}

/// Ranges of single-digit constants.
const DIGIT: (i64, i64) = (0, 9);
const POSITIVE: (i64, i64) = (1, 9);
const FACTOR: (i64, i64) = (2, 9);

impl Kind {
    /// The range of each constant, in order.
    fn ranges(self) -> &'static [(i64, i64)] {
        use Kind::*;
        match self {
            MulAdd | MulSub | ReadMulAdd | ReadMulSub => &[FACTOR, POSITIVE],
            AddMul | SubMul | ReadAddMul | ReadSubMul => &[POSITIVE, FACTOR],
            Square => &[POSITIVE],
            TwoAdd | TwoSub => &[FACTOR, FACTOR],
            IfElse => &[DIGIT, DIGIT, DIGIT],
            KeepIf => &[DIGIT, DIGIT],
            Test | Larger | Smaller | Distance => &[DIGIT],
            // A zero threshold makes `above` and `at least` the same sum.
            SumIf => &[POSITIVE],
            CountIf | Filter => &[DIGIT],
            FilterMap => &[DIGIT, POSITIVE],
            Map | Largest | Smallest | Total | Length | StrLen | ReadApply => &[POSITIVE],
            Repeat | ReadRepeat => &[FACTOR],
            DropFirst | DropLast | First | Last => &[POSITIVE],
            Trim => &[POSITIVE, POSITIVE],
            Append | Prepend | Count | Starts | Ends | CharAt => &[DIGIT],
            Replace => &[DIGIT, DIGIT],
            Mod | Divisible | FloorDiv | ReadMod => &[FACTOR],
            ModIs => &[FACTOR, DIGIT],
            DivisibleIf => &[DIGIT, FACTOR, DIGIT],
            ModPlus | ReadModPlus => &[FACTOR, POSITIVE],
            AddMod => &[POSITIVE, FACTOR],
            TimesMod => &[FACTOR, FACTOR],
            ReadLength => &[POSITIVE],
            AddMulAdd | ReadAddMulAdd => &[POSITIVE, FACTOR, POSITIVE],
            MulAddMul | ReadMulAddMul => &[FACTOR, POSITIVE, FACTOR],
            SumIfPlus => &[POSITIVE, POSITIVE],
            MapMulAdd => &[FACTOR, POSITIVE],
            ModTimes => &[FACTOR, FACTOR],
            FloorDivPlus => &[FACTOR, POSITIVE],
            AddModPlus => &[POSITIVE, FACTOR, POSITIVE],
            Between | Insert => &[DIGIT, DIGIT],
            RepeatAppend => &[FACTOR, DIGIT],
            FirstRepeat => &[POSITIVE, FACTOR],
            CountPlus => &[DIGIT, POSITIVE],
            LenCmp => &[POSITIVE],
            Contains | Remove => &[DIGIT],
            Substr => &[DIGIT, FACTOR],
        }
    }

    /// Every valid shape of the kind, in a fixed order.
    fn enumerate(self) -> Vec<Shape> {
        let cmps: &[Cmp] = if self.uses_cmp() {
            &Cmp::ALL
        } else {
            &[Cmp::Above]
        };
        let ops: &[Operator] = if self.uses_op() {
            &Operator::ALL
        } else {
            &[Operator::Plus]
        };
        let range = |i: usize| {
            let (lo, hi) = self.ranges().get(i).copied().unwrap_or((0, 0));
            lo..=hi
        };
        let mut out = Vec::new();
        for a in range(0) {
            for b in range(1) {
                for c in range(2) {
                    for &cmp in cmps {
                        for &op in ops {
                            let shape = Shape {
                                kind: self,
                                cmp,
                                op,
                                k: [a, b, c],
                            };
                            if shape.valid() {
                                out.push(shape);
                            }
                        }
                    }
                }
            }
        }
        out
    }

    /// The valid shapes of the kind (from the catalogue).
    fn shapes(self) -> &'static [Shape] {
        catalogue()
            .iter()
            .find(|(kind, _)| *kind == self)
            .map_or(&[], |(_, shapes)| shapes.as_slice())
    }

    /// How often the kind is drawn, relative to the other kinds of its family.
    fn weight(self) -> usize {
        self.shapes().len().min(KIND_WEIGHT_CAP)
    }

    fn uses_cmp(self) -> bool {
        use Kind::*;
        matches!(
            self,
            IfElse | KeepIf | Test | SumIf | CountIf | Filter | FilterMap | LenCmp | SumIfPlus
        )
    }

    fn uses_op(self) -> bool {
        use Kind::*;
        matches!(
            self,
            FilterMap | Map | Largest | Smallest | Total | Length | StrLen | ReadApply
        )
    }
}

/// The argument of one test case.
#[derive(Debug, Clone, PartialEq)]
enum Input {
    X(i64),
    XY(i64, i64),
    List(Vec<i64>),
    Str(String),
    /// One line of stdin, without its newline; the program reads it as an integer or a line.
    Line(String),
}

/// A result, as Python would return or print it.
#[derive(Debug, Clone, PartialEq)]
enum Output {
    Int(i64),
    Bool(bool),
    List(Vec<i64>),
    Str(String),
}

impl Output {
    fn to_json(&self) -> Value {
        match self {
            Output::Int(v) => json!(v),
            Output::Bool(b) => json!(b),
            Output::List(v) => json!(v),
            Output::Str(s) => json!(s),
        }
    }

    /// What `print` writes for it (only ints and strings are printed).
    fn printed(&self) -> String {
        match self {
            Output::Int(v) => format!("{v}\n"),
            Output::Str(s) => format!("{s}\n"),
            Output::Bool(b) => format!("{}\n", if *b { "True" } else { "False" }),
            Output::List(v) => format!("{v:?}\n"),
        }
    }
}

/// A problem: its shape, comparison, operator and constants (unused ones left at their
/// defaults so that equal problems have equal keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Shape {
    kind: Kind,
    cmp: Cmp,
    op: Operator,
    k: [i64; 3],
}

impl Shape {
    /// Rules the constant ranges cannot say: distinct branches, no degenerate modulus.
    fn valid(&self) -> bool {
        use Kind::*;
        let [a, b, c] = self.k;
        let ranges_hold = self
            .kind
            .ranges()
            .iter()
            .zip(self.k)
            .all(|(&(lo, hi), v)| (lo..=hi).contains(&v));
        let times_one = self.kind.uses_op() && self.op == Operator::Times && self.last() < 2;
        ranges_hold
            && !times_one
            && match self.kind {
                IfElse => a != c,
                DivisibleIf => a != c,
                // `x if x>4 else 4` is `max(x,4)` and so is `x if x>3 else 4`; `x if x==4
                // else 4` is 4: keep the else value away from the threshold.
                KeepIf => (a - b).abs() >= 2,
                // `x%a==0` is the divisibility problem.
                ModIs => 0 < b && b < a,
                // Items equal to `a`, each changed, are all the same number.
                FilterMap => self.cmp != Cmp::Equal,
                Replace => a != b,
                // `x*a%b` with a ≡ 0 or 1 (mod b) is 0 or `x%b`.
                TimesMod => a % b > 1,
                _ => true,
            }
    }

    /// The last constant the kind uses (the operand of its operator).
    fn last(&self) -> i64 {
        let n = self.kind.ranges().len();
        self.k[n.saturating_sub(1)]
    }

    fn family(&self) -> CodeFamily {
        CodeFamily::ALL
            .into_iter()
            .find(|f| f.kinds().contains(&self.kind))
            .unwrap_or(CodeFamily::Linear)
    }

    /// The problem text.
    fn prompt(&self) -> String {
        use Kind::*;
        let [a, b, c] = self.k;
        let cmp = self.cmp.words();
        let op = self.op.words();
        let chars = |n: i64| if n == 1 { "character" } else { "characters" };
        let returns =
            |signature: &str, what: String| format!("Write {signature} that returns {what}.");
        let x = |what: String| returns("f(x)", what);
        let list = |what: String| returns("f(a)", what);
        let s = |what: String| returns("f(s)", what);
        let read = |what: String| format!("Read an integer n and print {what}.");
        match self.kind {
            MulAdd => x(format!("x times {a} plus {b}")),
            MulSub => x(format!("x times {a} minus {b}")),
            AddMul => x(format!("(x plus {a}) times {b}")),
            SubMul => x(format!("(x minus {a}) times {b}")),
            Square => x(format!("x squared plus {a}")),
            TwoAdd => returns("f(x, y)", format!("x times {a} plus y times {b}")),
            TwoSub => returns("f(x, y)", format!("x times {a} minus y times {b}")),
            AddMulAdd => x(format!("(x plus {a}) times {b} plus {c}")),
            MulAddMul => x(format!("(x times {a} plus {b}) times {c}")),
            IfElse => x(format!("{a} if x is {cmp} {b}, else {c}")),
            KeepIf => x(format!("x if x is {cmp} {a}, else {b}")),
            Test => x(format!("whether x is {cmp} {a}")),
            Larger => x(format!("the larger of x and {a}")),
            Smaller => x(format!("the smaller of x and {a}")),
            Distance => x(format!("the distance between x and {a}")),
            SumIf => list(format!("the sum of the items of a {cmp} {a}")),
            CountIf => list(format!("the number of items of a {cmp} {a}")),
            Filter => list(format!("the items of a {cmp} {a}")),
            FilterMap => list(format!("the items of a {cmp} {a}, each {op} {b}")),
            Map => list(format!("the items of a, each {op} {a}")),
            Largest => list(format!("the largest item of a, {op} {a}")),
            Smallest => list(format!("the smallest item of a, {op} {a}")),
            Total => list(format!("the sum of a, {op} {a}")),
            Length => list(format!("the length of a, {op} {a}")),
            SumIfPlus => list(format!("the sum of the items of a {cmp} {a}, plus {b}")),
            MapMulAdd => list(format!("the items of a, each times {a} plus {b}")),
            Repeat => s(format!("s repeated {a} times")),
            DropFirst => s(format!("s without its first {a} {}", chars(a))),
            DropLast => s(format!("s without its last {a} {}", chars(a))),
            First => s(format!("the first {a} {} of s", chars(a))),
            Last => s(format!("the last {a} {} of s", chars(a))),
            Trim => s(format!("s without its first {a} and last {b} {}", chars(b))),
            StrLen => s(format!("the length of s {op} {a}")),
            Append => s(format!("s followed by the digit {a}")),
            Prepend => s(format!("the digit {a} followed by s")),
            Replace => s(format!("s with every {a} replaced by {b}")),
            Count => s(format!("the number of times {a} occurs in s")),
            Starts => s(format!("whether s starts with {a}")),
            Ends => s(format!("whether s ends with {a}")),
            CharAt => s(format!("the character of s at index {a}")),
            Between => s(format!("s between the digits {a} and {b}")),
            RepeatAppend => s(format!("s repeated {a} times, then the digit {b}")),
            FirstRepeat => s(format!(
                "the first {a} {} of s, repeated {b} times",
                chars(a)
            )),
            CountPlus => s(format!("the number of times {a} occurs in s, plus {b}")),
            LenCmp => s(format!("whether the length of s is {cmp} {a}")),
            Contains => s(format!("whether s contains {a}")),
            Remove => s(format!("s with every {a} removed")),
            Insert => s(format!("s with the digit {a} inserted at index {b}")),
            Substr => s(format!("the {b} characters of s from index {a}")),
            Mod => x(format!("x mod {a}")),
            Divisible => x(format!("whether x is divisible by {a}")),
            ModIs => x(format!("whether x mod {a} is {b}")),
            FloorDiv => x(format!("x divided by {a}, rounded down")),
            DivisibleIf => x(format!("{a} if x is divisible by {b}, else {c}")),
            ModPlus => x(format!("x mod {a} plus {b}")),
            AddMod => x(format!("(x plus {a}) mod {b}")),
            TimesMod => x(format!("(x times {a}) mod {b}")),
            ModTimes => x(format!("(x mod {a}) times {b}")),
            FloorDivPlus => x(format!("x divided by {a}, rounded down, plus {b}")),
            AddModPlus => x(format!("(x plus {a}) mod {b} plus {c}")),
            ReadMulAdd => read(format!("n times {a} plus {b}")),
            ReadMulSub => read(format!("n times {a} minus {b}")),
            ReadAddMul => read(format!("(n plus {a}) times {b}")),
            ReadAddMulAdd => read(format!("(n plus {a}) times {b} plus {c}")),
            ReadMulAddMul => read(format!("(n times {a} plus {b}) times {c}")),
            ReadSubMul => read(format!("(n minus {a}) times {b}")),
            ReadApply => read(format!("n {op} {a}")),
            ReadMod => read(format!("n mod {a}")),
            ReadModPlus => read(format!("n mod {a} plus {b}")),
            ReadRepeat => format!("Read a line s and print s repeated {a} times."),
            ReadLength => format!("Read a line s and print the length of s plus {a}."),
        }
    }

    /// The Python expression the function returns (or the program prints), over `a` (a list),
    /// `s` (a string), `x` and `y`, where the integer argument (or the line that a stdio
    /// program reads) is written `n`.
    fn body(&self, n: &str) -> String {
        use Kind::*;
        let [a, b, c] = self.k;
        let cmp = self.cmp.python();
        let op = self.op.python();
        match self.kind {
            MulAdd | ReadMulAdd => format!("{n}*{a}+{b}"),
            MulSub | ReadMulSub => format!("{n}*{a}-{b}"),
            AddMul | ReadAddMul => format!("({n}+{a})*{b}"),
            SubMul | ReadSubMul => format!("({n}-{a})*{b}"),
            Square => format!("{n}*{n}+{a}"),
            TwoAdd => format!("x*{a}+y*{b}"),
            TwoSub => format!("x*{a}-y*{b}"),
            AddMulAdd | ReadAddMulAdd => format!("({n}+{a})*{b}+{c}"),
            MulAddMul | ReadMulAddMul => format!("({n}*{a}+{b})*{c}"),
            IfElse => format!("{a} if {n}{cmp}{b} else {c}"),
            KeepIf => format!("{n} if {n}{cmp}{a} else {b}"),
            Test => format!("{n}{cmp}{a}"),
            Larger => format!("max({n},{a})"),
            Smaller => format!("min({n},{a})"),
            Distance => format!("abs({n}-{a})"),
            SumIf => format!("sum(v for v in a if v{cmp}{a})"),
            CountIf => format!("sum(1 for v in a if v{cmp}{a})"),
            Filter => format!("[v for v in a if v{cmp}{a}]"),
            FilterMap => format!("[v{op}{b} for v in a if v{cmp}{a}]"),
            Map => format!("[v{op}{a} for v in a]"),
            Largest => format!("max(a){op}{a}"),
            Smallest => format!("min(a){op}{a}"),
            Total => format!("sum(a){op}{a}"),
            Length => format!("len(a){op}{a}"),
            SumIfPlus => format!("sum(v for v in a if v{cmp}{a})+{b}"),
            MapMulAdd => format!("[v*{a}+{b} for v in a]"),
            Repeat => format!("s*{a}"),
            ReadRepeat => format!("{n}*{a}"),
            DropFirst => format!("s[{a}:]"),
            DropLast => format!("s[:-{a}]"),
            First => format!("s[:{a}]"),
            Last => format!("s[-{a}:]"),
            Trim => format!("s[{a}:-{b}]"),
            StrLen => format!("len(s){op}{a}"),
            Append => format!("s+\"{a}\""),
            Prepend => format!("\"{a}\"+s"),
            Replace => format!("s.replace(\"{a}\",\"{b}\")"),
            Count => format!("s.count(\"{a}\")"),
            Starts => format!("s.startswith(\"{a}\")"),
            Ends => format!("s.endswith(\"{a}\")"),
            CharAt => format!("s[{a}]"),
            Between => format!("\"{a}\"+s+\"{b}\""),
            RepeatAppend => format!("s*{a}+\"{b}\""),
            FirstRepeat => format!("s[:{a}]*{b}"),
            CountPlus => format!("s.count(\"{a}\")+{b}"),
            LenCmp => format!("len(s){cmp}{a}"),
            Contains => format!("\"{a}\" in s"),
            Remove => format!("s.replace(\"{a}\",\"\")"),
            Insert => format!("s[:{b}]+\"{a}\"+s[{b}:]"),
            Substr => format!("s[{a}:{}]", a + b),
            Mod | ReadMod => format!("{n}%{a}"),
            Divisible => format!("{n}%{a}==0"),
            ModIs => format!("{n}%{a}=={b}"),
            FloorDiv => format!("{n}//{a}"),
            DivisibleIf => format!("{a} if {n}%{b}==0 else {c}"),
            ModPlus | ReadModPlus => format!("{n}%{a}+{b}"),
            AddMod => format!("({n}+{a})%{b}"),
            TimesMod => format!("{n}*{a}%{b}"),
            ModTimes => format!("{n}%{a}*{b}"),
            FloorDivPlus => format!("{n}//{a}+{b}"),
            AddModPlus => format!("({n}+{a})%{b}+{c}"),
            ReadApply => format!("{n}{op}{a}"),
            ReadLength => format!("len({n})+{a}"),
        }
    }

    /// The one-line reference solution.
    fn reference(&self) -> String {
        match self.family() {
            CodeFamily::Stdio if self.reads_line() => format!("print({})", self.body("input()")),
            CodeFamily::Stdio => format!("print({})", self.body("int(input())")),
            CodeFamily::List => format!("def f(a): return {}", self.body("a")),
            CodeFamily::String => format!("def f(s): return {}", self.body("s")),
            _ if matches!(self.kind, Kind::TwoAdd | Kind::TwoSub) => {
                format!("def f(x, y): return {}", self.body("x"))
            }
            _ => format!("def f(x): return {}", self.body("x")),
        }
    }

    /// A stdio problem that reads a line of text rather than an integer.
    fn reads_line(&self) -> bool {
        matches!(self.kind, Kind::ReadRepeat | Kind::ReadLength)
    }

    /// A short worked plan for the `<think>` part of a warm-up solution.
    ///
    /// The returned expression itself where it is short (`x*3+1`, `s[2:]`, `n%4+1`), else an
    /// abbreviation of it (`sum a>4`).
    fn plan(&self) -> String {
        use Kind::*;
        let [a, b, _] = self.k;
        let cmp = self.cmp.python();
        let op = self.op.python();
        match self.kind {
            SumIf => format!("sum a{cmp}{a}"),
            CountIf => format!("count a{cmp}{a}"),
            Filter => format!("keep a{cmp}{a}"),
            FilterMap => format!("keep a{cmp}{a}, v{op}{b}"),
            SumIfPlus => format!("sum a{cmp}{a}, +{b}"),
            Map => format!("each v{op}{a}"),
            MapMulAdd => format!("each v*{a}+{b}"),
            _ if self.reads_line() => self.body("s"),
            _ if self.family() == CodeFamily::Stdio => self.body("n"),
            _ => self.body("x"),
        }
    }

    /// The arguments (or stdin lines) of the test cases, chosen around the constants.
    fn inputs(&self) -> Vec<Input> {
        use Kind::*;
        let [a, b, _] = self.k;
        let ints = |xs: &[i64]| xs.iter().map(|&x| Input::X(x)).collect::<Vec<_>>();
        let strs = |xs: &[String]| xs.iter().map(|x| Input::Str(x.clone())).collect();
        let lines = |xs: &[&str]| xs.iter().map(|x| Input::Line((*x).to_owned())).collect();
        let around = |t: i64| vec![-3, t - 1, t, t + 1, 12];
        let modulus = |m: i64| vec![0, m - 1, m, m + 1, 17, -5];
        let lists = |xs: &[&[i64]]| xs.iter().map(|l| Input::List(l.to_vec())).collect();
        let threshold_lists = |t: i64| {
            vec![
                Input::List(vec![]),
                Input::List(vec![t]),
                Input::List(vec![t - 1, t + 1]),
                Input::List(vec![1, t, 9, -2, t]),
                Input::List(vec![t + 2, 0, 7, t + 2, t - 3]),
            ]
        };
        let digits = |d: i64| {
            let n = (d + 1) % 10;
            [
                String::new(),
                d.to_string(),
                format!("{d}x"),
                format!("x{d}y{d}{d}"),
                format!("{n}{d}{n}"),
            ]
        };
        let alphabet = "abcdefghijklmnopqrstuvwxyz".to_owned();
        match self.kind {
            MulAdd | MulSub | AddMul | SubMul | Square | AddMulAdd | MulAddMul => {
                ints(&[0, 1, 2, -3, 7])
            }
            TwoAdd | TwoSub => [(0, 0), (1, 0), (0, 1), (2, -3), (5, 4)]
                .into_iter()
                .map(|(x, y)| Input::XY(x, y))
                .collect(),
            IfElse => ints(&around(b)),
            KeepIf | Test | Larger | Smaller | Distance => ints(&around(a)),
            SumIf | CountIf | Filter | FilterMap | SumIfPlus => threshold_lists(a),
            Map | Total | Length | MapMulAdd => {
                lists(&[&[], &[3], &[1, 7, 2], &[-4, 0, 5], &[9, 9, 6]])
            }
            Largest | Smallest => lists(&[&[3], &[1, 7, 2], &[-4, -1], &[5, 0, 9, 5], &[6, -8]]),
            Repeat | RepeatAppend => strs(&["".into(), "ab".into(), "xyz".into(), "7".into()]),
            DropFirst | DropLast | First | Last | Trim | FirstRepeat | Insert | Substr => strs(&[
                String::new(),
                "ab".into(),
                "hello".into(),
                "0123456789xyz".into(),
                alphabet,
            ]),
            StrLen => strs(&[
                String::new(),
                "ab".into(),
                "hello".into(),
                "abcdefghijk".into(),
            ]),
            Append | Prepend | Between => {
                strs(&["".into(), "ab".into(), "x1".into(), "hello".into()])
            }
            Count | Starts | Ends | CountPlus | Contains | Remove => strs(&digits(a)),
            // Lengths around `a`, and longer.
            LenCmp => {
                let lengths: BTreeSet<i64> = [0, a - 1, a, a + 1, 12, 20].into_iter().collect();
                lengths
                    .into_iter()
                    .filter_map(|n| usize::try_from(n).ok())
                    .map(|n| Input::Str("abcdefghijklmnopqrstuvwxyz".chars().take(n).collect()))
                    .collect()
            }
            Replace => strs(&[
                String::new(),
                a.to_string(),
                format!("1{a}2{a}{b}"),
                format!("{b}{b}"),
                format!("x{a}{a}y"),
            ]),
            CharAt => strs(&[
                "abcdefghijkl".into(),
                "0123456789xy".into(),
                "zyxwvutsrqpo".into(),
                alphabet,
            ]),
            Mod | Divisible | FloorDiv | ModPlus | TimesMod | ModTimes | FloorDivPlus => {
                ints(&modulus(a))
            }
            // Residues around `b`; `a+b` tells a wrong modulus apart.
            ModIs => ints(&[b - 1, b, b + 1, a + b, 19, -5]),
            DivisibleIf | AddMod | AddModPlus => ints(&modulus(b)),
            ReadMulAdd | ReadMulSub | ReadAddMul | ReadAddMulAdd | ReadMulAddMul | ReadSubMul
            | ReadApply => lines(&["0", "1", "2", "-3", "7"]),
            ReadMod | ReadModPlus => modulus(a)
                .into_iter()
                .map(|x| Input::Line(x.to_string()))
                .collect(),
            ReadRepeat => lines(&["ab", "x", "hello", "12"]),
            ReadLength => lines(&["ab", "x", "hello", "abcdefgh"]),
        }
    }

    /// What the reference returns (or prints) for `input`, by Python's rules; `None` where
    /// Python would raise or the input does not fit the problem.
    fn eval(&self, input: &Input) -> Option<Output> {
        use Kind::*;
        use Output::{Bool, Int, List, Str};
        let [a, b, c] = self.k;
        let cmp = self.cmp;
        let op = self.op;
        let int = |input: &Input| match input {
            Input::X(x) => Some(*x),
            Input::Line(l) => l.trim().parse::<i64>().ok(),
            _ => None,
        };
        let text = |input: &Input| match input {
            Input::Str(s) | Input::Line(s) => Some(s.clone()),
            _ => None,
        };
        let items = |input: &Input| match input {
            Input::List(v) => Some(v.clone()),
            _ => None,
        };
        let out = match self.kind {
            MulAdd | ReadMulAdd => Int(int(input)? * a + b),
            MulSub | ReadMulSub => Int(int(input)? * a - b),
            AddMul | ReadAddMul => Int((int(input)? + a) * b),
            SubMul | ReadSubMul => Int((int(input)? - a) * b),
            Square => Int(int(input)?.pow(2) + a),
            AddMulAdd | ReadAddMulAdd => Int((int(input)? + a) * b + c),
            MulAddMul | ReadMulAddMul => Int((int(input)? * a + b) * c),
            TwoAdd | TwoSub => {
                let Input::XY(x, y) = input else { return None };
                Int(if self.kind == TwoAdd {
                    x * a + y * b
                } else {
                    x * a - y * b
                })
            }
            IfElse => Int(if cmp.holds(int(input)?, b) { a } else { c }),
            KeepIf => {
                let x = int(input)?;
                Int(if cmp.holds(x, a) { x } else { b })
            }
            Test => Bool(cmp.holds(int(input)?, a)),
            Larger => Int(int(input)?.max(a)),
            Smaller => Int(int(input)?.min(a)),
            Distance => Int((int(input)? - a).abs()),
            SumIf => Int(items(input)?.iter().filter(|&&v| cmp.holds(v, a)).sum()),
            CountIf => Int(items(input)?.iter().filter(|&&v| cmp.holds(v, a)).count() as i64),
            Filter => List(
                items(input)?
                    .into_iter()
                    .filter(|&v| cmp.holds(v, a))
                    .collect(),
            ),
            FilterMap => List(
                items(input)?
                    .into_iter()
                    .filter(|&v| cmp.holds(v, a))
                    .map(|v| op.apply(v, b))
                    .collect(),
            ),
            Map => List(items(input)?.into_iter().map(|v| op.apply(v, a)).collect()),
            Largest => Int(op.apply(items(input)?.into_iter().max()?, a)),
            Smallest => Int(op.apply(items(input)?.into_iter().min()?, a)),
            Total => Int(op.apply(items(input)?.iter().sum(), a)),
            Length => Int(op.apply(items(input)?.len() as i64, a)),
            SumIfPlus => Int(items(input)?
                .iter()
                .filter(|&&v| cmp.holds(v, a))
                .sum::<i64>()
                + b),
            MapMulAdd => List(items(input)?.into_iter().map(|v| v * a + b).collect()),
            Repeat | ReadRepeat => Str(text(input)?.repeat(usize::try_from(a).ok()?)),
            DropFirst => Str(py_slice(&text(input)?, Some(a), None)),
            DropLast => Str(py_slice(&text(input)?, None, Some(-a))),
            First => Str(py_slice(&text(input)?, None, Some(a))),
            Last => Str(py_slice(&text(input)?, Some(-a), None)),
            Trim => Str(py_slice(&text(input)?, Some(a), Some(-b))),
            StrLen => Int(op.apply(text(input)?.chars().count() as i64, a)),
            ReadLength => Int(text(input)?.chars().count() as i64 + a),
            Append => Str(format!("{}{a}", text(input)?)),
            Prepend => Str(format!("{a}{}", text(input)?)),
            Replace => Str(text(input)?.replace(&a.to_string(), &b.to_string())),
            Count => Int(text(input)?.matches(&a.to_string()).count() as i64),
            Starts => Bool(text(input)?.starts_with(&a.to_string())),
            Ends => Bool(text(input)?.ends_with(&a.to_string())),
            CharAt => Str(text(input)?
                .chars()
                .nth(usize::try_from(a).ok()?)?
                .to_string()),
            Between => Str(format!("{a}{}{b}", text(input)?)),
            RepeatAppend => Str(format!(
                "{}{b}",
                text(input)?.repeat(usize::try_from(a).ok()?)
            )),
            FirstRepeat => {
                Str(py_slice(&text(input)?, None, Some(a)).repeat(usize::try_from(b).ok()?))
            }
            CountPlus => Int(text(input)?.matches(&a.to_string()).count() as i64 + b),
            LenCmp => Bool(cmp.holds(text(input)?.chars().count() as i64, a)),
            Contains => Bool(text(input)?.contains(&a.to_string())),
            Remove => Str(text(input)?.replace(&a.to_string(), "")),
            Insert => {
                let s = text(input)?;
                Str(format!(
                    "{}{a}{}",
                    py_slice(&s, None, Some(b)),
                    py_slice(&s, Some(b), None)
                ))
            }
            Substr => Str(py_slice(&text(input)?, Some(a), Some(a + b))),
            // The divisors are positive, where Python's `%` and `//` are Euclid's.
            Mod | ReadMod => Int(int(input)?.rem_euclid(a)),
            Divisible => Bool(int(input)?.rem_euclid(a) == 0),
            ModIs => Bool(int(input)?.rem_euclid(a) == b),
            FloorDiv => Int(int(input)?.div_euclid(a)),
            DivisibleIf => Int(if int(input)?.rem_euclid(b) == 0 { a } else { c }),
            ModPlus | ReadModPlus => Int(int(input)?.rem_euclid(a) + b),
            AddMod => Int((int(input)? + a).rem_euclid(b)),
            TimesMod => Int((int(input)? * a).rem_euclid(b)),
            ModTimes => Int(int(input)?.rem_euclid(a) * b),
            FloorDivPlus => Int(int(input)?.div_euclid(a) + b),
            AddModPlus => Int((int(input)? + a).rem_euclid(b) + c),
            ReadApply => Int(op.apply(int(input)?, a)),
        };
        Some(out)
    }

    /// The task's tests; `None` when the reference would fail on one of its own inputs.
    fn tests(&self) -> Option<CodeTests> {
        let inputs = self.inputs();
        if self.family() == CodeFamily::Stdio {
            let cases = inputs
                .iter()
                .map(|input| {
                    let Input::Line(line) = input else {
                        return None;
                    };
                    Some(StdioCase {
                        stdin: format!("{line}\n"),
                        stdout: self.eval(input)?.printed(),
                    })
                })
                .collect::<Option<Vec<_>>>()?;
            return Some(CodeTests::Stdio(StdioTests {
                cases,
                float_tolerance: None,
            }));
        }
        let cases = inputs
            .iter()
            .map(|input| {
                let args = match input {
                    Input::X(x) => vec![json!(x)],
                    Input::XY(x, y) => vec![json!(x), json!(y)],
                    Input::List(v) => vec![json!(v)],
                    Input::Str(s) | Input::Line(s) => vec![json!(s)],
                };
                Some(CallCase {
                    args,
                    expected: self.eval(input)?.to_json(),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(CodeTests::Call(CallTests {
            entry_point: "f".into(),
            cases,
            float_tolerance: None,
        }))
    }
}

/// Python's `s[start:stop]` on the characters of `s` (negative bounds count from the end,
/// out-of-range bounds clamp).
fn py_slice(s: &str, start: Option<i64>, stop: Option<i64>) -> String {
    let chars: Vec<char> = s.chars().collect();
    let len = chars.len() as i64;
    let clamp = |i: i64| {
        let i = if i < 0 { i + len } else { i };
        i.clamp(0, len) as usize
    };
    let from = start.map_or(0, clamp);
    let to = stop.map_or(chars.len(), clamp);
    if from >= to {
        return String::new();
    }
    chars[from..to].iter().collect()
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap, HashSet};

    use super::super::{Generator, generate, generate_split};
    use super::*;

    fn code_tasks(n: usize, seed: u64) -> Vec<CodeTask> {
        generate(&Generator::Code(CodeSettings::default()), n, seed)
            .unwrap()
            .into_iter()
            .map(|t| match t {
                Task::Code(c) => c,
                other => panic!("not code: {other:?}"),
            })
            .collect()
    }

    fn family_of(t: &CodeTask) -> &str {
        t.metadata.as_ref().unwrap()["family"].as_str().unwrap()
    }

    /// Every shape the generator can draw.
    fn all_shapes() -> Vec<Shape> {
        catalogue()
            .iter()
            .flat_map(|(_, shapes)| shapes.iter().copied())
            .collect()
    }

    #[test]
    fn same_seed_same_tasks() {
        let a = code_tasks(200, 1);
        assert_eq!(a, code_tasks(200, 1));
        assert_ne!(a, code_tasks(200, 2));
    }

    #[test]
    fn splits_are_disjoint() {
        let g = Generator::Code(CodeSettings::default());
        let (train, eval) = generate_split(&g, 2000, 200, 20_260_104).unwrap();
        let prompts: HashSet<&str> = train.iter().map(Task::prompt).collect();
        assert_eq!(prompts.len(), 2000);
        assert!(eval.iter().all(|t| !prompts.contains(t.prompt())));
        let ids: HashSet<&str> = train.iter().chain(&eval).map(Task::id).collect();
        assert_eq!(ids.len(), 2200);
    }

    #[test]
    fn every_family_appears_in_two_thousand_problems() {
        let tasks = code_tasks(2000, 20_260_104);
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for t in &tasks {
            *counts.entry(family_of(t)).or_default() += 1;
        }
        for family in CodeFamily::ALL {
            let n = counts.get(family.as_str()).copied().unwrap_or(0);
            assert!(n >= 150, "{family}: {n} of 2000 ({counts:?})");
        }
    }

    #[test]
    fn there_are_more_than_three_thousand_problems() {
        let shapes = all_shapes();
        assert!(shapes.len() > 3000, "{}", shapes.len());
        // Each family has well over the ~370 problems a 2000/200 split takes from it, so the
        // eval split is not left with the families the train split did not exhaust.
        for family in CodeFamily::ALL {
            let n = shapes.iter().filter(|s| s.family() == family).count();
            assert!(n >= 800, "{family}: {n}");
        }
        for (kind, shapes) in catalogue() {
            assert!(!shapes.is_empty(), "{kind:?}");
            assert!(shapes.iter().all(|s| s.kind == *kind && s.valid()));
        }
    }

    #[test]
    fn prompts_references_and_plans_are_short() {
        for t in code_tasks(2200, 20_260_104) {
            let reference = t.reference.as_deref().unwrap();
            let plan = t.metadata.as_ref().unwrap()["plan"].as_str().unwrap();
            assert!(t.prompt.len() <= 70, "{}", t.prompt);
            assert!(reference.len() <= 50, "{reference}");
            assert!(!reference.contains('\n'), "{reference}");
            assert!(plan.len() <= 20, "{plan}");
            assert!(t.prompt.is_ascii() && reference.is_ascii());
        }
    }

    #[test]
    fn tests_have_four_to_six_cases() {
        for t in code_tasks(2200, 20_260_104) {
            let n = match &t.tests {
                CodeTests::Call(c) => {
                    assert_eq!(c.entry_point, "f");
                    c.cases.len()
                }
                CodeTests::Stdio(s) => {
                    assert_eq!(family_of(&t), "stdio");
                    s.cases.len()
                }
                CodeTests::Assert(_) => panic!("{t:?}"),
            };
            assert!((4..=6).contains(&n), "{}: {n} cases", t.prompt);
            assert_eq!(t.mode, CodeMode::Full);
        }
    }

    /// The shapes that differ from `s` in one respect: one constant off by one, another
    /// comparison, another operator, another problem of the family with the same constants.
    fn mutants(s: &Shape) -> Vec<Shape> {
        let mut out = Vec::new();
        for i in 0..s.kind.ranges().len() {
            for d in [-1, 1] {
                let mut m = *s;
                m.k[i] += d;
                out.push(m);
            }
        }
        if s.kind.uses_cmp() {
            out.extend(Cmp::ALL.into_iter().map(|cmp| Shape { cmp, ..*s }));
        }
        if s.kind.uses_op() {
            out.extend(Operator::ALL.into_iter().map(|op| Shape { op, ..*s }));
        }
        for &kind in s.family().kinds() {
            if kind.ranges().len() == s.kind.ranges().len() {
                out.push(Shape {
                    kind,
                    cmp: if kind.uses_cmp() { s.cmp } else { Cmp::Above },
                    op: if kind.uses_op() { s.op } else { Operator::Plus },
                    ..*s
                });
            }
        }
        out.retain(|m| m != s && m.valid());
        out
    }

    /// Mutants that compute the same function as the original on every input, so no test
    /// can tell them apart (and both are right answers): `3 if x%2==0 else 2` is
    /// `(x+3)%2+2`. Functions of one integer are compared on -40..=40, which covers every
    /// residue and threshold of single-digit constants.
    fn equivalent(s: &Shape, m: &Shape) -> bool {
        use Kind::*;
        if matches!(s.inputs()[0], Input::X(_) | Input::Line(_))
            && !s.reads_line()
            && !m.reads_line()
        {
            let line = s.family() == CodeFamily::Stdio;
            return (-40..=40).all(|x| {
                let input = if line {
                    Input::Line(x.to_string())
                } else {
                    Input::X(x)
                };
                s.eval(&input) == m.eval(&input)
            });
        }
        match (s.kind, m.kind) {
            // The sum of the items equal to 1 is their count.
            (SumIf, CountIf) | (CountIf, SumIf) => {
                s.cmp == Cmp::Equal && m.cmp == Cmp::Equal && s.k[0] == 1
            }
            _ => false,
        }
    }

    #[test]
    fn a_wrong_constant_or_operator_fails_a_case() {
        let mut checked = 0;
        for s in all_shapes() {
            let inputs = s.inputs();
            let want: Vec<Option<Output>> = inputs.iter().map(|i| s.eval(i)).collect();
            assert!(want.iter().all(Option::is_some), "{s:?}");
            for m in mutants(&s) {
                if equivalent(&s, &m) {
                    continue;
                }
                let got: Vec<Option<Output>> = inputs.iter().map(|i| m.eval(i)).collect();
                assert_ne!(
                    got,
                    want,
                    "`{}` passes the tests of `{}`",
                    m.reference(),
                    s.reference()
                );
                checked += 1;
            }
        }
        assert!(checked > 10_000, "{checked}");
    }

    #[test]
    fn keys_prompts_and_references_identify_problems() {
        let shapes = all_shapes();
        let mut prompts = HashMap::new();
        let mut references = HashMap::new();
        for s in &shapes {
            if let Some(other) = prompts.insert(s.prompt(), s) {
                panic!("{s:?} and {other:?} have the same prompt {}", s.prompt());
            }
            if let Some(other) = references.insert(s.reference(), s) {
                panic!(
                    "{s:?} and {other:?} have the same reference {}",
                    s.reference()
                );
            }
        }
    }

    #[test]
    fn python_semantics() {
        assert_eq!(py_slice("hello", Some(2), None), "llo");
        assert_eq!(py_slice("hello", None, Some(-2)), "hel");
        assert_eq!(py_slice("hello", Some(-9), None), "hello");
        assert_eq!(py_slice("ab", Some(1), Some(-1)), "");
        assert_eq!(py_slice("", None, Some(3)), "");
        let m = Shape {
            kind: Kind::Mod,
            cmp: Cmp::Above,
            op: Operator::Plus,
            k: [3, 0, 0],
        };
        // Python: -5 % 3 == 1 and -5 // 3 == -2.
        assert_eq!(m.eval(&Input::X(-5)), Some(Output::Int(1)));
        let d = Shape {
            kind: Kind::FloorDiv,
            ..m
        };
        assert_eq!(d.eval(&Input::X(-5)), Some(Output::Int(-2)));
    }

    #[test]
    fn worked_examples() {
        let cases = [
            (
                Kind::MulAdd,
                Cmp::Above,
                Operator::Plus,
                [3, 1, 0],
                "Write f(x) that returns x times 3 plus 1.",
                "def f(x): return x*3+1",
                "x*3+1",
            ),
            (
                Kind::IfElse,
                Cmp::Above,
                Operator::Plus,
                [7, 4, 2],
                "Write f(x) that returns 7 if x is above 4, else 2.",
                "def f(x): return 7 if x>4 else 2",
                "7 if x>4 else 2",
            ),
            (
                Kind::SumIf,
                Cmp::Above,
                Operator::Plus,
                [4, 0, 0],
                "Write f(a) that returns the sum of the items of a above 4.",
                "def f(a): return sum(v for v in a if v>4)",
                "sum a>4",
            ),
            (
                Kind::DropFirst,
                Cmp::Above,
                Operator::Plus,
                [2, 0, 0],
                "Write f(s) that returns s without its first 2 characters.",
                "def f(s): return s[2:]",
                "s[2:]",
            ),
            (
                Kind::Divisible,
                Cmp::Above,
                Operator::Plus,
                [3, 0, 0],
                "Write f(x) that returns whether x is divisible by 3.",
                "def f(x): return x%3==0",
                "x%3==0",
            ),
            (
                Kind::ReadApply,
                Cmp::Above,
                Operator::Plus,
                [5, 0, 0],
                "Read an integer n and print n plus 5.",
                "print(int(input())+5)",
                "n+5",
            ),
            (
                Kind::ReadLength,
                Cmp::Above,
                Operator::Plus,
                [5, 0, 0],
                "Read a line s and print the length of s plus 5.",
                "print(len(input())+5)",
                "len(s)+5",
            ),
        ];
        for (kind, cmp, op, k, prompt, reference, plan) in cases {
            let s = Shape { kind, cmp, op, k };
            assert!(s.valid(), "{s:?}");
            assert_eq!(s.prompt(), prompt);
            assert_eq!(s.reference(), reference);
            assert_eq!(s.plan(), plan);
        }
        let s = Shape {
            kind: Kind::ReadApply,
            cmp: Cmp::Above,
            op: Operator::Plus,
            k: [5, 0, 0],
        };
        let Some(CodeTests::Stdio(t)) = s.tests() else {
            panic!()
        };
        assert_eq!(t.cases[3].stdin, "-3\n");
        assert_eq!(t.cases[3].stdout, "2\n");
    }

    #[test]
    fn bad_settings_are_rejected() {
        for families in [
            vec![],
            vec![CodeFamily::List, CodeFamily::Modulo, CodeFamily::List],
        ] {
            let err = generate(&Generator::Code(CodeSettings { families }), 1, 0).unwrap_err();
            assert!(
                matches!(
                    err,
                    GenerateError::Setting {
                        field: "families",
                        ..
                    }
                ),
                "{err}"
            );
        }
        assert!("strings".parse::<CodeFamily>().is_err());
        for f in CodeFamily::ALL {
            assert_eq!(f.as_str().parse::<CodeFamily>().unwrap(), f);
        }
    }

    #[test]
    fn one_family_alone() {
        let g = Generator::Code(CodeSettings {
            families: vec![CodeFamily::Stdio],
        });
        for t in generate(&g, 100, 3).unwrap() {
            let Task::Code(c) = t else { panic!() };
            assert!(matches!(c.tests, CodeTests::Stdio(_)));
            assert!(c.reference.unwrap().starts_with("print("));
        }
    }
}
