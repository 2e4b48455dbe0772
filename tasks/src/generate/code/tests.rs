//! Unit tests of the `code` generator: determinism, coverage of the families, short prompts,
//! and that every problem's tests tell a wrong constant or operator apart.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::super::{Generator, generate, generate_split};
use super::kinds::{Cmp, Input, Kind, Operator, Output, catalogue};
use super::shape::{Shape, py_slice};
use super::*;
use crate::task::CodeTests;

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
    if matches!(s.inputs()[0], Input::X(_) | Input::Line(_)) && !s.reads_line() && !m.reads_line() {
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
