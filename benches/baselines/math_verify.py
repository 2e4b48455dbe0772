#!/usr/bin/env python3
"""Side-by-side: Math-Verify (Python, sympy) against grpo-rs's math checker on the same pairs.

    python3 benches/baselines/math_verify.py [--pairs benches/data/math_pairs.jsonl]
                                              [--grpo target/release/grpo] [--repeat 3]

What it does:
1. creates a venv under target/math-verify-venv and pip-installs
   `math-verify[antlr4_13_2]==0.9.0` (once), then re-runs itself inside it;
2. times Math-Verify single-threaded on every pair (`parse` gold and prediction, `verify`),
   after one untimed warm-up pass;
3. runs our side: `grpo check-math --pairs` for the verdicts and its in-process checks/s
   (stderr summary), and, when present, criterion's `math/check_all` estimate from
   `cargo bench -p grpo-benches --bench math` (the number the ratio prefers);
4. prints both throughputs, the ratio, the agreement, and each disagreement with the
   verdict the pair was constructed to have (`expected`), i.e. which side is right.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
VENV = ROOT / "target" / "math-verify-venv"
PACKAGE = "math-verify[antlr4_13_2]==0.9.0"


def ensure_venv():
    """Re-executes this script inside a venv that has Math-Verify."""
    py = VENV / "bin" / "python"
    if pathlib.Path(sys.prefix).resolve() == VENV.resolve():
        return
    if not py.exists():
        print(f"creating {VENV} and installing {PACKAGE}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", PACKAGE], check=True)
    os.execv(str(py), [str(py), __file__, *sys.argv[1:]])


def math_verify_side(pairs, repeat):
    # This script shares the package's name: import the package, not the script.
    here = pathlib.Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if pathlib.Path(p or ".").resolve() != here]
    from math_verify import parse, verify

    def wrap(gold):
        # Math-Verify's LaTeX extraction wants delimiters around a bare reference answer.
        if "$" in gold or "\\boxed" in gold or "####" in gold:
            return gold
        return f"${gold}$"

    def run_once():
        out = []
        for p in pairs:
            try:
                g = parse(wrap(p["gold"]))
                q = parse(p["pred"])
                out.append(bool(verify(g, q)))
            except Exception:  # a crash of the baseline counts as "not equal"
                out.append(False)
        return out

    run_once()  # warm-up: imports, sympy caches, grammar loading
    best = None
    verdicts = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        verdicts = run_once()
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return verdicts, len(pairs) / best


def our_side(pairs_path, grpo):
    proc = subprocess.run([grpo, "check-math", "--pairs", str(pairs_path)], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{grpo} failed: {proc.stderr}")
    verdicts = [json.loads(line)["correct"] for line in proc.stdout.splitlines()]
    cli_rate = None
    for line in proc.stderr.splitlines():
        if "checks/s" in line:
            cli_rate = float(line.split("(")[1].split(" checks/s")[0])
    criterion = ROOT / "target" / "criterion" / "math" / "check_all" / "new" / "estimates.json"
    bench_rate = None
    if criterion.exists():
        est = json.loads(criterion.read_text())
        ns_per_iter = est["mean"]["point_estimate"]
        bench_rate = len(verdicts) / (ns_per_iter * 1e-9)
    return verdicts, cli_rate, bench_rate


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", default=str(ROOT / "benches" / "data" / "math_pairs.jsonl"))
    ap.add_argument("--grpo", default=None, help="the grpo binary (default: target/release/grpo, else target/debug/grpo)")
    ap.add_argument("--repeat", type=int, default=3, help="timed Math-Verify passes (best is kept)")
    args = ap.parse_args()
    ensure_venv()

    pairs = [json.loads(line) for line in open(args.pairs) if line.strip()]
    grpo = args.grpo
    if grpo is None:
        release = ROOT / "target" / "release" / "grpo"
        grpo = str(release if release.exists() else ROOT / "target" / "debug" / "grpo")

    theirs, their_rate = math_verify_side(pairs, args.repeat)
    ours, cli_rate, bench_rate = our_side(args.pairs, grpo)
    assert len(ours) == len(pairs), "grpo printed a different number of verdicts"

    our_rate = bench_rate or cli_rate
    source = "criterion math/check_all" if bench_rate else f"`{grpo} check-math --pairs` in-process timing"
    print(f"pairs: {len(pairs)}")
    print(f"Math-Verify 0.9.0: {their_rate:,.0f} checks/s (one thread, best of {args.repeat})")
    if cli_rate:
        print(f"grpo-rs (check-math CLI, {pathlib.Path(grpo).parent.name} build): {cli_rate:,.0f} checks/s")
    if bench_rate:
        print(f"grpo-rs (criterion math/check_all): {bench_rate:,.0f} checks/s")
    print(f"ratio: {our_rate / their_rate:,.0f}x (ours from {source})")

    agree = sum(a == b for a, b in zip(ours, theirs))
    print(f"agreement: {agree}/{len(pairs)} ({100 * agree / len(pairs):.1f}%)")
    right = {"ours": 0, "theirs": 0}
    for p, a, b in zip(pairs, ours, theirs):
        if a != b:
            winner = "ours" if a == p["expected"] else "theirs"
            right[winner] += 1
            pred = p["pred"] if len(p["pred"]) < 70 else "…" + p["pred"][-67:]
            print(f"  [{p['category']}] gold={p['gold']!r} pred={pred!r}: ours={a} theirs={b} "
                  f"expected={p['expected']} -> {winner} right")
    print(f"disagreements: {len(pairs) - agree}; ours right on {right['ours']}, Math-Verify right on {right['theirs']}")
    ours_ok = sum(a == p["expected"] for p, a in zip(pairs, ours))
    theirs_ok = sum(b == p["expected"] for p, b in zip(pairs, theirs))
    print(f"matches the constructed verdict: ours {ours_ok}/{len(pairs)}, Math-Verify {theirs_ok}/{len(pairs)}")


if __name__ == "__main__":
    main()
