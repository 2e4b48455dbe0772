//! LiveCodeBench's call tests as `code_gen` runs them: with `fn_name`, each case calls
//! `Solution().fn_name(*args)` when the program defines a `Solution` class (LeetCode's form),
//! else the module-level function `fn_name`, and the result, tuples read as lists, must equal
//! the expected value. The cases come parsed from the call tests of verl's ground truth; this
//! writes them as the assert program the sandbox runs after the completion's code.

use grpo_tasks::{AssertTests, CallTests, CodeTests, Task};
use serde_json::Value;

/// Turns `task`'s call tests, if it has any, into LiveCodeBench's assert program.
pub(crate) fn as_live_code_bench(task: &mut Task) {
    if let Task::Code(code) = task
        && let CodeTests::Call(calls) = &code.tests
    {
        code.tests = CodeTests::Assert(AssertTests {
            code: program(calls),
            entry_point: None,
        });
    }
}

/// A JSON value as a Python expression (decoded from its JSON text at run time).
fn literal(value: &Value) -> String {
    let text = serde_json::to_string(value).unwrap_or_else(|_| "null".into());
    format!(
        "_json.loads({})",
        serde_json::to_string(&text).unwrap_or_else(|_| "\"null\"".into())
    )
}

fn program(calls: &CallTests) -> String {
    let name = serde_json::to_string(&calls.entry_point).unwrap_or_default();
    let mut code = format!(
        r#"import json as _json


def _plain(value):
    kind = type(value)
    if kind is list or kind is tuple:
        return [_plain(v) for v in value]
    if kind is dict:
        return {{k: _plain(v) for k, v in value.items()}}
    if value is None or kind in (bool, int, float, str):
        return value
    raise AssertionError("the function returned a " + kind.__name__ + ", not plain data")


_callee = getattr(Solution(), {name}) if "Solution" in globals() else globals()[{name}]


def _case(args, expected):
    got = _plain(_callee(*args))
    assert got == expected, "expected " + repr(expected)[:120] + ", got " + repr(got)[:120]


"#
    );
    for case in &calls.cases {
        code.push_str(&format!(
            "_case({}, {})\n",
            literal(&Value::Array(case.args.clone())),
            literal(&case.expected)
        ));
    }
    code
}
