#!/usr/bin/env python3
"""Soak test of `grpo serve`: many math completions and sandbox runs through one server, with
its resident memory sampled along the way and its file descriptors, temp entries and child
processes counted before and after.

    python3 benches/service_soak.py [--math 1000000] [--runs 100000] [--threads 8]
                                    [--grpo target/release/grpo]

Python 3 standard library only. Starts `grpo serve` on a free port with TMPDIR pointing at a
fresh directory (so every temp entry the sandbox makes is counted), warms it up, then:

1. math: `--math` completions as `/v1/score` requests of 8 (verl's ground-truth shape);
2. sandbox: `--runs` programs through `/run_code` (verl's body): small programs that print,
   read stdin, raise, exit non-zero, or write and read a file in their own temp directory.

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
import tempfile
import threading
import time

from grpo_server import binary, children, status_kib

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


def phase(name, server, host, port, requests, threads, max_growth):
    sampler = Sampler(server.pid)
    sampler.start()
    started = time.perf_counter()
    sent, problems = drive(host, port, requests, threads)
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
    ap.add_argument("--threads", type=int, default=8, help="client connections")
    ap.add_argument("--max-growth-mib", type=float, default=32.0)
    ap.add_argument("--grpo")
    args = ap.parse_args()

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="grpo-soak-"))
    env = {**os.environ, "TMPDIR": str(tmp)}
    server = subprocess.Popen([binary(args.grpo), "serve", "--addr", "127.0.0.1:0"], stdout=subprocess.PIPE,
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
        before = {"fds": fds(server.pid), "tmp": entries(tmp), "children": children(server.pid),
                  "rss": status_kib(server.pid, "VmRSS") / 1024}
        rows = []
        math_requests = [("/v1/score", MATH_BODY, check_math)] * (args.math // 8)
        row, p = phase("math /v1/score (8 completions each)", server, host, port, math_requests, args.threads,
                       args.max_growth_mib)
        row["items"] = len(math_requests) * 8
        rows.append(row)
        problems += p
        runs = [("/run_code", {"code": PROGRAMS[i % len(PROGRAMS)][0], "stdin": PROGRAMS[i % len(PROGRAMS)][1],
                               "language": "python", "run_timeout": 10},
                 check_run(PROGRAMS[i % len(PROGRAMS)][2], PROGRAMS[i % len(PROGRAMS)][3]))
                for i in range(args.runs)]
        row, p = phase("sandbox /run_code (1 run each)", server, host, port, runs, args.threads, args.max_growth_mib)
        row["items"] = len(runs)
        rows.append(row)
        problems += p
        time.sleep(1.0)  # let the last runs' temp directories go
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
