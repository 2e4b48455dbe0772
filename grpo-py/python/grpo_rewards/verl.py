"""A ``compute_score`` for verl's reward manager (``custom_reward_function.path`` pointing at
this file's module, ``name: compute_score``).

    from grpo_rewards.verl import compute_score
    compute_score("openai/gsm8k", "... #### 72", "72")          # -> 1.0

- with ``extra_info["task"]`` (our task schema, dict or JSON text) the completion gets the full
  grpo-rs reward for that task: math, countdown, or code run against its tests in the sandbox;
- otherwise ``ground_truth`` is a math reference answer and the score is 1.0 or 0.0.
"""
from __future__ import annotations

from typing import Any, Optional

from grpo_rewards import check_math, score

__all__ = ["compute_score"]


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
    if isinstance(ground_truth, (list, tuple)):
        if not ground_truth:
            raise ValueError("compute_score: ground_truth is an empty list")
        gold, alternatives = str(ground_truth[0]), [str(g) for g in ground_truth[1:]]
    else:
        gold, alternatives = str(ground_truth), None
    return 1.0 if check_math(gold, solution_str, alternatives=alternatives).correct else 0.0
