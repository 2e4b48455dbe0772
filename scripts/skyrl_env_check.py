#!/usr/bin/env python3
"""SkyRL-Gym's own registry and `make` (PyPI `skyrl-gym`, unmodified) build
`grpo_rewards.skyrl_env.GrpoTaskEnv` from a task of our schema in `extras["task"]`; its one step
gives the reward `grpo_rewards.score` gives the same completion (the one `Scorer`), for math and
code tasks, right and wrong answers, with weights from `env_config` (a dict or an OmegaConf node,
as SkyRL passes it); a missing or malformed task is an error naming `extras['task']`, never a
reward.

    python3 scripts/skyrl_env_check.py    # in a venv with skyrl-gym and the grpo_rewards wheel
"""

from __future__ import annotations

import json

import grpo_rewards
import skyrl_gym
from grpo_rewards import skyrl_env


def check(env, task, completion, want_correct, weights):
    prompt, _ = env.init([{"role": "user", "content": task["prompt"]}])
    assert prompt[0]["content"] == task["prompt"], prompt
    out = env.step(completion)
    same = grpo_rewards.score(task, [completion], **weights)[0]
    assert out["done"] is True, out
    assert out["observations"] == [], out
    assert out["reward"] == same.reward, (out, same)
    assert out["metadata"]["correct"] is want_correct, out
    assert out["metadata"]["verdict"] == same.kind, (out, same)
    assert env.get_metrics()["reward"] == same.reward
    return out


def main() -> None:
    skyrl_env.register()
    skyrl_env.register()  # a second call is a no-op
    assert skyrl_env.ENV_ID in skyrl_gym.envs.registration.registry

    arith = grpo_rewards.Pack("builtin:arith")
    task = arith.task(arith.ids()[0])
    right = f"<think>adding</think><answer>{task['answer']}</answer>"
    wrong = f"<think>adding</think><answer>{int(task['answer']) + 1}</answer>"
    weights = {"accuracy": 1.0, "format": 0.1}
    for env_config in (weights, None):
        w = weights if env_config else {}
        env = skyrl_gym.make(skyrl_env.ENV_ID, env_config=env_config, extras={"task": task})
        out = check(env, task, right, True, w)
        assert out["reward"] == (1.1 if env_config else 1.0), out
        env = skyrl_gym.make(skyrl_env.ENV_ID, env_config=env_config, extras={"task": json.dumps(task)})
        out = check(env, task, wrong, False, w)
        assert out["metadata"]["verdict"] == "wrong_answer", out

    try:
        from omegaconf import OmegaConf

        node = OmegaConf.create({"accuracy": 2.0, "format": 0.0})
        env = skyrl_gym.make(skyrl_env.ENV_ID, env_config=node, extras={"task": task})
        assert check(env, task, right, True, {"accuracy": 2.0, "format": 0.0})["reward"] == 2.0
    except ImportError:
        print("omegaconf not installed: the OmegaConf env_config case is skipped")

    python = grpo_rewards.Pack("builtin:python")
    code = python.task(python.ids()[0])
    fenced = f"```python\n{code['reference']}\n```"
    env = skyrl_gym.make(skyrl_env.ENV_ID, extras={"task": code})
    assert check(env, code, fenced, True, {})["reward"] == 1.0
    env = skyrl_gym.make(skyrl_env.ENV_ID, extras={"task": code})
    broken = "```python\ndef fizzbuzz(n):\n    return []\n```"
    assert check(env, code, broken, False, {})["reward"] == 0.0

    for extras, needle in (({}, "missing"), ({"task": "{not json"}, "not JSON"), ({"task": [1]}, "an object")):
        try:
            skyrl_gym.make(skyrl_env.ENV_ID, extras=extras)
        except ValueError as e:
            assert "extras['task']" in str(e) and needle in str(e), e
        else:
            raise AssertionError(f"{extras!r} was accepted")
    print("skyrl env check: ok (math right/wrong with and without weights, OmegaConf config, code right/wrong, bad tasks refused)")


if __name__ == "__main__":
    main()
