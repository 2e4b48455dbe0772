"""A ``compute_score`` for verl's reward manager (``custom_reward_function.path`` pointing at
this file's module, ``name: compute_score``).

    from grpo_rewards.verl import compute_score
    compute_score("openai/gsm8k", "... #### 72", "72")                         # -> 1.0
    compute_score("codecontests", "```python\\nprint(int(input()) * 2)\\n```",
                  '{"inputs": ["3\\n"], "outputs": ["6\\n"]}')                   # -> 1.0

It dispatches as verl's ``default_compute_score`` does:

- with ``extra_info["task"]`` (our task schema, dict or JSON text) the completion gets the full
  grpo-rs reward for that task: math, countdown, or code run against its tests in the sandbox;
- the code sources (``codecontests``, ``apps``, ``codeforces``, ``taco``), and any row whose
  ``ground_truth`` is verl's code test cases (``{"inputs", "outputs", "fn_name"?}``, a dict or
  its JSON text), run the completion's program in the sandbox against the cases. The score is
  verl's continuous one: the fraction of the first 10 cases passed (verl's
  ``sandbox_fusion.compute_score(..., continuous=True)``, which ``default_compute_score``
  uses for these sources);
- every other row (GSM8K, the MATH variants, numina, DAPO math, AIME, and sources verl does
  not know) is a math answer: 1.0 or 0.0.

Where the scores differ from verl's on purpose:

- math is checked by value with exact arithmetic, not by verl's per-source string rules:
  ``\\boxed{0.25}`` is right for ``\\frac{1}{4}`` and ``\\boxed{3.0}`` for ``3``. The answer
  is found by the package's one rule for every source (a box, an answer block, ``#### N``,
  else the last number), where verl's GSM8K rule reads only ``#### N`` and its MATH rule only
  the last box. DAPO math's ``-1`` for a wrong answer is ``0.0`` here;
- the program is taken from the completion by the sandbox's rule (inside the last
  ``<answer>`` block when there is one, the last fenced block, Python-tagged first, else the
  text itself); verl scores a completion without a fenced block 0;
- programs run in the in-process sandbox with its limits instead of a SandboxFusion server,
  and a fault of the sandbox raises instead of scoring 0.
"""
from __future__ import annotations

import json
from typing import Any, Mapping, Optional

from grpo_rewards import _native, check_math, score

__all__ = ["compute_score", "CODE_SOURCES"]

CODE_SOURCES = frozenset({"codecontests", "apps", "codeforces", "taco"})
"""The ``data_source`` values verl scores as code."""

_VERL_CODE_CASES = 10
"""verl's continuous code score counts the first this many cases."""


def _code_cases(ground_truth: Any) -> Optional[dict]:
    """verl's code test cases (``inputs`` and ``outputs``), when ``ground_truth`` is them."""
    value = ground_truth
    if isinstance(value, (bytes, bytearray)):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        text = value.strip()
        if not text.startswith("{"):
            return None
        try:
            value = json.loads(text)
        except ValueError:
            return None
    if isinstance(value, Mapping) and "inputs" in value and "outputs" in value:
        return dict(value)
    return None


def _code_score(solution_str: str, cases: dict) -> float:
    inputs, outputs = cases["inputs"], cases["outputs"]
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise ValueError("compute_score: ground_truth's `inputs` and `outputs` must be lists")
    counted = min(len(inputs), _VERL_CODE_CASES)
    if counted == 0:
        return 0.0
    first = dict(cases, inputs=inputs[:counted], outputs=outputs[:counted])
    task = _native.task_from_ground_truth(json.dumps(first), "verl")
    (scored,) = score(task, [solution_str])
    if not scored.tests:
        # No program, or it never reached its tests: nothing passed.
        return 0.0
    return sum(1 for t in scored.tests if t.passed) / counted


def compute_score(
    data_source: Any,
    solution_str: str,
    ground_truth: Any,
    extra_info: Optional[dict] = None,
    **kwargs: Any,
) -> float:
    """The reward of one completion (``solution_str``), as verl asks for it."""
    if not isinstance(solution_str, str):
        raise TypeError(f"solution_str: expected a string, got {type(solution_str).__name__}")
    task = (extra_info or {}).get("task") if isinstance(extra_info, dict) else None
    if task is not None:
        (scored,) = score(task, [solution_str])
        return scored.reward
    if ground_truth is None:
        raise ValueError("compute_score: no ground_truth and no extra_info['task'] to score against")
    cases = _code_cases(ground_truth)
    if cases is not None:
        return _code_score(solution_str, cases)
    if data_source in CODE_SOURCES:
        raise ValueError(
            f"compute_score: data_source {data_source!r} is scored as code, but ground_truth is not "
            "verl's test cases (a dict or JSON text with `inputs` and `outputs`)"
        )
    if isinstance(ground_truth, (list, tuple)):
        if not ground_truth:
            raise ValueError("compute_score: ground_truth is an empty list")
        gold, alternatives = str(ground_truth[0]), [str(g) for g in ground_truth[1:]]
    else:
        gold, alternatives = str(ground_truth), None
    return 1.0 if check_math(gold, solution_str, alternatives=alternatives).correct else 0.0
