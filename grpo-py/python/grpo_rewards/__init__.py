"""Verifiable rewards for RLVR, in-process: the grpo-rs checkers as a Python package.

- ``check_math`` / ``check_math_batch``: exact math equivalence (LaTeX, fractions, sets,
  intervals, matrices, decimals for exact values), the GIL released while checking;
- ``score`` / ``score_async`` / ``Pack``: math, countdown and code tasks (code runs against its
  tests in a wasmtime sandbox), scored exactly as ``grpo score`` scores them;
- ``Interpreter``: a sandboxed Python interpreter that keeps its state across calls, for code
  tools in multi-turn rollouts (``with Interpreter() as it: it.run("x = 1")``);
- ``grpo_rewards.math_verify``: ``parse`` and ``verify`` shaped like Math-Verify's;
- ``grpo_rewards.trl`` and ``grpo_rewards.verl``: reward functions for those trainers, and
  the interpreter as a TRL tool / environment and a verl agent-loop tool;
- ``threads()`` / ``set_threads(n)``: the one thread count every pool of the package uses.

Thread count, first match wins: ``set_threads(n)`` before the first check or score; the
environment variable ``GRPO_REWARDS_THREADS``; in a Ray task or actor, the CPUs Ray assigned
to it; else the CPUs this process may run on (affinity mask, cgroup quota). Fixed for the
process once a pool starts. Results, packs and reward functions pickle, and nothing installs
a signal handler or needs the main thread, so the package works inside Ray tasks and actors.

A malformed task or option raises ``ValueError`` naming the field; a failure on the
verifier's side raises ``RewardFault``. Nothing is silently scored 0.
"""
from __future__ import annotations

import asyncio
import functools
import json
import os
from typing import Any, Mapping, NamedTuple, Optional, Sequence, Union

from ._native import (
    Interpreter,
    InterpreterClosed,
    MathResult,
    Pack as _NativePack,
    RewardFault,
    RunResult,
    Score,
    TestResult,
    __version__,
    check_math,
    check_math_batch,
    extract_answer,
)
from . import _native
from .local_sandbox import ExecResult, LocalSandbox, SandboxClosed

__all__ = [
    "ExecResult",
    "LocalSandbox",
    "SandboxClosed",
    "Interpreter",
    "InterpreterClosed",
    "MathResult",
    "Pack",
    "RewardFault",
    "RunResult",
    "Score",
    "TestResult",
    "__version__",
    "check_math",
    "check_math_batch",
    "extract_answer",
    "score",
    "score_async",
    "set_threads",
    "threads",
    "Threads",
]

Task = Union[str, Mapping[str, Any]]


class Threads(NamedTuple):
    """The package's thread count and where it came from."""

    count: int
    """Threads every pool uses: the math batch, the async runtime, the sandbox, the compiler."""
    source: str
    """The rule that chose it: ``explicit``, ``env``, ``ray`` or ``available_parallelism``."""
    fixed: bool
    """Whether a pool has started with it (after which it cannot change)."""
    runtime_workers: Optional[int]
    """The async runtime's worker threads, once it exists (the first ``score``)."""
    sandbox_concurrency: Optional[int]
    """Programs the sandbox runs at once, once it exists (the first code task)."""


def threads() -> Threads:
    """The thread count the package's pools use (or will use), and which rule chose it."""
    return Threads(*_native.threads())


def set_threads(count: int) -> None:
    """Sets the thread count of every pool, overriding ``GRPO_REWARDS_THREADS`` and Ray's
    assignment. Call it before the first check or score: once a pool runs on another count,
    it raises ``RuntimeError``."""
    _native.set_threads(count)


def _task_json(task: Task) -> str:
    if isinstance(task, str):
        return task
    if isinstance(task, Mapping):
        return json.dumps(dict(task))
    raise TypeError(f"task: expected a dict or JSON text, got {type(task).__name__}")


def score(
    task: Task,
    completions: Sequence[str],
    *,
    accuracy: Optional[float] = None,
    format: Optional[float] = None,
) -> list[Score]:
    """Scores ``completions`` of one task (our task schema, as a dict or JSON text).

    Weights default to accuracy 1 and format 0. Code tasks run in the process-wide sandbox
    (started on first use). One ``Score`` per completion, in order.
    """
    if isinstance(completions, str):
        raise TypeError("completions: expected a list of strings, got one string")
    return _native.score(_task_json(task), list(completions), accuracy=accuracy, format=format)


async def score_async(
    task: Task,
    completions: Sequence[str],
    *,
    accuracy: Optional[float] = None,
    format: Optional[float] = None,
) -> list[Score]:
    """``score`` without blocking the event loop: it runs on the loop's executor with the
    GIL released, so many calls proceed at once."""
    loop = asyncio.get_running_loop()
    call = functools.partial(score, task, completions, accuracy=accuracy, format=format)
    return await loop.run_in_executor(None, call)


class Pack:
    """A task pack (a ``.jsonl`` file, a pack directory or ``builtin:NAME``), scored with its
    own ``[rewards]`` weights exactly as ``grpo score --tasks`` scores it."""

    def __init__(self, spec: str) -> None:
        self._pack = _NativePack(spec)
        # Kept for pickling: a path is made absolute, so the copy loads the same files from
        # another working directory (a Ray worker's, say).
        self._spec = spec if spec.startswith("builtin:") else os.path.abspath(spec)

    def __reduce__(self):
        return (Pack, (self._spec,))

    @property
    def name(self) -> str:
        return self._pack.name

    def ids(self) -> list[str]:
        return self._pack.ids()

    def task(self, task_id: str) -> dict[str, Any]:
        return json.loads(self._pack.task_json(task_id))

    def score(self, task_id: str, completions: Sequence[str]) -> list[Score]:
        if isinstance(completions, str):
            raise TypeError("completions: expected a list of strings, got one string")
        return self._pack.score(task_id, list(completions))

    def __len__(self) -> int:
        return len(self._pack)

    def __repr__(self) -> str:
        return repr(self._pack)
