#!/usr/bin/env python3
"""Math-Verify against grpo_rewards, in one Python process, on the same pairs.

    python3 grpo-py/bench/vs_math_verify.py [--pairs benches/data/math_pairs.jsonl]
                                            [--seconds 3] [--reinstall] [--wheel PATH]

1. makes a venv under target/py-bench-venv with `math-verify[antlr4_13_2]==0.9.0` and this
   package built in release mode (`pip install ./grpo-py`, once; `--reinstall` rebuilds it),
   then re-runs itself inside it;
2. single thread, same call shape on both sides: `parse(gold)`, `parse(pred)`,
   `verify(gold, pred)` per pair, Math-Verify then `grpo_rewards.math_verify`, after one
   untimed pass each, whole passes over the pairs for at least `--seconds`;
3. the batch API on all cores: `check_math_batch` over the pairs repeated, GIL released;
4. prints checks/s, the ratios, and the agreement of each side with the verdict each pair was
   constructed to have.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
VENV = ROOT / "target" / "py-bench-venv"
MATH_VERIFY = "math-verify[antlr4_13_2]==0.9.0"


def ensure_venv(reinstall, wheel):
    py = VENV / "bin" / "python"
    if pathlib.Path(sys.prefix).resolve() == VENV.resolve():
        return
    if not py.exists():
        print(f"creating {VENV}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", MATH_VERIFY], check=True)
        reinstall = not wheel
    if wheel:
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps", wheel], check=True)
    elif reinstall:
        print("building grpo-py in release mode (pip install ./grpo-py)", file=sys.stderr)
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--force-reinstall", str(ROOT / "grpo-py")], check=True)
    args = [a for a in sys.argv[1:] if a != "--reinstall"]
    if "--wheel" in args:
        k = args.index("--wheel")
        del args[k:k + 2]
    os.execv(str(py), [str(py), __file__, *args])


def timed_passes(fn, pairs, seconds):
    fn(pairs)  # untimed warm-up
    done, started = 0, time.perf_counter()
    while True:
        verdicts = fn(pairs)
        done += len(pairs)
        elapsed = time.perf_counter() - started
        if elapsed >= seconds:
            return verdicts, done / elapsed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", default=str(ROOT / "benches" / "data" / "math_pairs.jsonl"))
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--reinstall", action="store_true")
    ap.add_argument("--wheel")
    args = ap.parse_args()
    ensure_venv(args.reinstall, args.wheel)

    import math_verify
    import grpo_rewards
    from grpo_rewards import math_verify as ours

    rows = [json.loads(l) for l in pathlib.Path(args.pairs).read_text().splitlines() if l.strip()]
    pairs = [(r["gold"], r["pred"]) for r in rows]
    expected = [r["expected"] for r in rows]

    def wrap(gold):
        # Math-Verify's documented use: a bare reference answer goes inside $…$.
        if "$" in gold or "\\boxed" in gold or "####" in gold:
            return gold
        return f"${gold}$"

    def theirs_one(g, p):
        try:
            return bool(math_verify.verify(math_verify.parse(wrap(g)), math_verify.parse(p)))
        except Exception:  # a crash of the baseline counts as "not equal"
            return False

    def theirs_pass(ps):
        return [theirs_one(g, p) for g, p in ps]

    def ours_pass(ps):
        return [ours.verify(ours.parse(g), ours.parse(p)) for g, p in ps]

    cores = os.cpu_count() or 1
    print(f"{len(pairs)} pairs, grpo_rewards {grpo_rewards.__version__}, {cores} cores", flush=True)
    theirs, theirs_rate = timed_passes(theirs_pass, pairs, args.seconds)
    print(f"Math-Verify 0.9.0, 1 thread:            {theirs_rate:12,.0f} checks/s", flush=True)
    mine, ours_rate = timed_passes(ours_pass, pairs, args.seconds)
    print(f"grpo_rewards.math_verify, 1 thread:     {ours_rate:12,.0f} checks/s", flush=True)
    batch = pairs * 20
    _, batch_rate = timed_passes(lambda ps: [r.correct for r in grpo_rewards.check_math_batch(ps)], batch, args.seconds)
    print(f"grpo_rewards.check_math_batch, {cores} threads: {batch_rate:12,.0f} checks/s", flush=True)
    print(f"ratio grpo_rewards / Math-Verify, single thread: {ours_rate / theirs_rate:,.0f}x")
    print(f"ratio grpo_rewards batch / Math-Verify single thread: {batch_rate / theirs_rate:,.0f}x")
    for name, verdicts in (("Math-Verify", theirs), ("grpo_rewards", mine)):
        agree = sum(v == e for v, e in zip(verdicts, expected))
        print(f"{name}: constructed verdict on {agree}/{len(pairs)} pairs")


if __name__ == "__main__":
    main()
