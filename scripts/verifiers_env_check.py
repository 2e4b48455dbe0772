#!/usr/bin/env python3
"""verifiers 0.4's own classes and command lines (PyPI `verifiers`, unmodified) drive
`grpo_rewards.verifiers_env.PackTaskset` over our task packs, and every reward they give is
the one `grpo score --tasks PACK` gives the same completion:

- verifiers' loader finds the taskset by name (`grpo-taskset`, the top-level module
  `grpo_taskset`) and builds it from a config with `pack`; its tasks are the pack's, in
  order, `data.id` the pack's task id and the prompt the task's;
- right, wrong and whitespace-padded replies to a math task (builtin:arith, whose weights
  give format a share) and a code task (builtin:python, run in the sandbox), and to a task
  of a pack written to a file and named by a relative path, scored by verifiers'
  `Task.score` in-process and by `vf-replay` over a run directory that `vf-eval --dry-run`
  configured (replay scores saved traces), equal `grpo score`'s rewards;
- whole `vf-eval` rollouts (harness program, interception server, tool servers, scoring)
  against a scripted OpenAI-compatible endpoint that answers with given replies (and, with
  the python tool on, first calls it) give `grpo score`'s rewards, and the tool's output in
  the trace is what our interpreter printed;
- `vf-validate` (model-free) finds every selected task's own answer correct and an
  untouched task unsolved;
- with `task.python_tool`, each rollout's `python` tool, brought up by verifiers' own
  `serve_tools` and called through its MCP client, runs in our interpreter: state lasts
  across one rollout's calls and is not shared with another's, errors come back as
  tracebacks, the host's files are absent, a loop stops at its time limit, and no server
  outlives its rollout;
- a bad pack is an error naming `pack`; a task missing from its pack is an error on the
  trace, never a reward;
- examples/environments/verifiers_taskset.py runs as written and prints these rewards.

    python3 scripts/verifiers_env_check.py   # in a venv with verifiers, uv and the grpo_rewards wheel

`grpo` is `$GRPO_BIN`, else target/debug/grpo of this checkout. verifiers' harness programs
run through `uv` (found beside this Python or on PATH), which fetches their own packages
(openai, mcp) from PyPI on first use.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import grpo_rewards
import verifiers.v1 as vf
from grpo_rewards.verifiers_env import PackTask, PackTaskData, PackTaskset, reply_trace
from verifiers.v1.trace import Trace
from verifiers.v1.utils.trace_store import read_episodes, write_episode

ROOT = Path(__file__).resolve().parents[1]
GRPO = os.environ.get("GRPO_BIN", str(ROOT / "target" / "debug" / "grpo"))
BIN = Path(sys.executable).parent
TASKSET = "grpo-taskset"


def grpo_score(pack: str, task_id: str, replies: list[str], work: Path) -> list[dict]:
    """`grpo score --tasks PACK` on `replies` to `task_id`: one JSON row per reply."""
    lines = work / "completions.jsonl"
    lines.write_text("".join(json.dumps({"task_id": task_id, "completion": r}) + "\n" for r in replies))
    out = subprocess.run(
        [GRPO, "score", "--tasks", pack, "--completions", str(lines)],
        check=True, capture_output=True, text=True,
    ).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert len(rows) == len(replies), out
    return rows


def load(pack: str) -> PackTaskset:
    """The taskset as verifiers' command lines build it: by name, config narrowed to its type."""
    config = vf.taskset_config_type(TASKSET).model_validate({"id": TASKSET, "pack": pack})
    taskset = vf.load_taskset(config)
    assert type(taskset) is PackTaskset, type(taskset)
    assert vf.task_type(TASKSET) is PackTask
    return taskset


def check_tasks(taskset: PackTaskset, pack: grpo_rewards.Pack) -> None:
    tasks = list(taskset)
    assert [t.data.id for t in tasks] == pack.ids(), "tasks are not the pack's, in order"
    for idx, task in enumerate(tasks):
        assert task.data.idx == idx and task.key == task.data.id, task.data
        assert task.data.prompt == pack.task(task.data.id)["prompt"], task.data.id


def vf_cli(name: str, *args: str) -> str:
    """A verifiers command line, run in this working directory (relative packs resolve here)."""
    done = subprocess.run([str(BIN / name), *args], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{name} {' '.join(args)}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def replay(pack: str, task: PackTask, replies: list[str], work: Path) -> list[float]:
    """`vf-replay`'s rewards for `replies`, saved as a run that `vf-eval --dry-run` configured."""
    vf_cli("vf-eval", TASKSET, "--env.taskset.pack", pack, "--dry-run", "-o", str(work / "runs"), "--run.dir", "src")
    source = work / "runs" / "src"
    saved = json.loads(next((source / "configs" / "resolved").glob("*.json")).read_text())
    absolute = pack if pack.startswith("builtin:") else os.path.abspath(pack)
    assert saved["env"]["taskset"]["pack"] == absolute, saved["env"]["taskset"]
    for reply in replies:
        trace = reply_trace(task, reply)
        write_episode(source, vf.Episode(task=trace.task, traces=[trace], ok=True))
    vf_cli("vf-replay", str(source), "-o", str(work / "replayed"), "--rich", "False")
    from verifiers.v1.configs.agent import WireAgentConfig
    from verifiers.v1.task import WireTaskData

    episodes = read_episodes(work / "replayed", Trace[WireTaskData, vf.State, WireAgentConfig])
    traces = [t for e in episodes for t in e.traces]
    assert len(traces) == len(replies), traces
    by_reply = {t.last_message.content: t for t in traces}
    for t in traces:
        assert set(t.rewards) == {"pack_reward"} and not t.errors, (t.rewards, t.errors)
    return [by_reply[r].reward for r in replies]


def check_pack(pack: str, replies: list[str], want_correct: list[bool], work: Path) -> list[float]:
    work.mkdir(parents=True)
    native = grpo_rewards.Pack(pack)
    taskset = load(pack)
    check_tasks(taskset, native)
    task = next(iter(taskset))
    rows = grpo_score(pack, task.data.id, replies, work)
    assert [r["correct"] for r in rows] == want_correct, rows
    want = [r["reward"] for r in rows]

    for reply, row in zip(replies, rows):
        trace = reply_trace(task, reply)
        asyncio.run(task.score(trace))
        assert trace.reward == row["reward"], (pack, reply, trace.rewards, row)
        assert set(trace.rewards) == {"pack_reward"}, trace.rewards
        assert trace.metrics == {**row["rewards"], "correct": float(row["correct"])}, (trace.metrics, row)
        assert trace.info["grpo"] == {"verdict": row["verdict"]["kind"], "reason": row["verdict"]["reason"]}

    replayed = replay(pack, task, replies, work)
    assert replayed == want, (pack, replayed, want)
    print(f"{pack} {task.data.id}: grpo score {want}, Task.score and vf-replay the same")
    return want


def check_validate(pack: str, n: int, work: Path) -> None:
    out = vf_cli("vf-validate", TASKSET, "--taskset.pack", pack, "--runtime.type", "subprocess",
                 "-n", str(n), "-o", str(work / "validated"), "--rich", "False")
    summary = json.loads(next((work / "validated").glob("*/summary.json")).read_text())
    assert summary["outcomes"]["valid"] == n and summary["total"] == n, (summary, out)
    for check in ("gold", "noop"):
        assert summary["checks"][check]["valid"] == n, (check, summary)
    print(f"vf-validate {pack}: {n} of {n} tasks valid (own answer correct, untouched unsolved)")


def check_errors() -> None:
    for bad in ("builtin:nope", "   "):
        try:
            list(load(bad))
        except ValueError as e:  # pydantic's ValidationError is a ValueError
            assert "pack" in str(e), e
        else:
            raise AssertionError(f"pack {bad!r} was accepted")
    data = PackTaskData(id="no-such-task", prompt="?", pack="builtin:arith", kind="math")
    trace = reply_trace(PackTask(data), "<answer>1</answer>")
    try:
        asyncio.run(PackTask(data).score(trace))
    except vf.TaskError as e:
        assert "no-such-task" in str(e.__cause__ or e), e
    else:
        raise AssertionError(f"a task missing from its pack was scored: {trace.rewards}")
    assert trace.rewards["pack_reward"] is None, trace.rewards
    print("errors: a bad pack names `pack`; a task missing from its pack is an error, not a reward")


def tool_servers() -> list[int]:
    """Processes serving our tool (verifiers runs each as `python -m grpo_rewards.verifiers_tools`)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and b"grpo_rewards.verifiers_tools" in (proc / "cmdline").read_bytes():
                found.append(int(proc.name))
        except OSError:
            continue
    return found


async def python_tool_rollouts(toolsets_a: list, toolsets_b: list) -> list[list[str]]:
    """Two rollouts' tool servers, brought up as verifiers' rollout does (`serve_tools` beside a
    subprocess agent runtime), called through the MCP client its harnesses use."""
    from verifiers.v1.harnesses.utils.mcp import mcp_client
    from verifiers.v1.mcp import serve_tools
    from verifiers.v1.runtimes import provision_runtime

    calls = [
        ("a", "x = 41"), ("a", "print(x + 1)"), ("b", "print(x)"), ("a", "1/0"),
        ("a", "print(open('/etc/passwd').read())"), ("a", "while True: pass"), ("a", "print(x)"),
    ]
    async with (
        provision_runtime(vf.SubprocessConfig()) as agent_a,
        provision_runtime(vf.SubprocessConfig()) as agent_b,
        serve_tools(toolsets_a, agent_a) as urls_a,
        serve_tools(toolsets_b, agent_b) as urls_b,
    ):
        assert list(urls_a) == [""] and list(urls_b) == [""], (urls_a, urls_b)  # bare tool names
        assert len(tool_servers()) == 2, tool_servers()
        urls = {"a": urls_a[""], "b": urls_b[""]}
        outputs = []
        for rollout, code in calls:
            async with mcp_client({"url": urls[rollout]}) as client:
                listed = await client.list_tools()
                assert [t.name for t in listed.tools] == ["python"], listed
                result = await client.call_tool("python", {"code": code})
                outputs.append([c.text for c in result.content])
    return outputs


def check_python_tool() -> None:
    assert PackTask.toolsets(load("builtin:arith").config.task) == [], "a tool without python-tool"
    config = {"python_tool": True, "python": {"time_limit_ms": 1000}}
    taskset = vf.load_taskset(
        vf.taskset_config_type(TASKSET).model_validate({"id": TASKSET, "pack": "builtin:arith", "task": config})
    )
    task = next(iter(taskset))
    toolsets = [type(task).toolsets(task.config) for _ in range(2)]
    assert [type(t[0]).__name__ for t in toolsets] == ["PythonToolset"] * 2, toolsets
    assert toolsets[0][0].config.limits() == {"time_limit_ms": 1000}, toolsets[0][0].config
    out = ["".join(o) for o in asyncio.run(python_tool_rollouts(*toolsets))]
    assert out[0] == "(no output)" and out[1] == "42\n", out
    assert "NameError" in out[2], out  # the other rollout's interpreter is its own
    assert "ZeroDivisionError" in out[3] and "Traceback" in out[3], out
    assert "FileNotFoundError" in out[4], out  # the host's files are not there
    assert "time limit" in out[5], out
    assert "NameError" in out[6], out  # after a timeout the next call starts afresh
    assert tool_servers() == [], f"tool servers left running: {tool_servers()}"
    print("python tool: verifiers serves our interpreter per rollout over MCP (state kept, isolated, limits, closed)")


class ScriptedModel:
    """An OpenAI-compatible chat endpoint that plays a fixed script instead of sampling: for a
    conversation whose first user message is a scripted prompt it first calls the `python`
    tool with that prompt's code (when the request offers tools and the script has code),
    then replies with that prompt's text. Streams when asked, as verifiers' harnesses ask."""

    def __init__(self, replies: dict[str, str], code: dict[str, str]) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                data, stream = model.respond(body)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream" if stream else "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.replies, self.code = replies, code
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def respond(self, body: dict) -> tuple[bytes, bool]:
        messages = body["messages"]
        prompt = next(m["content"] for m in messages if m["role"] == "user")
        prompt = prompt if isinstance(prompt, str) else "".join(p.get("text", "") for p in prompt)
        called = any(m["role"] == "tool" for m in messages)
        if body.get("tools") and prompt in self.code and not called:
            call = {"id": "call_0", "type": "function",
                    "function": {"name": "python", "arguments": json.dumps({"code": self.code[prompt]})}}
            message, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": self.replies[prompt]}, "stop"
        head = {"id": "scripted", "created": int(time.time()), "model": body.get("model", "scripted")}
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        if not body.get("stream"):
            choice = {"index": 0, "message": message, "finish_reason": finish}
            return json.dumps({**head, "object": "chat.completion", "choices": [choice], "usage": usage}).encode(), False
        delta = dict(message)
        if "tool_calls" in delta:
            delta["tool_calls"] = [dict(c, index=i) for i, c in enumerate(delta["tool_calls"])]
        chunk = {**head, "object": "chat.completion.chunk"}
        events = [
            {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
            {**chunk, "choices": [], "usage": usage},
        ]
        return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n", True

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def vf_eval(pack: str, n: int, model: ScriptedModel, out: Path, *flags: str) -> list:
    """`vf-eval`'s traces for the first `n` tasks of `pack`: verifiers' `null` harness (one
    chat program, its tools over MCP) on the subprocess runtime, the model at `model`."""
    uv = shutil.which("uv", path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    assert uv, "vf-eval's harness programs run through uv: pip install uv into this venv"
    env = {**os.environ, "PATH": f"{Path(uv).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    args = [str(BIN / "vf-eval"), TASKSET, "--env.taskset.pack", pack, "-n", str(n), "-m", "scripted",
            "--client.base-url", model.url, "--env.agent.harness.id", "null",
            "--env.agent.runtime.type", "subprocess", "--no-rich", "-o", str(out), "--run.dir", "run", *flags]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"vf-eval: exit {done.returncode}\n{done.stderr[-4000:]}"
    from verifiers.v1.configs.agent import WireAgentConfig
    from verifiers.v1.task import WireTaskData

    episodes = read_episodes(out / "run", Trace[WireTaskData, vf.State, WireAgentConfig])
    traces = sorted((t for e in episodes for t in e.traces), key=lambda t: t.task.data.idx)
    assert len(traces) == n, traces
    for t in traces:
        assert t.ok and not t.errors, (t.task.data.id, t.errors)
    return traces


def check_eval(work: Path) -> None:
    """A whole `vf-eval` rollout per task (harness program, interception, tool servers, scoring),
    the model a script: rewards as `grpo score` gives them, the tool's output our interpreter's."""
    arith = grpo_rewards.Pack("builtin:arith")
    tasks = [arith.task(i) for i in arith.ids()[:2]]
    expression = tasks[0]["metadata"]["expression"]
    replies = {tasks[0]["prompt"]: f"<think>{expression} = {tasks[0]['answer']}</think><answer>{tasks[0]['answer']}</answer>",
               tasks[1]["prompt"]: f"<answer>{int(tasks[1]['answer']) + 1}</answer>"}
    python = grpo_rewards.Pack("builtin:python")
    code = python.task(python.ids()[0])
    replies[code["prompt"]] = f"```python\n{code['reference']}\n```"
    model = ScriptedModel(replies, {tasks[0]["prompt"]: f"print({expression})"})
    try:
        traces = vf_eval("builtin:arith", 2, model, work / "eval-arith", "--env.taskset.task.python-tool", "true")
        traces += vf_eval("builtin:python", 1, model, work / "eval-python")
    finally:
        model.close()
    rewards = []
    for trace, pack in zip(traces, ["builtin:arith", "builtin:arith", "builtin:python"]):
        reply = trace.assistant_messages[-1].content
        assert reply == replies[trace.task.data.prompt], (reply, trace.task.data)
        want = grpo_score(pack, trace.task.data.id, [reply], work)[0]
        assert trace.reward == want["reward"] and set(trace.rewards) == {"pack_reward"}, (trace.rewards, want)
        rewards.append(trace.reward)
    assert rewards[0] > rewards[1], rewards
    tool = [m.content for m in traces[0].tool_messages]
    assert tool == [f"{tasks[0]['answer']}\n"], tool  # printed by our interpreter, through MCP
    assert [t.name for t in traces[0].tools] == ["python"] and not traces[2].tools, (traces[0].tools, traces[2].tools)
    assert tool_servers() == [], f"tool servers left running: {tool_servers()}"
    print(f"vf-eval (scripted model): rewards {rewards} as grpo score gives them; the python tool printed {tool[0]!r}")


def check_example(work: Path, arith: list[float], python: list[float]) -> None:
    example = ROOT / "examples" / "environments" / "verifiers_taskset.py"
    done = subprocess.run([sys.executable, str(example)], cwd=work, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line.split() for line in done.stdout.splitlines() if line.strip()]
    got = {(r[0], r[2]): float(r[3]) for r in rows}
    assert got == {("builtin:arith", "right"): arith[0], ("builtin:arith", "wrong"): arith[1],
                   ("builtin:python", "right"): python[0], ("builtin:python", "wrong"): python[1]}, done.stdout
    print(f"example: {len(rows)} rewards printed, as grpo score gives them")


def main() -> None:
    assert Path(GRPO).is_file(), f"no grpo binary at {GRPO} (set GRPO_BIN or build target/debug/grpo)"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        arith = grpo_rewards.Pack("builtin:arith")
        answer = arith.task(arith.ids()[0])["answer"]
        arith_rewards = check_pack(
            "builtin:arith",
            [f"<think>adding</think><answer>{answer}</answer>", f"<answer>{int(answer) + 1}</answer>",
             f"\n  <answer>{answer}</answer>\n\n"],
            [True, False, True],
            work / "arith",
        )
        assert arith_rewards[0] > arith_rewards[2] > arith_rewards[1], arith_rewards

        python = grpo_rewards.Pack("builtin:python")
        code = python.task(python.ids()[0])
        python_rewards = check_pack(
            "builtin:python",
            [f"```python\n{code['reference']}\n```", "```python\ndef fizzbuzz(n):\n    return []\n```"],
            [True, False],
            work / "python",
        )

        # A pack in a file, named relative to the working directory.
        local = work / "local"
        local.mkdir()
        tasks = [arith.task(i) for i in arith.ids()[3:6]]
        (local / "mine.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
        os.chdir(local)
        check_pack("mine.jsonl", [f"<answer>{tasks[0]['answer']}</answer>", "<answer>x</answer>"],
                   [True, False], local / "run")
        os.chdir(work)

        check_validate("builtin:python", 5, work)
        check_errors()
        check_python_tool()
        check_eval(work)
        check_example(work, arith_rewards, python_rewards)
    print("verifiers env check: ok")


if __name__ == "__main__":
    main()
