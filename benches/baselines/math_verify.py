#!/usr/bin/env python3
"""Side-by-side: Math-Verify (Python, sympy) against grpo-rs's math checker on the same pairs.

    python3 benches/baselines/math_verify.py [--pairs benches/data/math_pairs.jsonl]
                                              [--ours target/release/math_pairs] [--repeat 3]
                                              [--grpo target/release/grpo] [--json-out FILE]

What it does:
1. creates a venv under target/math-verify-venv and pip-installs
   `math-verify[antlr4_13_2]==0.9.0` (once), then re-runs itself inside it;
2. times Math-Verify single-threaded on every pair (`parse` gold and prediction, `verify`),
   after one untimed warm-up pass;
3. right after, in the same run, our side: the `math_pairs` binary of grpo-benches
   (`cargo build --release -p grpo-benches --bin math_pairs`; it prints a verdict per pair
   and times whole passes over the pairs, one thread, for 3 s), or with `--grpo`,
   `grpo check-math --pairs` and its in-process checks/s;
4. prints both throughputs, the ratio, the agreement (all pairs, the generated ones, the
   hand-judged ones), and each disagreement with the verdict the pair was constructed to
   have (`expected`), i.e. which side is right.
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


def our_side_pairs_bin(binary):
    """Verdicts and checks/s from the grpo-benches `math_pairs` binary."""
    proc = subprocess.run([binary, "--seconds", "3"], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{binary} failed: {proc.stderr}")
    verdicts = [json.loads(line)["correct"] for line in proc.stdout.splitlines()]
    rate = float(proc.stderr.split("(")[-1].split(" checks/s")[0])
    return verdicts, rate


def our_side_cli(pairs_path, grpo):
    """Verdicts and checks/s from `grpo check-math --pairs`."""
    proc = subprocess.run([grpo, "check-math", "--pairs", str(pairs_path)], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{grpo} failed: {proc.stderr}")
    verdicts = [json.loads(line)["correct"] for line in proc.stdout.splitlines()]
    rate = None
    for line in proc.stderr.splitlines():
        if "checks/s" in line:
            rate = float(line.split("(")[1].split(" checks/s")[0])
    return verdicts, rate


GENERATED = {"integer", "fraction", "decimal", "latex", "set", "interval", "tuple", "gsm8k",
             "long_cot", "near_miss"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", default=str(ROOT / "benches" / "data" / "math_pairs.jsonl"))
    ap.add_argument("--ours", default=None,
                    help="the grpo-benches math_pairs binary (default: $CARGO_TARGET_DIR or target, release)")
    ap.add_argument("--grpo", default=None, help="use `grpo check-math --pairs` instead of --ours")
    ap.add_argument("--repeat", type=int, default=3, help="timed Math-Verify passes (best is kept)")
    ap.add_argument("--json-out", default=None, help="write each pair with both verdicts here")
    args = ap.parse_args()
    ensure_venv()

    pairs = [json.loads(line) for line in open(args.pairs) if line.strip()]
    theirs, their_rate = math_verify_side(pairs, args.repeat)
    if args.grpo:
        ours, our_rate = our_side_cli(args.pairs, args.grpo)
        source = f"`{args.grpo} check-math --pairs`"
    else:
        binary = args.ours or str(pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
                                  / "release" / "math_pairs")
        ours, our_rate = our_side_pairs_bin(binary)
        source = f"{binary}"
    assert len(ours) == len(pairs), "our side printed a different number of verdicts"

    print(f"pairs: {len(pairs)}")
    print(f"Math-Verify 0.9.0: {their_rate:,.1f} checks/s (one thread, best of {args.repeat})")
    print(f"grpo-rs: {our_rate:,.0f} checks/s (one thread, {source})")
    print(f"ratio: {our_rate / their_rate:,.0f}x (both measured in this run)")

    def summary(name, keep):
        idx = [k for k, p in enumerate(pairs) if keep(p)]
        if not idx:
            return
        agree = sum(ours[k] == theirs[k] for k in idx)
        ours_ok = sum(ours[k] == pairs[k]["expected"] for k in idx)
        theirs_ok = sum(theirs[k] == pairs[k]["expected"] for k in idx)
        print(f"{name}: {len(idx)} pairs, agreement {agree}/{len(idx)} ({100 * agree / len(idx):.1f}%), "
              f"matching the constructed verdict: ours {ours_ok}, Math-Verify {theirs_ok}")

    summary("all", lambda p: True)
    summary("generated", lambda p: p["category"] in GENERATED)
    summary("hand-judged", lambda p: p["category"] not in GENERATED)
    for cat in sorted({p["category"] for p in pairs} - GENERATED):
        summary(f"  {cat}", lambda p, c=cat: p["category"] == c)

    right = {"ours": 0, "theirs": 0}
    for p, a, b in zip(pairs, ours, theirs):
        if a != b:
            winner = "ours" if a == p["expected"] else "theirs"
            right[winner] += 1
            pred = p["pred"] if len(p["pred"]) < 70 else "…" + p["pred"][-67:]
            print(f"  [{p['category']}] gold={p['gold']!r} pred={pred!r}: ours={a} theirs={b} "
                  f"expected={p['expected']} -> {winner} right")
    print(f"disagreements: {len(pairs) - sum(a == b for a, b in zip(ours, theirs))}; "
          f"ours right on {right['ours']}, Math-Verify right on {right['theirs']}")
    if args.json_out:
        with open(args.json_out, "w") as f:
            for p, a, b in zip(pairs, ours, theirs):
                f.write(json.dumps({**p, "ours": a, "theirs": b}) + "\n")


if __name__ == "__main__":
    main()
