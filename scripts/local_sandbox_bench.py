#!/usr/bin/env python3
"""Sandbox creations per second through grpo_rewards.LocalSandbox (create + one Python exec +
close) against `docker run --rm python:3.12-slim` where Docker exists, else a fresh `python3`
process in a fresh temporary directory; then a soak: create/exec/close cycles with random
early drops (closed before the exec, dropped without close, a timed-out exec), checking that
no workspace directory is left and that memory stays flat.

    python scripts/local_sandbox_bench.py --seconds 10 --threads 2 --soak 2000

Run with a Python that has `grpo-rewards` installed. Prints one JSON object; exits non-zero
when a directory is left behind or the resident memory grows more than --max-growth-mb over
the soak's second half.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from grpo_rewards import LocalSandbox

PROGRAM = "print(sum(range(1000)))"


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def workspaces() -> set[str]:
    root = tempfile.gettempdir()
    return {n for n in os.listdir(root) if n.startswith("grpo-workspace-")}


def one_local() -> None:
    sb = LocalSandbox()
    r = sb.exec(f"python3 -c '{PROGRAM}'")
    assert r.stdout == "499500\n", r
    sb.close()


def one_process() -> None:
    with tempfile.TemporaryDirectory() as d:
        r = subprocess.run([sys.executable, "-I", "-c", PROGRAM], cwd=d, capture_output=True, text=True)
        assert r.stdout == "499500\n", r


def one_docker() -> None:
    r = subprocess.run(
        ["docker", "run", "--rm", "python:3.12-slim", "python3", "-c", PROGRAM], capture_output=True, text=True
    )
    assert r.stdout == "499500\n", r


def rate(one, seconds: float, threads: int) -> dict:
    count = [0] * threads
    stop = time.monotonic() + seconds

    def worker(i: int) -> None:
        while time.monotonic() < stop:
            one()
            count[i] += 1

    started = time.monotonic()
    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    elapsed = time.monotonic() - started
    return {"cycles": sum(count), "seconds": round(elapsed, 2), "per_second": round(sum(count) / elapsed, 1)}


def soak(cycles: int, seed: int) -> dict:
    rng = random.Random(seed)
    before = workspaces()
    samples = []
    drops = {"closed_before_exec": 0, "dropped_unclosed": 0, "timed_out": 0, "full": 0}
    for i in range(cycles):
        sb = LocalSandbox()
        roll = rng.random()
        if roll < 0.1:
            sb.close()
            drops["closed_before_exec"] += 1
        elif roll < 0.2:
            sb.write("f.txt", "x")
            sb.exec(f"python3 -c '{PROGRAM}'")
            drops["dropped_unclosed"] += 1  # no close: the drop removes it
        elif roll < 0.22:
            r = sb.exec("python3 -c 'while True: pass'", timeout=0.2)
            assert r.exit_code == 124, r
            sb.close()
            drops["timed_out"] += 1
        else:
            sb.write("f.txt", "x")
            r = sb.exec(f"python3 -c '{PROGRAM}' > out.txt")
            assert r.exit_code == 0 and sb.read("out.txt") == b"499500\n", r
            sb.close()
            drops["full"] += 1
        del sb
        if (i + 1) % max(1, cycles // 10) == 0:
            gc.collect()
            samples.append(round(rss_mb(), 1))
    gc.collect()
    left = sorted(workspaces() - before)
    half = samples[len(samples) // 2 :]
    return {
        "cycles": cycles,
        "drops": drops,
        "rss_mb_samples": samples,
        "rss_growth_second_half_mb": round(max(half) - min(half), 1) if half else 0.0,
        "directories_left": left,
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--soak", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--max-growth-mb", type=float, default=20)
    args = ap.parse_args()
    one_local()  # warm: the runtime is loaded once per process
    docker = shutil.which("docker") is not None and subprocess.run(["docker", "info"], capture_output=True).returncode == 0
    report = {
        "cores": os.cpu_count(),
        "local_sandbox": rate(one_local, args.seconds, args.threads),
        "baseline": "docker run --rm python:3.12-slim" if docker else "fresh python3 process (-I, fresh temp dir)",
        "baseline_rate": rate(one_docker if docker else one_process, args.seconds, args.threads),
    }
    report["ratio"] = round(report["local_sandbox"]["per_second"] / max(report["baseline_rate"]["per_second"], 1e-9), 2)
    if args.soak:
        report["soak"] = soak(args.soak, args.seed)
    print(json.dumps(report, indent=1))
    if args.soak and (report["soak"]["directories_left"] or report["soak"]["rss_growth_second_half_mb"] > args.max_growth_mb):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
