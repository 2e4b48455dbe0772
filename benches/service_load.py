#!/usr/bin/env python3
"""Load benchmark of `grpo serve`: requests/s and p50/p99 latency of `/v1/score` and
`/run_code` at several concurrency levels (with wrk), and the server's memory over a long run.

Needs `wrk` (Debian: `apt-get install wrk`) and a built `grpo` ($GRPO_BIN, else
target/release/grpo, else target/debug/grpo). Prints a Markdown table and, with --long N,
the resident memory of the server sampled while it answers at least N requests of one scenario.

    python3 benches/service_load.py --duration 10 --concurrency 1,4,16,64 --long 50000
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent

SCENARIOS = {
    # One GRPO group of 8 math completions (verl's ground-truth shape).
    "score_math_g8": ("/v1/score", {"ground_truth": "\\frac{1}{2}", "completions": [
        "\\boxed{0.5}", "\\boxed{1/2}", "\\boxed{2}", "x = \\frac{2}{4}", "<answer>0.50</answer>", "1/3",
        "\\boxed{\\frac{1}{2}}", "none"]}),
    # One group of 4 code completions, 2 stdin/stdout cases each: 8 sandbox runs per request.
    "score_code_g4x2": ("/v1/score", {"ground_truth": {"inputs": ["1 2\n", "5 7\n"], "outputs": ["3\n", "12\n"]},
                                      "completions": ["```python\na, b = map(int, input().split())\nprint(a + b)\n```",
                                                      "```python\nprint(3)\n```",
                                                      "```python\nimport sys\nprint(sum(map(int, sys.stdin.read().split())))\n```",
                                                      "```python\nprint(input())\n```"]}),
    # verl's /run_code body for one small program.
    "run_code": ("/run_code", {"compile_timeout": 10, "run_timeout": 10, "code": "print(sum(range(100)))",
                               "stdin": None, "memory_limit_MB": 1024, "language": "python", "files": {},
                               "fetch_files": []}),
}


def binary() -> str:
    if os.environ.get("GRPO_BIN"):
        return os.environ["GRPO_BIN"]
    for profile in ("release", "debug"):
        candidate = ROOT / "target" / profile / "grpo"
        if candidate.exists():
            return str(candidate)
    sys.exit("build grpo first (cargo build -p grpo-cli) or set GRPO_BIN")


def start(args: list[str]) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen([binary(), "serve", "--addr", "127.0.0.1:0", *args], stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    if not line:
        sys.exit("grpo serve did not start")
    return process, "http://" + json.loads(line)["listening"]


def lua_script(body: dict, directory: str, name: str) -> str:
    path = os.path.join(directory, f"{name}.lua")
    with open(path, "w") as f:
        f.write('wrk.method = "POST"\n')
        f.write('wrk.headers["Content-Type"] = "application/json"\n')
        f.write(f"wrk.body = {json.dumps(json.dumps(body))}\n")
    return path


def to_ms(text: str) -> float:
    value, unit = re.match(r"([\d.]+)(us|ms|s)", text).groups()
    return float(value) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[unit]


def wrk(url: str, script: str, connections: int, duration: int) -> dict:
    threads = max(1, min(2, connections))
    out = subprocess.run(["wrk", f"-t{threads}", f"-c{connections}", f"-d{duration}s", "--timeout", "60s", "--latency",
                          "-s", script, url], capture_output=True, text=True, check=True).stdout
    result = {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
              "requests": int(re.search(r"(\d+) requests in", out).group(1)),
              "p50_ms": to_ms(re.search(r"^\s+50%\s+(\S+)", out, re.M).group(1)),
              "p99_ms": to_ms(re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1))}
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    result["non_2xx"] = int(bad.group(1)) if bad else 0
    errors = re.search(r"Socket errors: (.*)", out)
    result["socket_errors"] = errors.group(1) if errors else ""
    return result


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=int, default=10, help="seconds per measurement")
    parser.add_argument("--concurrency", default="1,4,16,64", help="comma-separated connection counts")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), help="comma-separated scenario names")
    parser.add_argument("--long", type=int, default=0, help="requests of the memory run (0: skip)")
    parser.add_argument("--long-scenario", default="run_code", help="scenario of the memory run")
    parser.add_argument("--serve-args", default="--max-inflight 256", help="extra `grpo serve` arguments")
    args = parser.parse_args()

    server, url = start(args.serve_args.split())
    try:
        with tempfile.TemporaryDirectory() as directory:
            print(f"server {url}, binary {binary()}, {os.cpu_count()} cores")
            print("| scenario | connections | req/s | p50 ms | p99 ms | non-2xx |")
            print("|---|---:|---:|---:|---:|---:|")
            for name in args.scenarios.split(","):
                path, body = SCENARIOS[name]
                script = lua_script(body, directory, name)
                wrk(url + path, script, 1, 1)  # warm-up
                for c in (int(x) for x in args.concurrency.split(",")):
                    r = wrk(url + path, script, c, args.duration)
                    print(f"| {name} | {c} | {r['rps']:.0f} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {r['non_2xx']} |",
                          flush=True)
            if args.long:
                path, body = SCENARIOS[args.long_scenario]
                script = lua_script(body, directory, "long")
                samples = [(0, rss_mib(server.pid))]
                done = threading.Event()
                started = time.time()

                def sample():
                    while not done.wait(5):
                        samples.append((round(time.time() - started), rss_mib(server.pid)))

                sampler = threading.Thread(target=sample)
                sampler.start()
                total = 0
                while total < args.long:
                    r = wrk(url + path, script, 16, 30)
                    total += r["requests"]
                    if r["non_2xx"]:
                        print(f"non-2xx answers in the long run: {r['non_2xx']}")
                done.set()
                sampler.join()
                samples.append((round(time.time() - started), rss_mib(server.pid)))
                print(f"\nlong run: {total} {args.long_scenario} requests at 16 connections "
                      f"in {time.time() - started:.0f} s")
                print("RSS MiB over time (s: MiB): " + ", ".join(f"{t}: {m:.0f}" for t, m in samples))
    finally:
        server.terminate()
        server.wait(timeout=60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
