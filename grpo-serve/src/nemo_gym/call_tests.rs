//! LiveCodeBench's call tests as `code_gen` runs them: with `fn_name`, each case calls
//! `Solution().fn_name(*args)` when the program defines a `Solution` class (LeetCode's form),
//! else the module-level function `fn_name`, and the result, tuples read as lists, must equal
//! the expected value. The cases come parsed from the call tests of verl's ground truth; the
//! assert program is the importers' own ([`grpo_tasks::import::live_code_bench_asserts`]).

use grpo_tasks::import::live_code_bench_asserts;
use grpo_tasks::{AssertTests, CodeTests, Task};

/// Turns `task`'s call tests, if it has any, into LiveCodeBench's assert program.
pub(crate) fn as_live_code_bench(task: &mut Task) {
    if let Task::Code(code) = task
        && let CodeTests::Call(calls) = &code.tests
    {
        let cases: Vec<_> = calls
            .cases
            .iter()
            .map(|case| (case.args.clone(), case.expected.clone()))
            .collect();
        code.tests = CodeTests::Assert(AssertTests {
            code: live_code_bench_asserts(&calls.entry_point, &cases),
            entry_point: None,
        });
    }
}
