#!/usr/bin/env python3
"""Python programs per second and CPU per program, one isolated run per program, in one run of
this script: grpo-rs's Python package (`grpo_rewards.score` on a stdio task, in process), or
`grpo score` on the same tasks (`--grpo BIN`, sides `cli` and `cli-before` for a second
binary), pyeryx (`eryx.Sandbox().execute`, CPython in wasmtime, a fresh instance per call) and
a `/usr/bin/python3 -I` process per program. Same programs, same number of threads.

    python3.12 -m venv V && V/bin/pip install pyeryx [target/wheels/grpo_rewards-*.whl]
    V/bin/python benches/python_per_program.py [--workers 2] [--repeat 1]
        [--sides grpo,eryx,native] [--grpo target/release/grpo --sides cli,eryx,native]

`grpo score` runs 2 at a time (the machine's cores here); its start-up (loading the compiled
runtime) is measured on two programs and taken out of its time and CPU.

Program sets (each program distinct, a numbered comment first):
  trivial    `x = 1`: the per-run floor
  stdio      the sieve program of benches/languages.py, its input inlined
  humaneval  the 164 HumanEval canonical solutions with their tests and `check(entry_point)`
  sympy      `from sympy import ...` and one `solve`: a tool-integrated math call (the native
             side needs sympy: `--python` a venv's python with the wheels of
             grpo-sandbox/runtime/requirements.txt; pyeryx has no sympy)

Every run's outcome is checked (stdout, exit status) on every side; a wrong answer aborts.
Prints programs/s and ms of CPU per program per side, and the first side's rate over each
other side's. The sides alternate
per set, so a change in the machine's load shows up in both; report ratios, not rates.
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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HUMANEVAL = os.path.join(ROOT, "grpo-sandbox", "tests", "data", "humaneval", "HumanEval.jsonl.gz")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import languages  # noqa: E402  (the same sieve program as the languages bench)

# The languages bench's Python program with its input written in (no stdin here).
SIEVE = languages.PROGRAMS["python"].replace(
    "import sys\ndata = sys.stdin.read().split()\n", f"data = {languages.INPUT!r}.split()\n", 1
)
assert "stdin" not in SIEVE

# One equation solved with sympy, as a tool-integrated math program calls it.
SYMPY = "from sympy import symbols, solve\nx = symbols('x')\nprint(solve(x**2 - 5*x + 6, x))\n"


def program_sets(repeat):
    with gzip.open(HUMANEVAL, "rt") as f:
        problems = [json.loads(line) for line in f]
    humaneval = [
        (p["prompt"] + p["canonical_solution"] + "\n" + p["test"] + f"\ncheck({p['entry_point']})\n", "")
        for p in problems
    ] * repeat
    stamp = time.time_ns()
    return {
        "trivial": [(f"# {i} {stamp}\nx = 1\n", "") for i in range(200 * repeat)],
        "stdio": [(f"# {i} {stamp}\n" + SIEVE, "41 669\n") for i in range(100 * repeat)],
        "humaneval": [(f"# {i} {stamp}\n" + code, out) for i, (code, out) in enumerate(humaneval)],
        "sympy": [(f"# {i} {stamp}\n" + SYMPY, "[2, 3]\n") for i in range(50 * repeat)],
    }


def grpo_side():
    import grpo_rewards

    def run(program, expected):
        task = json.dumps({
            "kind": "code", "id": "p", "prompt": "p", "language": "python", "mode": "full",
            "tests": {"type": "stdio", "cases": [{"stdin": "", "stdout": expected}]},
        })
        score = grpo_rewards.score(task, ["```python\n" + program + "```"])[0]
        if not score.correct:
            sys.exit(f"grpo-rs: wrong outcome: {score.reason}\n{program[:300]}")

    return run


def eryx_side():
    import eryx

    local = __import__("threading").local()

    def run(program, expected):
        # One Sandbox per thread; each execute runs in a fresh instance (no state carries over).
        if not hasattr(local, "sandbox"):
            local.sandbox = eryx.Sandbox()
        out = local.sandbox.execute(program).stdout
        out = out.decode() if isinstance(out, bytes) else out
        if out.strip() != expected.strip():
            sys.exit(f"pyeryx: wrong output {out!r}\n{program[:300]}")

    return run


def native_side(python):
    def run(program, expected):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "main.py")
            with open(path, "w") as f:
                f.write(program)
            done = subprocess.run([python, "-I", path], cwd=d, capture_output=True, timeout=30, env={})
        if done.returncode != 0 or done.stdout.decode().strip() != expected.strip():
            sys.exit(f"native: wrong outcome {done.returncode} {done.stdout[:200]!r} {done.stderr[:300]!r}")

    return run


def cli_side(binary):
    def run_set(programs):
        with tempfile.TemporaryDirectory() as d:
            tasks = os.path.join(d, "tasks.jsonl")
            completions = os.path.join(d, "completions.jsonl")
            with open(tasks, "w") as t, open(completions, "w") as c:
                for i, (program, expected) in enumerate(programs):
                    t.write(json.dumps({
                        "kind": "code", "id": f"p{i}", "prompt": "p", "language": "python", "mode": "full",
                        "tests": {"type": "stdio", "cases": [{"stdin": "", "stdout": expected}]},
                    }) + "\n")
                    c.write(json.dumps({"task_id": f"p{i}", "completion": "```python\n" + program + "```"}) + "\n")
            done = subprocess.run([binary, "score", "--tasks", tasks, "--completions", completions],
                                  capture_output=True, text=True)
        scored = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        if done.returncode != 0 or len(scored) != len(programs) or not all(s["correct"] for s in scored):
            bad = next((s for s in scored if not s["correct"]), done.stderr[-500:])
            sys.exit(f"{binary}: wrong outcome: {json.dumps(bad)[:600]}")

    return run_set


def pooled(run, workers):
    def run_set(programs):
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            list(pool.map(lambda p: run(*p), programs))

    return run_set


def cpu_seconds():
    self_, children = os.times()[0:2], os.times()[2:4]
    return sum(self_) + sum(children)


def measure(run_set, programs):
    wall, cpu = time.perf_counter(), cpu_seconds()
    run_set(programs)
    return time.perf_counter() - wall, cpu_seconds() - cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--sets", default="trivial,stdio,humaneval")
    ap.add_argument("--sides", default="grpo,eryx,native")
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--grpo", default=os.path.join(ROOT, "target", "release", "grpo"))
    ap.add_argument("--grpo-before", help="a second grpo binary, for the side cli-before")
    args = ap.parse_args()
    makers = {
        "grpo": lambda: pooled(grpo_side(), args.workers),
        "cli": lambda: cli_side(args.grpo),
        "cli-before": lambda: cli_side(args.grpo_before),
        "eryx": lambda: pooled(eryx_side(), args.workers),
        "native": lambda: pooled(native_side(args.python), args.workers),
    }
    names = args.sides.split(",")
    sides = {name: makers[name]() for name in names}
    sets = program_sets(args.repeat)
    startup = {}
    for name, run_set in sides.items():  # warm: runtimes compiled, sandboxes built on every thread
        warm = sets["trivial"][: 2 * args.workers]
        run_set(warm)
        startup[name] = measure(run_set, warm[:2]) if name.startswith("cli") else (0.0, 0.0)
    print(f"{os.cpu_count()} cores, {args.workers} at a time per side, load average {os.getloadavg()[0]:.1f}")
    first = names[0]
    print(f"{'set':<11}{'programs':>9}" + "".join(f"{n + ' /s':>13}{'ms CPU':>8}" for n in names)
          + "".join(f"{first + '/' + n:>16}" for n in names[1:]))
    for set_name in args.sets.split(","):
        programs = sets[set_name]
        rates, cpus = {}, {}
        for name in names:
            wall, cpu = measure(sides[name], programs)
            n = len(programs) - (2 if name.startswith("cli") else 0)
            rates[name] = n / (wall - startup[name][0])
            cpus[name] = (cpu - startup[name][1]) / n * 1e3
        line = f"{set_name:<11}{len(programs):>9}" + "".join(f"{rates[n]:>13.1f}{cpus[n]:>8.2f}" for n in names)
        line += "".join(f"{rates[first] / rates[n]:>15.2f}x" for n in names[1:])
        print(line, flush=True)


if __name__ == "__main__":
    main()
