#!/usr/bin/env python3
"""C++ function-and-test programs (HumanEval-X style: ordinary standard includes, a function,
a main that asserts on it) compiled and run per second, ours against `g++ -O2` + run, both
sides at the same concurrency, in one run.

    python3 benches/cpp_functions.py [--grpo target/release/grpo] [--rounds 2] [--workers 2]

The programs are benches/data/cpp_functions/*.cpp (30 of them, each with its own set of
includes: <iostream>, <vector>, <string>, <algorithm>, <map>, <cmath>, <stdio.h>...). Each
round sends every program once, with a comment that makes it new, so no compile cache helps
on either side. Rows:

  grpo-rs            `grpo serve`, one `POST /run_code` per program (SandboxFusion's request)
  grpo-rs, no PCH    the same with a `#define _BENCH_NO_PCH` line first, which keeps the
                     precompiled standard headers off (what every such program got before)
  native             per program, in a fresh temporary directory: g++ -O2 main.cpp && ./a.out

Every program's stdout and exit code on our side must equal native's, else the run aborts.
Prints programs/s per row and the ratio to native; report ratios, not absolute rates.
"""

import argparse
import glob
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from languages import ROOT, free_port, rate, start_server  # noqa: E402

PROGRAMS = os.path.join(ROOT, "benches", "data", "cpp_functions")


def native_result(code):
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "main.cpp"), "w") as f:
            f.write(code)
        subprocess.run(["g++", "-O2", "main.cpp", "-o", "a.out"], cwd=d, check=True, capture_output=True)
        out = subprocess.run(["./a.out"], cwd=d, capture_output=True, timeout=20)
        return out.stdout.decode(), out.returncode


def ours_result(port, code):
    body = json.dumps({"code": code, "language": "cpp", "compile_timeout": 60, "run_timeout": 10,
                       "memory_limit_MB": 256})
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request("POST", "/run_code", body, {"Content-Type": "application/json"})
    answer = json.loads(conn.getresponse().read())
    run = answer.get("run_result") or {}
    if (answer.get("compile_result") or {}).get("return_code", 0) != 0 or not run:
        sys.exit(f"grpo did not run it: {json.dumps(answer)[:800]}")
    return run.get("stdout"), run.get("return_code")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--grpo", default=os.path.join(ROOT, "target", "release", "grpo"))
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    sources = {}
    for path in sorted(glob.glob(os.path.join(PROGRAMS, "*.cpp"))):
        with open(path) as f:
            sources[os.path.basename(path)] = f.read()
    expected = {name: native_result(code) for name, code in sources.items()}
    nonce = time.time_ns()

    def batch(prefix):
        return [(name, f"{prefix}// round {r} {nonce}\n{code}")
                for r in range(args.rounds) for name, code in sources.items()]

    port = free_port()
    server = start_server(args.grpo, port, args.workers)
    try:
        def ours(item):
            name, code = item
            got = ours_result(port, code)
            if got != expected[name]:
                sys.exit(f"{name}: grpo printed {got!r}, native {expected[name]!r}")

        def native(item):
            name, code = item
            got = native_result(code)
            if got != expected[name]:
                sys.exit(f"{name}: native printed {got!r}, first run {expected[name]!r}")

        ours(("01_pairwise_close.cpp", f"// warm {nonce}\n" + sources["01_pairwise_close.cpp"]))
        checks = len(sources) * args.rounds
        print(f"{len(sources)} programs x {args.rounds} rounds, {args.workers} at a time on each side, "
              f"{os.cpu_count()} cores")
        print(f"{'side':<18}{'programs/s':>11}{'vs native':>11}")
        rows = [("grpo-rs", lambda: rate(ours, batch(""), args.workers)),
                ("grpo-rs, no PCH", lambda: rate(ours, batch("#define _BENCH_NO_PCH\n"), args.workers)),
                ("native g++ -O2", lambda: rate(native, batch(""), args.workers))]
        rates = {label: measure() for label, measure in rows}
        for label, value in rates.items():
            print(f"{label:<18}{value:>11.2f}{value / rates['native g++ -O2']:>10.2f}x", flush=True)
        print(f"({checks} programs per row, every output equal to native's)")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
