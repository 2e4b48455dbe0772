"""Quick start 2 (README): the verifiers in-process from Python, and the TRL and verl hooks.

Run it where the `grpo_rewards` wheel is installed (`pip install ./grpo-py`):

    python docs/quickstart/score.py
"""

from grpo_rewards import check_math, score
from grpo_rewards.trl import math_reward
from grpo_rewards.verl import compute_score

# One math answer: exact arithmetic, so 0.5 is 1/2 and 1/2^98 is not 1/2^99.
assert check_math("\\frac{1}{2}", "so $\\boxed{0.5}$").correct
assert not check_math("1/2^{99}", "\\boxed{1/2^{98}}").correct

# One GRPO group for one task of the pack schema (math, countdown or code).
task = {
    "id": "sum", "kind": "code", "prompt": "Read two integers and print their sum.",
    "language": "python", "mode": "full",
    "tests": {"type": "stdio", "cases": [{"stdin": "2 3\n", "stdout": "5\n"}]},
}
good = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
wrong = "```python\nprint(0)\n```"
results = score(task, [good, wrong])  # runs in the wasmtime sandbox
assert [r.correct for r in results] == [True, False], results

# TRL: pass `math_reward` as one of GRPOTrainer's reward_funcs; it reads the `solution` column.
assert math_reward(prompts=["6*7?", "Half?"], completions=["<answer>42</answer>", "\\boxed{0.4}"],
                   solution=["42", "1/2"]) == [1.0, 0.0]

# verl: custom_reward_function.path is the file printed below, .name is compute_score.
assert compute_score("openai/gsm8k", "so 6*12 = 72\n#### 72", "72") == 1.0
import grpo_rewards.verl  # noqa: E402

print("custom_reward_function.path:", grpo_rewards.verl.__file__)
print("quickstart/score.py: ok")
