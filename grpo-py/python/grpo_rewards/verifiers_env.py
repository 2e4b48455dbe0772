"""A verifiers (0.4) ``verifiers.v1`` taskset over a grpo-rs task pack.

``PackTaskset`` is a ``vf.Taskset`` whose config names a pack (``pack``: a ``.jsonl`` file, a
pack directory or ``builtin:NAME``, as ``grpo score --tasks`` takes it). Each task's
``data.id`` is the pack's task id and its prompt the task's prompt; its one reward,
``pack_reward`` (a ``@vf.reward``), is the reward the same ``Scorer`` gives the final reply
with the pack's own ``[rewards]`` weights, exactly as ``grpo score --tasks PACK`` scores it.
The reply is scored as the model wrote it (not verifiers' stripped ``trace.last_reply``),
so the ``Scorer`` sees what ``grpo score`` would. The reward's parts and ``correct`` are
recorded as metrics, and the verdict and its reason in ``trace.info["grpo"]``. A task's
data carries its pack, so it re-scores from the data alone (``vf-replay``); ``validate``
scores the task's own answer (a math task's ``answer``, a code task's ``reference``) for
``vf-validate``. With ``--env.taskset.task.python-tool true`` each rollout gets a ``python``
code tool that runs in our sandbox (``grpo_rewards.verifiers_tools``).

    from grpo_rewards.verifiers_env import PackTaskset, PackTasksetConfig, reply_trace

    taskset = PackTaskset(PackTasksetConfig(pack="builtin:arith"))
    task = next(iter(taskset))                   # task.data.id == "arith-00000"
    trace = reply_trace(task, "<answer>107</answer>")
    await task.score(trace)                      # trace.reward, trace.rewards["pack_reward"]

``vf-eval`` loads it by name from the top-level module ``grpo_taskset``:
``vf-eval grpo-taskset --env.taskset.pack builtin:arith -m MODEL --env.agent.harness.id null
--env.agent.runtime.type subprocess`` (a plain chat on this machine; verifiers' defaults are
its bash harness in a Prime sandbox).

A reply that cannot be scored (the task is not in the pack, the sandbox failed) raises, and
verifiers records the error on the trace: it is never a reward.

Requires ``verifiers`` (``pip install verifiers``).
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Iterator
from typing import Any, Optional

import verifiers.v1 as vf
from pydantic import field_validator

from . import Pack, Score
from .verifiers_tools import PythonToolset, PythonToolsetConfig

__all__ = [
    "PackTask",
    "PackTaskConfig",
    "PackTaskData",
    "PackTaskset",
    "PackTasksetConfig",
    "final_reply",
    "gold_completion",
    "reply_trace",
]


def _spec(pack: str) -> str:
    """``pack`` as a spec that names the same pack from any working directory."""
    pack = pack.strip()
    if not pack:
        raise ValueError("pack: empty (a .jsonl file, a pack directory or builtin:NAME)")
    return pack if pack.startswith("builtin:") else os.path.abspath(pack)


@functools.lru_cache(maxsize=None)
def _load(spec: str) -> Pack:
    try:
        return Pack(spec)
    except ValueError as e:
        raise ValueError(f"pack: {e}") from e


class PackTaskConfig(vf.TaskConfig):
    python_tool: bool = False
    """Give the policy a ``python`` code tool that runs in our sandbox, one interpreter per
    rollout (``grpo_rewards.verifiers_tools.PythonToolset``)."""
    python: PythonToolsetConfig = PythonToolsetConfig()
    """The tool's limits and placement (``--env.taskset.task.python.time-limit-ms``)."""


class PackTasksetConfig(vf.TasksetConfig):
    task: PackTaskConfig = PackTaskConfig()
    """Config passed to each task, under ``--env.taskset.task.*``."""
    pack: str = "builtin:arith"
    """The task pack: a ``.jsonl`` file, a pack directory or ``builtin:NAME``, as for
    ``grpo score --tasks`` (``--env.taskset.pack``). verifiers' command lines build the
    config from its id alone before applying flags, so it needs a default."""

    @field_validator("pack")
    @classmethod
    def _absolute(cls, pack: str) -> str:
        return _spec(pack)


class PackTaskData(vf.TaskData):
    pack: str
    """The pack the task comes from (an absolute path or ``builtin:NAME``): what scores it."""
    kind: str
    """The task's kind in the pack: ``math``, ``countdown`` or ``code``."""


def final_reply(trace: vf.Trace) -> str:
    """The reply a trace is scored on, as written: the root agent's response, else the last
    sampled assistant message (empty when the model never answered)."""
    if trace.root_reply is not None:
        return trace.root_reply
    messages = trace.assistant_messages
    return (messages[-1].content or "") if messages else ""


def gold_completion(task: dict[str, Any]) -> Optional[str]:
    """A reply carrying the task's own answer in the answer format (a math task's
    ``answer``, a code task's ``reference``); ``None`` when the task has none."""
    if task.get("kind") == "math" and task.get("answer") is not None:
        return f"<answer>{task['answer']}</answer>"
    if task.get("kind") == "code" and task.get("reference"):
        return f"<answer>\n{task['reference'].rstrip()}\n</answer>"
    return None


class PackTask(vf.Task[PackTaskData, vf.State, PackTaskConfig]):
    @property
    def key(self) -> str:
        # The pack's task id is durable; the default content hash covers the run-local idx.
        return self.data.id or self.hash

    async def _score(self, completion: str) -> Score:
        pack = _load(self.data.pack)
        if self.data.id is None:
            raise ValueError("data.id: missing (the pack's task id)")
        call = functools.partial(pack.score, self.data.id, [completion])
        return (await asyncio.get_running_loop().run_in_executor(None, call))[0]

    @vf.reward
    async def pack_reward(self, trace: vf.Trace) -> float:
        """The pack's reward for the final reply (its ``[rewards]`` weights applied)."""
        scored = await self._score(final_reply(trace))
        trace.record_metrics({**scored.rewards, "correct": float(scored.correct)})
        trace.info["grpo"] = {"verdict": scored.kind, "reason": scored.reason}
        return scored.reward

    @classmethod
    def toolsets(cls, config: PackTaskConfig) -> list[vf.Toolset]:
        return [PythonToolset(config.python)] if config.python_tool else []

    async def validate(self, runtime: Any) -> Optional[bool]:
        """Whether the task's own answer scores as correct; ``None`` without one."""
        gold = gold_completion(_load(self.data.pack).task(self.data.id or ""))
        if gold is None:
            return None
        return (await self._score(gold)).correct


def reply_trace(task: vf.Task, reply: str) -> vf.Trace:
    """A finished verifiers trace in which the model answered ``task``'s prompt with
    ``reply``: what ``task.score(trace)`` scores offline, as ``vf-replay`` scores a saved
    rollout."""
    from verifiers.v1.state import state_cls

    return vf.Trace(
        task=vf.TraceTask(type=type(task).__name__, data=task.data, key=task.key, hash=task.hash),
        state=state_cls(type(task))(),
        agent=vf.AgentInfo(config=vf.AgentConfig()),
        nodes=[
            vf.MessageNode(message=vf.UserMessage(content=task.data.prompt_text)),
            vf.MessageNode(parent=0, sampled=True, message=vf.AssistantMessage(content=reply)),
        ],
        is_completed=True,
        ok=True,
    )


class PackTaskset(vf.Taskset[PackTask, PackTasksetConfig]):
    """The tasks of ``config.pack``, in the pack's order."""

    def load(self) -> Iterator[PackTask]:
        pack = _load(self.config.pack)
        for task_id in pack.ids():
            task = pack.task(task_id)
            data = PackTaskData(
                id=task_id, prompt=task["prompt"], pack=self.config.pack, kind=task["kind"]
            )
            yield PackTask(data, self.config.task)
