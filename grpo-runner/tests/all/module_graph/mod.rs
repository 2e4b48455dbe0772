//! The crate's layers, read from its source (see `reader.rs`): the top-level modules import
//! each other in no cycle, and `src/` holds no more than ten Rust files of its own; the rest
//! sit in the layers' folders.

mod reader;

use reader::{assert_few_own_files, assert_layers};

#[test]
fn the_top_level_modules_import_each_other_in_no_cycle() {
    assert_layers(
        &[],
        &[
            ("train", "rollout"),
            ("train", "run"),
            ("rollout", "model"),
            ("run", "rollout"),
        ],
    );
}

#[test]
fn src_holds_at_most_ten_rust_files_of_its_own() {
    assert_few_own_files();
}
