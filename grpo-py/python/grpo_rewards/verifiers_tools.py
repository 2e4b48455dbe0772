"""A verifiers (0.4) code tool that runs in our sandbox: ``PythonToolset`` is a ``vf.Toolset``
whose one tool, ``python(code)``, runs the code in a ``grpo_rewards.Interpreter`` (a
sandboxed Python whose globals last across the calls of one rollout) and answers with what
it printed, its traceback, or the sandbox's note on a timeout or a cut output.

verifiers serves a toolset as an MCP server in its own process, ``python -m`` this module on
the toolset's runtime (the host's subprocess runtime by default), one per rollout when a
task names it in ``Task.toolsets``: the interpreter is that rollout's and closes with it.
``grpo_rewards.verifiers_env`` names it for a pack's tasks when
``--env.taskset.task.python-tool true``. The config's limits are the interpreter's
(``time_limit_ms``, ``memory_mb``, ``output_bytes``, ...; unset keeps its defaults).

    import verifiers.v1 as vf
    from grpo_rewards.verifiers_tools import PythonToolset, PythonToolsetConfig

    async with vf.mcp.serve(PythonToolset(PythonToolsetConfig())) as url:
        ...                       # an MCP client at `url` calls the tool `python`

Requires ``verifiers`` (``pip install verifiers``).
"""

from __future__ import annotations

import asyncio
from typing import Optional

import verifiers.v1 as vf

from . import Interpreter, InterpreterClosed
from .trl import tool_output

__all__ = ["PythonToolset", "PythonToolsetConfig"]


class PythonToolsetConfig(vf.ToolsetConfig):
    time_limit_ms: Optional[int] = None
    """CPU time of one call."""
    wall_limit_ms: Optional[int] = None
    """Wall-clock time of one call (default three times ``time_limit_ms``)."""
    memory_mb: Optional[int] = None
    """Memory of the interpreter."""
    output_bytes: Optional[int] = None
    """Output one call may print before it is cut."""
    session_cpu_ms: Optional[int] = None
    """CPU time of the whole rollout's calls."""
    lifetime_ms: Optional[int] = None
    """Life of the interpreter."""

    def limits(self) -> dict[str, int]:
        names = ("time_limit_ms", "wall_limit_ms", "memory_mb", "output_bytes", "session_cpu_ms", "lifetime_ms")
        return {name: value for name in names if (value := getattr(self, name)) is not None}


class PythonToolset(vf.Toolset[PythonToolsetConfig, vf.State]):
    TOOL_PREFIX = None  # the model sees the tool as `python`

    interpreter: Optional[Interpreter] = None

    async def setup(self) -> None:
        limits = self.config.limits()
        self.interpreter = await asyncio.to_thread(lambda: Interpreter(**limits))
        self._exit_stack.callback(self.interpreter.close)

    @vf.tool
    async def python(self, code: str) -> str:
        """Runs Python code in this conversation's sandboxed interpreter, where variables, functions and imports from earlier calls are still defined, and returns what it printed (the value of a final expression is shown too)."""
        if self.interpreter is None:
            raise RuntimeError("the interpreter is not started (setup() has not run)")
        try:
            result = await asyncio.to_thread(self.interpreter.run, code)
        except InterpreterClosed as e:
            # Its CPU budget or lifetime is spent: the model is told so.
            return str(e)
        return tool_output(result)


if __name__ == "__main__":
    PythonToolset.run()
