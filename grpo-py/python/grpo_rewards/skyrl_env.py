"""A SkyRL-Gym environment over grpo-rs's task schema: ``GrpoTaskEnv`` is a
``skyrl_gym`` ``BaseTextEnv`` whose task comes from ``extras["task"]`` (a task as a dict or
JSON text: math, countdown or code, exactly as a pack's ``tasks.jsonl`` line), and whose one
step scores the model's answer with the same ``Scorer`` ``grpo score`` uses.

    import skyrl_gym
    from grpo_rewards import skyrl_env

    skyrl_env.register()                      # id "grpo-task"
    env = skyrl_gym.make("grpo-task", env_config={"format": 0.1}, extras={"task": task})
    prompt, _ = env.init([{"role": "user", "content": task["prompt"]}])
    out = env.step(completion)                # out["reward"], out["metadata"]["verdict"]

``env_config`` may carry ``accuracy`` and ``format`` weights (a dict or an OmegaConf node, as
SkyRL passes it); without them a task is scored as ``grpo_rewards.score`` scores it
(accuracy 1, format 0). A code task runs in the process-wide sandbox. A task that cannot be
scored (a malformed one, a fault of the sandbox) raises: it is never a reward.

Requires ``skyrl-gym`` (``pip install skyrl-gym``).
"""

from __future__ import annotations

import json
from typing import Any, Dict, Mapping, Optional

from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

from . import score as _score

ENV_ID = "grpo-task"


def _weight(config: Any, name: str) -> Optional[float]:
    if config is None:
        return None
    value = config.get(name) if hasattr(config, "get") else getattr(config, name, None)
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError) as e:
        raise ValueError(f"env_config.{name}: expected a number, got {value!r}") from e


class GrpoTaskEnv(BaseTextEnv):
    """One task of our schema, answered in one step."""

    def __init__(self, env_config: Any = None, extras: Optional[Mapping[str, Any]] = None):
        super().__init__()
        task = (extras or {}).get("task")
        if task is None:
            raise ValueError("extras['task']: missing (a grpo-rs task, as a dict or JSON text)")
        if isinstance(task, str):
            try:
                task = json.loads(task)
            except json.JSONDecodeError as e:
                raise ValueError(f"extras['task']: not JSON: {e}") from e
        if not isinstance(task, Mapping):
            raise ValueError(f"extras['task']: expected an object, got {type(task).__name__}")
        self.task: Dict[str, Any] = dict(task)
        self.accuracy = _weight(env_config, "accuracy")
        self.format = _weight(env_config, "format")
        self.max_turns = 1
        self._metrics: Dict[str, Any] = {}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        self.turns += 1
        scored = _score(self.task, [action], accuracy=self.accuracy, format=self.format)[0]
        self._metrics = {"reward": scored.reward, "correct": float(scored.correct)}
        return BaseTextEnvStepOutput(
            observations=[],
            reward=scored.reward,
            done=True,
            metadata={
                "task_id": scored.task_id,
                "verdict": scored.kind,
                "reason": scored.reason,
                "rewards": dict(scored.rewards),
                "correct": scored.correct,
            },
        )

    def get_metrics(self) -> Dict[str, Any]:
        return dict(self._metrics)


def register(env_id: str = ENV_ID) -> None:
    """Registers ``GrpoTaskEnv`` with ``skyrl_gym`` under ``env_id`` (once per process)."""
    from skyrl_gym.envs.registration import register as _register, registry

    if env_id not in registry:
        _register(id=env_id, entry_point="grpo_rewards.skyrl_env:GrpoTaskEnv")
