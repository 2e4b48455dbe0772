//! The crate's layers, read from its source by the reader grpo-runner's module-graph test
//! uses: the top-level modules (`engine`, `guest`, `sandbox`, `run_program`, `session`,
//! `judge`, `workspace`) import each other in no cycle, and `src/` holds no more than ten Rust
//! files of its own.

#[path = "../../../grpo-runner/tests/all/module_graph/reader.rs"]
mod reader;

use reader::{assert_few_own_files, assert_layers};

#[test]
fn the_top_level_modules_import_each_other_in_no_cycle() {
    // `error` names the layers' error types (the C/C++ toolchain's among them) so that `?`
    // converts them; it holds no logic, and every layer names it.
    assert_layers(
        &["error"],
        &[
            ("guest", "engine"),
            ("sandbox", "guest"),
            ("session", "sandbox"),
            ("judge", "run_program"),
        ],
    );
}

#[test]
fn src_holds_at_most_ten_rust_files_of_its_own() {
    assert_few_own_files();
}
