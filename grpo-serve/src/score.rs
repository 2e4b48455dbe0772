//! The native batch endpoint `POST /v1/score`: one task and a GRPO group of completions in,
//! one [`ScoredResult`](grpo_rewards::ScoredResult) per completion out, in order.
//!
//! The task comes in one of three shapes:
//!
//! - `"task"`: one task in our pack schema (math, countdown or code);
//! - `"ground_truth"`: verl's (converted by [`grpo_tasks::import::foreign`], as the Python
//!   adapters convert it). A JSON object (or a string holding one) with `inputs`,
//!   `outputs` and optional `fn_name` is a code task (stdin/stdout cases; with `fn_name`,
//!   call cases whose arguments are the input's JSON lines, as verl's wrapper reads them);
//!   any other string or a number is a math answer;
//! - `"verification_info"`: open-r1's `{"language": "python", "test_cases": [{"input",
//!   "output", "type": "stdin_stdout"}]}` (or `test_cases` as a JSON string of the verl
//!   object). open-r1 rewards the fraction of cases passed, so this shape defaults to
//!   partial credit.
//!
//! Options: `credit` (`binary` | `partial`, for code), `format_weight` (adds the
//! `<think>…</think><answer>…</answer>` format reward with this weight), `id` (the task id
//! reported for the two foreign shapes; default `request`).

use grpo_tasks::import::foreign::{ForeignError, from_ground_truth, from_verification_info};
use grpo_tasks::{CodeTask, CodeTests, Task};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::ApiError;
use grpo_rewards::code::Credit;
use grpo_rewards::result::ScoredResult;

/// A `POST /v1/score` body.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScoreRequest {
    /// A task in our pack schema.
    #[serde(default)]
    pub task: Option<Value>,
    /// verl's ground truth.
    #[serde(default)]
    pub ground_truth: Option<Value>,
    /// open-r1's verification info.
    #[serde(default)]
    pub verification_info: Option<Value>,
    /// The completions of one group.
    pub completions: Vec<String>,
    /// The task id reported for `ground_truth` and `verification_info`.
    #[serde(default)]
    pub id: Option<String>,
    /// Binary or partial credit for code tasks (`"binary"` | `"partial"`).
    #[serde(default)]
    pub credit: Option<Credit>,
    /// Weight of the format reward; absent means no format reward.
    #[serde(default)]
    pub format_weight: Option<f64>,
}

/// A `POST /v1/score` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreResponse {
    /// One result per completion, in order.
    pub results: Vec<ScoredResult>,
}

/// A request checked and turned into our schema.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedScore {
    /// The task.
    pub task: Task,
    /// The credit mode for code.
    pub credit: Credit,
    /// The format reward's weight, when asked for.
    pub format_weight: Option<f64>,
}

impl ScoreRequest {
    /// Checks the request and converts its task, once for the whole group.
    pub fn prepare(&self, max_completions: usize) -> Result<PreparedScore, ApiError> {
        if self.completions.len() > max_completions {
            return Err(ApiError::invalid(format!(
                "{} completions in one request; the limit is {max_completions}",
                self.completions.len()
            )));
        }
        let shape = TaskShape {
            task: self.task.as_ref(),
            ground_truth: self.ground_truth.as_ref(),
            verification_info: self.verification_info.as_ref(),
        };
        shape.prepare(
            self.id.as_deref().unwrap_or("request"),
            self.credit,
            self.format_weight,
        )
    }
}

/// The task of a request in one of the three shapes `/v1/score` takes (exactly one given).
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskShape<'a> {
    /// A task in our pack schema.
    pub task: Option<&'a Value>,
    /// verl's ground truth.
    pub ground_truth: Option<&'a Value>,
    /// open-r1's verification info.
    pub verification_info: Option<&'a Value>,
}

impl TaskShape<'_> {
    /// Converts and checks the task (the foreign shapes reported as task `id`), with the
    /// request's credit and format weight.
    pub fn prepare(
        &self,
        id: &str,
        credit: Option<Credit>,
        format_weight: Option<f64>,
    ) -> Result<PreparedScore, ApiError> {
        if format_weight.is_some_and(|w| !w.is_finite()) {
            return Err(ApiError::invalid("`format_weight` must be a finite number"));
        }
        let (task, default_credit) = match (self.task, self.ground_truth, self.verification_info) {
            (Some(task), None, None) => {
                let task = grpo_tasks::read::task_from_value(task.clone()).map_err(|e| {
                    let field = e.field.map_or("task".to_owned(), |f| format!("task.{f}"));
                    ApiError::invalid(format!("`{field}`: {}", e.message))
                })?;
                (task, Credit::Binary)
            }
            (None, Some(gt), None) => (from_ground_truth(gt, id).map_err(foreign)?, Credit::Binary),
            (None, None, Some(info)) => (
                from_verification_info(info, id).map_err(foreign)?,
                Credit::Partial,
            ),
            _ => {
                return Err(ApiError::invalid(
                    "give exactly one of `task`, `ground_truth` (verl) or `verification_info` (open-r1)",
                ));
            }
        };
        // The same meaning checks as pack loading, on the typed task, whatever its shape was
        // (verl's and open-r1's shapes carry no prompt: that rule is ours alone).
        let ours = self.task.is_some();
        if let Some(problem) = task
            .validate()
            .into_iter()
            .find(|p| ours || p.field != "prompt")
        {
            let prefix = if ours { "task." } else { "" };
            return Err(ApiError::invalid(format!(
                "`{prefix}{}` {}",
                problem.field, problem.message
            )));
        }
        Ok(PreparedScore {
            task,
            credit: credit.unwrap_or(default_credit),
            format_weight,
        })
    }
}

/// A foreign shape's error as the service answers it (422 naming the field, or the
/// unsupported language).
fn foreign(e: ForeignError) -> ApiError {
    match e {
        ForeignError::UnsupportedLanguage { language } => {
            ApiError::UnsupportedLanguage { language }
        }
        other => ApiError::invalid(other.to_string()),
    }
}

impl PreparedScore {
    /// How many sandbox programs scoring `completions` completions runs.
    pub fn sandbox_runs(&self, completions: usize) -> u64 {
        match &self.task {
            // One program per stdio case; assert and call tests run in one program.
            Task::Code(CodeTask {
                tests: CodeTests::Stdio(t),
                ..
            }) => (t.cases.len() * completions) as u64,
            Task::Code(_) => completions as u64,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use grpo_tasks::{CodeMode, StdioCase, StdioTests};
    use serde_json::json;

    fn prepare(body: Value) -> Result<PreparedScore, ApiError> {
        serde_json::from_value::<ScoreRequest>(body)
            .unwrap()
            .prepare(64)
    }

    #[test]
    fn our_task_schema_passes_through() {
        let p = prepare(
            json!({"task": {"id": "m1", "kind": "math", "prompt": "1+1", "answer": "2"},
                               "completions": ["2"]}),
        )
        .unwrap();
        assert_eq!(p.task.id(), "m1");
        assert_eq!(p.credit, Credit::Binary);
        let err = prepare(
            json!({"task": {"id": "m1", "kind": "math", "prompt": "", "answer": "2", "x": 1},
                                 "completions": []}),
        )
        .unwrap_err();
        assert!(err.to_string().contains("unknown field `x`"), "{err}");
    }

    #[test]
    fn verl_ground_truth_shapes() {
        // A math answer, as a string or a number.
        let p = prepare(json!({"ground_truth": "\\frac{1}{2}", "completions": []})).unwrap();
        assert!(matches!(&p.task, Task::Math(m) if m.answer == "\\frac{1}{2}"));
        let p = prepare(json!({"ground_truth": 42, "completions": [], "id": "q7"})).unwrap();
        assert!(matches!(&p.task, Task::Math(m) if m.answer == "42" && m.id == "q7"));
        // Stdin/stdout cases, given as an object or as its JSON text.
        for gt in [
            json!({"inputs": ["1 2\n"], "outputs": ["3\n"]}),
            json!("{\"inputs\": [\"1 2\\n\"], \"outputs\": [\"3\\n\"]}"),
        ] {
            let p = prepare(json!({"ground_truth": gt, "completions": []})).unwrap();
            let Task::Code(c) = &p.task else {
                panic!("not code")
            };
            assert_eq!(
                c.tests,
                CodeTests::Stdio(StdioTests {
                    cases: vec![StdioCase {
                        stdin: "1 2\n".into(),
                        stdout: "3\n".into(),
                        ..Default::default()
                    }],
                    float_tolerance: None,
                    ..Default::default()
                })
            );
            assert_eq!(c.mode, CodeMode::Full);
        }
        // fn_name: each input line is one JSON argument (verl's wrapper); outputs are JSON text.
        let p = prepare(json!({"ground_truth": {"inputs": ["[1, 2]\n3", "[]\n0"], "outputs": ["[1, 2, 3]", "[0]"],
                                                "fn_name": "add"}, "completions": []}))
        .unwrap();
        let Task::Code(c) = &p.task else {
            panic!("not code")
        };
        let CodeTests::Call(t) = &c.tests else {
            panic!("not call")
        };
        assert_eq!(t.entry_point, "add");
        assert_eq!(t.cases[0].args, vec![json!([1, 2]), json!(3)]);
        assert_eq!(t.cases[0].expected, json!([1, 2, 3]));
        assert_eq!(t.cases[1].args, vec![json!([]), json!(0)]);
        assert_eq!(
            p.sandbox_runs(4),
            4,
            "call cases run in one program per completion"
        );
    }

    #[test]
    fn open_r1_verification_info_defaults_to_partial_credit() {
        let info = json!({"language": "python", "test_cases": [
            {"input": "1\n", "output": "1\n", "type": "stdin_stdout"},
            {"input": "2\n", "output": "4\n", "type": "stdin_stdout"}]});
        let p = prepare(json!({"verification_info": info, "completions": []})).unwrap();
        assert_eq!(p.credit, Credit::Partial);
        assert_eq!(
            p.sandbox_runs(3),
            6,
            "one run per completion and stdio case"
        );
        let p = prepare(json!({"verification_info": info, "completions": [], "credit": "binary"}))
            .unwrap();
        assert_eq!(p.credit, Credit::Binary);
    }

    #[test]
    fn bad_shapes_are_422_with_the_field_named() {
        let cases = [
            (json!({"completions": []}), "exactly one of"),
            (
                json!({"task": {}, "ground_truth": "1", "completions": []}),
                "exactly one of",
            ),
            (
                json!({"ground_truth": [1], "completions": []}),
                "got a list",
            ),
            (
                json!({"ground_truth": {"inputs": ["1"]}, "completions": []}),
                "`ground_truth.outputs` is missing",
            ),
            (
                json!({"ground_truth": {"inputs": ["1"], "outputs": []}, "completions": []}),
                "1 inputs but 0 outputs",
            ),
            (
                json!({"ground_truth": {"inputs": ["{"], "outputs": ["1"], "fn_name": "f"}, "completions": []}),
                "`ground_truth.inputs[0]`: line \"{\" is not a JSON value",
            ),
            (
                json!({"ground_truth": {"inputs": [], "outputs": [], "fn_name": "f(x)"}, "completions": []}),
                "must be a Python identifier",
            ),
            (
                json!({"verification_info": {"language": "python", "test_cases": [{"input": "1"}]}, "completions": []}),
                "`verification_info.test_cases[0].output` is missing",
            ),
            (
                json!({"verification_info": {"language": "python", "test_cases": [{"input": "", "output": "", "type": "fn"}]},
                    "completions": []}),
                "only \"stdin_stdout\"",
            ),
            (
                json!({"verification_info": {"test_cases": "{"}, "completions": []}),
                "not JSON",
            ),
            (
                json!({"ground_truth": "1", "completions": [], "format_weight": null, "credit": "binary"}),
                "",
            ),
        ];
        for (body, needle) in cases {
            match prepare(body.clone()) {
                Err(err) => {
                    assert_eq!(err.status(), axum::http::StatusCode::UNPROCESSABLE_ENTITY);
                    assert!(err.to_string().contains(needle), "{body}: {err}");
                }
                Ok(_) => assert!(needle.is_empty(), "{body} was accepted"),
            }
        }
        let err = prepare(
            json!({"verification_info": {"language": "cobol", "test_cases": []}, "completions": []}),
        )
        .unwrap_err();
        assert!(matches!(err, ApiError::UnsupportedLanguage { .. }));
        let err = serde_json::from_value::<ScoreRequest>(
            json!({"ground_truth": "1", "completions": ["a", "b", "c"]}),
        )
        .unwrap()
        .prepare(2)
        .unwrap_err();
        assert!(err.to_string().contains("the limit is 2"), "{err}");
    }
}
