//! KodCode's rows: pytest-style test files rewritten as one assert program.

use serde_json::Value;

use super::Record;
use super::contests::copy;
use crate::error::ImportError;
use crate::task::{AssertTests, CodeMode, CodeTask, CodeTests, Language, Task};

/// A stand-in for the one pytest feature KodCode's tests use beyond plain asserts:
/// `pytest.raises` (as a context manager, with `match` and `.value`).
const PYTEST_SHIM: &str = r#"class _RaisesContext:
    def __init__(self, expected, match=None):
        self.expected = expected
        self.match = match
        self.value = None

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        if kind is None:
            raise AssertionError("DID NOT RAISE " + repr(self.expected))
        if not issubclass(kind, self.expected):
            return False
        if self.match is not None:
            import re
            if not re.search(self.match, str(value)):
                raise AssertionError("the exception does not match " + repr(self.match))
        self.value = value
        return True


class pytest:
    @staticmethod
    def raises(expected, match=None):
        return _RaisesContext(expected, match)
"#;

/// KodCode: the pytest file imports the solution as a module (`from solution import f`); the
/// sandbox runs solution and tests as one program, so those imports are removed, `pytest`
/// is replaced by a stand-in for `pytest.raises`, and every top-level `test_*` function is
/// called at the end. Tests that need more of pytest (fixtures, parametrize, other helpers)
/// are refused with an error on `test`.
pub(super) fn kodcode(r: &Record<'_>) -> Result<Task, ImportError> {
    let source_id = match r.opt_text("question_id")? {
        Some(id) => id,
        None => r.index.to_string(),
    };
    let code = kodcode_tests(&r.text("test")?).map_err(|m| r.error("test", m))?;
    let mut prompt = r.text("question")?;
    let declarations = kodcode_declarations(r)?;
    if !declarations.is_empty() {
        prompt.push_str("\n\nYour solution should define:\n");
        for d in declarations {
            prompt.push_str(&format!("{d}\n"));
        }
    }
    let mut metadata = r.metadata("kodcode", &source_id, Some("CC-BY-NC-4.0"));
    for key in ["subset", "style", "gpt_difficulty"] {
        copy(r, &mut metadata, key, key);
    }
    Ok(Task::Code(CodeTask {
        id: format!("kodcode/{source_id}"),
        prompt,
        language: Language::Python,
        mode: CodeMode::Full,
        tests: CodeTests::Assert(AssertTests {
            code,
            entry_point: None,
        }),
        reference: r.opt_text("solution")?,
        time_limit_ms: None,
        memory_mb: None,
        metadata: Some(metadata),
    }))
}

/// The functions `test_info` names, as their declarations (or names).
fn kodcode_declarations(r: &Record<'_>) -> Result<Vec<String>, ImportError> {
    let Some(info) = r.json("test_info")? else {
        return Ok(Vec::new());
    };
    let Value::Array(items) = info else {
        return Err(r.error("test_info", "expected a list"));
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let text = |k: &str| {
            item.get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        match text("function_declaration").or_else(|| text("function_name")) {
            Some(d) => out.push(d.trim().to_owned()),
            None => {
                return Err(r.error(&format!("test_info[{i}].function_name"), "missing"));
            }
        }
    }
    Ok(out)
}

/// The rewritten test program, or why it cannot run without pytest.
fn kodcode_tests(test: &str) -> Result<String, String> {
    let mut body = String::new();
    let mut tests = Vec::new();
    let mut in_import = false;
    let mut uses_pytest = false;
    for line in test.replace("\r\n", "\n").lines() {
        let trimmed = line.trim();
        if in_import {
            in_import = !trimmed.contains(')');
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("from solution import") {
            in_import = rest.contains('(') && !rest.contains(')');
            continue;
        }
        if trimmed == "import solution" || trimmed.starts_with("import solution ") {
            return Err(
                "imports the module `solution` by name; only `from solution import …` is rewritten"
                    .into(),
            );
        }
        if trimmed == "import pytest" || trimmed.starts_with("from pytest import") {
            uses_pytest = true;
            continue;
        }
        if trimmed.starts_with('@') {
            return Err(format!(
                "uses the decorator `{trimmed}`: fixtures and parametrized tests need pytest"
            ));
        }
        if let Some(rest) = line.strip_prefix("def test_") {
            let Some((name, after)) = rest.split_once('(') else {
                return Err(format!("cannot read the test function `{trimmed}`"));
            };
            if !after.trim_start().starts_with(')') {
                return Err(format!(
                    "test function `test_{name}` takes arguments (pytest fixtures)"
                ));
            }
            tests.push(format!("test_{name}"));
        }
        body.push_str(line);
        body.push('\n');
    }
    let mut rest = body.as_str();
    while let Some(i) = rest.find("pytest.") {
        rest = &rest[i + "pytest.".len()..];
        if !rest.starts_with("raises(") {
            let what: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            return Err(format!(
                "uses `pytest.{what}`; only `pytest.raises` is supported"
            ));
        }
    }
    if tests.is_empty() {
        return Err("defines no top-level `test_*` function".into());
    }
    let mut code = String::new();
    if uses_pytest || body.contains("pytest.") {
        code.push_str(PYTEST_SHIM);
        code.push('\n');
    }
    code.push_str(&body);
    code.push('\n');
    for t in tests {
        code.push_str(&format!("{t}()\n"));
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytest_files_are_rewritten_or_refused() {
        let code = kodcode_tests(
            "import pytest\nfrom solution import (\n    a,\n    b,\n)\n\ndef test_a():\n    assert a() == 1\n    with pytest.raises(ValueError):\n        b()\n",
        )
        .unwrap();
        assert!(!code.contains("from solution"), "{code}");
        assert!(code.contains("class pytest:"));
        assert!(code.ends_with("\ntest_a()\n"), "{code}");
        for (text, want) in [
            ("@pytest.fixture\ndef test_a():\n    pass\n", "decorator"),
            ("def test_a(tmp_path):\n    pass\n", "takes arguments"),
            ("import solution\ndef test_a():\n    pass\n", "by name"),
            (
                "def test_a():\n    assert pytest.approx(1) == 1\n",
                "pytest.approx",
            ),
            ("def helper():\n    pass\n", "no top-level"),
        ] {
            let err = kodcode_tests(text).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
        }
    }
}
