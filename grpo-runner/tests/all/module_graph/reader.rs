//! A crate's layers, read from its source: every `crate::` and `super::` path in `src/`
//! (comments left out) is an edge from the top-level module of the file it is written in to
//! the top-level module it names. Shared by the module-graph tests of grpo-runner and
//! grpo-sandbox (the latter includes this file by path).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level module → the top-level modules it names.
pub type Graph = BTreeMap<String, BTreeSet<String>>;

/// The `src/` folder of the crate whose tests include this file.
pub fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, with its module path from the crate root (`lib.rs` → `[]`,
/// `train/mod.rs` → `["train"]`, `rollout/sampler/decode.rs` → `["rollout", "sampler",
/// "decode"]`).
fn modules(dir: &Path, prefix: &[String], out: &mut Vec<(PathBuf, Vec<String>)>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("reads src/")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a UTF-8 file name")
            .to_owned();
        if path.is_dir() {
            let mut inner = prefix.to_vec();
            inner.push(name);
            modules(&path, &inner, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let mut module = prefix.to_vec();
            if !(name == "mod" || (prefix.is_empty() && name == "lib")) {
                module.push(name);
            }
            out.push((path, module));
        }
    }
}

/// `text` without its comments (`//` to the end of a line, `/* … */`), string literals kept.
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                out.extend(chars.next());
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The first path segment of every `crate::` path in `code` and, for `super::` paths, the
/// module path they reach from `module`: each as a path from the crate root, cut to its first
/// segment (the top-level module). `{a, b::c}` groups give one path per item.
fn named_roots(code: &str, module: &[String]) -> BTreeSet<String> {
    let mut roots = BTreeSet::new();
    let bytes: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !is_ident(bytes[i - 1]);
        let rest: String = bytes[i..bytes.len().min(i + 7)].iter().collect();
        if starts_word && rest.starts_with("crate::") {
            i += "crate::".len();
            collect_items(&bytes, &mut i, &mut roots, None);
            continue;
        }
        if starts_word && rest.starts_with("super::") {
            // Each `super` is one step up from the file's own module.
            let mut base: Vec<String> = module.to_vec();
            while bytes[i..].iter().collect::<String>().starts_with("super::") {
                base.pop();
                i += "super::".len();
            }
            collect_items(&bytes, &mut i, &mut roots, base.first().cloned());
            continue;
        }
        i += 1;
    }
    roots
}

/// Reads the item (or `{…}` group of items) at `bytes[*i..]`; each item's top-level module is
/// `root` when the path starts below one, else the item's own first segment.
fn collect_items(
    bytes: &[char],
    i: &mut usize,
    roots: &mut BTreeSet<String>,
    root: Option<String>,
) {
    if let Some(root) = root {
        roots.insert(root);
        return;
    }
    if bytes.get(*i) == Some(&'{') {
        // Each item of the group starts after `{` or a comma at depth 1.
        let mut depth = 0;
        let mut item_start = true;
        while let Some(&c) = bytes.get(*i) {
            match c {
                '{' => {
                    depth += 1;
                    item_start = depth == 1;
                }
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        *i += 1;
                        return;
                    }
                }
                ',' if depth == 1 => item_start = true,
                c if item_start && is_ident(c) => {
                    let name: String = bytes[*i..].iter().take_while(|c| is_ident(**c)).collect();
                    *i += name.len();
                    roots.insert(name);
                    item_start = false;
                    continue;
                }
                c if !c.is_whitespace() => item_start = false,
                _ => {}
            }
            *i += 1;
        }
        return;
    }
    let name: String = bytes[*i..].iter().take_while(|c| is_ident(**c)).collect();
    *i += name.len();
    if !name.is_empty() {
        roots.insert(name);
    }
}

/// The crate's graph of top-level modules, from its source. Modules in `sources_only` are
/// named by others but their own paths are not edges (a crate's `error` module, which names
/// the layers' error types so that `?` converts them).
pub fn source_graph(sources_only: &[&str]) -> Graph {
    let mut files = Vec::new();
    modules(&src(), &[], &mut files);
    let top: BTreeSet<String> = files
        .iter()
        .filter_map(|(_, m)| m.first().cloned())
        .collect();
    let mut graph = Graph::new();
    for (path, module) in &files {
        let Some(from) = module.first() else {
            continue; // lib.rs: the crate root declares every module
        };
        if sources_only.contains(&from.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(path).expect("reads a source file");
        let edges = graph.entry(from.clone()).or_default();
        for to in named_roots(&code_only(&text), module) {
            // `crate::Error`-style re-exports of the root name no module.
            if &to != from && top.contains(&to) {
                edges.insert(to);
            }
        }
    }
    graph
}

/// A cycle of `graph`, as the modules along it (first = last), when it has one.
pub fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &Graph,
        done: &mut BTreeSet<String>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, done, path) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut done, &mut Vec::new()))
}

/// Fails unless the crate's graph (with `sources_only` as in [`source_graph`]) holds every
/// edge of `known` (so an empty reading cannot pass) and has no cycle.
pub fn assert_layers(sources_only: &[&str], known: &[(&str, &str)]) {
    let graph = source_graph(sources_only);
    for (from, to) in known {
        assert!(
            graph.get(*from).is_some_and(|e| e.contains(*to)),
            "{from} → {to} not found in {graph:?}"
        );
    }
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import cycle: {}\ngraph: {graph:#?}", cycle.join(" → "));
    }
}

/// Fails when `src/` holds more than ten Rust files of its own.
pub fn assert_few_own_files() {
    let own = own_files();
    assert!(own.len() <= 10, "{} files: {own:?}", own.len());
}

/// The Rust files directly in `src/`.
pub fn own_files() -> Vec<String> {
    std::fs::read_dir(src())
        .expect("reads src/")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| p.display().to_string())
        .collect()
}

#[test]
fn paths_are_read_from_code_and_cycles_are_found() {
    let code = code_only(
        "use crate::{error::Error, model::{Model, KvCache}};\n\
         // use crate::commented::Out;\n\
         let s = \"// not a comment\"; use super::super::sibling::X; crate::inline::f();\n\
         /* crate::blocked */ use super::local;",
    );
    let roots = named_roots(&code, &["a".into(), "b".into(), "c".into()]);
    // From a::b::c: super::super:: is `a`, super:: is `a::b`: both inside `a`.
    let want: BTreeSet<String> = ["error", "model", "inline", "a"].map(String::from).into();
    assert_eq!(roots, want);
    let graph = |edges: &[(&str, &str)]| {
        let mut g = Graph::new();
        for (a, b) in edges {
            g.entry((*a).into()).or_default().insert((*b).into());
        }
        g
    };
    assert_eq!(
        find_cycle(&graph(&[("a", "b"), ("b", "c"), ("a", "c")])),
        None
    );
    assert_eq!(
        find_cycle(&graph(&[("a", "b"), ("b", "c"), ("c", "a")])),
        Some(["a", "b", "c", "a"].map(String::from).to_vec())
    );
}
