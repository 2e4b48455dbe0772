#!/usr/bin/env python3
"""Soak test of `grpo serve`: many math completions and sandbox runs through one server, with
its resident memory sampled along the way and its file descriptors, temp entries and child
processes counted before and after.

    python3 benches/service_soak.py [--math 1000000] [--runs 100000] [--threads 8]
                                    [--episodes 100000] [--hostile 4] [--grpo target/release/grpo]

Python 3 standard library only (benches/websocket.py speaks WebSocket). Starts `grpo serve` on a free port with TMPDIR pointing at a
fresh directory (so every temp entry the sandbox makes is counted), warms it up, then:

1. math: `--math` completions as `/v1/score` requests of 8 (verl's ground-truth shape);
2. sandbox: `--runs` programs through `/run_code` (verl's body): small programs that print,
   read stdin, raise, exit non-zero, or write and read a file in their own temp directory;
3. environments: `--episodes` episodes picked at random among an OpenEnv python session over
   WebSocket (`/openenv/python/ws`: reset, steps whose state carries over, 8 GiB allocations,
   and one time in three the connection dropped mid-way; `--hostile` more sessions, one after another, loop
   or print without end), OpenEnv's stateless `/reset` + `/step` on `/openenv/tasks` (the
   arith pack; right and wrong answers), and NeMo Gym's `/seed_session` + `/verify` (math) +
   `/close_session`. Afterwards `/metrics` must show no session and no connection open
   but the one asking.

Every answer is checked (status 200 and the expected verdict). Prints per phase the count,
the rate and the RSS (after warm-up, peak, end), then the descriptor, temp-entry and child
process counts before and after. Exits non-zero on a wrong answer, a leak, or memory that
grows by more than --max-growth-mib between the first and last quarter of a phase.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import pathlib
import shutil
import subprocess
import sys
import random
import tempfile
import threading
import time

from environment_requests import (nemo_close_session, nemo_seed_session, nemo_verify, openenv_task_step,
                                  pack_answers)
from grpo_server import ROOT, binary, children, status_kib
from websocket import Closed, WebSocket

MATH_BODY = {
    "ground_truth": "\\frac{1}{2}",
    "completions": ["\\boxed{0.5}", "\\boxed{1/2}", "\\boxed{2}", "x = \\frac{2}{4}", "<answer>0.50</answer>",
                    "1/3", "\\boxed{\\frac{1}{2}}", "none"],
}
MATH_EXPECTED = [True, True, False, True, True, False, True, False]

PROGRAMS = [
    ("print(sum(range(100)))", "", "Success", "4950\n"),
    ("import sys\nprint(sys.stdin.read().upper(), end='')", "abc\n", "Success", "ABC\n"),
    ("raise ValueError('boom')", "", "Failed", ""),
    ("import sys\nsys.exit(3)", "", "Failed", ""),
    ("import tempfile, os\np = os.path.join(tempfile.gettempdir(), 'x.txt')\n"
     "open(p, 'w').write('hi')\nprint(open(p).read())", "", "Success", "hi\n"),
]


def fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


# The sandbox keeps emptied run directories for later runs, at most this many
# (grpo-sandbox/src/engine/rundir.rs, `KEEP`): how many it keeps depends on how many runs
# overlapped, so they are counted apart from the entries that would be a leak.
RUN_DIRS_KEPT_AT_MOST = 64


def kept_run_dirs(directory: pathlib.Path) -> int:
    """Empty run directories the sandbox keeps for reuse."""
    return sum(1 for d in directory.glob("grpo-sandbox-*") if d.is_dir() and not any(d.iterdir()))


def entries(directory: pathlib.Path) -> int:
    """Everything under `directory` except the empty run directories kept for reuse."""
    return sum(1 for _ in directory.rglob("*")) - kept_run_dirs(directory)


class Sampler(threading.Thread):
    """Samples the server's RSS (MiB) every `period` seconds."""

    def __init__(self, pid: int, period: float = 1.0):
        super().__init__(daemon=True)
        self.pid, self.period, self.samples, self.stop = pid, period, [], threading.Event()

    def run(self):
        while not self.stop.is_set():
            self.samples.append(status_kib(self.pid, "VmRSS") / 1024)
            self.stop.wait(self.period)


def drive(host: str, port: int, requests: list[tuple[str, dict, object]], threads: int) -> tuple[int, list[str]]:
    """Sends every request (path, body, check) over `threads` keep-alive connections; returns
    the number sent and the problems found."""
    problems: list[str] = []
    lock = threading.Lock()
    next_index = [0]

    def worker():
        conn = http.client.HTTPConnection(host, port, timeout=120)
        while True:
            with lock:
                i = next_index[0]
                next_index[0] += 1
            if i >= len(requests):
                break
            path, body, check = requests[i]
            payload = json.dumps(body)
            for attempt in range(3):
                try:
                    conn.request("POST", path, payload, {"Content-Type": "application/json"})
                    response = conn.getresponse()
                    data = response.read()
                    break
                except (http.client.HTTPException, OSError):
                    conn.close()
                    conn = http.client.HTTPConnection(host, port, timeout=120)
                    if attempt == 2:
                        raise
            problem = check(response.status, data)
            if problem:
                with lock:
                    if len(problems) < 20:
                        problems.append(f"{path} request {i}: {problem}")
        conn.close()

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return len(requests), problems


def check_math(status: int, data: bytes) -> str | None:
    if status != 200:
        return f"status {status}: {data[:200]!r}"
    got = [r["correct"] for r in json.loads(data)["results"]]
    return None if got == MATH_EXPECTED else f"verdicts {got}"


def check_run(expected_status: str, expected_stdout: str):
    def check(status: int, data: bytes) -> str | None:
        if status != 200:
            return f"status {status}: {data[:200]!r}"
        body = json.loads(data)
        run = body.get("run_result") or {}
        if body.get("status") != expected_status:
            return f"status {body.get('status')} (wanted {expected_status}): {json.dumps(body)[:300]}"
        if expected_status == "Success" and run.get("stdout") != expected_stdout:
            return f"stdout {run.get('stdout')!r}"
        return None

    return check


# OpenEnv python steps: (code, what the observation must show). The 8 GiB allocation is the
# quick hostile step; an endless loop and an endless print run into the session's wall-clock
# limit (seconds each), so the soak sends `--hostile` of those in all.
QUICK_HOSTILE = "b = bytearray(8 << 30)"
SLOW_HOSTILE = ["while True: pass", "while True: print('x' * 4096)"]


def ws_episode(host: str, port: int, rng: random.Random, hostile: str | None) -> tuple[int, str | None]:
    """One OpenEnv python session over WebSocket: reset, 1 to 6 steps (state kept across
    them, an 8 GiB allocation among them at times, `hostile` when given), then a clean close
    or, one time in three, a connection dropped mid-way without a word. Returns the messages
    sent and the problem found."""
    ws = WebSocket(host, port, "/openenv/python/ws")
    sent = 0
    try:
        frame = ws.call({"type": "reset", "data": {}})
        sent += 1
        if frame.get("type") != "observation":
            return sent, f"reset: {json.dumps(frame)[:200]}"
        value = rng.randrange(1 << 30)
        frame = ws.call({"type": "step", "data": {"code": f"x = {value}"}})
        sent += 1
        steps = rng.randint(1, 6)
        for i in range(steps):
            if rng.random() < 0.3 and i + 1 < steps and not (hostile and i == 0):
                ws.drop()
                return sent, None
            if hostile and i == 0:
                code, want = hostile, "nonzero"
            elif rng.random() < 0.15:
                code, want = QUICK_HOSTILE, "nonzero"
            else:
                code, want = "x += 1\nprint(x)", "next"
            frame = ws.call({"type": "step", "data": {"code": code}})
            sent += 1
            obs = (frame.get("data") or {}).get("observation") or {}
            if frame.get("type") != "observation":
                return sent, f"step {code!r}: {json.dumps(frame)[:200]}"
            if want == "nonzero" and obs.get("exit_code") == 0:
                return sent, f"hostile step {code!r} exited 0"
            if want == "next":
                if obs.get("exit_code") != 0:
                    # A step killed at its limit takes the interpreter's state with it: start over.
                    frame = ws.call({"type": "step", "data": {"code": f"x = {value}"}})
                    sent += 1
                    continue
                value += 1
                if obs.get("stdout") != f"{value}\n":
                    return sent, f"state lost: wanted {value}, got {obs.get('stdout')!r}"
        ws.close()
        return sent, None
    except (Closed, OSError, ValueError) as e:
        ws.drop()
        return sent, f"websocket: {e!r}"


def post_json(conn: http.client.HTTPConnection, path: str, body) -> tuple[int, dict]:
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    response = conn.getresponse()
    data = response.read()
    try:
        return response.status, json.loads(data or b"null")
    except ValueError:
        return response.status, {"raw": data[:200].decode(errors="replace")}


def task_episode(conn: http.client.HTTPConnection, rng: random.Random, answers: dict[str, str]) -> tuple[int, str | None]:
    """OpenEnv's stateless HTTP on /openenv/tasks: `/reset` with a seed, then `/step` with a
    right or a wrong completion; the reward must say which."""
    status, reset = post_json(conn, "/openenv/tasks/reset", {"seed": rng.randrange(1 << 31)})
    if status != 200:
        return 1, f"/openenv/tasks/reset: {status} {reset}"
    task_id = reset["observation"]["task_id"]
    right = rng.random() < 0.5
    answer = answers[task_id] if right else answers[task_id] + "1"
    status, step = post_json(conn, "/openenv/tasks/step",
                             openenv_task_step(task_id, f"<think>sum</think> <answer>{answer}</answer>"))
    if status != 200:
        return 2, f"/openenv/tasks/step: {status} {step}"
    if step.get("done") is not True or (step.get("metadata") or {}).get("correct") is not right:
        return 2, f"/openenv/tasks/step ({'right' if right else 'wrong'}): {json.dumps(step)[:200]}"
    return 2, None


def nemo_episode(conn: http.client.HTTPConnection, rng: random.Random) -> tuple[int, str | None]:
    """NeMo Gym's resource-server calls: `/seed_session`, `/verify` of a right or a wrong math
    answer (reasoning excluded from the text scored), `/close_session`."""
    session, rollout = f"s-{rng.randrange(1 << 40)}", f"r-{rng.randrange(1 << 40)}"
    question = "What is 1/4 + 1/4?"
    # Both body forms of /seed_session, and the rollout-prefixed routes half the time.
    seed = nemo_seed_session(session, rollout, question) if rng.random() < 0.5 else {}
    prefix = f"/ng-rollout/{rollout}" if rng.random() < 0.5 else ""
    status, answer = post_json(conn, prefix + "/seed_session", seed)
    if status != 200:
        return 1, f"/seed_session: {status} {answer}"
    right = rng.random() < 0.5
    text = "So the answer is \\boxed{\\frac{1}{2}}." if right else "So the answer is \\boxed{2}."
    body = nemo_verify(question, "0.5", text)
    status, answer = post_json(conn, prefix + "/verify", body)
    if status != 200 or answer.get("reward") != (1.0 if right else 0.0) or answer.get("response") != body["response"]:
        return 2, f"/verify ({'right' if right else 'wrong'}): {status} {json.dumps(answer)[:200]}"
    status, answer = post_json(conn, prefix + "/close_session", nemo_close_session(session, rollout))
    if status != 200:
        return 3, f"/close_session: {status} {answer}"
    return 3, None


def environments(host: str, port: int, episodes: int, hostile: int, threads: int,
                 answers: dict[str, str]) -> tuple[int, list[str]]:
    """`episodes` environment episodes over `threads` clients, each picked at random: an OpenEnv
    WebSocket session (`hostile` more of them, one after another, open with an endless loop or
    print), an
    OpenEnv stateless task episode, or a NeMo Gym session. Returns the requests (or messages)
    sent and the problems found."""
    problems: list[str] = []
    lock = threading.Lock()
    state = {"next": 0, "sent": 0}

    def worker(seed: int):
        rng = random.Random(seed)
        conn = http.client.HTTPConnection(host, port, timeout=120)
        last_used = time.monotonic()
        # The hostile sessions go one after another on the first client: each holds one of the
        # server's in-flight places for its whole wall-clock limit, and more at once would
        # (rightly) have the others refused as overload.
        hostile_left = hostile if seed == 0 else 0
        while True:
            if hostile_left:
                i, kind = -hostile_left, "ws"
                hostile_left -= 1
            else:
                with lock:
                    i = state["next"]
                    state["next"] += 1
                if i >= episodes:
                    break
                kind = rng.choice(["ws", "tasks", "nemo"])
            if time.monotonic() - last_used > 5:  # past the server's keep-alive idle time soon
                conn.close()
                conn = http.client.HTTPConnection(host, port, timeout=120)
            try:
                if kind == "ws":
                    sent, problem = ws_episode(host, port, rng, SLOW_HOSTILE[i % 2] if i < 0 else None)
                elif kind == "tasks":
                    sent, problem = task_episode(conn, rng, answers)
                else:
                    sent, problem = nemo_episode(conn, rng)
            except (http.client.HTTPException, OSError) as e:
                conn.close()
                conn = http.client.HTTPConnection(host, port, timeout=120)
                sent, problem = 0, f"{kind}: {e!r}"
            last_used = time.monotonic()
            with lock:
                state["sent"] += sent
                if problem and len(problems) < 20:
                    problems.append(f"episode {i} ({kind}): {problem}")
        conn.close()

    pool = [threading.Thread(target=worker, args=(seed,)) for seed in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return state["sent"], problems


def gauges(host: str, port: int) -> dict[str, float]:
    """The service's open sessions and open connections, from /metrics (the connection that
    asks counts as one)."""
    conn = http.client.HTTPConnection(host, port, timeout=30)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    conn.close()
    values = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name in ("grpo_sessions_open", "grpo_http_open_connections"):
            values[name] = float(value)
    return values


def phase(name, server, work, max_growth):
    """Runs `work()` (which returns the number of requests sent and the problems found) with the
    server's RSS sampled along the way."""
    sampler = Sampler(server.pid)
    sampler.start()
    started = time.perf_counter()
    sent, problems = work()
    seconds = time.perf_counter() - started
    sampler.stop.set()
    sampler.join()
    s = sampler.samples or [0.0]
    quarter = max(1, len(s) // 4)
    first, last = max(s[:quarter]), max(s[-quarter:])
    growth = last - first
    row = {"phase": name, "requests": sent, "seconds": seconds, "rss_first": s[0], "rss_peak": max(s),
           "rss_end": s[-1], "growth": growth}
    if growth > max_growth:
        problems.append(f"{name}: RSS grew {growth:.1f} MiB from the first to the last quarter")
    return row, problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--math", type=int, default=1_000_000, help="math completions (8 per request)")
    ap.add_argument("--runs", type=int, default=100_000, help="sandbox runs (one per request)")
    ap.add_argument("--episodes", type=int, default=100_000,
                    help="environment episodes (OpenEnv WebSocket and stateless, NeMo Gym sessions)")
    ap.add_argument("--hostile", type=int, default=4,
                    help="OpenEnv sessions whose first step loops or prints without end (each waits out the limit)")
    ap.add_argument("--threads", type=int, default=8, help="client connections")
    ap.add_argument("--max-growth-mib", type=float, default=32.0)
    ap.add_argument("--grpo")
    args = ap.parse_args()

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="grpo-soak-"))
    env = {**os.environ, "TMPDIR": str(tmp)}
    pack = ROOT / "tasks" / "packs" / "arith"
    answers = pack_answers(pack)
    server = subprocess.Popen([binary(args.grpo), "serve", "--addr", "127.0.0.1:0", "--pack", str(pack)],
                              stdout=subprocess.PIPE,
                              text=True, env=env)
    line = server.stdout.readline()
    if not line:
        sys.exit("grpo serve did not start")
    host, port = json.loads(line)["listening"].rsplit(":", 1)
    port = int(port)
    problems: list[str] = []
    try:
        # Warm-up: the sandbox compiles (or loads) its runtime and fills its pools. Each
        # instance slot keeps the pages its runs touched resident (up to 64 MiB), so RSS rises
        # until every slot the client's concurrency reaches has been used: 2,000 runs (about
        # 3 s) get there; with 100 the short form's first quarter was still warming up.
        warm = [("/v1/score", MATH_BODY, check_math)] * 200
        warm += [("/run_code", {"code": p, "stdin": s, "language": "python", "run_timeout": 10}, check_run(st, out))
                 for p, s, st, out in PROGRAMS] * 400
        _, warm_problems = drive(host, port, warm, args.threads)
        problems += warm_problems
        _, warm_problems = environments(host, port, min(args.episodes, 400), 0, args.threads, answers)
        problems += warm_problems
        before = {"fds": fds(server.pid), "tmp": entries(tmp), "children": children(server.pid),
                  "rss": status_kib(server.pid, "VmRSS") / 1024}
        rows = []
        math_requests = [("/v1/score", MATH_BODY, check_math)] * (args.math // 8)
        row, p = phase("math /v1/score (8 completions each)", server,
                       lambda: drive(host, port, math_requests, args.threads), args.max_growth_mib)
        row["items"] = len(math_requests) * 8
        rows.append(row)
        problems += p
        runs = [("/run_code", {"code": PROGRAMS[i % len(PROGRAMS)][0], "stdin": PROGRAMS[i % len(PROGRAMS)][1],
                               "language": "python", "run_timeout": 10},
                 check_run(PROGRAMS[i % len(PROGRAMS)][2], PROGRAMS[i % len(PROGRAMS)][3]))
                for i in range(args.runs)]
        row, p = phase("sandbox /run_code (1 run each)", server, lambda: drive(host, port, runs, args.threads),
                       args.max_growth_mib)
        row["items"] = len(runs)
        rows.append(row)
        problems += p
        row, p = phase("environments: OpenEnv WS and stateless, NeMo Gym (messages)", server,
                       lambda: environments(host, port, args.episodes, args.hostile, args.threads, answers),
                       args.max_growth_mib)
        row["items"] = args.episodes
        rows.append(row)
        problems += p
        time.sleep(1.0)  # let the last runs' temp directories go
        open_now = {}
        for _ in range(50):  # dropped WebSockets close when the server reads their end
            open_now = gauges(host, port)
            if open_now.get("grpo_sessions_open") == 0 and open_now.get("grpo_http_open_connections") == 1:
                break
            time.sleep(0.2)
        time.sleep(1.0)  # the /metrics connection closes on the server's side too
        after = {"fds": fds(server.pid), "tmp": entries(tmp), "kept": kept_run_dirs(tmp),
                 "children": children(server.pid),
                 "rss": status_kib(server.pid, "VmRSS") / 1024, "hwm": status_kib(server.pid, "VmHWM") / 1024}
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)

    print("| phase | items | requests | seconds | items/s | RSS after warm-up → peak → end (MiB) | growth, first → last quarter (MiB) |")
    print("|---|---:|---:|---:|---:|---|---:|")
    for r in rows:
        print(f"| {r['phase']} | {r['items']:,} | {r['requests']:,} | {r['seconds']:.0f} | "
              f"{r['items'] / max(r['seconds'], 1e-9):,.0f} | {r['rss_first']:.0f} → {r['rss_peak']:.0f} → "
              f"{r['rss_end']:.0f} | {r['growth']:+.1f} |")
    print(f"\nfile descriptors: {before['fds']} before, {after['fds']} after; temp entries: {before['tmp']} before, "
          f"{after['tmp']} after (and {after['kept']} empty run directories kept for reuse); child processes: {before['children']} before, {after['children']} after; "
          f"peak RSS (VmHWM) {after['hwm']:.0f} MiB")
    print(f"after the environments: {open_now.get('grpo_sessions_open')} sessions and "
          f"{open_now.get('grpo_http_open_connections')} connections open (the one asking included)")
    if open_now.get("grpo_sessions_open") != 0:
        problems.append(f"sessions left open: {open_now}")
    if open_now.get("grpo_http_open_connections") != 1:
        problems.append(f"connections left open: {open_now}")
    if after["fds"] > before["fds"]:
        problems.append(f"file descriptors leaked: {before['fds']} -> {after['fds']}")
    if after["tmp"] > before["tmp"]:
        problems.append(f"temp entries leaked: {before['tmp']} -> {after['tmp']}")
    if after["kept"] > RUN_DIRS_KEPT_AT_MOST:
        problems.append(f"{after['kept']} run directories kept, more than the pool's {RUN_DIRS_KEPT_AT_MOST}")
    if after["children"] > 0:
        problems.append(f"{after['children']} child processes left")
    if problems:
        print("FAILED:\n  " + "\n  ".join(problems))
        return 1
    print("OK: every answer as expected, no leak, memory flat")
    return 0


if __name__ == "__main__":
    sys.exit(main())
