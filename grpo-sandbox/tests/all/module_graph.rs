//! The crate's layers, read from its source by the reader grpo-runner's module-graph test
//! uses: the top-level modules (`engine`, `guest`, `sandbox`, `run_program`, `session`,
//! `judge`, `workspace`) import each other in no cycle, and `src/` holds no more than ten Rust
//! files of its own.

#[path = "../../../grpo-runner/tests/all/module_graph/reader.rs"]
mod reader;

use reader::{find_cycle, own_files, source_graph};

#[test]
fn the_top_level_modules_import_each_other_in_no_cycle() {
    // `error` names the layers' error types (the C/C++ toolchain's among them) so that `?`
    // converts them; it holds no logic, and every layer names it.
    let graph = source_graph(&["error"]);
    // The reading finds the layers' known imports, so an empty graph cannot pass.
    for (from, to) in [
        ("guest", "engine"),
        ("sandbox", "guest"),
        ("session", "sandbox"),
        ("judge", "run_program"),
    ] {
        assert!(
            graph.get(from).is_some_and(|e| e.contains(to)),
            "{from} → {to} not found in {graph:?}"
        );
    }
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import cycle: {}\ngraph: {graph:#?}", cycle.join(" → "));
    }
}

#[test]
fn src_holds_at_most_ten_rust_files_of_its_own() {
    let own = own_files();
    assert!(own.len() <= 10, "{} files: {own:?}", own.len());
}
