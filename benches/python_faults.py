#!/usr/bin/env python3
"""Page faults and memory per Python run of `grpo score`: what a run of the sandbox's snapshot
touches, for one or more grpo binaries (say, before and after a runtime change).

    python3 benches/python_faults.py --grpo target/release/grpo [--grpo OTHER] [--runs 2000]

For each binary and each program set (`trivial`: `x = 1`; `sympy`: one `solve`), `grpo score`
scores `--runs` distinct programs and, separately, two: the difference of the minor page faults
(the child's own rusage) divided by the difference of the runs is the faults per run, the
start-up left out. A fault is the first touch of a page after the pool reset it, so this counts
the pages a run reads or writes anew, close to the pages it dirties. Peak RSS is the whole
process's (the compiled runtime and the pool's touched slots included). Sets a binary cannot
run (no sympy before it) are reported as such.
"""

import argparse
import json
import os
import subprocess
import tempfile
import time

PROGRAMS = {
    "trivial": ("x = 1\n", ""),
    "sympy": ("from sympy import symbols, solve\nx = symbols('x')\nprint(solve(x**2 - 5*x + 6, x))\n",
              "[2, 3]\n"),
}


def score(binary, body, expected, count, stamp):
    """(minor faults, max RSS in KiB, seconds, all correct) of one `grpo score` on `count`
    distinct programs."""
    with tempfile.TemporaryDirectory() as d:
        tasks, completions = os.path.join(d, "tasks.jsonl"), os.path.join(d, "completions.jsonl")
        with open(tasks, "w") as t, open(completions, "w") as c:
            for i in range(count):
                t.write(json.dumps({
                    "kind": "code", "id": f"p{i}", "prompt": "p", "language": "python", "mode": "full",
                    "tests": {"type": "stdio", "cases": [{"stdin": "", "stdout": expected}]},
                }) + "\n")
                program = f"# {i} {stamp}\n{body}"
                c.write(json.dumps({"task_id": f"p{i}", "completion": f"```python\n{program}```"}) + "\n")
        with open(os.path.join(d, "out.jsonl"), "w+") as out:
            started = time.perf_counter()
            child = subprocess.Popen([binary, "score", "--tasks", tasks, "--completions", completions],
                                     stdout=out, stderr=subprocess.DEVNULL)
            _, status, usage = os.wait4(child.pid, 0)
            seconds = time.perf_counter() - started
            out.seek(0)
            stdout = out.read()
    returncode = os.waitstatus_to_exitcode(status)
    scored = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    correct = returncode == 0 and len(scored) == count and all(s["correct"] for s in scored)
    return usage.ru_minflt, usage.ru_maxrss, seconds, correct


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--grpo", action="append", required=True, help="a grpo binary (repeatable)")
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--sets", default="trivial,sympy")
    args = ap.parse_args()
    stamp = time.time_ns()
    print(f"{'binary':<40}{'set':<9}{'faults/run':>11}{'max RSS MiB':>13}")
    for binary in args.grpo:
        for name in args.sets.split(","):
            body, expected = PROGRAMS[name]
            score(binary, body, expected, 2, stamp)  # warm: the compiled runtime cached on disk
            small = score(binary, body, expected, 2, stamp)
            large = score(binary, body, expected, args.runs, stamp)
            if not (small[3] and large[3]):
                print(f"{binary:<40}{name:<9}{'cannot run this set':>24}")
                continue
            per_run = (large[0] - small[0]) / (args.runs - 2)
            print(f"{binary:<40}{name:<9}{per_run:>11.1f}{large[1] / 1024:>13.0f}", flush=True)


if __name__ == "__main__":
    main()
