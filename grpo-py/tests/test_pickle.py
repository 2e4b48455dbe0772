"""Results, packs and reward functions pickle (Ray, multiprocessing and verl ship them)."""
import os
import pickle

from grpo_rewards import MathResult, Pack, Score, check_math, score
from grpo_rewards import TestResult as OneTest  # (a Test* name would be collected by pytest)
from grpo_rewards.trl import TaskReward, make_task_reward, math_reward, task_reward
from grpo_rewards.verl import compute_score

CODE = {
    "id": "sum-two", "kind": "code", "prompt": "Read two integers and print their sum.",
    "language": "python", "mode": "full",
    "tests": {"type": "stdio", "cases": [{"stdin": "1 2\n", "stdout": "3\n"}, {"stdin": "-5 5\n", "stdout": "0\n"}]},
}
GOOD = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
WRONG = "```python\nprint(3)\n```"


def roundtrip(value):
    return pickle.loads(pickle.dumps(value))


def test_results_pickle_and_compare_by_value():
    scores = score(CODE, [GOOD, WRONG])
    copies = roundtrip(scores)
    assert copies == scores and copies is not scores
    assert [t.passed for t in copies[1].tests] == [True, False]
    assert copies[0] != copies[1]
    math = check_math("1/2", "\\boxed{0.5}")
    assert roundtrip(math) == math and roundtrip(math).extracted == "0.5"
    assert isinstance(roundtrip(math), MathResult)
    assert isinstance(copies[0].tests[0], OneTest) and isinstance(copies[0], Score)


def test_pack_pickles_by_its_spec(tmp_path):
    pack = Pack("builtin:python")
    task_id = pack.ids()[0]
    copy = roundtrip(pack)
    assert copy.ids() == pack.ids()
    reference = pack.task(task_id).get("reference")
    if reference:
        assert copy.score(task_id, [reference]) == pack.score(task_id, [reference])
    # A relative path still names the same file from another directory.
    (tmp_path / "one.jsonl").write_text('{"id": "a", "kind": "math", "prompt": "p", "answer": "2"}\n')
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        data = pickle.dumps(Pack("one.jsonl"))
    finally:
        os.chdir(here)
    assert pickle.loads(data).score("a", ["\\boxed{2}"])[0].correct


def test_reward_functions_pickle():
    completions = ["<think>x</think><answer>49</answer>", "<answer>48</answer>"]
    task = {"id": "sq", "kind": "math", "prompt": "7 squared?", "answer": "49"}
    shaped = make_task_reward(accuracy_weight=1.0, format_weight=0.5)
    for reward in (task_reward, shaped):
        copy = roundtrip(reward)
        assert isinstance(copy, TaskReward) and copy.__name__ == "task_reward"
        assert copy(completions=completions, task=[task] * 2) == reward(completions=completions, task=[task] * 2)
    assert roundtrip(shaped)(completions=completions, task=[task] * 2) == [1.5, 0.0]
    assert roundtrip(math_reward)(completions=completions, solution=["49", "49"]) == [1.0, 0.0]
    assert roundtrip(compute_score)("openai/gsm8k", "#### 72", "72") == 1.0
