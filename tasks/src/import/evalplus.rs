//! EvalPlus (HumanEval+ and MBPP+): the rows carry test inputs (`base_input`, `plus_input`)
//! but not the expected outputs, which EvalPlus computes by running `canonical_solution`.
//! This crate does not run code, so the import returns call tasks whose expected values are
//! pending, with a [`PendingOutputs`] per task: its [`script`](PendingOutputs::script) runs
//! the reference on every input and prints the results as one JSON line; whoever can run
//! Python (the CLI, through the sandbox) runs it and hands the output to
//! [`Imported::finalize`](super::Imported::finalize).

use serde_json::Value;

use super::{Converted, Record, short};
use crate::error::ImportError;
use crate::task::{CallCase, CallTests, CodeMode, CodeTask, CodeTests, Language, Task};

/// The expected values of one task, still to be computed by running its reference.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingOutputs {
    /// The task's position in [`Imported::tasks`](super::Imported::tasks).
    pub task: usize,
    /// The task's id.
    pub id: String,
    file: String,
    line: usize,
    program: String,
    entry_point: String,
    inputs: Vec<Vec<Value>>,
}

impl PendingOutputs {
    /// A Python program that defines the reference, calls it on every input in order and
    /// prints the results as one JSON list on its last line of output.
    pub fn script(&self) -> String {
        let inputs = serde_json::to_string(&self.inputs).unwrap_or_else(|_| "[]".into());
        let inputs = serde_json::to_string(&inputs).unwrap_or_else(|_| "\"[]\"".into());
        format!(
            "{program}\n\n\
             import json as _grpo_json\n\
             _grpo_results = [{entry}(*_grpo_args) for _grpo_args in _grpo_json.loads({inputs})]\n\
             print()\n\
             print(_grpo_json.dumps(_grpo_results, allow_nan=False))\n",
            program = self.program.trim_end(),
            entry = self.entry_point,
        )
    }

    /// Fills the task's expected values from the script's stdout.
    pub(super) fn fill(
        &self,
        tasks: &mut [Task],
        output: Result<String, String>,
    ) -> Result<(), ImportError> {
        let error = |message: String| ImportError::Record {
            file: self.file.clone(),
            line: self.line,
            field: "canonical_solution".into(),
            message,
        };
        let stdout = output.map_err(|e| error(format!("running the reference failed: {e}")))?;
        let last = stdout
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        let results: Vec<Value> = serde_json::from_str(last).map_err(|e| {
            error(format!(
                "the reference's results are not a JSON list ({e}): {}",
                short(&Value::String(last.to_owned()))
            ))
        })?;
        if results.len() != self.inputs.len() {
            return Err(error(format!(
                "{} results for {} inputs",
                results.len(),
                self.inputs.len()
            )));
        }
        match tasks.get_mut(self.task) {
            Some(Task::Code(CodeTask {
                tests: CodeTests::Call(call),
                ..
            })) if call.cases.len() == results.len() => {
                for (case, result) in call.cases.iter_mut().zip(results) {
                    case.expected = result;
                }
                Ok(())
            }
            _ => Err(ImportError::Config(format!(
                "pending outputs of task {} do not match its tests",
                self.id
            ))),
        }
    }
}

/// One EvalPlus row. HumanEval+ (`HumanEval/…`) is a `prefix` task like HumanEval; MBPP+ a
/// `full` task whose prompt is the description. `atol` (when not 0) is the call tests' float
/// tolerance.
pub(super) fn evalplus(r: &Record<'_>) -> Result<Converted, ImportError> {
    let task_id = r.text("task_id")?;
    let prompt = r.text("prompt")?;
    let solution = r.text("canonical_solution")?;
    let entry_point = r.text("entry_point")?;
    if !super::foreign::is_identifier(&entry_point) {
        return Err(r.error("entry_point", "must be a Python identifier"));
    }
    let humaneval = task_id.starts_with("HumanEval");
    let mut inputs = Vec::new();
    for field in ["base_input", "plus_input"] {
        match r.json(field)? {
            None => {}
            Some(Value::Array(items)) => {
                for (i, item) in items.into_iter().enumerate() {
                    match item {
                        Value::Array(args) => inputs.push(args),
                        other => {
                            return Err(r.error(
                                &format!("{field}[{i}]"),
                                format!("expected a list of arguments, found {}", short(&other)),
                            ));
                        }
                    }
                }
            }
            Some(other) => {
                return Err(r.error(
                    field,
                    format!("expected a list of argument lists, found {}", short(&other)),
                ));
            }
        }
    }
    if inputs.is_empty() {
        return Err(r.error("base_input", "no inputs"));
    }
    let float_tolerance = match r.fields.get("atol") {
        None | Some(Value::Null) => None,
        Some(v) => {
            let atol = v
                .as_f64()
                .ok_or_else(|| r.error("atol", "expected a number"))?;
            (atol > 0.0).then_some(atol)
        }
    };
    let (mode, program) = if humaneval {
        (CodeMode::Prefix, format!("{prompt}{solution}"))
    } else {
        (CodeMode::Full, solution.clone())
    };
    let (source, id) = if humaneval {
        ("humanevalplus", task_id.clone())
    } else {
        ("mbppplus", task_id.clone())
    };
    let task = Task::Code(CodeTask {
        id: id.clone(),
        prompt,
        language: Language::Python,
        mode,
        tests: CodeTests::Call(CallTests {
            entry_point: entry_point.clone(),
            cases: inputs
                .iter()
                .map(|args| CallCase {
                    args: args.clone(),
                    expected: Value::Null,
                    public: false,
                })
                .collect(),
            float_tolerance,
            ..CallTests::default()
        }),
        reference: Some(solution),
        time_limit_ms: None,
        memory_mb: None,
        metadata: Some(r.metadata(source, &task_id, Some("Apache-2.0"))),
    });
    Ok(Converted::Pending(
        task,
        PendingOutputs {
            task: 0,
            id,
            file: r.file.to_owned(),
            line: r.line,
            program,
            entry_point,
            inputs,
        },
    ))
}
