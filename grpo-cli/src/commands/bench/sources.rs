//! The requests of a sweep, planned once from the task packs and made concrete for each
//! target and each send: a target's memory limit goes in then, and a compiled program gets
//! a source of its own each time (a comment with a number that never repeats in a run), so
//! a server's compile cache (keyed by the source's hash) answers nothing unless
//! `--repeat-sources` asks it to be measured.

use std::collections::{BTreeMap, BTreeSet};

use grpo_tasks::{CodeTests, Language, Task};
use serde_json::{Value, json};

use super::hostile::Hostile;

/// The endpoint under load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Api {
    /// SandboxFusion's `POST /run_code`.
    RunCode,
    /// `POST /v1/score`.
    Score,
}

impl Api {
    pub fn name(self) -> &'static str {
        match self {
            Api::RunCode => "run_code",
            Api::Score => "score",
        }
    }
}

/// What a request holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Reference,
    Wrong,
    Hostile,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Reference => "reference",
            Kind::Wrong => "wrong",
            Kind::Hostile => "hostile",
        }
    }
}

/// Where a request's source sits in its body, for the comment that makes it unique.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SourceAt {
    /// `/run_code`'s `code`.
    Code,
    /// `/v1/score`'s one completion, a fenced block.
    Completion,
}

/// One planned request.
#[derive(Debug, Clone)]
pub struct Planned {
    pub kind: Kind,
    /// The program's language (`None` for a math or countdown answer).
    pub language: Option<Language>,
    pub path: &'static str,
    body: Value,
    at: SourceAt,
}

/// How a request is made concrete for one target.
#[derive(Debug, Clone, Copy)]
pub struct Concrete {
    /// The memory limit to ask for; `None` leaves the target's default.
    pub memory_mb: Option<u64>,
    /// Give compiled programs a source of their own (`n` and `run` make it unique).
    pub unique: bool,
    pub run: u64,
    pub n: u64,
}

impl Planned {
    /// The body to send.
    pub fn body(&self, how: Concrete) -> Vec<u8> {
        let mut body = self.body.clone();
        match self.at {
            SourceAt::Code => {
                // SandboxFusion's "no limit" (and our server's default) is -1.
                body["memory_limit_MB"] = json!(how.memory_mb.map_or(-1, |m| m as i64));
            }
            SourceAt::Completion => {
                if let (Some(m), Some(task)) = (how.memory_mb, body["task"].as_object_mut())
                    && task.contains_key("language")
                {
                    task.insert("memory_mb".to_owned(), json!(m));
                }
            }
        }
        if how.unique && self.language.is_some_and(Language::is_compiled) {
            let mark = format!("// grpo bench {}-{}\n", how.run, how.n);
            match self.at {
                SourceAt::Code => {
                    if let Some(code) = body["code"].as_str() {
                        body["code"] = json!(format!("{code}\n{mark}"));
                    }
                }
                SourceAt::Completion => {
                    if let Some(c) = body["completions"][0].as_str() {
                        let cut = c.rfind("```").unwrap_or(c.len());
                        body["completions"][0] = json!(format!("{}{mark}{}", &c[..cut], &c[cut..]));
                    }
                }
            }
        }
        serde_json::to_vec(&body).unwrap_or_default()
    }
}

/// A `/run_code` body without its memory limit (each target's goes in at send time).
pub fn run_code_body(program: String, stdin: String, language: Language, timeout_s: f64) -> Value {
    json!({
        "code": program, "stdin": stdin, "language": language.sandbox_fusion_name(),
        "run_timeout": timeout_s, "compile_timeout": timeout_s.max(10.0),
        "files": {}, "fetch_files": [],
    })
}

/// A hostile program as a `/run_code` request.
pub fn hostile_request(hostile: &Hostile, timeout_s: f64) -> Planned {
    Planned {
        kind: Kind::Hostile,
        language: Some(hostile.language),
        path: "/run_code",
        body: run_code_body(
            hostile.source.clone(),
            String::new(),
            hostile.language,
            timeout_s,
        ),
        at: SourceAt::Code,
    }
}

/// The program `/run_code` runs for `source` against `task`'s tests: the source followed by
/// the assert tests, or the source with the first stdio case's input.
fn run_code_program(task: &Task, source: &str) -> Option<(String, String)> {
    let Task::Code(code) = task else { return None };
    match &code.tests {
        CodeTests::Assert(t) => Some((format!("{source}\n\n{}\n", t.code), String::new())),
        CodeTests::Stdio(t) => Some((
            source.to_owned(),
            t.cases.first().map(|c| c.stdin.clone()).unwrap_or_default(),
        )),
        // Call tests need the scorer's harness.
        _ => None,
    }
}

/// The reference answer of a task, as a completion.
fn reference_completion(task: &Task) -> Option<String> {
    match task {
        Task::Math(m) => Some(format!("The answer is \\boxed{{{}}}.", m.answer)),
        Task::Code(c) => c.reference.as_ref().map(|r| format!("```\n{r}\n```")),
        Task::Countdown(c) => c
            .reference
            .as_ref()
            .map(|r| format!("<answer>{r}</answer>")),
    }
}

/// The mix of references, wrong programs and hostile programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mix {
    pub references: usize,
    pub wrong: usize,
    pub hostile: usize,
}

impl Mix {
    /// Parses `R:W:H`.
    pub fn parse(text: &str) -> anyhow::Result<Mix> {
        let bad = || anyhow::anyhow!("--mix {text:?}: expected R:W:H, three whole numbers");
        let parts: Vec<usize> = text
            .split(':')
            .map(|p| p.trim().parse::<usize>())
            .collect::<Result<_, _>>()
            .map_err(|_| bad())?;
        let [references, wrong, hostile] = parts[..] else {
            return Err(bad());
        };
        anyhow::ensure!(
            references + wrong + hostile > 0,
            "--mix {text:?}: at least one must be positive"
        );
        Ok(Mix {
            references,
            wrong,
            hostile,
        })
    }
}

/// The plan, and the code tasks left out because a target does not speak their language.
#[derive(Debug, Default)]
pub struct Plan {
    pub requests: Vec<Planned>,
    /// Tasks left out, by language.
    pub skipped: BTreeMap<Language, usize>,
}

/// The tasks in turns of their languages (the first Python task, the first C++ one, …, then
/// the second of each), so that a short run still sends every language.
pub fn interleave<'a>(tasks: &[&'a Task]) -> Vec<&'a Task> {
    let mut groups: Vec<(Option<Language>, Vec<&'a Task>)> = Vec::new();
    for &task in tasks {
        let key = match task {
            Task::Code(c) => Some(c.language),
            _ => None,
        };
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, group)) => group.push(task),
            None => groups.push((key, vec![task])),
        }
    }
    let longest = groups.iter().map(|(_, g)| g.len()).max().unwrap_or(0);
    (0..longest)
        .flat_map(|i| groups.iter().filter_map(move |(_, g)| g.get(i).copied()))
        .collect()
}

/// Every request of one cycle through the tasks: for each task, its reference, a wrong
/// program (the next task's reference in the same language) and a hostile program (the
/// suite in turn, among those in `languages`), weighted by the mix. Code tasks in a
/// language outside `languages` (those every target speaks) are left out and counted.
pub fn plan(
    tasks: &[&Task],
    api: Api,
    mix: Mix,
    timeout_s: f64,
    languages: &BTreeSet<Language>,
    hostiles: &[Hostile],
) -> anyhow::Result<Plan> {
    let hostiles: Vec<&Hostile> = hostiles
        .iter()
        .filter(|h| languages.contains(&h.language))
        .collect();
    let mut out = Plan::default();
    let mut turn = 0usize;
    for (i, task) in tasks.iter().enumerate() {
        if let Task::Code(code) = task
            && !languages.contains(&code.language)
        {
            *out.skipped.entry(code.language).or_default() += 1;
            continue;
        }
        let Some(reference) = reference_completion(task) else {
            continue;
        };
        let language = match task {
            Task::Code(c) => Some(c.language),
            _ => None,
        };
        // The wrong program: the next task's reference in the same language.
        let next = (1..tasks.len())
            .map(|k| tasks[(i + k) % tasks.len()])
            .find(|t| match t {
                Task::Code(c) => Some(c.language) == language,
                _ => language.is_none(),
            })
            .unwrap_or(tasks[(i + 1) % tasks.len()]);
        let mut bodies: Vec<(Kind, usize, Value, SourceAt, Option<Language>)> = Vec::new();
        match api {
            Api::RunCode => {
                let Task::Code(code) = task else { continue };
                let (Some(source), Some(timeout)) = (&code.reference, Some(timeout_s)) else {
                    continue;
                };
                let Some((program, stdin)) = run_code_program(task, source) else {
                    continue;
                };
                let wrong = match next {
                    Task::Code(o) if o.language == code.language && o.id != code.id => {
                        o.reference.clone()
                    }
                    _ => None,
                }
                .unwrap_or_else(|| String::from("\n"));
                let (wrong, wrong_stdin) = run_code_program(task, &wrong).unwrap_or_default();
                let body = |p: String, s: String| run_code_body(p, s, code.language, timeout);
                bodies.push((
                    Kind::Reference,
                    mix.references,
                    body(program, stdin),
                    SourceAt::Code,
                    language,
                ));
                bodies.push((
                    Kind::Wrong,
                    mix.wrong,
                    body(wrong, wrong_stdin),
                    SourceAt::Code,
                    language,
                ));
                if let Some(h) = (!hostiles.is_empty()).then(|| hostiles[turn % hostiles.len()]) {
                    let r = hostile_request(h, timeout_s);
                    bodies.push((
                        Kind::Hostile,
                        mix.hostile,
                        r.body,
                        SourceAt::Code,
                        r.language,
                    ));
                }
            }
            Api::Score => {
                let mut value = serde_json::to_value(task)?;
                if let (Task::Code(_), Some(obj)) = (task, value.as_object_mut()) {
                    obj.insert(
                        "time_limit_ms".to_owned(),
                        json!((timeout_s * 1000.0).ceil() as u64),
                    );
                }
                let wrong = reference_completion(next)
                    .filter(|w| w != &reference)
                    .unwrap_or_else(|| "no answer".to_owned());
                let hostile = match (task, hostiles.get(turn % hostiles.len().max(1))) {
                    (Task::Code(_), Some(h)) if h.language == Language::Python => {
                        format!("```python\n{}```", h.source)
                    }
                    (Task::Code(_), _) => "```python\nwhile True:\n    pass\n```".to_owned(),
                    // A parser's worst case: deep nesting and a long tail.
                    _ => format!("\\boxed{{{}}}", "{\\frac{1}{".repeat(2000)),
                };
                for (kind, weight, completion) in [
                    (Kind::Reference, mix.references, reference),
                    (Kind::Wrong, mix.wrong, wrong),
                    (Kind::Hostile, mix.hostile, hostile),
                ] {
                    let body = json!({"task": value, "completions": [completion]});
                    let lang = if kind == Kind::Hostile {
                        None
                    } else {
                        language
                    };
                    bodies.push((kind, weight, body, SourceAt::Completion, lang));
                }
            }
        }
        turn += 1;
        for (kind, weight, body, at, language) in bodies {
            for _ in 0..weight {
                out.requests.push(Planned {
                    kind,
                    language,
                    path: match at {
                        SourceAt::Code => "/run_code",
                        SourceAt::Completion => "/v1/score",
                    },
                    body: body.clone(),
                    at,
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::hostile::{Sizes, programs};
    use super::*;
    use grpo_tasks::Pack;

    fn all_languages() -> BTreeSet<Language> {
        Language::ALL.into_iter().collect()
    }

    fn suite() -> Vec<Hostile> {
        programs(&Sizes {
            hog_mb: 512,
            flood_mb: 4,
            ports: vec![8080],
        })
    }

    #[test]
    fn mixes_parse_or_name_the_flag() {
        assert_eq!(
            Mix::parse("2:1:1").unwrap(),
            Mix {
                references: 2,
                wrong: 1,
                hostile: 1
            }
        );
        for bad in ["0:0:0", "1:2", "a:b:c", "1:2:3:4"] {
            let e = Mix::parse(bad).unwrap_err().to_string();
            assert!(e.contains("--mix"), "{e}");
        }
    }

    #[test]
    fn plans_cover_every_kind_in_the_mix() {
        let pack = Pack::load("builtin:python").unwrap();
        let tasks: Vec<&Task> = pack.tasks().collect();
        let mix = Mix::parse("2:1:1").unwrap();
        let plan = plan(&tasks, Api::RunCode, mix, 1.0, &all_languages(), &suite()).unwrap();
        let count = |k: Kind| plan.requests.iter().filter(|p| p.kind == k).count();
        assert_eq!(count(Kind::Reference), 2 * count(Kind::Wrong));
        assert_eq!(count(Kind::Wrong), count(Kind::Hostile));
        assert!(count(Kind::Hostile) > 0);
        let math = Pack::load("builtin:arith").unwrap();
        let tasks: Vec<&Task> = math.tasks().collect();
        let empty = |api| {
            super::plan(&tasks, api, mix, 1.0, &all_languages(), &suite())
                .unwrap()
                .requests
                .is_empty()
        };
        assert!(empty(Api::RunCode));
        assert!(!empty(Api::Score));
    }

    #[test]
    fn languages_a_target_lacks_are_left_out_and_counted() {
        let pack = Pack::load("builtin:polyglot").unwrap();
        let tasks: Vec<&Task> = pack.tasks().collect();
        let without_c: BTreeSet<Language> = all_languages()
            .into_iter()
            .filter(|l| *l != Language::C)
            .collect();
        let mix = Mix::parse("1:0:0").unwrap();
        let plan = plan(&tasks, Api::RunCode, mix, 1.0, &without_c, &suite()).unwrap();
        assert!(plan.skipped[&Language::C] > 0);
        assert!(
            plan.requests
                .iter()
                .all(|p| p.language != Some(Language::C))
        );
        assert!(
            plan.requests
                .iter()
                .any(|p| p.language == Some(Language::Cpp))
        );
    }

    #[test]
    fn short_runs_send_every_language() {
        let python = Pack::load("builtin:python").unwrap();
        let polyglot = Pack::load("builtin:polyglot").unwrap();
        let tasks: Vec<&Task> = python.tasks().chain(polyglot.tasks()).collect();
        let turns = interleave(&tasks);
        assert_eq!(turns.len(), tasks.len());
        let first: BTreeSet<Language> = turns[..5]
            .iter()
            .filter_map(|t| match t {
                Task::Code(c) => Some(c.language),
                _ => None,
            })
            .collect();
        assert_eq!(first.len(), 5, "{first:?}");
    }

    #[test]
    fn compiled_sources_are_unique_per_send_unless_repeated() {
        let pack = Pack::load("builtin:polyglot").unwrap();
        let tasks: Vec<&Task> = pack.tasks().collect();
        let mix = Mix::parse("1:0:0").unwrap();
        let plan = plan(&tasks, Api::RunCode, mix, 1.0, &all_languages(), &suite()).unwrap();
        let cpp = plan
            .requests
            .iter()
            .find(|p| p.language == Some(Language::Cpp))
            .unwrap();
        let js = plan
            .requests
            .iter()
            .find(|p| p.language == Some(Language::Javascript))
            .unwrap();
        let how = |unique, n| Concrete {
            memory_mb: Some(300),
            unique,
            run: 7,
            n,
        };
        assert_ne!(cpp.body(how(true, 1)), cpp.body(how(true, 2)));
        assert_eq!(cpp.body(how(false, 1)), cpp.body(how(false, 2)));
        // Interpreted programs are never rewritten.
        assert_eq!(js.body(how(true, 1)), js.body(how(true, 2)));
        let sent: Value = serde_json::from_slice(&cpp.body(how(true, 3))).unwrap();
        assert_eq!(sent["memory_limit_MB"], 300);
        assert!(
            sent["code"]
                .as_str()
                .unwrap()
                .ends_with("// grpo bench 7-3\n")
        );
        let none: Value = serde_json::from_slice(&cpp.body(Concrete {
            memory_mb: None,
            ..how(true, 1)
        }))
        .unwrap();
        assert_eq!(none["memory_limit_MB"], -1);
    }
}
