//! The crate's layers, read from its source (see `reader.rs`): the top-level modules import
//! each other in no cycle, and `src/` holds no more than ten Rust files of its own; the rest
//! sit in the layers' folders.

mod reader;

use reader::{find_cycle, own_files, source_graph};

#[test]
fn the_top_level_modules_import_each_other_in_no_cycle() {
    let graph = source_graph(&[]);
    // The reading finds the layers' known imports, so an empty graph cannot pass.
    for (from, to) in [
        ("train", "rollout"),
        ("train", "run"),
        ("rollout", "model"),
        ("run", "rollout"),
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
