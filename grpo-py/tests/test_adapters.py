"""The TRL and verl call shapes."""
import inspect
import json

import pytest

from grpo_rewards.trl import binary_code_reward, code_reward, make_task_reward, math_reward, task_reward
from grpo_rewards.verl import compute_score

TASK = {"id": "sq", "kind": "math", "prompt": "7 squared?", "answer": "49"}


def test_trl_math_reward_with_plain_and_conversational_completions():
    prompts = ["What is 6*7?", "Half of one?"]
    plain = ["<answer>42</answer>", "\\boxed{0.4}"]
    assert math_reward(prompts=prompts, completions=plain, solution=["42", "1/2"]) == [1.0, 0.0]
    chat = [[{"role": "assistant", "content": c}] for c in plain]
    # TRL passes extra columns and bookkeeping keywords too.
    got = math_reward(prompts=prompts, completions=chat, answer=["42", "0.4"], completion_ids=[[1], [2]], trainer_state=None)
    assert got == [1.0, 1.0]
    assert math_reward.__name__ == "math_reward"
    with pytest.raises(ValueError, match="solution"):
        math_reward(prompts=prompts, completions=plain)
    with pytest.raises(ValueError, match="2 completions"):
        math_reward(prompts=prompts, completions=plain, solution=["1"])
    with pytest.raises(TypeError):
        math_reward(prompts=prompts, completions=[42, 43], solution=["1", "2"])
    # A code row of a mixed dataset has no solution: not applicable, which TRL leaves out.
    assert math_reward(completions=plain + ["print(1)"], solution=["42", "1/2", None]) == [1.0, 0.0, None]


def test_trl_task_reward():
    completions = ["<think>7*7</think><answer>49</answer>", "<think>7*7</think><answer>48</answer>", "<answer>49</answer>"]
    tasks = [TASK] * 3
    assert task_reward(prompts=["p"] * 3, completions=completions, task=tasks) == [1.0, 0.0, 1.0]
    shaped = make_task_reward(accuracy_weight=1.0, format_weight=0.5)
    # Format asks for the <think> block as well.
    assert shaped(completions=completions, task=tasks) == [1.5, 0.5, 1.0]
    assert shaped.__name__ == "task_reward"


def test_trl_code_rewards_take_open_r1_verification_info():
    """open-r1's code rewards over its `verification_info` column: the pass rate, and 1.0
    only when every case passes, with the program run in the sandbox."""
    info = {
        "language": "python",
        "test_cases": [
            {"type": "stdin_stdout", "input": f"{i}\n", "output": f"{i * i}\n"} for i in range(4)
        ],
    }
    square = "Here it is:\n```python\nn = int(input())\nprint(n * n)\n```"
    # Right for 0 and 1 only (n * n == n).
    identity = "```python\nprint(input())\n```"
    # A program printing the first line of a longer answer fails (no line-by-line zip).
    short = {"language": "python", "test_cases": [{"input": "", "output": "1\n2\n"}]}
    first_line = "```python\nprint(1)\n```"
    completions = [square, identity, first_line, "no code at all"]
    infos = [info, json.dumps(info), short, info]
    assert code_reward(prompts=["p"] * 4, completions=completions, verification_info=infos) == [1.0, 0.5, 0.0, 0.0]
    assert binary_code_reward(completions=completions, verification_info=infos) == [1.0, 0.0, 0.0, 0.0]
    # A row of a mixed dataset without verification_info is not applicable.
    assert code_reward(completions=[square], verification_info=[None]) == [None]
    with pytest.raises(ValueError, match="verification_info"):
        code_reward(completions=[square])


def test_verl_compute_score():
    params = list(inspect.signature(compute_score).parameters)
    assert params[:4] == ["data_source", "solution_str", "ground_truth", "extra_info"]
    assert compute_score("openai/gsm8k", "so 6*12 = 72\n#### 72", "72") == 1.0
    assert compute_score("openai/gsm8k", "#### 71", "72") == 0.0
    assert compute_score("math", "\\boxed{\\frac12}", ["0.5", "1/2"]) == 1.0
    assert compute_score("mine", "<answer>49</answer>", None, extra_info={"task": TASK}) == 1.0
    with pytest.raises(ValueError, match="ground_truth"):
        compute_score("mine", "x", None)


def test_verl_code_sources_run_in_the_sandbox():
    """verl's code sources score the program against its cases, as verl's continuous score
    does: the fraction of the first 10 cases passed. They are never read as math answers."""
    add = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
    cases = {"inputs": [f"{i} {i}\n" for i in range(4)], "outputs": [f"{2 * i}\n" for i in range(4)]}
    for source in ("codecontests", "apps", "codeforces", "taco"):
        assert compute_score(source, add, json.dumps(cases)) == 1.0
    assert compute_score("codecontests", add, cases) == 1.0
    # Right on the cases with i = 0 only (0 * 3 == 0 + 0): a quarter.
    triple = "```python\na, b = map(int, input().split())\nprint(a * 3)\n```"
    assert compute_score("codecontests", triple, cases) == 0.25
    # Only the first 10 of 12 cases count: wrong on the last two still scores 1.0.
    many = {"inputs": [f"{i} {i}\n" for i in range(12)],
            "outputs": [f"{2 * i}\n" for i in range(10)] + ["-1\n", "-1\n"]}
    assert compute_score("taco", add, many) == 1.0
    # A program that crashes or never answers passes nothing.
    assert compute_score("apps", "```python\nraise SystemExit(1)\n```", cases) == 0.0
    # verl's call-based shape (fn_name: one JSON argument per input line).
    call = {"inputs": ["[1, 2, 3]", "[]"], "outputs": ["6", "0"], "fn_name": "total"}
    assert compute_score("apps", "```python\ndef total(xs):\n    return sum(xs)\n```", call) == 1.0
    # A code ground truth is code whatever the data source says.
    assert compute_score("my_source", add, cases) == 1.0
    # A code source whose ground truth is not test cases is a clear error, not a math check.
    with pytest.raises(ValueError, match="scored as code"):
        compute_score("codecontests", add, "42")
    # The same answer texts as math stay math.
    assert compute_score("openai/gsm8k", "#### 8", "8") == 1.0


def test_verl_loads_compute_score_by_file_path():
    # verl's custom_reward_function.path loads the file as a module of its own, outside the
    # package: its imports must not be relative.
    import importlib.util

    import grpo_rewards.verl as installed

    spec = importlib.util.spec_from_file_location("custom_module", installed.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.compute_score("openai/gsm8k", "#### 72", "72") == 1.0
