#!/usr/bin/env python3
"""Scoring throughput on competitive-programming data with many tests per problem, checkers
included: `grpo tasks import` + `grpo score` against the native way (a `python3 -I` process
per test, and one per checker call), on the same programs, both sides 2 at a time.

    python3 benches/code_contests.py [--grpo target/release/grpo] [--problems 8] [--tests 60]
                                     [--python /usr/bin/python3] [--keep DIR]

The data is generated here, in the upstream shapes: a CodeContests JSONL file (`public_tests`,
`private_tests`, `generated_tests`, `solutions` by language) and an open-r1 Codeforces JSONL
file whose problems accept many answers and ship a Python `generated_checker`. Both are imported
with `grpo tasks import`, and each problem gets a group of four completions: the reference, a
different right program, a program wrong on a late test, and one wrong on every test. Both
sides run every test of every completion (no stopping at the first failure) and must agree on
every verdict. Prints tests per second for both sides and the ratio.
"""

import argparse
import concurrent.futures
import json
import os
import random
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Plain problems (CodeContests): each with a reference, another right program and two wrong.
PLAIN = [
    (
        "sum of a list",
        lambda rng: " ".join(str(rng.randint(-10**6, 10**6)) for _ in range(rng.randint(1, 200))),
        lambda line: str(sum(map(int, line.split()))),
        "print(sum(map(int, input().split())))",
        "import sys\nt = 0\nfor x in sys.stdin.read().split():\n    t += int(x)\nprint(t)",
        "xs = list(map(int, input().split()))\nprint(sum(xs) if len(xs) < 150 else sum(xs) + 1)",
    ),
    (
        "count primes up to n",
        lambda rng: str(rng.randint(1, 3000)),
        lambda line: str(sum(1 for k in range(2, int(line) + 1) if all(k % d for d in range(2, int(k**0.5) + 1)))),
        "n = int(input())\nprint(sum(1 for k in range(2, n + 1) if all(k % d for d in range(2, int(k ** 0.5) + 1))))",
        "n = int(input())\ns = [1] * (n + 1)\nc = 0\nfor i in range(2, n + 1):\n    if s[i]:\n        c += 1\n        for j in range(i * i, n + 1, i):\n            s[j] = 0\nprint(c)",
        "n = int(input())\nprint(sum(1 for k in range(2, n) if all(k % d for d in range(2, int(k ** 0.5) + 1))))",
    ),
    (
        "sort words",
        lambda rng: " ".join(rng.choice(["kiwi", "fig", "apple", "date", "plum", "pear"]) for _ in range(rng.randint(1, 50))),
        lambda line: " ".join(sorted(line.split())),
        "print(' '.join(sorted(input().split())))",
        "w = input().split()\nw.sort()\nprint(*w)",
        "w = input().split()\nprint(' '.join(sorted(set(w))))",
    ),
]

# Problems with many right answers (Codeforces, with a checker).
CHECKED = [
    (
        "two positive integers with sum n",
        lambda rng: str(rng.randint(2, 10**9)),
        lambda line: f"1 {int(line) - 1}",
        "n = int(input())\nprint(1, n - 1)",
        "n = int(input())\nprint(n - n // 2, n // 2)",
        "n = int(input())\nprint(1, n - 1 if n < 5 * 10**8 else n)",
        # The checker: open-r1's protocol, `checker input answer output`, a score printed last.
        "import sys\nn = int(open(sys.argv[1]).read())\ngot = open(sys.argv[3]).read().split()\n"
        "ok = len(got) == 2 and all(t.isdigit() for t in got) and int(got[0]) >= 1 "
        "and int(got[1]) >= 1 and int(got[0]) + int(got[1]) == n\nprint(1 if ok else 0)\n",
    ),
]

ALWAYS_WRONG = "print('no')"


def tests_for(rng, make_input, solve, count):
    cases = []
    for _ in range(count):
        line = make_input(rng)
        cases.append((line + "\n", solve(line) + "\n"))
    return cases


def write_data(directory, problems, tests, seed):
    rng = random.Random(seed)
    cc_rows, cf_rows, groups = [], [], []
    for i in range(problems):
        checked = i % 4 == 3
        spec = CHECKED[i % len(CHECKED)] if checked else PLAIN[i % len(PLAIN)]
        name, make_input, solve, reference, other, late_wrong = spec[:6]
        cases = tests_for(rng, make_input, solve, tests)
        pid = f"p{i}"
        if checked:
            cf_rows.append({
                "id": pid, "title": name, "description": f"Print {name}.",
                "time_limit": 2.0, "memory_limit": 256, "input_mode": "stdio",
                "official_tests": [{"input": a, "output": b} for a, b in cases],
                "generated_checker": spec[6],
            })
        else:
            public, private, generated = cases[:2], cases[2:10], cases[10:]
            as_tests = lambda cs: {"input": [a for a, _ in cs], "output": [b for _, b in cs]}
            cc_rows.append({
                "name": pid, "description": f"Compute the {name}.",
                "public_tests": as_tests(public), "private_tests": as_tests(private),
                "generated_tests": as_tests(generated),
                "solutions": {"language": [3], "solution": [reference]},
                "time_limit": {"seconds": 2, "nanos": 0}, "memory_limit_bytes": 256 << 20,
            })
        groups.append({
            "id": pid, "checked": checked, "cases": cases,
            "checker": spec[6] if checked else None,
            "programs": [reference, other, late_wrong, ALWAYS_WRONG],
        })
    paths = {}
    for fmt, rows in (("codecontests", cc_rows), ("codeforces", cf_rows)):
        if rows:
            path = os.path.join(directory, f"{fmt}.jsonl")
            with open(path, "w") as f:
                for row in rows:
                    f.write(json.dumps(row) + "\n")
            paths[fmt] = path
    return paths, groups


def lines_equal(got, want):
    norm = lambda text: [line.split() for line in text.rstrip().splitlines()]
    return norm(got) == norm(want)


def native_test(python, program_path, checker_path, case, workdir, timeout=10.0):
    """One test, the native way: a process for the program, one more for the checker."""
    stdin, want = case
    try:
        done = subprocess.run([python, "-I", program_path], input=stdin.encode(),
                              capture_output=True, timeout=timeout, env={})
    except subprocess.TimeoutExpired:
        return False
    if done.returncode != 0:
        return False
    got = done.stdout.decode(errors="replace")
    if checker_path is None:
        return lines_equal(got, want)
    fd, base = tempfile.mkstemp(dir=workdir)
    os.close(fd)
    files = []
    for suffix, text in (("in", stdin), ("ans", want), ("out", got)):
        path = f"{base}.{suffix}"
        with open(path, "w") as f:
            f.write(text)
        files.append(path)
    try:
        verdict = subprocess.run([python, "-I", checker_path, *files], capture_output=True,
                                 timeout=timeout, env={})
    finally:
        for path in files + [base]:
            os.unlink(path)
    if verdict.returncode != 0:
        raise RuntimeError(f"checker failed: {verdict.stderr.decode(errors='replace')}")
    return verdict.stdout.split()[-1:] == [b"1"]


def native(python, groups, workers, workdir):
    jobs, owners = [], []
    for g, group in enumerate(groups):
        checker_path = None
        if group["checker"]:
            checker_path = os.path.join(workdir, f"{group['id']}_checker.py")
            with open(checker_path, "w") as f:
                f.write(group["checker"])
        for p, program in enumerate(group["programs"]):
            path = os.path.join(workdir, f"{group['id']}_{p}.py")
            with open(path, "w") as f:
                f.write(program)
            for case in group["cases"]:
                jobs.append((path, checker_path, case))
                owners.append((g, p))
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        passed = list(pool.map(lambda j: native_test(python, j[0], j[1], j[2], workdir), jobs))
    seconds = time.perf_counter() - start
    correct = {}
    for owner, ok in zip(owners, passed):
        correct[owner] = correct.get(owner, True) and ok
    return seconds, len(jobs), correct


def run(cmd, **kwargs):
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout


def ours(grpo, paths, groups, workdir):
    packs = []
    for fmt, path in paths.items():
        out = os.path.join(workdir, f"pack-{fmt}")
        run([grpo, "tasks", "import", fmt, path, "-o", out])
        packs.append(out)
    completions = {}
    for group in groups:
        for program in group["programs"]:
            completions.setdefault(group["id"], []).append(f"```python\n{program}\n```")
    total, correct, seconds = 0, {}, 0.0
    for pack in packs:
        file = os.path.join(workdir, os.path.basename(pack) + ".completions.jsonl")
        rows = []
        with open(file, "w") as f:
            for g, group in enumerate(groups):
                if ("codeforces" in pack) != group["checked"]:
                    continue
                # The importers name a task `<format>/<the row's id>`.
                task_id = f"{'codeforces' if group['checked'] else 'codecontests'}/{group['id']}"
                for p, completion in enumerate(completions[group["id"]]):
                    f.write(json.dumps({"task_id": task_id, "completion": completion}) + "\n")
                    rows.append((g, p))
                    total += len(group["cases"])
        start = time.perf_counter()
        out = run([grpo, "score", "--tasks", pack, "--completions", file])
        seconds += time.perf_counter() - start
        for (g, p), line in zip(rows, out.splitlines()):
            correct[(g, p)] = json.loads(line)["correct"]
    return seconds, total, correct


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--grpo", default=os.path.join(ROOT, "target", "release", "grpo"))
    parser.add_argument("--python", default="/usr/bin/python3")
    parser.add_argument("--problems", type=int, default=8)
    parser.add_argument("--tests", type=int, default=60)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", help="write the data and packs here and keep them")
    args = parser.parse_args()
    workdir = args.keep or tempfile.mkdtemp(prefix="grpo-cc-bench-")
    os.makedirs(workdir, exist_ok=True)
    paths, groups = write_data(workdir, args.problems, args.tests, args.seed)
    ours_s, ours_tests, ours_correct = ours(args.grpo, paths, groups, workdir)
    native_s, native_tests, native_correct = native(args.python, groups, args.workers, workdir)
    assert ours_tests == native_tests, (ours_tests, native_tests)
    disagree = [k for k in native_correct if native_correct[k] != ours_correct.get(k)]
    if disagree:
        sys.exit(f"the two sides disagree on (problem, program): {disagree}")
    expected = {(g, p): p < 2 for g in range(len(groups)) for p in range(4)}
    if native_correct != expected:
        sys.exit(f"unexpected verdicts: {native_correct}")
    checked = sum(1 for g in groups if g["checked"])
    print(f"{len(groups)} problems ({checked} with a checker), {args.tests} tests each, "
          f"4 programs each: {ours_tests} test runs per side")
    print(f"grpo score (the imported packs): {ours_s:.2f} s, {ours_tests / ours_s:.0f} tests/s")
    print(f"native ({args.python} -I per test and per checker call, {args.workers} at a time): "
          f"{native_s:.2f} s, {native_tests / native_s:.0f} tests/s")
    print(f"ratio: {native_s / ours_s:.2f}x")


if __name__ == "__main__":
    main()
