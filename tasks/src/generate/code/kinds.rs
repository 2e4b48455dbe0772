//! The vocabulary of `code` problems: comparisons, operators, the problem kinds with the
//! ranges of their constants, the catalogue of every valid problem, and the inputs and
//! outputs of test cases.

use std::sync::OnceLock;

use serde_json::{Value, json};

use super::CodeFamily;
use super::shape::Shape;

/// A comparison with a constant, in words and in Python.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Cmp {
    Above,
    Below,
    AtLeast,
    AtMost,
    Equal,
}

impl Cmp {
    pub(super) const ALL: [Cmp; 5] = [
        Cmp::Above,
        Cmp::Below,
        Cmp::AtLeast,
        Cmp::AtMost,
        Cmp::Equal,
    ];

    pub(super) fn words(self) -> &'static str {
        match self {
            Cmp::Above => "above",
            Cmp::Below => "below",
            Cmp::AtLeast => "at least",
            Cmp::AtMost => "at most",
            Cmp::Equal => "equal to",
        }
    }

    pub(super) fn python(self) -> &'static str {
        match self {
            Cmp::Above => ">",
            Cmp::Below => "<",
            Cmp::AtLeast => ">=",
            Cmp::AtMost => "<=",
            Cmp::Equal => "==",
        }
    }

    pub(super) fn holds(self, v: i64, c: i64) -> bool {
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
pub(super) enum Operator {
    Plus,
    Minus,
    Times,
}

impl Operator {
    pub(super) const ALL: [Operator; 3] = [Operator::Plus, Operator::Minus, Operator::Times];

    pub(super) fn words(self) -> &'static str {
        match self {
            Operator::Plus => "plus",
            Operator::Minus => "minus",
            Operator::Times => "times",
        }
    }

    pub(super) fn python(self) -> char {
        match self {
            Operator::Plus => '+',
            Operator::Minus => '-',
            Operator::Times => '*',
        }
    }

    pub(super) fn apply(self, v: i64, c: i64) -> i64 {
        match self {
            Operator::Plus => v + c,
            Operator::Minus => v - c,
            Operator::Times => v * c,
        }
    }
}

/// One problem shape, with up to three constants `k[0]`, `k[1]`, `k[2]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum Kind {
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
pub(super) fn catalogue() -> &'static Vec<(Kind, Vec<Shape>)> {
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
    pub(super) fn ranges(self) -> &'static [(i64, i64)] {
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
    pub(super) fn shapes(self) -> &'static [Shape] {
        catalogue()
            .iter()
            .find(|(kind, _)| *kind == self)
            .map_or(&[], |(_, shapes)| shapes.as_slice())
    }

    /// How often the kind is drawn, relative to the other kinds of its family.
    pub(super) fn weight(self) -> usize {
        self.shapes().len().min(KIND_WEIGHT_CAP)
    }

    pub(super) fn uses_cmp(self) -> bool {
        use Kind::*;
        matches!(
            self,
            IfElse | KeepIf | Test | SumIf | CountIf | Filter | FilterMap | LenCmp | SumIfPlus
        )
    }

    pub(super) fn uses_op(self) -> bool {
        use Kind::*;
        matches!(
            self,
            FilterMap | Map | Largest | Smallest | Total | Length | StrLen | ReadApply
        )
    }
}

/// The argument of one test case.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Input {
    X(i64),
    XY(i64, i64),
    List(Vec<i64>),
    Str(String),
    /// One line of stdin, without its newline; the program reads it as an integer or a line.
    Line(String),
}

/// A result, as Python would return or print it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Output {
    Int(i64),
    Bool(bool),
    List(Vec<i64>),
    Str(String),
}

impl Output {
    pub(super) fn to_json(&self) -> Value {
        match self {
            Output::Int(v) => json!(v),
            Output::Bool(b) => json!(b),
            Output::List(v) => json!(v),
            Output::Str(s) => json!(s),
        }
    }

    /// What `print` writes for it (only ints and strings are printed).
    pub(super) fn printed(&self) -> String {
        match self {
            Output::Int(v) => format!("{v}\n"),
            Output::Str(s) => format!("{s}\n"),
            Output::Bool(b) => format!("{}\n", if *b { "True" } else { "False" }),
            Output::List(v) => format!("{v:?}\n"),
        }
    }
}
