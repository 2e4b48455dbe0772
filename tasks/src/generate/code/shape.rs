//! One `code` problem (`Shape`): its prompt, reference, plan and tests, with the expected
//! values computed by Python's semantics (`py_slice` for slices).

use std::collections::BTreeSet;

use serde_json::json;

use super::CodeFamily;
use super::kinds::{Cmp, Input, Kind, Operator, Output};
use crate::task::{CallCase, CallTests, CodeTests, StdioCase, StdioTests};

/// A problem: its shape, comparison, operator and constants (unused ones left at their
/// defaults so that equal problems have equal keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Shape {
    pub(super) kind: Kind,
    pub(super) cmp: Cmp,
    pub(super) op: Operator,
    pub(super) k: [i64; 3],
}

impl Shape {
    /// Rules the constant ranges cannot say: distinct branches, no degenerate modulus.
    pub(super) fn valid(&self) -> bool {
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

    pub(super) fn family(&self) -> CodeFamily {
        CodeFamily::ALL
            .into_iter()
            .find(|f| f.kinds().contains(&self.kind))
            .unwrap_or(CodeFamily::Linear)
    }

    /// The problem text.
    pub(super) fn prompt(&self) -> String {
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
    pub(super) fn reference(&self) -> String {
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
    pub(super) fn reads_line(&self) -> bool {
        matches!(self.kind, Kind::ReadRepeat | Kind::ReadLength)
    }

    /// A short worked plan for the `<think>` part of a warm-up solution.
    ///
    /// The returned expression itself where it is short (`x*3+1`, `s[2:]`, `n%4+1`), else an
    /// abbreviation of it (`sum a>4`).
    pub(super) fn plan(&self) -> String {
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
    pub(super) fn inputs(&self) -> Vec<Input> {
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
    pub(super) fn eval(&self, input: &Input) -> Option<Output> {
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
    pub(super) fn tests(&self) -> Option<CodeTests> {
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
                        ..Default::default()
                    })
                })
                .collect::<Option<Vec<_>>>()?;
            return Some(CodeTests::Stdio(StdioTests {
                cases,
                float_tolerance: None,
                ..Default::default()
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
                    ..Default::default()
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(CodeTests::Call(CallTests {
            entry_point: "f".into(),
            cases,
            float_tolerance: None,
            ..Default::default()
        }))
    }
}

/// Python's `s[start:stop]` on the characters of `s` (negative bounds count from the end,
/// out-of-range bounds clamp).
pub(super) fn py_slice(s: &str, start: Option<i64>, stop: Option<i64>) -> String {
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
