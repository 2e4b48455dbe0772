#!/usr/bin/env python3
"""HumanEval-style checks per second: a fresh `python3 -I` subprocess per program (the usual
way RL code rewards run tests) against `grpo score` (CPython in wasmtime), on the same programs,
both using every core.

    python3 benches/baselines/python_subprocess.py [--grpo target/release/grpo] [--repeat 5]
                                                   [--python /usr/bin/python3]

The subprocess side runs `--python` (default: the interpreter running this script). Its
start-up cost dominates that side, and it differs a lot between builds of CPython (a distro
build with PGO/LTO starts in about 10 ms; an unoptimised source build can take 35 ms), so the
script prints the interpreter, its version and its bare `-I -c pass` start-up time next to
the rates: compare ratios only between runs with the same interpreter.

Programs: the 164 HumanEval canonical solutions with their tests (prompt + solution + test +
check(entry_point)), from grpo-sandbox/tests/data/humaneval/HumanEval.jsonl.gz, each run
`--repeat` times. Prints checks/s for both sides and the ratio.
"""

import argparse
import concurrent.futures
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "grpo-sandbox", "tests", "data", "humaneval", "HumanEval.jsonl.gz")


def load():
    with gzip.open(DATA, "rt") as f:
        return [json.loads(line) for line in f]


def subprocess_check(python, program, timeout=10.0):
    try:
        done = subprocess.run(
            [python, "-I", "-c", program],
            capture_output=True,
            timeout=timeout,
            env={},
        )
        return done.returncode == 0
    except subprocess.TimeoutExpired:
        return False


def startup_ms(python, runs=20):
    """Median wall time of `python -I -c pass`, in milliseconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([python, "-I", "-c", "pass"], check=True, env={})
        times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    return times[len(times) // 2]


def bench_subprocess(python, rows, repeat, workers):
    programs = [
        r["prompt"] + r["canonical_solution"] + "\n" + r["test"] + "\ncheck(" + r["entry_point"] + ")\n"
        for r in rows
    ] * repeat
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        passed = sum(pool.map(lambda p: subprocess_check(python, p), programs))
    secs = time.perf_counter() - start
    return len(programs), passed, secs


def bench_grpo(rows, repeat, grpo):
    with tempfile.TemporaryDirectory() as tmp:
        pack = os.path.join(tmp, "humaneval.jsonl")
        completions = os.path.join(tmp, "completions.jsonl")
        with open(pack, "w") as f:
            for r in rows:
                task = {
                    "id": r["task_id"],
                    "kind": "code",
                    "prompt": r["prompt"],
                    "language": "python",
                    "mode": "prefix",
                    "tests": {"type": "assert", "code": r["test"], "entry_point": r["entry_point"]},
                }
                f.write(json.dumps(task) + "\n")
        with open(completions, "w") as f:
            for _ in range(repeat):
                for r in rows:
                    f.write(json.dumps({"task_id": r["task_id"], "completion": r["canonical_solution"]}) + "\n")
        # Warm the compiled-runtime cache so the timing is of checking, not of compiling.
        subprocess.run([grpo, "score", "--tasks", pack, "--completions", completions],
                       capture_output=True, check=True)
        start = time.perf_counter()
        done = subprocess.run([grpo, "score", "--tasks", pack, "--completions", completions],
                              capture_output=True, check=True, text=True)
        secs = time.perf_counter() - start
        passed = sum(json.loads(line)["correct"] for line in done.stdout.splitlines())
        return len(rows) * repeat, passed, secs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grpo", default=os.path.join(ROOT, "target", "release", "grpo"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter of the subprocess side (default: this one)")
    args = parser.parse_args()
    rows = load()

    version = subprocess.run([args.python, "-I", "-c", "import sys; print(sys.version.split()[0])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    print(f"interpreter: {args.python} (Python {version}), "
          f"`-I -c pass` start-up {startup_ms(args.python):.1f} ms")
    n, passed, secs = bench_subprocess(args.python, rows, args.repeat, args.workers)
    sub_rate = n / secs
    print(f"python3 -I subprocess ({args.workers} workers): {n} checks, {passed} passed, "
          f"{secs:.2f}s, {sub_rate:.1f} checks/s")
    if not os.path.exists(args.grpo):
        print(f"{args.grpo} not found: build it with `cargo build --release -p grpo-cli`")
        return
    n, passed, secs = bench_grpo(rows, args.repeat, args.grpo)
    grpo_rate = n / secs
    print(f"grpo score (wasmtime sandbox): {n} checks, {passed} passed, {secs:.2f}s, {grpo_rate:.1f} checks/s")
    print(f"ratio: {grpo_rate / sub_rate:.1f}x")


if __name__ == "__main__":
    main()
