#!/usr/bin/env python3
"""A SkyRL-Gym environment whose code tool runs in `grpo serve`'s sandbox, through OpenEnv's
client and `/openenv/python`.

SkyRL's trainer builds environments by name with `skyrl_gym.make(name, env_config=…,
extras=…)` and steps them with the model's text. `GrpoPythonEnv` holds one OpenEnv session (a
sandboxed interpreter whose globals last across the turns of one trajectory): each turn's last
```python block runs there and its output goes back to the model as the next message; a turn
without code ends the trajectory, with reward 1 when its `<answer>` equals `extras["answer"]`.

    grpo serve &                                  # prints {"listening": "127.0.0.1:PORT"}
    GRPO_URL=http://127.0.0.1:PORT python skyrl_python_env.py

Run as a script it makes the environment as SkyRL's generator does and plays a scripted
two-turn trajectory (code, then the answer), printing the observations and the reward. Needs
`skyrl-gym` and `openenv`. In a SkyRL run, register it the same way and name it in the
dataset's `env_class`.
"""

from __future__ import annotations

import os
import re
from typing import Any

import skyrl_gym
from openenv.core import GenericEnvClient
from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

URL = os.environ.get("GRPO_URL", "http://127.0.0.1:8000")
CODE = re.compile(r"```python\n(.*?)```", re.S)
ANSWER = re.compile(r"<answer>(.*?)</answer>", re.S)


class GrpoPythonEnv(BaseTextEnv):
    def __init__(self, env_config: Any = None, extras: dict[str, Any] = {}):
        super().__init__()
        self.answer = str(extras["answer"])
        self.max_turns = int(extras.get("max_turns", 4))
        self.env = GenericEnvClient(base_url=URL + "/openenv/python").sync()
        self.env.connect()
        self.env.reset()

    def step(self, action: str) -> BaseTextEnvStepOutput:
        self.turns += 1
        blocks = CODE.findall(action)
        if not blocks or self.turns >= self.max_turns:
            given = ANSWER.search(action)
            reward = 1.0 if given and given.group(1).strip() == self.answer else 0.0
            return BaseTextEnvStepOutput(observations=[], reward=reward, done=True, metadata={})
        observation = self.env.step({"code": blocks[-1]}).observation
        output = observation["stdout"] + observation["stderr"] + f"[exit code {observation['exit_code']}]"
        return BaseTextEnvStepOutput(observations=[{"role": "user", "content": output}], reward=0.0,
                                     done=False, metadata={"exit_code": observation["exit_code"]})

    def close(self):
        self.env.close()


skyrl_gym.register(id="grpo_python", entry_point=GrpoPythonEnv)


def main() -> None:
    env = skyrl_gym.make("grpo_python", env_config={}, extras={"answer": "5050"})
    prompt, _ = env.init([{"role": "user", "content": "What is 1 + 2 + ... + 100? Use Python."}])
    first = env.step("Let me add them up.\n```python\ntotal = sum(range(101))\nprint(total)\n```")
    print("turn 1:", first["observations"], "done", first["done"])
    second = env.step("```python\nprint(total * 2)\n```")  # the interpreter kept `total`
    print("turn 2:", second["observations"])
    last = env.step("<answer>5050</answer>")
    print("turn 3: reward", last["reward"], "done", last["done"])
    env.close()
    if first["observations"][0]["content"] != "5050\n[exit code 0]" or \
            second["observations"][0]["content"] != "10100\n[exit code 0]" or last["reward"] != 1.0:
        raise SystemExit("the trajectory did not go as scripted")


if __name__ == "__main__":
    main()
