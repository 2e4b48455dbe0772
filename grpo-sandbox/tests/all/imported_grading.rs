//! Imported rows graded as their data sets' own evaluators grade them, end to end: the
//! importers' sample rows (`tasks/tests/fixtures/code/`) through `grpo_tasks::import` and the
//! code judge. CodeContests compares tokens without case, numbers within 1e-5; CodeContests and
//! LiveCodeBench count the public examples next to the hidden tests, so a program wrong only on
//! an example loses reward.

use grpo_rewards::reward::Score;
use grpo_rewards::{Credit, ScoreOptions};
use grpo_sandbox::CodeReward;
use grpo_tasks::import::{Format, import_file};
use grpo_tasks::{CodeTask, Task};

use crate::common::{rt, sandbox};

fn imported(format: Format, file: &str) -> Vec<CodeTask> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tasks/tests/fixtures/code")
        .join(file);
    import_file(&format, &path)
        .expect("the sample imports")
        .into_iter()
        .map(|task| match task {
            Task::Code(code) => code,
            other => unreachable!("{} is not a code task", other.id()),
        })
        .collect()
}

fn by_id<'a>(tasks: &'a [CodeTask], id: &str) -> &'a CodeTask {
    tasks
        .iter()
        .find(|t| t.id == id)
        .unwrap_or_else(|| panic!("no task {id}"))
}

fn judge(task: &CodeTask, programs: &[&str], credit: Credit) -> Vec<Score> {
    let judge = CodeReward::new(sandbox());
    let programs: Vec<String> = programs.iter().map(|p| p.to_string()).collect();
    let options = ScoreOptions {
        credit,
        ..ScoreOptions::default()
    };
    rt().block_on(judge.judge_programs(task, &programs, &options))
        .expect("no fault")
}

fn values(scores: &[Score]) -> Vec<f64> {
    scores.iter().map(|s| s.value.unwrap_or(-1.0)).collect()
}

#[test]
fn codecontests_grades_tokens_without_case() {
    let tasks = imported(Format::CodeContests, "codecontests.jsonl");
    let parity = by_id(&tasks, "codecontests/1001_A. Even Or Odd");
    let reference = parity.reference.as_deref().expect("a reference");
    // One answer per line, lower case: as right as the reference's layout.
    let one_per_line = "t = int(input())\nfor _ in range(t):\n    q, *xs = map(int, input().split())\n    for x in xs:\n        print('yes' if x % 2 == 0 else 'no')\n";
    let wrong = "t = int(input())\nfor _ in range(t):\n    q, *xs = map(int, input().split())\n    print(' '.join('YES' for x in xs))\n";
    let scores = judge(parity, &[reference, one_per_line, wrong], Credit::Binary);
    assert_eq!(values(&scores), [1.0, 1.0, 0.0], "{scores:#?}");

    // Numbers within 1e-5 match, whatever their number of decimals.
    let third = by_id(&tasks, "codecontests/1001_B. One Third");
    let reference = third.reference.as_deref().expect("a reference");
    let coarse = "print(round(int(input()) / 3, 3))\n";
    let scores = judge(third, &[reference, coarse], Credit::Binary);
    assert_eq!(values(&scores), [1.0, 0.0], "{scores:#?}");
}

#[test]
fn codecontests_counts_the_public_example() {
    let tasks = imported(Format::CodeContests, "codecontests.jsonl");
    let double = by_id(&tasks, "codecontests/1000_A. Double It");
    // Right on the private and generated tests, wrong on the statement's example (n = 3).
    let wrong_on_example = "n = int(input())\nprint(7 if n == 3 else 2 * n)\n";
    let partial = judge(double, &[wrong_on_example], Credit::Partial);
    assert_eq!(values(&partial), [0.75], "{partial:#?}");
    let binary = judge(double, &[wrong_on_example], Credit::Binary);
    assert_eq!(values(&binary), [0.0], "{binary:#?}");
}

#[test]
fn livecodebench_counts_the_public_examples() {
    let tasks = imported(Format::LiveCodeBench, "livecodebench.jsonl");
    // stdin: public 1 -> 2, private 41 -> 42 and -1 -> 0.
    let add_one = by_id(&tasks, "livecodebench/abc900_a");
    let right = "print(int(input()) + 1)\n";
    let wrong_on_example = "n = int(input())\nprint(3 if n == 1 else n + 1)\n";
    let scores = judge(add_one, &[right, wrong_on_example], Credit::Partial);
    let got = values(&scores);
    assert_eq!(got[0], 1.0, "{scores:#?}");
    assert!((got[1] - 2.0 / 3.0).abs() < 1e-9, "{scores:#?}");
    // Numbers compare by value, as LiveCodeBench's grader does.
    let as_float = "print(float(int(input()) + 1))\n";
    assert_eq!(values(&judge(add_one, &[as_float], Credit::Binary)), [1.0]);

    // functional: the public case ([1, 2], 1) -> [2, 4] is one of the calls.
    let doubled = by_id(&tasks, "livecodebench/9001");
    let right =
        "class Solution:\n    def doubled(self, nums, k):\n        return [2 * x for x in nums]\n";
    let wrong_on_example = "class Solution:\n    def doubled(self, nums, k):\n        if nums == [1, 2]:\n            return [2, 3]\n        return [2 * x for x in nums]\n";
    let scores = judge(doubled, &[right, wrong_on_example], Credit::Binary);
    assert_eq!(values(&scores), [1.0, 0.0], "{scores:#?}");
}
