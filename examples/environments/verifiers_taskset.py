#!/usr/bin/env python3
"""A verifiers (0.4) taskset over grpo-rs task packs, rewarded by the same `Scorer` as
`grpo score`.

verifiers finds the taskset by name, so evaluating a model on a pack is one command (here
with verifiers' plain chat harness on this machine; add `--env.taskset.task.python-tool true`
to give the policy a `python` tool that runs in our sandbox, one interpreter per rollout):

    vf-eval grpo-taskset --env.taskset.pack builtin:arith -n 20 -m MODEL \
        --client.base-url URL --env.agent.harness.id null --env.agent.runtime.type subprocess

Here verifiers' loader builds it as `vf-eval` does, and `Task.score` rewards a right and a
wrong reply to the first task of a math pack and of a code pack (the code runs in the
sandbox), printing `PACK TASK_ID right|wrong REWARD`. Needs `verifiers` and `grpo_rewards`.
"""

import asyncio

import verifiers.v1 as vf
from grpo_rewards.verifiers_env import reply_trace

for pack in ("builtin:arith", "builtin:python"):
    config = vf.taskset_config_type("grpo-taskset")(id="grpo-taskset", pack=pack)
    task = next(iter(vf.load_taskset(config)))
    if task.data.kind == "math":  # "What is 36 + 71?"
        right, wrong = "<think>36 + 71 = 107</think><answer>107</answer>", "<answer>108</answer>"
    else:
        right = "```python\ndef fizzbuzz(n):\n    return [('Fizz' * (i % 3 == 0) + 'Buzz' * (i % 5 == 0)) or str(i) for i in range(1, n + 1)]\n```"
        wrong = "```python\ndef fizzbuzz(n):\n    return []\n```"
    for label, reply in (("right", right), ("wrong", wrong)):
        trace = reply_trace(task, reply)
        asyncio.run(task.score(trace))
        print(pack, task.data.id, label, trace.reward)
