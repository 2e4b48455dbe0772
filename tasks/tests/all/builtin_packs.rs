//! The built-in packs: they load, they are what their recipes generate, and they are fit for
//! their purpose (sizes, held-out eval, short prompts).
//!
//! To rebuild the generated packs after a deliberate generator change:
//! `GRPO_BLESS=1 cargo test -p grpo-tasks --test all builtin_packs`.

use std::collections::HashSet;
use std::path::Path;

use grpo_tasks::{Pack, Task, TaskKind, builtin};

#[test]
fn every_builtin_pack_loads_and_has_a_readme() {
    for name in builtin::names() {
        let pack = Pack::load(&format!("builtin:{name}")).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(pack.manifest.name, name);
        assert!(pack.manifest.license.is_some(), "{name}");
        let readme = builtin::get(name).unwrap().readme;
        assert!(readme.len() > 200, "{name}: README too short");
        // The directory on disk is the same pack.
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("packs")
            .join(name);
        let from_disk = Pack::load(dir.to_str().unwrap()).unwrap();
        assert_eq!(from_disk.splits().len(), pack.splits().len());
        for (a, b) in from_disk.splits().iter().zip(pack.splits()) {
            assert_eq!(a.tasks, b.tasks, "{name}/{}", a.name);
        }
    }
}

#[test]
fn generated_packs_match_their_recipes() {
    let bless = std::env::var_os("GRPO_BLESS").is_some();
    let generated: Vec<&str> = builtin::names()
        .into_iter()
        .filter(|name| builtin::recipe(name).is_some())
        .collect();
    assert_eq!(
        generated,
        [
            "arith",
            "arith-digits",
            "arith-small",
            "countdown",
            "pyfunc"
        ],
        "every generated pack is checked"
    );
    for name in generated {
        let files = builtin::regenerate(name).unwrap().unwrap();
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("packs")
            .join(name);
        for (file, text) in files {
            let path = dir.join(file);
            if bless {
                std::fs::write(&path, &text).unwrap();
                continue;
            }
            let on_disk = std::fs::read_to_string(&path).unwrap();
            assert!(
                on_disk == text,
                "{} differs from its recipe: rebuild with GRPO_BLESS=1",
                path.display()
            );
            let compiled = builtin::get(name)
                .unwrap()
                .files
                .iter()
                .find(|(f, _)| *f == file)
                .unwrap()
                .1;
            assert!(
                compiled == text,
                "builtin:{name}/{file} is stale: rebuild the crate"
            );
        }
    }
}

#[test]
fn arith_suits_a_tiny_model() {
    let pack = Pack::load("builtin:arith").unwrap();
    let train = pack.split("train").unwrap();
    let eval = pack.split("eval").unwrap();
    assert!(train.len() >= 2000 && eval.len() >= 200);
    let train_prompts: HashSet<&str> = train.iter().map(Task::prompt).collect();
    assert!(
        eval.iter().all(|t| !train_prompts.contains(t.prompt())),
        "eval overlaps train"
    );
    for t in train.iter().chain(eval) {
        assert_eq!(t.kind(), TaskKind::Math);
        assert!(t.prompt().len() <= 30, "{}", t.prompt());
    }
    // The compact template keeps the rendered prompt short.
    let longest = train
        .iter()
        .map(|t| pack.manifest.template.render(t).len())
        .max()
        .unwrap();
    assert!(longest <= 100, "{longest}");
    // Both one-step and two-step problems are present.
    let one_step = train
        .iter()
        .filter(|t| t.prompt().matches(['+', '-']).count() == 1)
        .count();
    assert!(one_step > 500 && one_step < 1500, "{one_step}");
}

#[test]
fn countdown_references_are_solutions() {
    let pack = Pack::load("builtin:countdown").unwrap();
    assert!(pack.split("train").unwrap().len() >= 1000);
    assert!(pack.split("eval").unwrap().len() >= 200);
    for t in pack.tasks() {
        let Task::Countdown(c) = t else {
            panic!("{t:?}")
        };
        let r = c.reference.as_deref().unwrap();
        assert_eq!(
            grpo_tasks::pack::countdown_reference_problem(r, &c.numbers, c.target, c.use_all),
            None
        );
    }
}

#[test]
fn python_pack_has_thirty_problems_of_both_test_styles() {
    let pack = Pack::load("builtin:python").unwrap();
    let tasks: Vec<&Task> = pack.tasks().collect();
    assert!(tasks.len() >= 30, "{}", tasks.len());
    let mut assert_style = 0;
    let mut stdio_style = 0;
    for t in &tasks {
        let Task::Code(c) = t else { panic!("{t:?}") };
        assert!(c.reference.is_some(), "{}", c.id);
        match c.tests {
            grpo_tasks::CodeTests::Assert(_) => assert_style += 1,
            grpo_tasks::CodeTests::Stdio(_) => stdio_style += 1,
            grpo_tasks::CodeTests::Call(_) => {}
        }
    }
    assert!(
        assert_style >= 10 && stdio_style >= 10,
        "{assert_style} assert, {stdio_style} stdio"
    );
}

#[test]
fn python_eval_split_is_held_out_and_mixes_test_styles() {
    let pack = Pack::load("builtin:python").unwrap();
    let train = pack.split("train").unwrap();
    let eval = pack.split("eval").unwrap();
    assert!(eval.len() >= 12, "{}", eval.len());
    let train_ids: HashSet<&str> = train.iter().map(Task::id).collect();
    let train_prompts: HashSet<&str> = train.iter().map(Task::prompt).collect();
    let mut styles = HashSet::new();
    for t in eval {
        assert!(!train_ids.contains(t.id()), "{}", t.id());
        assert!(!train_prompts.contains(t.prompt()), "{}", t.id());
        let Task::Code(c) = t else { panic!("{t:?}") };
        assert!(c.reference.is_some(), "{}", c.id);
        styles.insert(match c.tests {
            grpo_tasks::CodeTests::Assert(_) => "assert",
            grpo_tasks::CodeTests::Stdio(_) => "stdio",
            grpo_tasks::CodeTests::Call(_) => "call",
        });
    }
    assert_eq!(styles.len(), 3, "{styles:?}");
}

#[test]
fn pyfunc_suits_a_tiny_model() {
    let pack = Pack::load("builtin:pyfunc").unwrap();
    let train = pack.split("train").unwrap();
    let eval = pack.split("eval").unwrap();
    assert_eq!((train.len(), eval.len()), (2000, 200));
    let train_prompts: HashSet<&str> = train.iter().map(Task::prompt).collect();
    assert!(
        eval.iter().all(|t| !train_prompts.contains(t.prompt())),
        "eval overlaps train"
    );
    for (split, tasks) in [("train", train), ("eval", eval)] {
        let mut families = HashSet::new();
        for t in tasks {
            let Task::Code(c) = t else { panic!("{t:?}") };
            assert!(c.prompt.len() <= 70, "{}", c.prompt);
            let reference = c.reference.as_deref().unwrap();
            assert!(
                reference.len() <= 50 && !reference.contains('\n'),
                "{reference}"
            );
            let metadata = c.metadata.as_ref().unwrap();
            assert!(metadata["plan"].as_str().unwrap().len() <= 20, "{}", c.id);
            families.insert(metadata["family"].as_str().unwrap().to_owned());
        }
        assert_eq!(families.len(), 6, "{split}: {families:?}");
    }
}
