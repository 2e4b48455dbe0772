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

``PythonTool`` is a code interpreter for verl's agent loop (a ``verl.tools.base_tool.BaseTool``
when verl is installed), registered in the tool config file that
``actor_rollout_ref.rollout.multi_turn.tool_config_path`` names:

    tools:
      - class_name: "grpo_rewards.verl.PythonTool"
        config:
          type: native
          time_limit_ms: 5000      # each call's CPU time (wall clock: three times that)
          memory_mb: 256           # the interpreter's memory
          state: trajectory        # or "instance": a fresh interpreter per tool instance
        tool_schema:               # optional: this is the default
          type: "function"
          function:
            name: "code_interpreter"
            description: "Runs Python code ..."
            parameters:
              type: "object"
              properties:
                code: {type: "string", description: "The Python source to run."}
              required: ["code"]

verl's ``ToolAgentLoop`` calls ``create``, ``execute`` and ``release`` around every single
tool call, so an instance lives for one call. With ``state: trajectory`` (the default) the
interpreter belongs to the trajectory instead (``agent_data.request_id``, which the loop
passes to ``execute``): variables persist from one call to the next of one rollout and never
reach another. Trajectory interpreters are freed once idle for ``idle_ttl_s`` (default 300)
or when more than ``max_interpreters`` (default 24) are alive, least recently used first.
``execute`` answers what the code printed (stdout, then stderr) with reward 0.0 and metrics
``{"status", "duration_ms"}``; a program's error or timeout is output for the model.
"""
from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from collections import OrderedDict
from typing import Any, Mapping, Optional

from grpo_rewards import _native, check_math, score

__all__ = ["compute_score", "CODE_SOURCES", "PythonTool"]

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


# The tool's schema when its config gives none: the name verl's SandboxFusion example uses.
DEFAULT_TOOL_SCHEMA = {
    "type": "function",
    "function": {
        "name": "code_interpreter",
        "description": (
            "Runs Python code in a sandboxed interpreter that keeps variables, functions and imports "
            "from earlier calls of this conversation, and returns what it printed."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "code": {
                    "type": "string",
                    "description": "The Python source to run. Print what you want to see; a final expression's value is shown too.",
                }
            },
            "required": ["code"],
        },
    },
}

_LIMIT_KEYS = ("time_limit_ms", "wall_limit_ms", "memory_mb", "output_bytes", "file_quota_bytes",
               "session_cpu_ms", "lifetime_ms")


class _Response:
    """verl's ``ToolResponse`` shape, for use without verl installed."""

    def __init__(self, text: Optional[str] = None, image: Optional[list] = None, video: Optional[list] = None):
        self.text, self.image, self.video = text, image, video

    def is_empty(self) -> bool:
        return not self.text and not self.image and not self.video


class _Base:
    """``BaseTool``'s constructor contract, for use without verl installed."""

    def __init__(self, config: dict, tool_schema: Any):
        self.config = config
        self.tool_schema = tool_schema or self.get_openai_tool_schema()
        self.name = self.tool_schema["function"]["name"] if isinstance(self.tool_schema, dict) else self.tool_schema.function.name


def _verl_types():
    try:
        from verl.tools.base_tool import BaseTool
        from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse
    except ImportError:
        return _Base, None, _Response
    return BaseTool, OpenAIFunctionToolSchema, ToolResponse


def _make_python_tool():
    base, schema_type, response_type = _verl_types()

    class PythonTool(base):
        __doc__ = _TOOL_DOC

        def __init__(self, config: Optional[dict] = None, tool_schema: Any = None):
            config = dict(config or {})
            self._limits = {k: int(config[k]) for k in _LIMIT_KEYS if config.get(k) is not None}
            self._state = config.get("state", "trajectory")
            if self._state not in ("trajectory", "instance"):
                raise ValueError(f"PythonTool config `state`: \"trajectory\" or \"instance\", not {self._state!r}")
            self._idle_ttl_s = float(config.get("idle_ttl_s", 300.0))
            self._max_interpreters = int(config.get("max_interpreters", 24))
            self._instances: dict[str, Optional[Any]] = {}
            self._trajectories: "OrderedDict[str, tuple[Any, float]]" = OrderedDict()
            self._lock = threading.Lock()
            super().__init__(config, tool_schema)

        def get_openai_tool_schema(self):
            current = getattr(self, "tool_schema", None)
            if current is not None:
                return current
            if schema_type is None:
                return DEFAULT_TOOL_SCHEMA
            return schema_type.model_validate(DEFAULT_TOOL_SCHEMA)

        async def create(self, instance_id: Optional[str] = None, **kwargs: Any):
            instance_id = instance_id or uuid.uuid4().hex
            with self._lock:
                self._instances[instance_id] = None
            return instance_id, response_type()

        async def execute(self, instance_id: str, parameters: dict, **kwargs: Any):
            code = parameters.get("code") if isinstance(parameters, dict) else None
            if not isinstance(code, str):
                return response_type(text="Error: the tool needs a `code` string argument."), 0.0, {"status": "bad_arguments"}
            trajectory = getattr(kwargs.get("agent_data"), "request_id", None)
            interpreter = await asyncio.to_thread(self._interpreter, instance_id, trajectory)
            from . import InterpreterClosed
            from .trl import tool_output

            try:
                result = await asyncio.to_thread(interpreter.run, code)
            except InterpreterClosed as e:
                # Its CPU budget or lifetime is spent: the model is told, the next call starts afresh.
                self._forget(interpreter)
                return response_type(text=str(e)), 0.0, {"status": "closed"}

            return response_type(text=tool_output(result)), 0.0, {
                "status": result.status,
                "duration_ms": result.duration_ms,
            }

        async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
            return 0.0

        async def release(self, instance_id: str, **kwargs: Any) -> None:
            with self._lock:
                own = self._instances.pop(instance_id, None)
            if own is not None:
                await asyncio.to_thread(own.close)

        def _interpreter(self, instance_id: str, trajectory: Optional[str]):
            """The interpreter for this call: the trajectory's (made on its first call), else the
            instance's; frees idle and least recently used trajectory interpreters."""
            from . import Interpreter

            if self._state == "instance" or trajectory is None:
                with self._lock:
                    own = self._instances.get(instance_id)
                if own is None:
                    own = Interpreter(**self._limits)
                    with self._lock:
                        self._instances[instance_id] = own
                return own
            now = time.monotonic()
            evicted = []
            with self._lock:
                for key, (old, used) in list(self._trajectories.items()):
                    if key != trajectory and now - used > self._idle_ttl_s:
                        evicted.append(old)
                        del self._trajectories[key]
                entry = self._trajectories.get(trajectory)
                if entry is None:
                    while len(self._trajectories) >= max(self._max_interpreters, 1):
                        evicted.append(self._trajectories.popitem(last=False)[1][0])
                    interpreter = Interpreter(**self._limits)
                else:
                    interpreter = entry[0]
                self._trajectories[trajectory] = (interpreter, now)
                self._trajectories.move_to_end(trajectory)
            for old in evicted:
                old.close()
            return interpreter

        def _forget(self, interpreter) -> None:
            with self._lock:
                for key, (held, _) in list(self._trajectories.items()):
                    if held is interpreter:
                        del self._trajectories[key]

        def close(self) -> None:
            """Frees every interpreter this tool holds."""
            with self._lock:
                held = [i for i in self._instances.values() if i is not None]
                held += [i for i, _ in self._trajectories.values()]
                self._instances.clear()
                self._trajectories.clear()
            for interpreter in held:
                interpreter.close()

    PythonTool.__module__ = __name__
    PythonTool.__qualname__ = "PythonTool"
    return PythonTool


_TOOL_DOC = """A sandboxed Python interpreter as a verl agent-loop tool (see the module docs for its
config). Constructed as verl's tool registry does: ``PythonTool(config=..., tool_schema=...)``."""

_TOOL_CLASS = None


def __getattr__(name: str):
    # Built on first use, so that it subclasses verl's BaseTool whenever verl is importable
    # by then (this module is also imported for compute_score, without verl).
    global _TOOL_CLASS
    if name == "PythonTool":
        if _TOOL_CLASS is None:
            _TOOL_CLASS = _make_python_tool()
        return _TOOL_CLASS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
