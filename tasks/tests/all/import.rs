//! Importers on small hand-written fixtures in each dataset's real format.

use std::path::PathBuf;

use grpo_tasks::import::{FieldMap, Format, import_file, import_str};
use grpo_tasks::{CodeMode, CodeTests, Pack, Task, pack::to_jsonl};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Imported tasks must form a valid pack: they go through the strict loader.
fn reload(tasks: &[Task]) -> Pack {
    Pack::from_jsonl_str("imported.jsonl", &to_jsonl(tasks)).unwrap()
}

fn meta<'a>(t: &'a Task, key: &str) -> &'a str {
    t.metadata().unwrap()[key].as_str().unwrap()
}

#[test]
fn humaneval_gz() {
    let tasks = import_file(&Format::HumanEval, &fixture("HumanEval.jsonl.gz")).unwrap();
    assert_eq!(tasks.len(), 2);
    let Task::Code(c) = &tasks[0] else { panic!() };
    assert_eq!(c.id, "HumanEval/0");
    assert_eq!(c.mode, CodeMode::Prefix);
    assert!(c.prompt.ends_with("    \"\"\"\n"));
    let CodeTests::Assert(a) = &c.tests else {
        panic!()
    };
    assert_eq!(a.entry_point.as_deref(), Some("has_close_elements"));
    assert!(a.code.contains("def check(candidate):"));
    assert!(c.reference.as_deref().unwrap().starts_with("    for idx"));
    assert_eq!(
        (meta(&tasks[0], "license"), meta(&tasks[0], "source_id")),
        ("MIT", "HumanEval/0")
    );
    reload(&tasks);
}

#[test]
fn mbpp_original_and_sanitized() {
    let orig = import_file(&Format::Mbpp, &fixture("mbpp.jsonl")).unwrap();
    let san = import_file(&Format::Mbpp, &fixture("sanitized-mbpp.json")).unwrap();
    assert_eq!((orig.len(), san.len()), (2, 2));
    let Task::Code(c) = &orig[1] else { panic!() };
    assert_eq!(c.id, "mbpp/3");
    assert_eq!(c.mode, CodeMode::Full);
    assert!(c.prompt.starts_with("Write a python function to identify non-prime numbers.\nYour code should pass these tests:\nassert is_not_prime(2) == False"));
    assert!(
        !c.reference.as_deref().unwrap().contains('\r'),
        "CRLF normalised"
    );
    assert_eq!(meta(&orig[0], "license"), "CC-BY-4.0");
    assert_eq!(meta(&orig[0], "source"), "mbpp");
    let Task::Code(s) = &san[1] else { panic!() };
    let CodeTests::Assert(a) = &s.tests else {
        panic!()
    };
    assert!(
        a.code.starts_with("import math\nassert heap_queue_largest"),
        "{}",
        a.code
    );
    assert_eq!(meta(&san[1], "source"), "mbpp_sanitized");
    // Same problem in both layouts: same id, same tests.
    assert_eq!(orig[0].id(), san[0].id());
    reload(&orig);
    reload(&san);
}

#[test]
fn gsm8k_answers_after_hashes() {
    let tasks = import_file(&Format::Gsm8k, &fixture("gsm8k_test.jsonl")).unwrap();
    let answers: Vec<&str> = tasks
        .iter()
        .map(|t| match t {
            Task::Math(m) => m.answer.as_str(),
            _ => panic!(),
        })
        .collect();
    assert_eq!(answers, ["72", "14400"]); // "14,400": thousands separator dropped
    assert_eq!(tasks[1].id(), "gsm8k/1");
    assert!(meta(&tasks[0], "solution").ends_with("72 clips altogether in April and May."));
    reload(&tasks);
    let err = import_str(
        &Format::Gsm8k,
        "g.jsonl",
        r#"{"question":"q","answer":"no final"}"#,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "g.jsonl:1: field `answer`: no `#### N` final answer"
    );
}

#[test]
fn math_boxed_or_answer_field() {
    let tasks = import_file(&Format::Math, &fixture("math.jsonl")).unwrap();
    let answers: Vec<&str> = tasks
        .iter()
        .map(|t| match t {
            Task::Math(m) => m.answer.as_str(),
            _ => panic!(),
        })
        .collect();
    assert_eq!(
        answers,
        [
            r"\sqrt{2}",
            r"\frac{1}{2}",
            r"\left( 3, \frac{\pi}{2} \right)"
        ]
    );
    assert_eq!(tasks[2].id(), "math/test/precalculus/807.json");
    assert_eq!(meta(&tasks[0], "subject"), "Intermediate Algebra");
    assert_eq!(tasks[2].metadata().unwrap()["level"], 2);
    reload(&tasks);
    let err = import_str(
        &Format::Math,
        "m.jsonl",
        r#"{"problem":"p","solution":"no box"}"#,
    )
    .unwrap_err();
    assert!(err.to_string().contains("field `solution`"), "{err}");
}

#[test]
fn generic_jsonl_with_a_mapping() {
    let mut map = FieldMap::parse(
        "math",
        "id=qid, prompt=question, answer=final, alternatives=others",
    )
    .unwrap();
    map.license = Some("CC0-1.0".into());
    map.source = Some("quiz".into());
    let tasks = import_file(&Format::Jsonl(map), &fixture("generic.jsonl")).unwrap();
    let Task::Math(m) = &tasks[0] else { panic!() };
    assert_eq!((m.id.as_str(), m.answer.as_str()), ("q-1", "42")); // numbers become text
    let Task::Math(m) = &tasks[1] else { panic!() };
    assert_eq!(m.alternatives, ["4.5"]);
    assert_eq!(
        (meta(&tasks[0], "license"), meta(&tasks[0], "source")),
        ("CC0-1.0", "quiz")
    );
    reload(&tasks);

    let countdown = FieldMap::parse("countdown", "prompt=q,numbers=nums,target=goal").unwrap();
    let line = r#"{"q":"Make 10","nums":[2,5],"goal":10}"#;
    let tasks = import_str(&Format::Jsonl(countdown.clone()), "c.jsonl", line).unwrap();
    let Task::Countdown(c) = &tasks[0] else {
        panic!()
    };
    assert_eq!(
        (c.numbers.as_slice(), c.target, c.use_all, c.id.as_str()),
        (&[2, 5][..], 10, true, "0")
    );

    for (kind, pairs, words) in [
        ("code", "", "math or countdown"),
        ("math", "question", "not task_field=input_field"),
        ("math", "numbers=n", "not a field of math tasks"),
    ] {
        let err = FieldMap::parse(kind, pairs).unwrap_err().to_string();
        assert!(err.contains(words), "{err}");
    }
    let err = import_str(
        &Format::Jsonl(countdown),
        "c.jsonl",
        r#"{"q":"x","nums":[1,"2"],"goal":3}"#,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "c.jsonl:1: field `nums[1]`: expected an integer"
    );
}

#[test]
fn broken_input_names_the_line() {
    let text = format!(
        "{}\n{{broken\n",
        "{\"question\":\"q\",\"answer\":\"#### 1\"}"
    );
    let err = import_str(&Format::Gsm8k, "g.jsonl", &text)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("g.jsonl:2:"), "{err}");
    let err = import_str(
        &Format::HumanEval,
        "h.jsonl",
        r#"{"task_id":"H/1","prompt":"p"}"#,
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("field `entry_point`: missing required field"),
        "{err}"
    );
}
