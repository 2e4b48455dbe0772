"""The grpo-rs task pack taskset under the name verifiers loads it by: ``vf-eval grpo-taskset
--env.taskset.pack builtin:arith`` imports this module and takes the ``Taskset`` subclass its
``__all__`` exports (``grpo_rewards.verifiers_env.PackTaskset``).

Requires ``verifiers`` (``pip install verifiers``).
"""

from grpo_rewards.verifiers_env import PackTaskset, PackTasksetConfig

__all__ = ["PackTaskset", "PackTasksetConfig"]
