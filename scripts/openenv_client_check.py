#!/usr/bin/env python3
"""Proof with OpenEnv's own client: PyPI `openenv`, unmodified, drives `grpo serve`'s OpenEnv
environments over WebSocket and over stateless HTTP.

1. Starts `grpo serve --addr 127.0.0.1:0 --max-sessions 3` (the binary from $GRPO_BIN, else
   target/release or target/debug) and reads the address it prints.
2. `/openenv/python`, with `openenv.core.GenericEnvClient(base_url=...)` (synchronous
   `.sync()` and async alike): reset, state kept across steps, `reset(seed=...)` seeding
   `random`, a fresh interpreter on reset, an endless loop, an endless print, an 8 GiB
   allocation and allocating without end each coming back with a non-zero exit code while
   the session goes on, two sessions that never see each other's globals, a step before any
   reset and an action missing its field refused with OpenEnv's error codes, capacity
   reached past `--max-sessions`, and a place freed when a session closes. Every
   observation is validated with the coding environment's typed observation (pydantic,
   extra fields forbidden), and every HTTP answer with OpenEnv's own response models.

3. `/openenv/tasks` on servers started with `--pack builtin:arith-digits` (math) and
   `--pack builtin:pyfunc` (Python code): the same seed gives the same task, a step ends the
   episode with its verdict, and the rewards of right, almost right and wrong completions,
   over WebSocket and over stateless HTTP, equal `grpo score --tasks PACK`'s for the same
   completions.

Run it from a virtual environment holding OpenEnv's client:
    python3 -m venv /tmp/openenv-venv && /tmp/openenv-venv/bin/pip install openenv
    /tmp/openenv-venv/bin/python scripts/openenv_client_check.py
Exit status 0 when every check passes.
"""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

from openenv.core import GenericEnvClient
from openenv.core.env_server.types import (
    EnvironmentMetadata,
    HealthResponse,
    Observation,
    ResetResponse,
    SchemaResponse,
    State,
    StepResponse,
)

ROOT = pathlib.Path(__file__).resolve().parent.parent
MAX_SESSIONS = 3


class CodeObservation(Observation):
    """OpenEnv's coding environment's observation (`envs/coding_env/models.py`): a typed
    client builds it from every observation, and its base forbids unknown fields."""

    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0


sys.path.insert(0, str(ROOT / "benches"))
import grpo_server  # noqa: E402  (finding the binary, starting a server)


def start_server(binary: str, *extra: str) -> tuple[subprocess.Popen, str]:
    return grpo_server.serve(binary, "--max-sessions", str(MAX_SESSIONS), *extra)


FAILURES: list[str] = []


def check(condition: bool, what: str, detail: object = "") -> None:
    print(("ok   " if condition else "FAIL ") + what + (f": {detail}" if not condition and detail != "" else ""))
    if not condition:
        FAILURES.append(what)


def refused(call, code: str) -> str:
    """Runs `call`, which must fail with OpenEnv's error frame `code`; returns the message."""
    try:
        call()
    except (RuntimeError, ConnectionError) as e:
        return str(e) if code in str(e) else f"wrong error: {e}"
    return "no error"


def http(method: str, url: str, body: object | None = None) -> tuple[int, object]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def observe(result) -> CodeObservation:
    """The observation as the typed coding client builds it."""
    return CodeObservation(**result.observation)


def check_python(base: str) -> None:
    url = base + "/openenv/python"
    with GenericEnvClient(base_url=url).sync() as env:
        message = refused(lambda: env.step({"code": "print(1)"}), "EXECUTION_ERROR")
        check("EXECUTION_ERROR" in message, "python: a step before any reset is an error frame", message)
        first = env.reset(episode_id="episode-1")
        check(observe(first).exit_code == 0 and first.done is False, "python: reset", first)
        env.step({"code": "x = 41"})
        result = env.step({"code": "print(x + 1)"})
        obs = observe(result)
        check(obs.stdout == "42\n" and obs.exit_code == 0, "python: globals kept across steps", result)
        check(set(result.observation) == {"stdout", "stderr", "exit_code", "metadata"},
              "python: observation is stdout, stderr, exit_code (and OpenEnv's metadata)", result.observation)
        check(result.reward is None and result.done is False, "python: no reward, not done", result)
        meta = result.metadata or {}
        check(meta.get("status") == "ok" and {"duration_ms", "cpu_ms", "truncated"} <= set(meta),
              "python: status, duration_ms, cpu_ms, truncated in metadata", meta)
        state = env.state()
        check(state.get("episode_id") == "episode-1" and state.get("step_count") == 2,
              "python: state keeps episode_id and step_count", state)
        State(**state)

        message = refused(lambda: env.step({"source": "print(1)"}), "VALIDATION_ERROR")
        check("VALIDATION_ERROR" in message, "python: an action missing `code` is a validation error", message)

        for name, code, status in [
            ("an endless loop", "while True:\n    pass", "timeout"),
            ("an endless print", "while True:\n    print('y' * 4096)", None),
            # A 32-bit guest cannot even index 8 GiB: an OverflowError, exit code 1.
            ("an 8 GiB allocation", "b = bytearray(8 << 30)", None),
            ("allocating without end", "chunks = []\nwhile True:\n    chunks.append(bytearray(64 << 20))",
             "memory_limit"),
        ]:
            result = env.step({"code": code})
            obs = observe(result)
            got = (result.metadata or {}).get("status")
            check(obs.exit_code != 0 and (status is None or got == status),
                  f"python: {name} comes back with a non-zero exit code ({got})", result)
        result = env.step({"code": "print('still here')"})
        check(observe(result).stdout == "still here\n", "python: the session goes on after hostile steps", result)

        env.reset(seed=1234)
        drawn = observe(env.step({"code": "import random\nprint(random.random())"})).stdout
        env.reset(seed=1234)
        again = observe(env.step({"code": "import random\nprint(random.random())"})).stdout
        check(drawn == again and drawn != "", "python: the same seed draws the same numbers", (drawn, again))
        env.step({"code": "secret = 'episode two'"})
        env.reset()
        result = env.step({"code": "print(secret)"})
        obs = observe(result)
        check(obs.exit_code == 1 and "NameError" in obs.stderr, "python: reset gives a fresh interpreter", result)
        check(env.state().get("step_count") == 1, "python: reset restarts step_count", env.state())

        with GenericEnvClient(base_url=url).sync() as other:
            other.reset()
            env.step({"code": "mine = 1"})
            result = other.step({"code": "print(mine)"})
            check("NameError" in observe(result).stderr, "python: two sessions never see each other's globals", result)

    # Capacity: MAX_SESSIONS sessions hold every place; one more is refused, and a place
    # comes back when a session closes.
    async def capacity() -> None:
        held = [GenericEnvClient(base_url=url) for _ in range(MAX_SESSIONS)]
        for client in held:
            await client.connect()
            await client.reset()
        extra = GenericEnvClient(base_url=url)
        try:
            await extra.connect()
            await extra.reset()
            message = "no error"
        except (RuntimeError, ConnectionError) as e:
            message = str(e)
        finally:
            await extra.close()
        check("CAPACITY_REACHED" in message, "python: capacity reached past --max-sessions", message)
        await held[0].close()
        freed = "no place"
        for _ in range(50):
            client = GenericEnvClient(base_url=url)
            try:
                await client.connect()
                result = await client.reset()
                freed = "ok" if result.done is False else str(result)
                await client.close()
                break
            except RuntimeError as e:
                freed = str(e)
                await client.close()
                await asyncio.sleep(0.1)
        check(freed == "ok", "python: a closed session frees its place", freed)
        for client in held[1:]:
            await client.close()

    asyncio.run(capacity())

    status, body = http("GET", url + "/health")
    check(status == 200 and HealthResponse(**body).status == "healthy", "python: GET /health", body)
    status, body = http("GET", url + "/schema")
    schema = SchemaResponse(**body)
    check(status == 200 and schema.action.get("title") not in ("Action", "CallToolAction", "ListToolsAction"),
          "python: GET /schema, not an MCP tool schema", schema.action.get("title"))
    status, body = http("GET", url + "/metadata")
    check(status == 200 and EnvironmentMetadata(**body).name != "", "python: GET /metadata", body)
    status, body = http("GET", url + "/state")
    check(status == 200 and State(**body).step_count == 0, "python: GET /state", body)
    status, body = http("POST", url + "/reset", {"seed": 1})
    check(status == 200 and ResetResponse(**body).done is False, "python: POST /reset", body)
    status, body = http("POST", url + "/step", {"action": {"code": "print(6 * 7)"}})
    step = StepResponse(**body) if status == 200 else None
    check(step is not None and CodeObservation(**step.observation).stdout == "42\n", "python: POST /step", body)
    status, body = http("POST", url + "/step", {"action": {}})
    check(status == 422 and body["detail"][0]["loc"] == ["body", "action", "code"],
          "python: POST /step without `code` is 422", body)


def completions_for(task: dict) -> list[str]:
    """A right, an almost right and a wrong completion of a pack task."""
    if task["kind"] == "math":
        return [f"<think>easy</think>\n<answer>{task['answer']}</answer>",
                f"<think>x</think>\n<answer>{task['answer']} + 0</answer>", "no idea"]
    return [f"<think>easy</think>\n<answer>\n```python\n{task['reference']}\n```\n</answer>",
            f"```python\n{task['reference']}\n```", "```python\nprint(1)\n```"]


def grpo_score(binary: str, pack: str, lines: list[dict]) -> list[dict]:
    """`grpo score --tasks PACK` on `lines` ({task_id, completion})."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write("".join(json.dumps(line) + "\n" for line in lines))
    try:
        out = subprocess.run([binary, "score", "--tasks", pack, "--completions", f.name],
                             check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(f.name)
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def check_tasks(binary: str, base: str, pack: str) -> None:
    url = base + "/openenv/tasks"
    # A builtin pack's tasks, as the repository holds them.
    tasks = {}
    for split in sorted((ROOT / "tasks" / "packs" / pack.removeprefix("builtin:")).glob("*.jsonl")):
        for line in split.read_text().splitlines():
            if line.strip():
                task = json.loads(line)
                tasks[task["id"]] = task
    lines, ws_rewards, http_rewards = [], [], []
    with GenericEnvClient(base_url=url).sync() as env:
        message = refused(lambda: env.step({"completion": "1"}), "_ERROR")
        check("_ERROR" in message, f"tasks {pack}: a step before any reset is an error frame", message)
        picked = [env.reset(seed=seed).observation["task_id"] for seed in (1, 2, 3)]
        again = [env.reset(seed=seed).observation["task_id"] for seed in (1, 2, 3)]
        check(picked == again, f"tasks {pack}: the same seed gives the same task", (picked, again))
        for task_id in dict.fromkeys(picked):
            task = tasks.get(task_id)
            if task is None:
                check(False, f"tasks {pack}: reset picked a task of the pack", task_id)
                continue
            for completion in completions_for(task):
                first = env.reset(task_id=task_id)
                check(set(first.observation) == {"task_id", "prompt", "metadata"} and first.done is False,
                      f"tasks {pack}: reset observes task_id and prompt", first.observation)
                result = env.step({"completion": completion})
                check(result.done is True and "verdict" in (result.metadata or {}),
                      f"tasks {pack}: a step ends the episode with its verdict", result)
                ws_rewards.append(result.reward)
                status, body = http("POST", url + "/step", {"action": {"completion": completion, "task_id": task_id}})
                http_rewards.append(StepResponse(**body).reward if status == 200 else body)
                lines.append({"task_id": task_id, "completion": completion})
    scored = grpo_score(binary, pack, lines)
    expected = [s["reward"] for s in scored]
    check(ws_rewards == expected, f"tasks {pack}: WebSocket rewards equal grpo score's", (ws_rewards, expected))
    check(http_rewards == expected, f"tasks {pack}: HTTP rewards equal grpo score's", (http_rewards, expected))
    check(any(s["correct"] for s in scored) and not all(s["correct"] for s in scored),
          f"tasks {pack}: right and wrong completions among them", [s["correct"] for s in scored])
    status, body = http("POST", url + "/step", {"action": {"completion": "1"}})
    check(status == 422 and body["detail"][0]["loc"] == ["body", "action", "task_id"],
          f"tasks {pack}: a stateless step without task_id is 422", body)
    status, body = http("GET", url + "/schema")
    check(status == 200 and SchemaResponse(**body).action.get("title") == "TaskCompletionAction",
          f"tasks {pack}: GET /schema", body)


def main() -> int:
    binary = grpo_server.binary()
    process, base = start_server(binary)
    try:
        check_python(base)
    finally:
        process.terminate()
        process.wait(timeout=30)
    for pack in ("builtin:arith-digits", "builtin:pyfunc"):
        process, base = start_server(binary, "--pack", pack)
        try:
            check_tasks(binary, base, pack)
        finally:
            process.terminate()
            process.wait(timeout=30)
    if FAILURES:
        print(f"{len(FAILURES)} checks failed", file=sys.stderr)
        return 1
    print("every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
