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
  configured (no model server: replay scores saved traces), equal `grpo score`'s rewards;
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

    python3 scripts/verifiers_env_check.py   # in a venv with verifiers and the grpo_rewards wheel

`grpo` is `$GRPO_BIN`, else target/debug/grpo of this checkout.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
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
    assert saved["env"]["taskset"]["pack"] == grpo_rewards.verifiers_env._spec(pack), saved["env"]["taskset"]
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
        check_example(work, arith_rewards, python_rewards)
    print("verifiers env check: ok")


if __name__ == "__main__":
    main()
