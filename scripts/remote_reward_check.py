#!/usr/bin/env python3
"""Proof with the frameworks' remote-reward clients, against two running `grpo serve`.

1. Starts two `grpo serve --addr 127.0.0.1:0` (the binary from $GRPO_BIN, else target/release
   or target/debug), both requiring one bearer token, and checks a request without it is 401.
2. OpenRLHF: downloads its wheel from PyPI (`pip download openrlhf --no-deps`), takes
   `openrlhf/utils/agent.py` and `openrlhf/utils/logging_utils.py` out of it unchanged and
   loads them by path (importing `openrlhf` itself would pull torch, ray and deepspeed; those
   two files need only aiohttp). Its `SingleTurnAgentExecutor` is given both servers' URLs,
   as `--remote_rm_url url1,url2` gives them, and its `_fetch_rewards_via_http` (the code
   that posts a batch, split over the servers, to each `/get_reward`) scores a batch of math
   and code samples; the rewards must be the right ones, and both servers must have served.
   OpenRLHF's client sends no headers, so for this step the servers are restarted without
   the token.
3. slime is not published on PyPI: its `remote_rm` posts `{"prompt", "response", "label"}`
   with aiohttp to `--rm-url` and takes the JSON answer as the reward (`--reward-key`
   indexes it when set). The same request is made here, for the bare reward and for
   `?details=true` with `reward` as the key.

Run: `scripts/remote_reward_check.sh` (a venv with aiohttp, then this).
Exit status 0 when every check passes.
"""

from __future__ import annotations

import asyncio
import glob
import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import types
import urllib.error
import urllib.request
import zipfile

import aiohttp

from verl_client_check import FAILURES, expect, find_binary, start_server, summary  # noqa: E402  (scripts/ is on sys.path)

TOKEN = "remote-reward-check-token"
def stop(servers: list[tuple[subprocess.Popen, str]]) -> None:
    for process, _ in servers:
        process.terminate()
    for process, url in servers:
        if process.wait(timeout=30) != 0:
            FAILURES.append(f"server {url} exit status {process.returncode}")


def http(url: str, body: dict | None = None, token: str | None = None) -> tuple[int, object]:
    request = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    def parse(data: bytes) -> object:
        try:
            return json.loads(data or b"null")
        except ValueError:
            return data.decode(errors="replace")

    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, parse(response.read())
    except urllib.error.HTTPError as e:
        return e.code, parse(e.read())


def served(url: str, route: str, token: str | None = None) -> float:
    request = urllib.request.Request(url + "/metrics")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read().decode()
    total = 0.0
    for line in text.splitlines():
        if line.startswith("grpo_http_requests_total{") and f'route="{route}"' in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


def load_openrlhf_agent(workdir: str):
    """OpenRLHF's `openrlhf.utils.agent`, from the PyPI wheel, byte for byte."""
    version = os.environ.get("OPENRLHF_VERSION")
    spec = f"openrlhf=={version}" if version else "openrlhf"
    subprocess.run([sys.executable, "-m", "pip", "download", spec, "--no-deps", "-q", "-d", workdir], check=True)
    wheel = sorted(glob.glob(os.path.join(workdir, "openrlhf-*.whl")))[-1]
    package = pathlib.Path(workdir) / "openrlhf" / "utils"
    package.mkdir(parents=True)
    with zipfile.ZipFile(wheel) as z:
        for name in ("agent.py", "logging_utils.py"):
            member = next(m for m in z.namelist() if m.endswith(f"openrlhf/utils/{name}"))
            (package / name).write_bytes(z.read(member))
    # Empty packages stand in for `openrlhf` and `openrlhf.utils` (their real __init__ files
    # import torch); the two modules themselves are loaded unchanged.
    for name, path in (("openrlhf", package.parent), ("openrlhf.utils", package)):
        module = types.ModuleType(name)
        module.__path__ = [str(path)]
        sys.modules[name] = module
    for name in ("logging_utils", "agent"):
        spec = importlib.util.spec_from_file_location(f"openrlhf.utils.{name}", package / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[f"openrlhf.utils.{name}"] = module
        spec.loader.exec_module(module)
    return sys.modules["openrlhf.utils.agent"], os.path.basename(wheel)


def batch() -> tuple[list[str], list[str], list[object], list[float]]:
    """Queries (prompt + response), prompts, labels and the rewards they must get."""
    prompt = "<|user|>Put the final answer in \\boxed{}. {q}<|assistant|>"
    code = {"inputs": ["3 4\n", "10 -2\n"], "outputs": ["7\n", "8\n"]}
    rows = [
        ("What is 6*7?", "6*7 = \\boxed{42}", "42", 1.0),
        ("What is 6*7?", "I think \\boxed{41}", "42", 0.0),
        ("Half of 1?", "It is \\boxed{\\frac{1}{2}}", "0.5", 1.0),
        ("Half of 1?", "It is \\boxed{0.25}", "0.5", 0.0),
        ("Add two numbers from stdin.", "```python\na, b = map(int, input().split())\nprint(a + b)\n```",
         json.dumps(code), 1.0),
        ("Add two numbers from stdin.", "```python\nprint(7)\n```", json.dumps(code), 0.0),
        ("3^2?", "\\boxed{9}", "9", 1.0),
        ("3^2?", "no answer", "9", 0.0),
    ]
    prompts = [prompt.replace("{q}", q) for q, _, _, _ in rows]
    queries = [p + response for p, (_, response, _, _) in zip(prompts, rows)]
    return queries, prompts, [label for _, _, label, _ in rows], [want for *_, want in rows]


def openrlhf_checks(agent, urls: list[str]) -> None:
    executor = agent.SingleTurnAgentExecutor([u + "/get_reward" for u in urls])
    queries, prompts, labels, want = batch()
    answers = asyncio.run(executor._fetch_rewards_via_http(queries, prompts, labels))
    rewards = [r for answer in answers for r in answer["rewards"]]
    expect("OpenRLHF _fetch_rewards_via_http over two servers: rewards", rewards, want)
    scores = [s for answer in answers for s in answer["scores"]]
    expect("OpenRLHF: scores (dynamic filtering) in [0, 1]", all(0.0 <= s <= 1.0 for s in scores), True)
    expect("OpenRLHF: extra_logs.correct", [c for a in answers for c in a["extra_logs"]["correct"]], want)
    shares = [served(u, "/get_reward") for u in urls]
    expect("OpenRLHF: both servers served a share", [s >= 1 for s in shares], [True, True])
    # One query at a time, as its single-turn executor calls it during rollouts: rotated
    # over the servers call by call.
    single = [asyncio.run(executor._fetch_rewards_via_http([q], [p], [lab]))[0]["rewards"][0]
              for q, p, lab in zip(queries, prompts, labels)]
    expect("OpenRLHF: one query per call", single, want)


async def slime_remote_rm(url: str, prompt: str, response: str, label: object, reward_key: str | None,
                          token: str) -> float:
    """What slime's `remote_rm` sends (its payload, aiohttp, the JSON answer as the reward),
    plus the service's bearer token."""
    payload = {"prompt": prompt, "response": response, "label": label}
    headers = {"Authorization": f"Bearer {token}"}
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120)) as session:
        async with session.post(url, json=payload, headers=headers) as resp:
            resp.raise_for_status()
            reward = await resp.json()
    return reward if not reward_key else reward[reward_key]


def slime_checks(url: str) -> None:
    queries, prompts, labels, want = batch()
    responses = [q[len(p):] for q, p in zip(queries, prompts)]

    async def all_samples(route: str, key: str | None):
        return await asyncio.gather(*(slime_remote_rm(url + route, p, r, lab, key, TOKEN)
                                      for p, r, lab in zip(prompts, responses, labels)))

    expect("slime remote_rm: bare rewards", asyncio.run(all_samples("/v1/reward", None)), want)
    expect("slime remote_rm --reward-key reward", asyncio.run(all_samples("/v1/reward?details=true", "reward")), want)


def main() -> int:
    binary = find_binary()
    with tempfile.TemporaryDirectory() as workdir:
        agent, wheel = load_openrlhf_agent(workdir)
        print(f"OpenRLHF client from {wheel}")
        servers = [start_server(binary, TOKEN) for _ in range(2)]
        try:
            url = servers[0][1]
            status, body = http(url + "/get_reward", {"query": ["1"], "labels": ["1"]})
            expect("without the token: /get_reward status", status, 401)
            expect("without the token: /healthz status", http(url + "/healthz")[0], 200)
            status, body = http(url + "/get_reward", {"query": ["\\boxed{1}"], "labels": ["1"]}, TOKEN)
            expect("with the token: /get_reward", (status, body["rewards"]), (200, [1.0]))
            slime_checks(url)
        finally:
            stop(servers)
        # OpenRLHF's client sends no Authorization header: open servers for it.
        servers = [start_server(binary, None) for _ in range(2)]
        try:
            openrlhf_checks(agent, [u for _, u in servers])
        finally:
            stop(servers)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
