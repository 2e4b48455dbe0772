//! Strict pack loading: every problem reported, each naming file, line and field.

use std::fs;

use grpo_tasks::{Pack, PackError, Problem, Template};

fn problems(text: &str) -> Vec<Problem> {
    match Pack::from_jsonl_str("p.jsonl", text) {
        Err(PackError::Invalid { problems }) => problems,
        other => panic!("expected problems, got {other:?}"),
    }
}

/// (line, field, words the message must contain) of each problem, in order.
fn summary(problems: &[Problem]) -> Vec<(Option<usize>, Option<String>, String)> {
    problems
        .iter()
        .map(|p| (p.line, p.field.clone(), p.message.clone()))
        .collect()
}

const GOOD_MATH: &str = r#"{"id":"m1","kind":"math","prompt":"1+1?","answer":"2"}"#;

#[test]
fn malformed_lines_table() {
    // (line text, field at fault, words in the message)
    let cases: &[(&str, Option<&str>, &str)] = &[
        (
            r#"{"id":"x","kind":"math","prompt":"p""#,
            None,
            "broken JSON at column",
        ),
        (r#"[1,2]"#, None, "must be a JSON object"),
        (
            r#"{"id":"x","kind":"math","prompt":"p"}"#,
            Some("answer"),
            "missing field `answer`",
        ),
        (
            r#"{"id":"x","kind":"algebra","prompt":"p"}"#,
            Some("kind"),
            "unknown kind `algebra`",
        ),
        (
            r#"{"id":"x","prompt":"p","answer":"1"}"#,
            Some("kind"),
            "missing field `kind`",
        ),
        (
            r#"{"id":7,"kind":"math","prompt":"p","answer":"1"}"#,
            Some("id"),
            "invalid type: integer `7`, expected a string",
        ),
        (
            r#"{"id":"x","kind":"math","prompt":"p","answer":5}"#,
            Some("answer"),
            "expected a string",
        ),
        (
            r#"{"id":"x","kind":"math","prompt":"p","answer":"1","hint":"h"}"#,
            Some("hint"),
            "unknown field `hint`",
        ),
        (
            r#"{"id":"x","kind":"math","prompt":"p","answer":"1","alternatives":["a",2]}"#,
            Some("alternatives[1]"),
            "expected a string",
        ),
        (
            r#"{"id":"x","kind":"math","prompt":"  ","answer":"1"}"#,
            Some("prompt"),
            "must not be empty",
        ),
        (
            r#"{"id":"x","kind":"countdown","prompt":"p","numbers":[1,2.5],"target":3}"#,
            Some("numbers[1]"),
            "floating point `2.5`, expected i64",
        ),
        (
            r#"{"id":"x","kind":"countdown","prompt":"p","numbers":[],"target":3}"#,
            Some("numbers"),
            "at least one",
        ),
        (
            r#"{"id":"x","kind":"countdown","prompt":"p","numbers":[1,2],"target":3,"reference":"1*2"}"#,
            Some("reference"),
            "evaluates to 2, not the target 3",
        ),
        (
            r#"{"id":"x","kind":"countdown","prompt":"p","numbers":[1,2],"target":3,"reference":"1+1+1"}"#,
            Some("reference"),
            "uses 1, which is not available",
        ),
        (
            r#"{"id":"x","kind":"countdown","prompt":"p","numbers":[1,2,9],"target":3,"reference":"1+2"}"#,
            Some("reference"),
            "leaves [9] unused",
        ),
        (
            r#"{"id":"x","kind":"countdown","prompt":"p","numbers":[1,2],"target":3,"use_all":"yes"}"#,
            Some("use_all"),
            "expected a boolean",
        ),
        (
            r#"{"id":"x","kind":"code","prompt":"p","language":"rust","mode":"full","tests":{"type":"stdio","cases":[{"stdin":"","stdout":""}]}}"#,
            Some("language"),
            "unknown variant `rust`, expected one of `python`",
        ),
        (
            r#"{"id":"x","kind":"code","prompt":"p","language":"python","mode":"middle","tests":{"type":"stdio","cases":[{"stdin":"","stdout":""}]}}"#,
            Some("mode"),
            "unknown variant `middle`",
        ),
        (
            r#"{"id":"x","kind":"code","prompt":"p","language":"python","mode":"full","tests":{"type":"fuzz"}}"#,
            Some("tests.type"),
            "unknown tests type `fuzz`",
        ),
        (
            r#"{"id":"x","kind":"code","prompt":"p","language":"python","mode":"full","tests":{"type":"stdio","cases":[{"stdin":"1"}]}}"#,
            Some("tests.cases[0].stdout"),
            "missing field `stdout`",
        ),
        (
            r#"{"id":"x","kind":"code","prompt":"p","language":"python","mode":"full","tests":{"type":"stdio","cases":[]}}"#,
            Some("tests.cases"),
            "at least one case",
        ),
        (
            r#"{"id":"x","kind":"code","prompt":"p","language":"python","mode":"full","tests":{"type":"assert","code":"assert 1","extra":1}}"#,
            Some("tests.extra"),
            "unknown field `extra`",
        ),
        (
            r#"{"id":"x","kind":"code","prompt":"p","language":"python","mode":"full","tests":{"type":"call","entry_point":"2f","cases":[{"args":[],"expected":1}]}}"#,
            Some("tests.entry_point"),
            "identifier",
        ),
        (
            r#"{"id":"x","kind":"code","prompt":"p","language":"python","mode":"full","tests":{"type":"assert","code":"assert 1"},"time_limit_ms":-5}"#,
            Some("time_limit_ms"),
            "integer `-5`, expected u64",
        ),
    ];
    for (line, field, words) in cases {
        let text = format!("{GOOD_MATH}\n{line}\n");
        let found = problems(&text);
        assert_eq!(found.len(), 1, "{line}: {found:?}");
        let p = &found[0];
        assert_eq!(p.file, "p.jsonl");
        assert_eq!(p.line, Some(2), "{line}");
        assert_eq!(p.field.as_deref(), *field, "{line}: {p}");
        assert!(p.message.contains(words), "{line}: {p}");
    }
}

#[test]
fn all_problems_of_all_lines_are_reported() {
    let text = [
        GOOD_MATH,
        r#"{"id":" a","kind":"math","prompt":" ","answer":""}"#, // three broken values
        "",                                                      // blank lines are skipped
        "not json",
        r#"{"id":"m1","kind":"math","prompt":"again","answer":"2"}"#, // duplicate of line 1
        r#"{"id":"b","kind":"math","prompt":"p","answer":"1","x":1}"#, // a schema problem
    ]
    .join("\n");
    let found = problems(&text);
    let got = summary(&found);
    assert_eq!(got.len(), 6, "{got:?}");
    assert_eq!(got[0].0, Some(2));
    let fields: Vec<_> = got[..3].iter().map(|g| g.1.clone().unwrap()).collect();
    assert_eq!(fields, ["id", "prompt", "answer"]);
    assert_eq!(got[3].0, Some(4));
    assert!(got[3].2.contains("broken JSON"));
    assert_eq!((got[4].0, got[4].1.as_deref()), (Some(6), Some("x")));
    // Duplicates are found once every line is read.
    assert_eq!((got[5].0, got[5].1.as_deref()), (Some(5), Some("id")));
    assert!(
        got[5].2.contains("duplicate id (first used at p.jsonl:1)"),
        "{}",
        got[5].2
    );
    // The rendered error lists every problem, one per line.
    let err = Pack::from_jsonl_str("p.jsonl", &text)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("6 problem(s) in the pack:"), "{err}");
    assert!(
        err.contains("p.jsonl:6: field `x` (task b): unknown field `x`"),
        "{err}"
    );
}

#[test]
fn pack_directory_with_manifest_and_splits() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("pack.toml"),
        "name = \"demo\"\nversion = \"0.2.0\"\nlicense = \"MIT\"\ntemplate = \"Q: {prompt}\\nA:\"\n[rewards]\naccuracy = 1.0\nformat = 0.2\n",
    )
    .unwrap();
    fs::write(dir.path().join("train.jsonl"), format!("{GOOD_MATH}\n")).unwrap();
    fs::write(
        dir.path().join("eval.jsonl"),
        r#"{"id":"e1","kind":"math","prompt":"2+2?","answer":"4"}"#,
    )
    .unwrap();
    fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
    let pack = Pack::load(dir.path().to_str().unwrap()).unwrap();
    assert_eq!(pack.manifest.name, "demo");
    assert_eq!(pack.manifest.version, "0.2.0");
    assert_eq!(pack.manifest.rewards.format, Some(0.2));
    assert_eq!(
        pack.manifest.template,
        Template::parse("Q: {prompt}\nA:").unwrap()
    );
    assert_eq!(pack.split_names(), ["train", "eval"]);
    assert_eq!(pack.train()[0].id(), "m1");
    assert_eq!(pack.eval()[0].id(), "e1");
    assert_eq!(pack.len(), 2);
    assert!(pack.get("e1").is_some());
}

#[test]
fn duplicate_ids_across_splits_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("pack.toml"), "name = \"d\"\n").unwrap();
    fs::write(dir.path().join("train.jsonl"), format!("{GOOD_MATH}\n")).unwrap();
    fs::write(dir.path().join("eval.jsonl"), format!("\n{GOOD_MATH}\n")).unwrap();
    let err = Pack::load(dir.path().to_str().unwrap()).unwrap_err();
    let p = &err.problems()[0];
    assert!(p.file.ends_with("eval.jsonl"), "{p}");
    assert_eq!(p.line, Some(2));
    assert!(p.message.contains("train.jsonl:1"), "{p}");
}

#[test]
fn manifest_problems_name_the_line() {
    for (toml, words, line) in [
        ("name = \"x\"\nsize = 3\n", "unknown field `size`", Some(2)),
        ("version = \"1\"\n", "missing field `name`", None),
        (
            "name = \"x\"\ntemplate = \"{answer}\"\n",
            "unknown placeholder",
            Some(2),
        ),
        (
            "name = \"x\"\n[rewards]\naccuracy = \"high\"\n",
            "invalid type",
            Some(3),
        ),
        (
            "name = \"x\"\n[rewards]\naccuracy = 1.0\nformatt = 0.1\n",
            "unknown field `formatt`",
            Some(4),
        ),
        (
            "name = \"x\"\n[splits]\ntrain = \"missing.jsonl\"\n",
            "does not exist",
            None,
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("pack.toml"), toml).unwrap();
        fs::write(dir.path().join("train.jsonl"), format!("{GOOD_MATH}\n")).unwrap();
        let err = Pack::load(dir.path().to_str().unwrap()).unwrap_err();
        let p = &err.problems()[0];
        assert!(p.message.contains(words), "{toml}: {p}");
        if line.is_some() {
            assert_eq!(p.line, line, "{toml}: {p}");
        }
    }
}

#[test]
fn single_file_and_gzip_packs() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("probs.jsonl");
    fs::write(&plain, format!("{GOOD_MATH}\n")).unwrap();
    let pack = Pack::load(plain.to_str().unwrap()).unwrap();
    assert_eq!(pack.split_names(), ["probs"]);
    assert_eq!(pack.train().len(), 1);
    assert_eq!(
        pack.eval().len(),
        1,
        "a one-split pack evaluates on its only split"
    );

    let gz = dir.path().join("probs.jsonl.gz");
    let mut enc = flate2::write::GzEncoder::new(
        fs::File::create(&gz).unwrap(),
        flate2::Compression::default(),
    );
    enc.write_all(format!("{GOOD_MATH}\n").as_bytes()).unwrap();
    enc.finish().unwrap();
    assert_eq!(
        Pack::load(gz.to_str().unwrap()).unwrap().train(),
        pack.train()
    );
}

#[test]
fn unknown_specs_say_what_exists() {
    let err = Pack::load("builtin:nope").unwrap_err().to_string();
    assert!(err.contains("arith") && err.contains("python"), "{err}");
    let err = Pack::load("/no/such/path.jsonl").unwrap_err().to_string();
    assert!(err.contains("no task pack"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let err = Pack::load(dir.path().to_str().unwrap())
        .unwrap_err()
        .to_string();
    assert!(err.contains("no pack.toml"), "{err}");
}

/// The book's "Author your own pack" example is a valid pack.
#[test]
fn book_example_pack_loads() {
    let readme =
        fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/src/tasks.md")).unwrap();
    let section = &readme[readme.find("## Author your own pack").unwrap()..];
    let block = |lang: &str| {
        let start = section.find(&format!("```{lang}\n")).unwrap() + lang.len() + 4;
        let end = start + section[start..].find("```").unwrap();
        section[start..end].to_owned()
    };
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("pack.toml"), block("toml")).unwrap();
    fs::write(dir.path().join("train.jsonl"), block("jsonl")).unwrap();
    let pack = Pack::load(dir.path().to_str().unwrap()).unwrap();
    assert_eq!(pack.manifest.name, "my-pack");
    assert_eq!(pack.train().len(), 3);
}

mod props {
    use grpo_tasks::Pack;
    use proptest::prelude::*;

    proptest! {
        /// Any text loads or fails with problems that name the file; it never panics, and a
        /// problem's line is within the text.
        #[test]
        fn any_text_loads_or_reports(text in "(\\{\"id\":\"[a-c]\",\"kind\":\"(math|code|countdown|x)\"(,\"[a-z_]{1,8}\":(1|\"s\"|\\[\\]|\\{\\}|true))*\\}\n?){0,4}") {
            match Pack::from_jsonl_str("f.jsonl", &text) {
                Ok(pack) => prop_assert!(pack.len() <= 4),
                Err(e) => {
                    prop_assert!(!e.problems().is_empty());
                    let lines = text.lines().count();
                    for p in e.problems() {
                        prop_assert_eq!(&p.file, "f.jsonl");
                        prop_assert!(p.line.is_some_and(|l| l >= 1 && l <= lines), "{}", p);
                    }
                }
            }
        }
    }
}
