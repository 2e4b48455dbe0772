"""Reward functions for TRL's ``GRPOTrainer`` (``reward_funcs=[...]``).

TRL calls a reward function as ``f(prompts=..., completions=..., **columns)``, where the
columns are the dataset's other fields, one value per completion. Completions are strings,
or for conversational datasets lists of ``{"role", "content"}`` messages (the last message's
content is scored).

    from trl import GRPOTrainer
    from grpo_rewards.trl import math_reward, task_reward
    trainer = GRPOTrainer(model=..., reward_funcs=[math_reward], train_dataset=dataset)

- ``math_reward``: 1.0 when the completion's final answer equals the ``solution`` (or
  ``answer``) column, else 0.0 (``None``, not applicable, where that column is ``None``);
  the batch is checked on Rust threads;
- ``task_reward``: the full grpo-rs reward for a ``task`` column holding our task schema
  (math, countdown, or code run against its tests in the sandbox), weights from the
  ``accuracy_weight`` / ``format_weight`` keywords of ``make_task_reward``;
- ``code_reward`` and ``binary_code_reward``: open-r1's code rewards over its
  ``verification_info`` column (``{"language", "test_cases": [{"input", "output"}]}``): the
  fraction of test cases the completion's last fenced program passes, or 1.0 only when it
  passes them all. The program runs in the sandbox, not in a local process or a remote
  service. Where open-r1 compares the output lines only as far as the shorter of the two
  goes, a missing line here fails the test.

Both pickle (``task_reward`` is a ``TaskReward`` object), so they can be shipped to Ray
workers or other processes.

A code interpreter for tool-calling rollouts (``GRPOTrainer(tools=...)`` or
``environment_factory=...``), running in the sandbox rather than the trainer's process:

    from grpo_rewards.trl import PythonEnvironment, run_python
    trainer = GRPOTrainer(..., environment_factory=PythonEnvironment)   # state per rollout
    trainer = GRPOTrainer(..., tools=[run_python])                      # a fresh interpreter per call

- ``PythonEnvironment``: TRL makes one per concurrent rollout and calls ``reset(**row)``
  before each; its one tool, ``python(code)``, runs in that rollout's own interpreter, so
  variables persist from one call to the next within the rollout and never leak to another.
  ``reset`` frees the interpreter (the next call opens a fresh one); limits are the
  constructor's keywords (``functools.partial(PythonEnvironment, time_limit_ms=2000)``).
- ``run_python(code)``: a plain tool function. TRL calls a standalone tool with the model's
  arguments only, never with the rollout it serves, so no state can be kept per rollout:
  each call runs in a fresh interpreter.

Both return what the code printed (stdout, then stderr, so a traceback is what the model
sees), as TRL's tool message. A program's error or timeout is output for the model, not a
tool failure.
"""
from __future__ import annotations

import json
from typing import Any, Optional, Sequence

from . import Interpreter, RunResult, _native, score

__all__ = [
    "math_reward",
    "task_reward",
    "make_task_reward",
    "TaskReward",
    "code_reward",
    "binary_code_reward",
    "completion_text",
    "PythonEnvironment",
    "run_python",
    "tool_output",
]


def completion_text(completion: Any) -> str:
    """The text of one completion: a string, or a conversation's last message content."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, (list, tuple)) and completion:
        last = completion[-1]
        if isinstance(last, dict) and isinstance(last.get("content"), str):
            return last["content"]
    raise TypeError(
        "completions: each must be a string or a list of {'role', 'content'} messages, "
        f"got {type(completion).__name__}"
    )


def _column(kwargs: dict, names: Sequence[str], n: int, func: str) -> list:
    for name in names:
        values = kwargs.get(name)
        if values is not None:
            values = list(values)
            if len(values) != n:
                raise ValueError(f"{func}: column `{name}` has {len(values)} values for {n} completions")
            return values
    raise ValueError(f"{func}: needs a dataset column named {' or '.join(f'`{n}`' for n in names)}")


def math_reward(
    prompts: Optional[list] = None, completions: Optional[list] = None, **kwargs: Any
) -> list[Optional[float]]:
    """1.0 for a completion whose final answer equals its ``solution``/``answer``, else 0.0;
    ``None`` (TRL: not applicable) where the row's solution is ``None``, as in a dataset that
    mixes math rows with code rows."""
    if completions is None:
        raise ValueError("math_reward: no completions given")
    texts = [completion_text(c) for c in completions]
    golds = _column(kwargs, ("solution", "answer"), len(texts), "math_reward")
    rows = [i for i, g in enumerate(golds) if g is not None]
    results = _native.check_math_batch([(str(golds[i]), texts[i]) for i in rows])
    rewards: list[Optional[float]] = [None] * len(texts)
    for i, r in zip(rows, results):
        rewards[i] = 1.0 if r.correct else 0.0
    return rewards


class TaskReward:
    """A reward function over a ``task`` column (our task schema, dict or JSON text) with
    fixed weights. An object rather than a closure, so that it pickles (Ray, multiprocessing)
    and shows its weights in ``repr``."""

    def __init__(self, accuracy_weight: Optional[float] = None, format_weight: Optional[float] = None) -> None:
        self.accuracy_weight = accuracy_weight
        self.format_weight = format_weight
        # TRL names each reward function's logged column after its ``__name__``.
        self.__name__ = "task_reward"

    def __call__(self, prompts: Optional[list] = None, completions: Optional[list] = None, **kwargs: Any) -> list[float]:
        if completions is None:
            raise ValueError("task_reward: no completions given")
        texts = [completion_text(c) for c in completions]
        tasks = _column(kwargs, ("task",), len(texts), "task_reward")
        rewards = []
        for task, text in zip(tasks, texts):
            (scored,) = score(task, [text], accuracy=self.accuracy_weight, format=self.format_weight)
            rewards.append(scored.reward)
        return rewards

    def __repr__(self) -> str:
        return f"TaskReward(accuracy_weight={self.accuracy_weight!r}, format_weight={self.format_weight!r})"


def make_task_reward(accuracy_weight: Optional[float] = None, format_weight: Optional[float] = None) -> TaskReward:
    """A reward function over a ``task`` column (our task schema, dict or JSON text) with
    these weights (default: accuracy 1, format 0)."""
    return TaskReward(accuracy_weight, format_weight)


task_reward = make_task_reward()


def _verification_task(info: Any, row: int) -> str:
    if isinstance(info, (bytes, bytearray)):
        info = info.decode("utf-8", "replace")
    text = info if isinstance(info, str) else json.dumps(info)
    return _native.task_from_verification_info(text, f"row-{row}")


def _pass_rates(completions: Optional[list], kwargs: dict, func: str) -> list[Optional[float]]:
    if completions is None:
        raise ValueError(f"{func}: no completions given")
    texts = [completion_text(c) for c in completions]
    infos = _column(kwargs, ("verification_info",), len(texts), func)
    rates: list[Optional[float]] = []
    for row, (info, text) in enumerate(zip(infos, texts)):
        if info is None:
            rates.append(None)
            continue
        (scored,) = score(_verification_task(info, row), [text])
        tests = scored.tests or []
        if not tests:
            rates.append(0.0)
            continue
        rates.append(sum(1.0 if t.passed else (t.points or 0.0) for t in tests) / len(tests))
    return rates


def code_reward(
    prompts: Optional[list] = None, completions: Optional[list] = None, **kwargs: Any
) -> list[Optional[float]]:
    """open-r1's ``code_reward``: the fraction of the ``verification_info`` test cases the
    completion passes (``None`` where a row has no ``verification_info``)."""
    return _pass_rates(completions, kwargs, "code_reward")


def binary_code_reward(
    prompts: Optional[list] = None, completions: Optional[list] = None, **kwargs: Any
) -> list[Optional[float]]:
    """open-r1's ``binary_code_reward``: 1.0 when the completion passes every
    ``verification_info`` test case, else 0.0."""
    rates = _pass_rates(completions, kwargs, "binary_code_reward")
    return [None if r is None else (1.0 if r >= 1.0 else 0.0) for r in rates]



def tool_output(result: RunResult) -> str:
    """What a tool call shows the model: stdout, then stderr (a traceback, the sandbox's note
    on a timeout or a cut output), or ``(no output)`` when the code printed nothing."""
    text = result.stdout
    if result.stderr:
        if text and not text.endswith("\n"):
            text += "\n"
        text += result.stderr
    return text if text else "(no output)"


def run_python(code: str) -> str:
    """Runs Python code in a fresh sandboxed interpreter and returns what it printed.

    Args:
        code: The Python source to run. Print the values you want to see; the value of a final expression is shown too.
    """
    with Interpreter() as interpreter:
        return tool_output(interpreter.run(code))


class PythonEnvironment:
    """A TRL ``environment_factory`` environment with one tool, ``python``: a sandboxed
    interpreter per rollout whose variables last across the rollout's calls.

    TRL constructs it with no arguments, calls ``reset(**row)`` before every rollout (the
    dataset row's fields as keywords; ``None`` leaves the prompt as it is), and exposes each
    public method other than ``reset`` as a tool. Keyword arguments are the interpreter's
    limits (``time_limit_ms``, ``memory_mb``, ``output_bytes``, ...). TRL never closes an
    environment: the interpreter is freed at each ``reset`` and when the environment is
    collected, or at the end of a ``with`` block.
    """

    def __init__(self, **limits: Any) -> None:
        self._limits = dict(limits)
        self._interpreter: Optional[Interpreter] = None

    def reset(self, **row: Any) -> None:
        """Starts a new rollout: the previous rollout's interpreter and its state are freed."""
        self._close()
        return None

    def python(self, code: str) -> str:
        """Runs Python code in this conversation's interpreter, where variables, functions and imports from earlier calls are still defined, and returns what it printed.

        Args:
            code: The Python source to run. Print the values you want to see; the value of a final expression is shown too.
        """
        if self._interpreter is None:
            self._interpreter = Interpreter(**self._limits)
        return tool_output(self._interpreter.run(code))

    def _close(self) -> None:
        interpreter, self._interpreter = self._interpreter, None
        if interpreter is not None:
            interpreter.close()

    def __enter__(self) -> "PythonEnvironment":
        return self

    def __exit__(self, *exc: Any) -> None:
        self._close()

    def __del__(self) -> None:
        try:
            self._close()
        except Exception:
            pass
